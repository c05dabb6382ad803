"""Idempotent and transactional producer state of one partition, with Apache Kafka's
ProducerStateManager / ProducerAppendInfo rules.

Per producer id: its epoch, the coordinator epoch of its last transaction marker and its last
five batches (first/last sequence, first/last offset), in memory; per producer with a
transaction open here, the transaction's first offset. The partition log checks every append of
batches carrying a producer id (>= 0):
- Duplicate (current epoch, same first and last sequence as a remembered batch: a retry whose
  answer was lost): nothing is written; the original offsets are answered (error NONE).
- Lower epoch: InvalidProducerEpochError (a zombie producer).
- Higher epoch: the first sequence must be 0 (else OutOfOrderSequenceError); the window restarts.
- Same epoch: the first sequence must be last + 1 (wrapping from 2^31-1 to 0), else
  OutOfOrderSequenceError (a gap, or a retry older than the five remembered batches); 0 when the
  window is empty (a marker moved the producer to a new epoch).
- Unknown producer id: any sequence is accepted (KIP-360): its state may be gone (evicted, or
  older than the rebuild after a restart) while the producer is fine.
- Transactions: a transactional batch (attribute bit) of a producer with no open transaction
  opens one at its first offset; a non-transactional batch while one is open is refused with
  InvalidTxnStateError. A marker (`check_marker` then `complete`) from an epoch below the
  producer's is refused with InvalidProducerEpochError, from a coordinator epoch below the last
  marker's with TransactionCoordinatorFencedError; it closes the open transaction (a marker
  with none open completes nothing, as Kafka) and takes the marker's epochs.

Invariants: an append is checked whole (`prepare`) and the state changes only once the write
succeeded (`commit`); only committed state is searched for duplicates. An entry holds 0..5
batches of its epoch, oldest first, sequences consecutive (0 only after a marker changed its
epoch or for a producer known from a marker only); at most `max_producers` entries, the least
recently appended evicted first. Open transactions are kept apart from the entries and never
evicted (the transaction coordinator ends each one); they are in first-offset order, so the
first one is the first unstable offset. A guard is a fresh object compared by identity (a
stale one never matches a later one); at most `max_producers` guards, the oldest dropped first
(its append is refused, which is safe).

Deliberate differences from Apache Kafka: no expiry by time (the log has no clock; the producer
count bounds it); no snapshot files (`replay` rebuilds from the active segment only, see
`PartitionLog`); a multi-batch append is a duplicate only if every batch is one (a mix is out of
order).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional

from groupctl.log.batches import BatchHeader
from groupctl.log.errors import (
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceError,
    TransactionCoordinatorFencedError,
)

INT32_MAX = 2**31 - 1
BATCHES_TO_RETAIN = 5  # Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN (max.in.flight is at most 5)
DEFAULT_MAX_PRODUCERS = 10_000


def last_sequence(base_sequence: int, last_offset_delta: int) -> int:
    """The sequence of a batch's last record: sequences wrap from 2^31-1 to 0."""
    if base_sequence > INT32_MAX - last_offset_delta:
        return last_offset_delta - (INT32_MAX - base_sequence) - 1
    return base_sequence + last_offset_delta


def in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (last_seq == INT32_MAX and next_seq == 0)


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    first_sequence: int
    last_sequence: int
    first_offset: int
    last_offset: int
    max_timestamp: int = -1  # the batch's, shown by DescribeProducers as the producer's last timestamp


@dataclass(frozen=True, slots=True)
class CompletedTxn:
    """A transaction a marker ended: its first offset, the marker's offset (`last_offset`), and
    the last stable offset once it completed (the first offset of the next open transaction of
    another producer, else one past the marker: Kafka's lastStableOffset(completedTxn))."""

    producer_id: int
    first_offset: int
    last_offset: int
    aborted: bool
    last_stable_offset: int


