"""A topic, `/brokers/topics/<topic>`: `{"version": 1, "topic_id": "<uuid>", "partitions": {"0":
[<node-id>, ...], ...}, "leader_epochs": {"0": <epoch>, ...}}`, written by the node that creates or
grows it, read by every node at start and through its watch. Partitions are numbered 0..n-1, each
with a non-empty list of replica node ids, all lists of one length (the first replica leads).

`leader_epochs` (optional) holds the leader epoch (KIP-101) of each partition whose epoch is
above 0, raised by the leader each time it starts leading (`groupctl.server.leader_epochs`); a
partition not listed is at epoch 0, so a new topic's document has no such field. Optional, and
VERSION stays 1, so nodes that predate it still read the document (they ignore the field, and a
topic they grow loses it: its epochs start at 0 again)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from groupctl.layout.codec import LayoutError, encode, read, text
from groupctl.layout.paths import topic_path

VERSION = 1
INITIAL_LEADER_EPOCH = 0  # a partition's epoch until its leader first raises it, as Kafka's controller starts it


@dataclass(frozen=True)
class TopicDocument:
    topic_id: str
    replicas: dict[int, list[int]]
    leader_epochs: dict[int, int] = field(default_factory=dict)  # partition -> epoch, when above 0

    def encode(self) -> bytes:
        document = {"version": VERSION, "topic_id": self.topic_id,
                    "partitions": {str(p): list(nodes) for p, nodes in sorted(self.replicas.items())}}
        epochs = {str(p): epoch for p, epoch in sorted(self.leader_epochs.items()) if epoch > INITIAL_LEADER_EPOCH}
        if epochs:
            document["leader_epochs"] = epochs
        return encode(document)

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
        return cls(topic_id, dict(sorted(replicas.items())), _leader_epochs(path, document, replicas))


def _leader_epochs(path: str, document: dict, replicas: dict[int, list[int]]) -> dict[int, int]:
    epochs = document.get("leader_epochs", {})
    if not isinstance(epochs, dict) or not all(
            isinstance(p, str) and p.isdigit() and int(p) in replicas and isinstance(e, int)
            and not isinstance(e, bool) and e >= INITIAL_LEADER_EPOCH for p, e in epochs.items()):
        raise LayoutError(path, f'"leader_epochs" must map partitions to epochs >= 0, not {epochs!r}')
    return {int(p): e for p, e in sorted(epochs.items(), key=lambda item: int(item[0])) if e > INITIAL_LEADER_EPOCH}
