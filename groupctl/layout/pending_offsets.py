"""A producer's pending transactional offsets for a group,
`/groups/<group>/pending-offsets/<producer id>`:
`{"version": 1, "producer_epoch": E, "coordinator_epoch": C, "topics": {"<topic>": {"<p>":
{"offset", "leader_epoch", "metadata", "commit_timestamp_ms"}, ...}, ...}}`.

`coordinator_epoch` (optional; absent in documents written before it, read as -1, and left out
when -1) is the highest coordinator epoch of a transaction marker the group's offsets partition
accepted for the producer when the document was written: a coordinator that loads the group
refuses a marker from a lower one (TRANSACTION_COORDINATOR_FENCED; `groupctl.coordinator.offsets.store`).

Written (whole) by every accepted TxnOffsetCommit of the producer's open transaction, before the
request is answered; deleted when the transaction's marker arrives (in the same store transaction
as the committed offsets a commit makes visible) or when the group, or the offsets of its
partitions, are deleted. Read when a coordinator loads the group, and by `zk show`. The entries
have the fields of a committed offset (`groupctl.layout.offsets`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from groupctl.layout.codec import LayoutError, encode, is_number, read
from groupctl.layout.offsets import OffsetEntry, check_entry

VERSION = 1
NO_COORDINATOR_EPOCH = -1


@dataclass(frozen=True)
class PendingOffsetsDocument:
    """One producer's pending offsets: epoch, and (topic, entry) pairs by topic then partition."""

    producer_epoch: int
    offsets: tuple[tuple[str, OffsetEntry], ...]
    coordinator_epoch: int = NO_COORDINATOR_EPOCH

    @classmethod
    def decode(cls, path: str, data: Optional[bytes]) -> "PendingOffsetsDocument":
        document = read(path, data, VERSION)
        epoch = document.get("producer_epoch")
        if isinstance(epoch, bool) or not isinstance(epoch, int):
            raise LayoutError(path, f'"producer_epoch" must be an integer, not {epoch!r}')
        coordinator_epoch = document.get("coordinator_epoch", NO_COORDINATOR_EPOCH)
        if isinstance(coordinator_epoch, bool) or not isinstance(coordinator_epoch, int):
            raise LayoutError(path, f'"coordinator_epoch" must be an integer, not {coordinator_epoch!r}')
        topics = document.get("topics")
        if not isinstance(topics, dict):
            raise LayoutError(path, f'"topics" must be an object of topics, not {topics!r}')
        offsets = []
        for topic in sorted(topics):
            partitions = topics[topic]
            if not isinstance(partitions, dict):
                raise LayoutError(path, f"topic {topic!r}: must be an object of partitions, not {partitions!r}")
            for partition, entry in partitions.items():
                check_entry(path, partition, entry)
            offsets.extend(
                (topic, OffsetEntry(int(p), e["offset"], e["leader_epoch"], e["metadata"], e["commit_timestamp_ms"]))
                for p, e in sorted(partitions.items(), key=lambda pe: int(pe[0])))
        return cls(epoch, tuple(offsets), coordinator_epoch)

    def encode(self) -> bytes:
        topics: dict[str, dict[str, dict[str, object]]] = {}
        for topic, e in self.offsets:
            topics.setdefault(topic, {})[str(e.partition)] = {
                "offset": e.offset, "leader_epoch": e.leader_epoch, "metadata": e.metadata,
                "commit_timestamp_ms": e.commit_timestamp_ms}
        document: dict[str, object] = {"version": VERSION, "producer_epoch": self.producer_epoch}
        if self.coordinator_epoch != NO_COORDINATOR_EPOCH:
            document["coordinator_epoch"] = self.coordinator_epoch
        document["topics"] = topics
        return encode(document)


def producer_id_of(path: str, component: str) -> int:
    """The producer id a document's name holds."""
    if not is_number(component):
        raise LayoutError(path, f"{component!r} is not a producer id")
    return int(component)