@dataclass(frozen=True, slots=True)
class ProducerEntry:
    epoch: int
    batches: tuple[BatchMetadata, ...]  # oldest first, 0..BATCHES_TO_RETAIN
    coordinator_epoch: int = -1  # of the last transaction marker, -1 before any

    @property
    def last_sequence(self) -> int:
        return self.batches[-1].last_sequence if self.batches else -1

    @property
    def last_timestamp(self) -> int:
        return self.batches[-1].max_timestamp if self.batches else -1

    def find(self, epoch: int, first_seq: int, last_seq: int) -> Optional[BatchMetadata]:
        """The remembered batch a batch with these fields duplicates, if any."""
        if epoch != self.epoch:
            return None
        for batch in self.batches:
            if batch.first_sequence == first_seq and batch.last_sequence == last_seq:
                return batch
        return None

    def with_batch(self, epoch: int, batch: BatchMetadata) -> "ProducerEntry":
        """This entry after appending `batch` under `epoch` (a new epoch starts the window over)."""
        kept = self.batches if epoch == self.epoch else ()
        return ProducerEntry(epoch, (kept + (batch,))[-BATCHES_TO_RETAIN:], self.coordinator_epoch)

    def with_marker(self, epoch: int, coordinator_epoch: int) -> "ProducerEntry":
        """This entry after a marker: its epochs (a new epoch empties the window, as Kafka)."""
        return ProducerEntry(epoch, self.batches if epoch == self.epoch else (), coordinator_epoch)


@dataclass(frozen=True)
class PreparedAppend:
    """What `prepare` decided: either the append duplicates earlier batches (`duplicate` holds
    their original first and last offsets), or `updates` is the producer state after it."""

    duplicate: Optional[tuple[int, int]] = None
    updates: dict[int, ProducerEntry] = field(default_factory=dict)
    started: dict[int, int] = field(default_factory=dict)  # producer id -> first offset of its new transaction


class VerificationGuard:
    """One verification of a producer's transactional write (compared by identity)."""

    __slots__ = ()


NO_GUARD = VerificationGuard()
"""The guard of a producer whose transaction was open when its verification started (Kafka's
VerificationGuard.SENTINEL): it matches no producer's guard."""


def _metadata(header: BatchHeader) -> BatchMetadata:
    return BatchMetadata(header.base_sequence, last_sequence(header.base_sequence, header.last_offset_delta),
                         header.base_offset, header.last_offset, header.max_timestamp)


