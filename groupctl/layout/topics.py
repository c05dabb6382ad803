"""A topic, `/brokers/topics/<topic>`: `{"version": 1, "topic_id": "<uuid>", "partitions": {"0":
[<node-id>, ...], ...}}`, written by the node that creates or grows it, read by every node at
start and through its watch. Partitions are numbered 0..n-1, each with a non-empty list of
replica node ids, all lists of one length (the first replica leads)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from groupctl.layout.codec import LayoutError, encode, read, text
from groupctl.layout.paths import topic_path

VERSION = 1


@dataclass(frozen=True)
class TopicDocument:
    topic_id: str
    replicas: dict[int, list[int]]

    def encode(self) -> bytes:
        return encode({"version": VERSION, "topic_id": self.topic_id,
                       "partitions": {str(p): list(nodes) for p, nodes in sorted(self.replicas.items())}})

    @classmethod
    def decode(cls, topic: str, data: Optional[bytes]) -> "TopicDocument":
        path = topic_path(topic)
        document = read(path, data, VERSION)
        topic_id = text(path, document, "topic_id")
        partitions = document.get("partitions")
        if not topic_id:
            raise LayoutError(path, '"topic_id" must not be empty')
        if not isinstance(partitions, dict) or not partitions:
            raise LayoutError(path, f'"partitions" must be a non-empty object, not {partitions!r}')
        if sorted(partitions) != sorted(str(p) for p in range(len(partitions))):
            raise LayoutError(path, f"partitions {sorted(partitions)} are not numbered 0..n-1")
        replicas = {int(p): nodes for p, nodes in partitions.items()}
        for p, nodes in replicas.items():
            if not isinstance(nodes, list) or not nodes or not all(
                    isinstance(n, int) and not isinstance(n, bool) for n in nodes):
                raise LayoutError(path, f"partition {p}: replicas {nodes!r} are not a non-empty list of node ids")
        if len({len(nodes) for nodes in replicas.values()}) != 1:
            raise LayoutError(path, f"partitions have different replica counts "
                                    f"{sorted({len(nodes) for nodes in replicas.values()})}")
        return cls(topic_id, dict(sorted(replicas.items())))
