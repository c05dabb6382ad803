"""The transaction coordinator, sans-IO: Kafka's TransactionCoordinator and TransactionStateManager
for the transactional ids one node coordinates (KIP-98, KIP-360 epoch bumps, KIP-890 part 1).

Every operation takes `now_ms` and returns an `Outcome`; the shell persists its record, tells the
core (`written` or `write_failed`), then sends the reply. Committing or aborting is three steps:
EndTxn writes PrepareCommit/PrepareAbort and answers; `written` hands back the `MarkerWrite` for
every partition of the transaction; once the markers are in the partition logs the shell calls
`markers_written` with that MarkerWrite, whose CompleteCommit/CompleteAbort record ends the
transaction. Answers are
version-free: the handlers turn PRODUCER_FENCED into INVALID_PRODUCER_EPOCH for the request
versions that predate it, as Kafka's KafkaApis does.

Invariants:
- A transactional id's state changes only when its record is persisted (`written`); until then
  the transition is pending and every other request for the id answers CONCURRENT_TRANSACTIONS
  (or waits, for the coordinator's own work). A record handed out is either `written` or
  `write_failed` before the shell asks anything else of that id's pending transition.
- Errors are Kafka's, checked in Kafka's order: unknown id or other producer id
  INVALID_PRODUCER_ID_MAPPING, other epoch PRODUCER_FENCED, a pending transition or a transaction
  completing CONCURRENT_TRANSACTIONS, a request its state cannot take INVALID_TXN_STATE.
- A producer epoch is never handed out twice for one producer id, and never at 32767: an
  InitProducerId that would exhaust it takes a new producer id at epoch 0 (KIP-360).
- Fencing (a new InitProducerId while a transaction is open, or a transaction open longer than
  its timeout) aborts the transaction under the epoch plus one, which no producer holds, so the
  fenced producer's next request is PRODUCER_FENCED (already while the fence is being written,
  as in Kafka, which bumps the epoch in memory first); the new producer gets
  CONCURRENT_TRANSACTIONS until the abort completes, and its retry bumps the epoch again.
- An id is visible (DescribeTransactions, ListTransactions) once its first record is persisted.
- A transaction's end is journaled once (`transaction_completed`, on the Outcome whose record
  is its CompleteCommit/CompleteAbort), with why it ended when this coordinator prepared it.
- A transaction is completed only by the `MarkerWrite` it handed out (by identity): a completion
  left over from before an unload/load, or from an earlier transaction of the id, is refused by
  `markers_written` and told by `completing` to stop, so CompleteCommit/CompleteAbort is never
  written for a transaction whose own markers were not all written.
- `load` takes the ids of the partitions a node starts coordinating (the last record of each id),
  leaving the others as they are; their transactions found preparing are completed again
  (`resume`), open ones time out as before. `unload` drops the ids of partitions it lost.

Deliberate differences from Kafka:
- Nothing is mutated before its record is durable, so Kafka's hasFailedEpochFence bookkeeping is
  not needed: after a failed fence write the epoch is still the old one and a retry writes the
  same bumped epoch again.
- The record carries `last_producer_epoch`, so a retried InitProducerId is recognised after a
  restart too (Kafka keeps it in memory only).
- An exhausted epoch with an expected epoch that does not match answers PRODUCER_FENCED or the
  retry's answer, where Kafka raises an internal error.
- Transactions V2 (KIP-890 part 2: an epoch bump at every EndTxn) is not offered: the node does
  not advertise the transaction.version feature, so clients use V1 semantics.
- Transactional ids do not expire (Kafka's transactional.id.expiration.ms, state Dead) yet.
- Timeouts are found by `expire`, called by the shell when `next_timeout_ms` is due, rather
  than by a periodic scan; the rule is Kafka's: start + timeout < now.
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional, Tuple

from groupctl.coordinator import journal
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.transactions.metadata import TransactionMetadata, TransitionError
from groupctl.coordinator.transactions.outcomes import (
    Described,
    Listed,
    MarkerWrite,
    Outcome,
    TransactionView,
    TxnReply,
)
from groupctl.coordinator.transactions.records import (
    MAX_PRODUCER_EPOCH,
    NO_PRODUCER_EPOCH,
    Partition,
    TransactionRecord,
    TxnState,
    epoch_exhausted,
)

DEFAULT_MAX_TIMEOUT_MS = 900_000
"""Kafka's transaction.max.timeout.ms default (15 minutes)."""