class ProducerStateManager:
    def __init__(self, max_producers: int = DEFAULT_MAX_PRODUCERS) -> None:
        self.max_producers = max_producers
        self._entries: dict[int, ProducerEntry] = {}  # least recently appended first
        self._ongoing: dict[int, int] = {}  # producer id -> first offset of its open transaction, in offset order
        self._guards: dict[int, VerificationGuard] = {}  # producer id -> its verification's guard, oldest first

    def __len__(self) -> int:
        return len(self._entries)

    def entry(self, producer_id: int) -> Optional[ProducerEntry]:
        return self._entries.get(producer_id)

    @property
    def entries(self) -> dict[int, ProducerEntry]:
        """Every remembered producer: producer id -> entry, least recently appended first (a copy;
        DescribeProducers' active producers)."""
        return dict(self._entries)

    @property
    def ongoing(self) -> dict[int, int]:
        """Open transactions: producer id -> first offset, earliest first (a copy)."""
        return dict(self._ongoing)

    @property
    def first_unstable_offset(self) -> Optional[int]:
        """The first offset of the earliest open transaction, None when none is open."""
        return next(iter(self._ongoing.values()), None)

    def start_verification(self, producer_id: int) -> VerificationGuard:
        """The guard an append of the producer's transactional batches is to carry once the
        transaction coordinator verified them: `NO_GUARD` while its transaction is open here,
        else its current guard (a new one if it has none)."""
        if producer_id in self._ongoing:
            return NO_GUARD
        guard = self._guards.get(producer_id)
        if guard is None:
            guard = self._guards[producer_id] = VerificationGuard()
            while len(self._guards) > self.max_producers:
                del self._guards[next(iter(self._guards))]
        return guard

    def prepare(self, headers: Iterable[BatchHeader], guard: Optional[VerificationGuard] = None) -> PreparedAppend:
        """Check batches about to be appended (headers with their assigned offsets), verified
        with `guard` (None: not checked).

        Raises InvalidProducerEpochError or OutOfOrderSequenceError when the append must be
        refused, InvalidTxnStateError for a non-transactional batch in an open transaction or a
        transactional batch opening one without the producer's guard; nothing changes until
        `commit`.
        """
        staged: dict[int, ProducerEntry] = {}
        started: dict[int, int] = {}
        duplicates: list[BatchMetadata] = []
        checked = 0
        for header in headers:
            checked += 1
            if header.producer_id < 0:
                continue
            batch = _metadata(header)
            committed = self._entries.get(header.producer_id)
            if committed is not None:
                original = committed.find(header.producer_epoch, batch.first_sequence, batch.last_sequence)
                if original is not None:
                    duplicates.append(original)
                    continue
            current = staged.get(header.producer_id, committed)
            staged[header.producer_id] = self._validated(header.producer_id, current, header.producer_epoch, batch)
            in_txn = header.producer_id in self._ongoing or header.producer_id in started
            if in_txn and not header.is_transactional:
                raise InvalidTxnStateError(f"producer {header.producer_id} sent a non-transactional batch "
                                           f"while its transaction is open")
            if not in_txn and header.is_transactional:
                if guard is not None and (guard is NO_GUARD or self._guards.get(header.producer_id) is not guard):
                    raise InvalidTxnStateError(f"producer {header.producer_id}'s transactional batch was not "
                                               f"verified in an open transaction (a marker came in between)")
                started[header.producer_id] = header.base_offset
        if duplicates:
            if len(duplicates) != checked:
                raise OutOfOrderSequenceError("an append mixes duplicate and new batches")
            return PreparedAppend(duplicate=(duplicates[0].first_offset, duplicates[-1].last_offset))
        return PreparedAppend(updates=staged, started=started)

    @staticmethod
    def _validated(producer_id: int, current: Optional[ProducerEntry], epoch: int,
                   batch: BatchMetadata) -> ProducerEntry:
        if current is None:
            return ProducerEntry(epoch, (batch,))
        if epoch < current.epoch:
            raise InvalidProducerEpochError(
                f"producer {producer_id} epoch {epoch} is older than its current epoch {current.epoch}"
            )
        if epoch > current.epoch:
            if batch.first_sequence != 0:
                raise OutOfOrderSequenceError(
                    f"producer {producer_id} new epoch {epoch} starts at sequence "
                    f"{batch.first_sequence}, expected 0"
                )
        elif not in_sequence(current.last_sequence, batch.first_sequence):
            raise OutOfOrderSequenceError(
                f"producer {producer_id} epoch {epoch} sent sequence {batch.first_sequence} "
                f"after {current.last_sequence}"
            )
        return current.with_batch(epoch, batch)

    def commit(self, prepared: PreparedAppend) -> None:
        """Apply what `prepare` decided, once the batches are written."""
        for producer_id, entry in prepared.updates.items():
            self._put(producer_id, entry)
        self._ongoing.update(prepared.started)
        for producer_id in prepared.started:
            self._guards.pop(producer_id, None)

    def check_marker(self, producer_id: int, epoch: int, coordinator_epoch: int) -> None:
        """Raise InvalidProducerEpochError or TransactionCoordinatorFencedError when a marker
        with these epochs must be refused (Kafka's appendEndTxnMarker checks)."""
        current = self._entries.get(producer_id)
        if current is None:
            return
        if epoch < current.epoch:
            raise InvalidProducerEpochError(
                f"marker for producer {producer_id} has epoch {epoch}, older than its current epoch {current.epoch}"
            )
        if coordinator_epoch < current.coordinator_epoch:
            raise TransactionCoordinatorFencedError(
                f"marker for producer {producer_id} has coordinator epoch {coordinator_epoch}, older than "
                f"{current.coordinator_epoch}"
            )

    def complete(self, producer_id: int, epoch: int, coordinator_epoch: int, offset: int,
                 commit: bool) -> Optional[CompletedTxn]:
        """Take a marker written at `offset` into the state (checked by `check_marker`, or
        replayed): the producer's open transaction, if any, is completed and returned."""
        current = self._entries.get(producer_id)
        entry = ProducerEntry(epoch, (), coordinator_epoch) if current is None else current.with_marker(
            epoch, coordinator_epoch)
        self._put(producer_id, entry)
        self._guards.pop(producer_id, None)
        first = self._ongoing.pop(producer_id, None)
        if first is None:
            return None
        stable = next(iter(self._ongoing.values()), offset + 1)
        return CompletedTxn(producer_id, first, offset, not commit, min(stable, offset + 1))

    def replay(self, header: BatchHeader) -> None:
        """Take a batch already in the log into the state, unchecked (rebuilding after a
        restart). Batches must come in offset order."""
        if header.producer_id < 0:
            return
        if header.is_transactional and header.producer_id not in self._ongoing:
            self._ongoing[header.producer_id] = header.base_offset
        current = self._entries.get(header.producer_id)
        batch = _metadata(header)
        if current is None:
            entry = ProducerEntry(header.producer_epoch, (batch,))
        else:
            entry = current.with_batch(header.producer_epoch, batch)
        self._put(header.producer_id, entry)

    def _put(self, producer_id: int, entry: ProducerEntry) -> None:
        self._entries.pop(producer_id, None)
        self._entries[producer_id] = entry
        while len(self._entries) > self.max_producers:
            del self._entries[next(iter(self._entries))]
