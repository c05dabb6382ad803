"""Records: the only way hard state changes.

A core operation returns records alongside its responses; the runtime persists them (store
writes) before it releases the responses, and the same records, read back from the store, are
replayed to rebuild state after a restart or a takeover.

Invariants:
- Records are immutable values with no behaviour; they name a group, topic or transactional id
  and carry everything needed to rewrite its stored form.
- A `GroupMetadataRecord` carries the complete group document (`groupctl.layout.groups`), never a delta:
  the store writes it with one compare-and-set write. A consumer group's may build it when first
  read (`GroupMetadataRecord.deferred`), so changes that meet in one write build it once.
- An `OffsetCommitRecord` is one partition's committed offset; the records of one commit request
  are persisted together (one transaction) or not at all.
- A `PendingOffsetsRecord` is every offset one producer's open transaction holds for a group
  (TxnOffsetCommit), never a delta; its `PendingOffsetsTombstone` ends the transaction, written in
  the same transaction as the OffsetCommitRecords a commit marker makes visible.
- A `TransactionRecord` (the transaction coordinator's, `groupctl.coordinator.transactions`) is a
  transactional id's whole state, written at `/transactions/<transactional-id>`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional, Union

from groupctl.coordinator.transactions.records import TransactionRecord
from groupctl.layout.consumer_groups import ConsumerGroupDocument
from groupctl.layout.groups import GroupDocument
from groupctl.layout.topics import INITIAL_LEADER_EPOCH, TopicDocument


class GroupMetadataRecord:
    """The whole group document, written at `/groups/<group>`: a classic group's when a
    rebalance completes, when the group empties, and when it is loaded back; a consumer group's
    whenever an epoch, a member or the target changes.

    A consumer group's record may be `deferred`: it carries how to build the document, and the
    document is built when first read (the store reads it when it encodes its write), from the
    group as it is then. A burst of changes (a join storm) whose records meet in one store write
    then builds one document, not one per change; the document written is never older than the
    changes whose responses wait for it. It may be newer: it can hold a later change whose own
    write then fails, which clients see as "the write landed, the response was lost" and retry,
    as they must anyway. Once read, the document is fixed.
    """

    __slots__ = ("group", "_document", "_build")

    def __init__(self, group: str, document: Union[GroupDocument, ConsumerGroupDocument]) -> None:
        self.group = group
        self._document: Optional[Union[GroupDocument, ConsumerGroupDocument]] = document
        self._build: Optional[Callable[[], ConsumerGroupDocument]] = None

    @classmethod
    def deferred(cls, group: str, build: Callable[[], ConsumerGroupDocument]) -> "GroupMetadataRecord":
        record = cls(group, None)  # type: ignore[arg-type]
        record._build = build
        return record

    @property
    def document(self) -> Union[GroupDocument, ConsumerGroupDocument]:
        if self._document is None:
            self._document = self._build()
            self._build = None
        return self._document

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GroupMetadataRecord):
            return NotImplemented
        return self.group == other.group and self.document == other.document

    __hash__ = None  # type: ignore[assignment]  (as the frozen dataclass of mutable documents)

    def __repr__(self) -> str:
        return f"GroupMetadataRecord(group={self.group!r}, document={self.document!r})"


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
class PendingOffsetsRecord:
    """The offsets a producer's open transaction committed to a group (TxnOffsetCommit), not
    visible until the transaction's commit marker; `offsets` are by (topic, partition), one each."""

    group: str
    producer_id: int
    producer_epoch: int
    offsets: tuple[OffsetCommitRecord, ...]
    coordinator_epoch: int = -1  # the highest of an accepted marker of the producer on the group's partition; -1: none known


@dataclass(frozen=True)
class PendingOffsetsTombstone:
    """The producer's transaction ended (its marker arrived, or the group or its offsets went)."""

    group: str
    producer_id: int


@dataclass(frozen=True)
class TopicRecord:
    """A topic as stored at `/brokers/topics/<topic>`; `replicas[p]` lists the node ids of p,
    `leader_epochs[p]` its leader epoch when above 0 (KIP-101)."""

    name: str
    topic_id: str
    replicas: dict[int, list[int]]
    leader_epochs: dict[int, int] = field(default_factory=dict)

    @classmethod
    def of(cls, name: str, document: TopicDocument) -> "TopicRecord":
        """The record of topic `name` as its stored document holds it."""
        return cls(name=name, topic_id=document.topic_id, replicas=document.replicas,
                   leader_epochs=document.leader_epochs)

    def leader_epoch(self, partition: int) -> int:
        return self.leader_epochs.get(partition, INITIAL_LEADER_EPOCH)

    def document(self) -> TopicDocument:
        return TopicDocument(self.topic_id, self.replicas, self.leader_epochs)


@dataclass(frozen=True)
class TopicTombstone:
    name: str


Record = Union[
    GroupMetadataRecord, GroupTombstone, OffsetCommitRecord, OffsetTombstone, PendingOffsetsRecord,
    PendingOffsetsTombstone, TopicRecord, TopicTombstone, TransactionRecord,
]
