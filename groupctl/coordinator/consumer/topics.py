"""The topics a consumer group can subscribe to, as the coordinator last saw them.

Consumer groups name topics by id on the wire and by name in subscriptions, and assign partitions
by count, so the core keeps both lookups. Invariant: names and ids are one-to-one; a topic
recreated under its name has a new id (and is a different topic to every group).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional


@dataclass(frozen=True)
class TopicInfo:
    name: str
    topic_id: str
    partitions: int


@dataclass(frozen=True)
class TopicImage:
    by_name: Mapping[str, TopicInfo] = field(default_factory=dict)
    by_id: Mapping[str, TopicInfo] = field(default_factory=dict)

    @classmethod
    def of(cls, topics: Iterable[TopicInfo]) -> "TopicImage":
        topics = list(topics)
        return cls({t.name: t for t in topics}, {t.topic_id: t for t in topics})

    def name_of(self, topic_id: str) -> Optional[str]:
        info = self.by_id.get(topic_id)
        return info.name if info is not None else None

    def subscribed(self, names: Iterable[str]) -> dict[str, int]:
        """Topic id -> partition count of the named topics that exist."""
        return {info.topic_id: info.partitions for info in (self.by_name.get(n) for n in names) if info is not None}
