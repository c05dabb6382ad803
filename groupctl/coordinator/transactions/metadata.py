"""One transactional id's in-memory state and its two-step transitions (Kafka's TransactionMetadata).

A transition is prepared (the new state is computed as a `TransactionRecord` and becomes the
`pending` state, which blocks every other transition), then completed once the record is
persisted, or abandoned when the write failed. Nothing but `pending` changes before the record is
durable, so an abandoned transition leaves the id exactly as it was.

Invariants (checked on completion, as Kafka's completeTransitionTo; a violation is a bug and
raises `TransitionError`):
- Only the pending transition completes, and only from a state Kafka's table allows.
- Empty (InitProducerId): the epoch stays, moves up by one, or restarts at 0 with a new producer
  id; no partitions, no start time.
- Ongoing (AddPartitions): same producer id, epoch and timeout; the partitions only grow.
- PrepareCommit/PrepareAbort (EndTxn): same producer id, partitions, timeout and start time; the
  epoch stays, except an epoch fence (PrepareEpochFence then PrepareAbort) raises it by one.
- CompleteCommit/CompleteAbort (markers written): same producer id and epoch, no partitions.
- `completion` is set only while the preparing transaction's markers are out (pending
  CompleteCommit/CompleteAbort), and cleared when any transition completes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

from groupctl.coordinator.transactions.outcomes import MarkerWrite
from groupctl.coordinator.transactions.records import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    TransactionRecord,
    TxnState,
)


class TransitionError(Exception):
    """A transition Kafka's state machine forbids was attempted: a coordinator bug."""


@dataclass
class TransactionMetadata:
    record: TransactionRecord
    pending: Optional[TxnState] = None
    pending_fence: bool = False
    ending: Optional[str] = None
    """Why the transaction last prepared to commit or abort did (a `transaction_completed`
    reason), set with its PrepareCommit/PrepareAbort; None when it was loaded preparing."""
    completion: Optional[MarkerWrite] = None
    """The markers the preparing transaction is being completed with (the very object handed to
    the shell): only that completion's `markers_written` ends the transaction."""

    @classmethod
    def new(cls, transactional_id: str, producer_id: int, timeout_ms: int, now_ms: int) -> "TransactionMetadata":
        """A transactional id seen for the first time: a fresh producer id, no epoch yet."""
        return cls(TransactionRecord(
            transactional_id=transactional_id, producer_id=producer_id, previous_producer_id=NO_PRODUCER_ID,
            producer_epoch=NO_PRODUCER_EPOCH, last_producer_epoch=NO_PRODUCER_EPOCH, timeout_ms=timeout_ms,
            state=TxnState.EMPTY, partitions=frozenset(), start_ms=-1, last_update_ms=now_ms))

    @property
    def state(self) -> TxnState:
        return self.record.state

    def fenced_epoch(self) -> int:
        """The epoch a producer must hold: while an epoch fence is being written, the bumped one
        (the fenced producer is told so at once, as Kafka does, though the fence is not durable)."""
        return self.record.producer_epoch + 1 if self.pending_fence else self.record.producer_epoch

    def prepare(self, record: TransactionRecord, *, fence: bool = False) -> TransactionRecord:
        """Make `record` the pending transition; `fence` when it aborts through PrepareEpochFence."""
        if self.pending is not None:
            raise TransitionError(f"{self.record.transactional_id}: {record.state.value} while "
                                  f"{self.pending.value} is pending")
        via = TxnState.PREPARE_EPOCH_FENCE if fence else self.state
        if fence and not TxnState.PREPARE_EPOCH_FENCE.may_follow(self.state):
            raise TransitionError(f"{self.record.transactional_id}: cannot fence from {self.state.value}")
        if not record.state.may_follow(via):
            raise TransitionError(f"{self.record.transactional_id}: {self.state.value} -> {record.state.value}")
        if record.producer_id < 0 or record.producer_epoch < 0:
            raise TransitionError(f"{self.record.transactional_id}: producer {record.producer_id} "
                                  f"epoch {record.producer_epoch}")
        self.pending = record.state
        self.pending_fence = fence
        return record

    def abandon(self) -> None:
        """The pending transition's record was not written: the id stays as it was."""
        self.pending = None
        self.pending_fence = False

    def complete(self, record: TransactionRecord) -> None:
        """The pending transition's record is persisted: it becomes the state."""
        if self.pending != record.state:
            raise TransitionError(f"{record.transactional_id}: completing {record.state.value}, pending "
                                  f"{self.pending.value if self.pending else None}")
        self._check(record)
        self.record = record
        self.pending = None
        self.pending_fence = False
        self.completion = None

    def _check(self, new: TransactionRecord) -> None:
        old = self.record
        same_producer = new.producer_id == old.producer_id
        if new.state is TxnState.EMPTY:
            valid = ((same_producer and new.producer_epoch in (old.producer_epoch, old.producer_epoch + 1))
                     or (not same_producer and new.producer_epoch == 0))
            valid = valid and not new.partitions and new.start_ms == -1
        elif new.state is TxnState.ONGOING:
            valid = (same_producer and new.producer_epoch == old.producer_epoch
                     and old.partitions <= new.partitions and new.timeout_ms == old.timeout_ms)
        elif new.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            epoch = old.producer_epoch + 1 if self.pending_fence else old.producer_epoch
            valid = (same_producer and new.producer_epoch == epoch and new.partitions == old.partitions
                     and new.timeout_ms == old.timeout_ms and new.start_ms == old.start_ms)
        elif new.state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
            valid = same_producer and new.producer_epoch == old.producer_epoch and not new.partitions
        else:
            valid = False
        if not valid:
            raise TransitionError(f"{old.transactional_id}: {old} -> {new}")

    def transit(self, **changes) -> TransactionRecord:
        """The current record with `changes` (the next transition's record, not yet prepared)."""
        return replace(self.record, **changes)
