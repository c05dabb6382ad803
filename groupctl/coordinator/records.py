"""Records: the only way hard state changes.

A core operation returns records alongside its responses; the runtime persists them (store
writes) before it releases the responses, and the same records, read back from the store, are
replayed to rebuild state after a restart or a takeover.

Invariants:
- Records are immutable values with no behaviour; they name a group or topic and carry
  everything needed to rewrite its stored form.
- A `GroupMetadataRecord` carries the complete group document (`groupctl.layout.groups`), never a delta:
  the store writes it with one compare-and-set write.
- An `OffsetCommitRecord` is one partition's committed offset; the records of one commit request
  are persisted together (one transaction) or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from groupctl.layout.consumer_groups import ConsumerGroupDocument
from groupctl.layout.groups import GroupDocument
from groupctl.layout.topics import TopicDocument


@dataclass(frozen=True)
class GroupMetadataRecord:
    """The whole group document, written at `/groups/<group>`: a classic group's when a
    rebalance completes, when the group empties, and when it is loaded back; a consumer group's
    whenever an epoch, a member or the target changes."""

    group: str
    document: Union[GroupDocument, ConsumerGroupDocument]


@dataclass(frozen=True)
class GroupTombstone:
    """The group was deleted: its document and its committed offsets go."""

    group: str


@dataclass(frozen=True)
class OffsetCommitRecord:
    group: str
    topic: str
    partition: int
    offset: int
    leader_epoch: int = -1
    metadata: str = ""
    commit_timestamp_ms: int = 0


@dataclass(frozen=True)
class OffsetTombstone:
    """One partition's committed offset was deleted (OffsetDelete, or its topic was deleted)."""

    group: str
    topic: str
    partition: int


@dataclass(frozen=True)
class TopicRecord:
    """A topic as stored at `/brokers/topics/<topic>`; `replicas[p]` lists the node ids of p."""

    name: str
    topic_id: str
    replicas: dict[int, list[int]]

    @classmethod
    def of(cls, name: str, document: TopicDocument) -> "TopicRecord":
        """The record of topic `name` as its stored document holds it."""
        return cls(name=name, topic_id=document.topic_id, replicas=document.replicas)


@dataclass(frozen=True)
class TopicTombstone:
    name: str


Record = Union[
    GroupMetadataRecord, GroupTombstone, OffsetCommitRecord, OffsetTombstone, TopicRecord, TopicTombstone
]
