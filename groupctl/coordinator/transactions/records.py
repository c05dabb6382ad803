"""The durable record of a transactional id, and the transaction states it names.

A `TransactionRecord` is the whole state of one transactional id after a transition (Kafka's
transaction log value, as `TxnTransitMetadata`), never a delta: the last record written for an id
is its state, so loading is "keep the last record per id" and a record written twice is harmless.

Invariants:
- A record is stored as its `TransactionDocument` (groupctl.layout.transactions), field for
  field: `to_document` and `from_document` are inverses.
- Records are immutable values; `partitions` is a frozenset of (topic, partition).
- `start_ms` is -1 in state Empty; otherwise it is when the current (or last) transaction opened.
- Producer epochs are Kafka's shorts: -1 means "none", 32767 (`MAX_PRODUCER_EPOCH`) is reserved
  for fencing, and an epoch at or above 32766 is exhausted (the next bump takes a new producer id).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import FrozenSet, Tuple

from groupctl.layout.transactions import TransactionDocument

Partition = Tuple[str, int]

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
MAX_PRODUCER_EPOCH = 32767


def epoch_exhausted(epoch: int) -> bool:
    """Kafka never hands out 32767 so the coordinator can always fence the holder of 32766."""
    return epoch >= MAX_PRODUCER_EPOCH - 1


class TxnState(str, Enum):
    """A transaction's state; the value is the name DescribeTransactions and ListTransactions use."""

    EMPTY = "Empty"
    ONGOING = "Ongoing"
    PREPARE_COMMIT = "PrepareCommit"
    PREPARE_ABORT = "PrepareAbort"
    COMPLETE_COMMIT = "CompleteCommit"
    COMPLETE_ABORT = "CompleteAbort"
    DEAD = "Dead"
    PREPARE_EPOCH_FENCE = "PrepareEpochFence"

    @property
    def id(self) -> int:
        """The state's byte in Kafka's transaction log."""
        return _IDS[self]

    def may_follow(self, previous: "TxnState") -> bool:
        """Kafka's transition table: whether this state may be entered from `previous`."""
        return previous in _PREVIOUS[self]


_IDS = {state: index for index, state in enumerate(TxnState)}

_PREVIOUS = {
    TxnState.EMPTY: {TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT},
    TxnState.ONGOING: {TxnState.ONGOING, TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT},
    TxnState.PREPARE_COMMIT: {TxnState.ONGOING},
    TxnState.PREPARE_ABORT: {TxnState.ONGOING, TxnState.PREPARE_EPOCH_FENCE},
    TxnState.COMPLETE_COMMIT: {TxnState.PREPARE_COMMIT},
    TxnState.COMPLETE_ABORT: {TxnState.PREPARE_ABORT},
    TxnState.DEAD: {TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT},
    TxnState.PREPARE_EPOCH_FENCE: {TxnState.ONGOING},
}


@dataclass(frozen=True)
class TransactionRecord:
    """One transactional id's state, written before the coordinator answers the request that
    changed it. `last_producer_epoch` is the epoch a retried InitProducerId may still present
    (Kafka keeps it in memory only; see the package's deliberate differences)."""

    transactional_id: str
    producer_id: int
    previous_producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    timeout_ms: int
    state: TxnState
    partitions: FrozenSet[Partition]
    start_ms: int
    last_update_ms: int

    def to_document(self) -> TransactionDocument:
        """The record as the metadata store keeps it."""
        return TransactionDocument(
            self.transactional_id, self.producer_id, self.previous_producer_id, self.producer_epoch,
            self.last_producer_epoch, self.timeout_ms, self.state.value, self.partitions, self.start_ms,
            self.last_update_ms)

    @classmethod
    def from_document(cls, document: TransactionDocument) -> "TransactionRecord":
        """The record a stored document holds (its state name is one `TxnState` has)."""
        return cls(
            document.transactional_id, document.producer_id, document.previous_producer_id,
            document.producer_epoch, document.last_producer_epoch, document.timeout_ms,
            TxnState(document.state), frozenset(document.partitions), document.start_ms,
            document.last_update_ms)