ProducerIdAndEpoch = Tuple[int, int]

_PREPARING = (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT)
_COMPLETED = (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)


def _error(code: ErrorCode) -> Outcome:
    return Outcome(TxnReply(code))


class TransactionCoordinator:
    """The transactional ids this node coordinates.

    `allocate_producer_id()` returns a producer id never handed out before, or None while none is
    available (answered COORDINATOR_LOAD_IN_PROGRESS, retriable, as Kafka's id manager does).
    `offsets_partition_for(group_id)` names the partition holding the group's offsets, which
    AddOffsetsToTxn adds to the transaction. `node_id` is the node its journal events name.
    """

    def __init__(self, *, allocate_producer_id: Callable[[], Optional[int]],
                 offsets_partition_for: Callable[[str], Partition],
                 max_timeout_ms: int = DEFAULT_MAX_TIMEOUT_MS, node_id: int = 0) -> None:
        self.node_id = node_id
        self._allocate = allocate_producer_id
        self._offsets_partition_for = offsets_partition_for
        self.max_timeout_ms = max_timeout_ms
        self._txns: dict[str, TransactionMetadata] = {}

    # -- InitProducerId -------------------------------------------------------------------------

    def init_producer_id(self, transactional_id: Optional[str], timeout_ms: int, now_ms: int,
                         expected: Optional[ProducerIdAndEpoch] = None) -> Outcome:
        """InitProducerId: a producer id and a fresh epoch for `transactional_id`, fencing its
        previous holder. Without a transactional id (an idempotent producer) a new producer id at
        epoch 0, nothing stored. `expected` is the (producer id, epoch) a v3+ producer presents
        when it recovers (KIP-360)."""
        if transactional_id is None:
            producer_id = self._allocate()
            if producer_id is None:
                return _error(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
            return Outcome(TxnReply(ErrorCode.NONE, producer_id, 0))
        if transactional_id == "":
            return _error(ErrorCode.INVALID_REQUEST)
        if not 0 < timeout_ms <= self.max_timeout_ms:
            return _error(ErrorCode.INVALID_TRANSACTION_TIMEOUT)
        txn = self._txns.get(transactional_id)
        if txn is None:
            producer_id = self._allocate()
            if producer_id is None:
                return _error(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
            txn = self._txns[transactional_id] = TransactionMetadata.new(
                transactional_id, producer_id, timeout_ms, now_ms)
        if txn.pending is not None:
            return _error(ErrorCode.CONCURRENT_TRANSACTIONS)
        current = txn.record
        if expected is not None and not self._may_recover(current, expected):
            return _error(ErrorCode.PRODUCER_FENCED)
        if current.state in _PREPARING:
            return _error(ErrorCode.CONCURRENT_TRANSACTIONS)
        if current.state is TxnState.ONGOING:
            return Outcome(TxnReply(ErrorCode.CONCURRENT_TRANSACTIONS),
                           self._fence_and_abort(txn, now_ms, journal.NEW_PRODUCER))
        if epoch_exhausted(current.producer_epoch) and (expected is None or expected[1] == current.producer_epoch):
            producer_id = self._allocate()
            if producer_id is None:
                return _error(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
            last_epoch = current.producer_epoch if expected is not None else NO_PRODUCER_EPOCH
            return self._initialized(txn, producer_id, 0, last_epoch, timeout_ms, now_ms)
        if expected is None:
            return self._initialized(txn, current.producer_id, current.producer_epoch + 1, NO_PRODUCER_EPOCH,
                                     timeout_ms, now_ms)
        if current.producer_epoch == NO_PRODUCER_EPOCH or expected[1] == current.producer_epoch:
            return self._initialized(txn, current.producer_id, current.producer_epoch + 1, current.producer_epoch,
                                     timeout_ms, now_ms)
        if expected[1] == current.last_producer_epoch:
            # A retry of an InitProducerId that succeeded: the same answer, no new bump.
            return self._initialized(txn, current.producer_id, current.producer_epoch, current.last_producer_epoch,
                                     timeout_ms, now_ms)
        return _error(ErrorCode.PRODUCER_FENCED)

    @staticmethod
    def _may_recover(current: TransactionRecord, expected: ProducerIdAndEpoch) -> bool:
        """Kafka's isValidProducerId: the id is brand new, or the producer presents its current
        producer id, or the previous one with an exhausted epoch (a retry across a rotation)."""
        producer_id, epoch = expected
        return (current.producer_epoch == NO_PRODUCER_EPOCH or producer_id == current.producer_id
                or (producer_id == current.previous_producer_id and epoch_exhausted(epoch)))

    def _initialized(self, txn: TransactionMetadata, producer_id: int, epoch: int, last_epoch: int,
                     timeout_ms: int, now_ms: int) -> Outcome:
        current = txn.record
        previous = current.producer_id if producer_id != current.producer_id else current.previous_producer_id
        record = txn.prepare(txn.transit(
            producer_id=producer_id, previous_producer_id=previous, producer_epoch=epoch,
            last_producer_epoch=last_epoch, timeout_ms=timeout_ms, state=TxnState.EMPTY,
            partitions=frozenset(), start_ms=-1, last_update_ms=now_ms))
        return Outcome(TxnReply(ErrorCode.NONE, producer_id, epoch), record)

    # -- AddPartitionsToTxn, AddOffsetsToTxn ----------------------------------------------------

    def add_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                       partitions: Iterable[Partition], now_ms: int) -> Outcome:
        """AddPartitionsToTxn: the partitions join the transaction, which opens (Ongoing) if it
        was not. One error for all the partitions, as Kafka's coordinator answers."""
        if not transactional_id:
            return _error(ErrorCode.INVALID_REQUEST)
        txn = self._txns.get(transactional_id)
        added = frozenset(partitions)
        error = self._producer_error(txn, producer_id, producer_epoch)
        if error is not None:
            return _error(error)
        current = txn.record
        if txn.pending is not None or current.state in _PREPARING:
            return _error(ErrorCode.CONCURRENT_TRANSACTIONS)
        if current.state is TxnState.ONGOING and added <= current.partitions:
            return Outcome(TxnReply(ErrorCode.NONE))
        start_ms = now_ms if current.state is not TxnState.ONGOING else current.start_ms
        record = txn.prepare(txn.transit(state=TxnState.ONGOING, partitions=current.partitions | added,
                                         start_ms=start_ms, last_update_ms=now_ms))
        return Outcome(TxnReply(ErrorCode.NONE), record)

    def add_offsets(self, transactional_id: str, producer_id: int, producer_epoch: int, group_id: str,
                    now_ms: int) -> Outcome:
        """AddOffsetsToTxn: the partition holding `group_id`'s offsets joins the transaction, so
        its TxnOffsetCommit is committed or aborted with the rest."""
        return self.add_partitions(transactional_id, producer_id, producer_epoch,
                                   [self._offsets_partition_for(group_id)], now_ms)

    def verify_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                          partitions: Iterable[Partition]) -> dict[Partition, ErrorCode]:
        """AddPartitionsToTxn v4+ verify-only (KIP-890 part 1): whether each partition is already
        in the transaction (else TRANSACTION_ABORTABLE); nothing changes. The pending state is not
        checked, as in Kafka: the write itself is verified again."""
        wanted = list(partitions)
        if not transactional_id:
            return {partition: ErrorCode.INVALID_REQUEST for partition in wanted}
        txn = self._txns.get(transactional_id)
        error = self._producer_error(txn, producer_id, producer_epoch)
        if error is None and txn.state in _PREPARING:
            error = ErrorCode.CONCURRENT_TRANSACTIONS
        if error is not None:
            return {partition: error for partition in wanted}
        return {partition: ErrorCode.NONE if partition in txn.record.partitions else ErrorCode.TRANSACTION_ABORTABLE
                for partition in wanted}

    @staticmethod
    def _producer_error(txn: Optional[TransactionMetadata], producer_id: int, producer_epoch: int) -> Optional[ErrorCode]:
        if txn is None or txn.record.producer_id != producer_id:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if txn.fenced_epoch() != producer_epoch:
            return ErrorCode.PRODUCER_FENCED
        return None

    # -- EndTxn ---------------------------------------------------------------------------------

    def end_txn(self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool,
                now_ms: int) -> Outcome:
        """EndTxn: commit or abort the open transaction (PrepareCommit/PrepareAbort). A retry of an
        EndTxn that completed answers NONE; one still writing its markers CONCURRENT_TRANSACTIONS;
        the opposite outcome INVALID_TXN_STATE."""
        if not transactional_id:
            return _error(ErrorCode.INVALID_REQUEST)
        txn = self._txns.get(transactional_id)
        error = self._producer_error(txn, producer_id, producer_epoch)
        if error is not None:
            return _error(error)
        if txn.pending is not None and txn.pending not in _COMPLETED:
            return _error(ErrorCode.CONCURRENT_TRANSACTIONS)
        # While its markers are written a transaction is still PrepareCommit/PrepareAbort, as in
        # Kafka: the same outcome is CONCURRENT_TRANSACTIONS, the opposite INVALID_TXN_STATE.
        current = txn.record
        state = current.state
        if state is TxnState.ONGOING:
            record = txn.prepare(txn.transit(
                state=TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT, last_update_ms=now_ms))
            txn.ending = journal.END_TXN
            return Outcome(TxnReply(ErrorCode.NONE, current.producer_id, current.producer_epoch), record)
        finished = TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT
        preparing = TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT
        if state is finished:
            return Outcome(TxnReply(ErrorCode.NONE, current.producer_id, current.producer_epoch))
        if state is preparing:
            return _error(ErrorCode.CONCURRENT_TRANSACTIONS)
        return _error(ErrorCode.INVALID_TXN_STATE)

    def _fence_and_abort(self, txn: TransactionMetadata, now_ms: int, why: str) -> TransactionRecord:
        """Kafka's prepareFenceProducerEpoch then endTransaction(ABORT): abort the open
        transaction under the next epoch, which no producer has been given."""
        current = txn.record
        if current.producer_epoch >= MAX_PRODUCER_EPOCH:
            raise TransitionError(f"{current.transactional_id}: cannot fence epoch {current.producer_epoch}")
        record = txn.prepare(txn.transit(
            state=TxnState.PREPARE_ABORT, producer_epoch=current.producer_epoch + 1,
            last_producer_epoch=NO_PRODUCER_EPOCH, last_update_ms=now_ms), fence=True)
        txn.ending = why
        return record

    # -- Persistence and markers ----------------------------------------------------------------

    def written(self, record: TransactionRecord, now_ms: int) -> Optional[MarkerWrite]:
        """`record` is persisted: its transition completes. After PrepareCommit/PrepareAbort, the
        markers to write (the id stays busy until `markers_written`)."""
        txn = self._txns[record.transactional_id]
        txn.complete(record)
        if record.state not in _PREPARING:
            return None
        return self._begin_completion(txn)

    def write_failed(self, record: TransactionRecord) -> None:
        """`record` could not be persisted: its transition is dropped. After a CompleteCommit/
        CompleteAbort write the markers stay written: call `markers_written` again to retry."""
        if record.state not in _COMPLETED:
            self._txns[record.transactional_id].abandon()

    def completing(self, marker: MarkerWrite) -> bool:
        """Whether `marker` is still the completion of its id's transaction here: False once the
        transaction completed, or the id was unloaded or loaded again (another completion then
        owns it), so the shell stops working on it."""
        txn = self._txns.get(marker.transactional_id)
        return txn is not None and txn.completion is marker

    def markers_written(self, marker: MarkerWrite, now_ms: int) -> Outcome:
        """Every marker of `marker` (the completion `written` or `resume` handed out) is written:
        CompleteCommit/CompleteAbort, with the partitions cleared, to persist and hand back to
        `written`; its `transaction_completed` event to journal once it is persisted. A marker
        that is no longer its transaction's completion (`completing`) is refused: no record."""
        if not self.completing(marker):
            return Outcome(None)
        transactional_id = marker.transactional_id
        txn = self._txns[transactional_id]
        txn.pending = None
        prepared = txn.record
        commit = prepared.state is TxnState.PREPARE_COMMIT
        event = journal.transaction_completed(
            self.node_id, now_ms, transactional_id=transactional_id, producer_id=prepared.producer_id,
            producer_epoch=prepared.producer_epoch, outcome=journal.COMMIT if commit else journal.ABORT,
            reason=txn.ending,
            partitions=journal.partition_rows((topic, p, None) for topic, p in sorted(prepared.partitions)),
            started_ts=prepared.start_ms)
        return Outcome(None, txn.prepare(txn.transit(
            state=TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT,
            partitions=frozenset(), last_update_ms=now_ms)), (event,))

    def _begin_completion(self, txn: TransactionMetadata) -> MarkerWrite:
        current = txn.record
        commit = current.state is TxnState.PREPARE_COMMIT
        txn.pending = TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT
        txn.completion = MarkerWrite(current.transactional_id, current.producer_id, current.producer_epoch, commit,
                                     current.partitions)
        return txn.completion

    # -- Timeouts -------------------------------------------------------------------------------

    def next_timeout_ms(self) -> Optional[int]:
        """The earliest time at which `expire` has a transaction to abort, if any is open."""
        deadlines = [txn.record.start_ms + txn.record.timeout_ms + 1 for txn in self._txns.values()
                     if txn.state is TxnState.ONGOING and txn.pending is None]
        return min(deadlines, default=None)

    def expire(self, now_ms: int) -> list[Outcome]:
        """Kafka's abortTimedOutTransactions: every open transaction older than its timeout is
        aborted under a bumped epoch, fencing its producer. Ids with a pending transition wait."""
        return [Outcome(None, self._fence_and_abort(txn, now_ms, journal.TIMEOUT)) for txn in self._txns.values()
                if txn.state is TxnState.ONGOING and txn.pending is None
                and txn.record.start_ms + txn.record.timeout_ms < now_ms]

    # -- Load -----------------------------------------------------------------------------------

    def load(self, records: Iterable[TransactionRecord]) -> list[MarkerWrite]:
        """Take the ids of persisted records (a start, a takeover), the last record of each id
        winning over what was held for it; ids not named stay as they are. Returns what `resume`
        returns for the ids loaded."""
        loaded = set()
        for record in records:
            self._txns[record.transactional_id] = TransactionMetadata(record)
            loaded.add(record.transactional_id)
        return self.resume(loaded)

    def resume(self, transactional_ids: Optional[Iterable[str]] = None) -> list[MarkerWrite]:
        """The markers of every transaction (of `transactional_ids`, default all) that was
        preparing to commit or abort with no completion under way, to write again (markers are
        idempotent for a producer epoch), then `markers_written`."""
        txns = (self._txns.values() if transactional_ids is None
                else [self._txns[i] for i in transactional_ids if i in self._txns])
        return [self._begin_completion(txn) for txn in txns if txn.state in _PREPARING and txn.pending is None]

    def unload(self, belongs: Callable[[str], bool]) -> None:
        """Drop the ids `belongs` accepts (their partition moved to another node), pending
        transitions included: the new coordinator loads what the store holds."""
        for transactional_id in [i for i in self._txns if belongs(i)]:
            del self._txns[transactional_id]

    # -- DescribeTransactions, ListTransactions -------------------------------------------------

    def describe(self, transactional_id: str) -> Described:
        if not transactional_id:
            return Described(ErrorCode.INVALID_REQUEST)
        txn = self._txns.get(transactional_id)
        if txn is None or txn.state is TxnState.DEAD or txn.record.producer_epoch == NO_PRODUCER_EPOCH:
            return Described(ErrorCode.TRANSACTIONAL_ID_NOT_FOUND)
        return Described(ErrorCode.NONE, _view(txn.record))

    def list_transactions(self, now_ms: int, producer_ids: Iterable[int] = (), states: Iterable[str] = (),
                          min_duration_ms: int = -1) -> Listed:
        """ListTransactions: filtered by producer id, state name and (KIP-994) open for longer
        than `min_duration_ms`; state names no state has come back as unknown filters."""
        wanted_ids = set(producer_ids)
        names = list(states)
        known = {state.value: state for state in TxnState}
        wanted_states = {known[name] for name in names if name in known}
        unknown = tuple(name for name in names if name not in known)
        views = []
        for transactional_id in sorted(self._txns):
            record = self._txns[transactional_id].record
            if record.state is TxnState.DEAD or record.producer_epoch == NO_PRODUCER_EPOCH:
                continue
            if wanted_ids and record.producer_id not in wanted_ids:
                continue
            if names and record.state not in wanted_states:
                continue
            if min_duration_ms >= 0 and now_ms - record.start_ms <= min_duration_ms:
                continue
            views.append(_view(record))
        return Listed(tuple(views), unknown)


def _view(record: TransactionRecord) -> TransactionView:
    return TransactionView(record.transactional_id, record.producer_id, record.producer_epoch, record.state.value,
                           record.timeout_ms, record.start_ms, record.partitions)

