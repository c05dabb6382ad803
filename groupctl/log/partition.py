"""One topic partition's log: segments of stored batches, offsets, reads and timestamp lookups.

Invariants:
- Offsets are consecutive across batches and segments: segment k+1 starts at segment k's
  `next_offset`; the log end offset is the last segment's `next_offset`.
- Only the last (active) segment is written; the log rolls to a new segment, syncing the one
  it leaves (unless retention deletes it at once), before an append that would take a non-empty active segment past segment.bytes or
  whose newest timestamp is more than segment.ms after the active segment's first batch
  (Kafka's rule; the segment's creation time when that batch has no timestamp).
- The log honours one `LogConfig` at a time (`configure` replaces it between two calls); the
  clock (`clock`, wall-clock ms) decides LogAppendTime stamps, time rolls and retention.ms.
- Memory per log is the sparse index (24 bytes per `index_interval_bytes` of batches), a few
  fields per segment and its segments' aborted transactions (one entry per abort marker, read
  from the `.txnindex` files at open; Kafka reads them from the file per fetch); nothing is
  kept per batch or per record.
- Not thread-safe: one owner (the node's event loop) appends, reads and calls listeners.
- Durability: an append is in the OS page cache when it returns, so it survives the process
  dying; it reaches the disk on roll, `flush()` and `close()`. On this single-replica node
  acks=all therefore means "in the page cache". `close()` leaves a clean-shutdown marker;
  reopening without it re-checks the CRC of every batch of the active segment, and a torn tail
  is always truncated.
- Idempotent and transactional producers (`producers`): an append is checked before anything is
  written. The state is rebuilt on open from the batches of the active segment only, so
  reopening reads at most one segment of headers (and the markers' records), and a producer
  whose last batches are older is unknown afterwards.
- Transactions (as Kafka's log; only the transaction coordinator ends them, `append_marker`):
  a transactional batch opens its producer's transaction; the last stable offset is the first
  offset of the earliest open one (never below the log start), else the high watermark. An
  abort marker appends (producer id, first offset, marker offset, last stable offset then) to
  the active segment's transaction index (`txnindex.py`), synced with the segment; on open the
  active segment's index is reconciled with its batches (entries past a truncated tail dropped,
  aborts it lacks added), as Kafka recovers the segments after its recovery point. Limit of
  having no producer-state snapshots (Kafka has them): a transaction whose first batches are
  older than the active segment is reopened at its first batch in the active segment, and one
  with none there is forgotten (its records count as stable, and its abort, if it comes, is not
  indexed), so a transaction must not stay open across a segment roll and a restart.
- Verification (Kafka's maybeStartTransactionVerification): `start_verification` before asking
  the transaction coordinator, the guard to `append` with no wait between the last check of the
  log and the append; a marker in between voids the guard (`producers`), so the late batch is
  refused (InvalidTxnStateError) instead of opening a transaction after the marker.
- The log start offset only grows (DeleteRecords, retention) and lies in [first segment's base,
  log end]; at open it is max(checkpoint, first segment's base) (`checkpoints.py`). Every read
  follows it: `read` refuses offsets below it, `offset_for_timestamp` never answers one.
- A segment whose successor starts at or below the log start is detached from the segment list
  on the owner's thread (so no read can reach it afterwards) and handed back in a `Removal`;
  `finish_removal` (any thread) checkpoints the new start and only then closes and unlinks the
  segments, so a crash in between leaves the old files below a durable start, which the next
  open deletes. The active segment is never detached.
- Leader epochs (`epochs.py`): every batch appended carries `leader_epoch`, the epoch the log was
  opened or last made leader with, and the epoch cache's latest entry is that epoch, assigned at
  the log end offset of that moment (Kafka's makeLeader). The epoch never decreases: a log opens
  at max(the epoch it is given, its cache's latest) and `raise_epoch` ignores a lower one. The
  cache is checkpointed in `leader-epoch-checkpoint`; it follows the log start in memory
  (`_log_start_moved`) and, at open, from the checkpointed start, so its file never starts
  later than the durable log start.

Retention (`retention_removal`, run by the log manager every log.retention.check.interval.ms)
deletes whole segments from the oldest, as Kafka's UnifiedLog.deleteOldSegments: first while
the log exceeds retention.bytes by at least the segment's size, then while the segment's newest
timestamp is older than retention.ms; never an empty active segment, and when every segment
goes the log rolls first so the active one can go too. The log start follows. That roll's new
segment is created in a worker thread under staging names (`stage_segment`) and attached on the
owner's thread, so a pass does no slow file work on the loop (200 fully expired logs took ~0.5 s
of the loop when it rolled there, with an fsync of each segment about to be deleted).

DeleteRecords is bounded by the high watermark, not the last stable offset, and retention deletes
segments below the high watermark whatever transactions they hold, as Kafka's; the last stable
offset then follows the log start.

Deliberate differences from Apache Kafka: no compaction, no producer-state snapshots, no
segment.jitter.ms; the high watermark equals the log end offset (one replica). Kafka checkpoints the log start once a minute and deletes the segments
below it in the retention pass; here the checkpoint is written before DeleteRecords answers and
the segments go at once. A segment whose records all lack a timestamp (-1) never expires by
retention.ms (Kafka falls back to the file's modification time).
"""

from __future__ import annotations

import logging
import shutil
import time
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from groupctl.log.batches import assign_offsets, parse_header, validate_produced
from groupctl.log.checkpoints import LogStartCheckpoint
from groupctl.log.config import LOG_APPEND_TIME, LogConfig
from groupctl.log.epochs import open_cache
from groupctl.log.errors import (
    LogCorruptionError,
    OffsetOutOfRangeError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
)
from groupctl.log.markers import build_marker, parse_marker
from groupctl.log.producers import CompletedTxn, ProducerStateManager, VerificationGuard
from groupctl.log.segment import STAGED_SUFFIX, Segment
from groupctl.log.timestamps import stamp_log_append_time
from groupctl.log.txnindex import AbortedTxn

CLEAN_SHUTDOWN_MARKER = ".clean_shutdown"
HIGH_WATERMARK = -1  # DeleteRecords' offset meaning "everything up to the high watermark"

log = logging.getLogger(__name__)

Listener = Callable[[], None]
Clock = Callable[[], int]


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class AppendResult:
    base_offset: int  # offset of the first record appended
    last_offset: int  # offset of the last record appended
    log_start_offset: int
    duplicate: bool = False  # a retry of batches already in the log: nothing was written
    log_append_time: int = -1  # the time the batches were stamped with (LogAppendTime), else -1


@dataclass(frozen=True)
class Removal:
    """What moving the log start left to do off the owner's thread: checkpoint
    `log_start_offset` (for a log on disk), then close and unlink `segments`."""

    log_start_offset: int
    segments: tuple[Segment, ...]


class PartitionLog:
    def __init__(
        self,
        topic: str,
        partition: int,
        directory: Optional[Path],
        *,
        config: LogConfig = LogConfig(),
        index_interval_bytes: int,
        clock: Clock = wall_clock_ms,
        leader_epoch: int = 0,
    ) -> None:
        self.topic = topic
        self.partition = partition
        self.directory = directory
        self.config = config
        self._clock = clock
        self._index_interval = index_interval_bytes
        self._listeners: list[Listener] = []
        self._checkpoint = LogStartCheckpoint(directory) if directory is not None else None
        self._log_start = 0
        self._segments = self._open() if directory is not None else [Segment.create(None, 0, index_interval_bytes)]
        self._bases = [segment.base_offset for segment in self._segments]
        self._active_created = clock()  # for segment.ms when the active segment's first batch has no timestamp
        self.producers = ProducerStateManager()
        self._replay_active()
        self.epochs = open_cache(directory, self._batch_epochs, self.log_end_offset)
        self.epochs.truncate_from_start(self._log_start)
        self.leader_epoch = max(leader_epoch, self.epochs.latest_epoch)  # never below what it has led at
        self.epochs.assign(self.leader_epoch, self.log_end_offset)

    def _replay_active(self) -> None:
        """Rebuild the producer state, open transactions included, from the active segment, and
        index the aborts in it that its transaction index lacks (an unclean shutdown can leave
        the index behind the segment; `Segment.recover` already dropped entries past its end):
        as Kafka's recovery of the segments after its recovery point, which here is the active
        segment (the others were synced with their index when the log rolled past them)."""
        active = self._segments[-1]
        indexed = active.aborted.last_offset
        for header in active.walk(0):
            if not header.is_control:
                self.producers.replay(header)
                continue
            commit, coordinator_epoch = parse_marker(active.read(header.position, header.size, at_least_one=True))
            completed = self.producers.complete(header.producer_id, header.producer_epoch, coordinator_epoch,
                                                header.base_offset, commit)
            if completed is not None and completed.aborted and completed.last_offset > indexed:
                active.aborted.append(_aborted(completed))

    def _batch_epochs(self):
        """(leader epoch, base offset) of every batch, oldest first: rebuilds a lost epoch cache."""
        return ((header.leader_epoch, header.base_offset) for segment in self._segments
                for header in segment.walk(0))

    def _open(self) -> list[Segment]:
        assert self.directory is not None
        self.directory.mkdir(parents=True, exist_ok=True)
        marker = self.directory / CLEAN_SHUTDOWN_MARKER
        clean = marker.exists()
        bases = sorted(int(path.stem) for path in self.directory.glob("*.log") if path.stem.isdigit())
        assert self._checkpoint is not None
        checkpointed = self._checkpoint.read()
        if not bases:
            segments = [Segment.create(self.directory, checkpointed or 0, self._index_interval)]
        else:
            segments = [Segment.open_closed(self.directory, base, self._index_interval) for base in bases[:-1]]
            segments.append(Segment.recover(self.directory, bases[-1], self._index_interval, verify_crc=not clean))
            for before, after in zip(segments, segments[1:]):
                if before.next_offset != after.base_offset:
                    raise LogCorruptionError(
                        f"{self.directory}: segment {before.base_offset} ends at offset "
                        f"{before.next_offset} but the next segment starts at {after.base_offset}"
                    )
        if checkpointed is not None and segments[-1].next_offset < checkpointed:
            # As Kafka's LogLoader: segment files were lost, the log restarts empty at its start.
            log.warning("%s: the log ends at %d, before its checkpointed start %d: deleting its segments",
                        self.directory, segments[-1].next_offset, checkpointed)
            for segment in segments:
                segment.delete()
            segments = [Segment.create(self.directory, checkpointed, self._index_interval)]
        self._log_start = max(checkpointed or 0, segments[0].base_offset)
        while len(segments) > 1 and segments[1].base_offset <= self._log_start:
            segments.pop(0).delete()  # left by a crash after the start was checkpointed
        for leftover in self.directory.glob("*" + STAGED_SUFFIX):
            leftover.unlink()  # staged for a roll that a crash or close interrupted
        marker.unlink(missing_ok=True)
        return segments

    # -- offsets ---------------------------------------------------------------------------

    @property
    def log_start_offset(self) -> int:
        """The first offset readable: max(checkpointed start, first segment's base offset)."""
        return self._log_start

    @property
    def log_end_offset(self) -> int:
        """One past the last offset written; also the high watermark (one replica)."""
        return self._segments[-1].next_offset

    @property
    def high_watermark(self) -> int:
        return self.log_end_offset

    @property
    def last_stable_offset(self) -> int:
        """The first offset of the earliest open transaction (not below the log start, as
        Kafka's firstUnstableOffset), else the high watermark: read_committed reads stop here."""
        first = self.producers.first_unstable_offset
        return self.high_watermark if first is None else max(first, self._log_start)

    @property
    def max_timestamp(self) -> int:
        """The largest batch max timestamp in the log, -1 when the log is empty."""
        return max(segment.max_timestamp for segment in self._segments)

    @property
    def size_bytes(self) -> int:
        return sum(segment.size for segment in self._segments)

    @property
    def segment_base_offsets(self) -> list[int]:
        return list(self._bases)

    @property
    def index_entries(self) -> int:
        """How many sparse index entries the log holds in memory (about bytes / interval)."""
        return sum(len(segment.index) for segment in self._segments)

    # -- writing ---------------------------------------------------------------------------

    def configure(self, config: LogConfig) -> None:
        """Honour `config` from the next append and retention pass on."""
        self.config = config

    def start_verification(self, producer_id: int) -> VerificationGuard:
        """The guard for a verification of the producer's transactional write, taken before the
        transaction coordinator is asked (`ProducerStateManager.start_verification`)."""
        return self.producers.start_verification(producer_id)

    def append(self, data: bytes | bytearray | memoryview, guard: Optional[VerificationGuard] = None) -> AppendResult:
        """Validate produced record batches, assign them the next offsets and append them.

        Raises UnsupportedMagicError for legacy message sets, CorruptBatchError for anything
        else malformed, RecordTooLargeError for a batch above max.message.bytes,
        RecordBatchTooLargeError when the batches exceed segment.bytes, and
        InvalidProducerEpochError / OutOfOrderSequenceError / InvalidTxnStateError when the
        producer state refuses the batches (a transactional batch opening a transaction must
        carry its producer's current `guard` unless the guard is None); nothing is written then. A duplicate of batches already appended is not
        written again: the result carries their original offsets and `duplicate=True`. With
        LogAppendTime the batches are stamped with the clock's time. Listeners run after a write.
        """
        config = self.config
        headers = validate_produced(data)
        for header in headers:
            if header.size > config.max_message_bytes:
                raise RecordTooLargeError(f"a batch of {header.size} bytes exceeds max.message.bytes "
                                          f"{config.max_message_bytes}")
        if len(data) > config.segment_bytes:
            raise RecordBatchTooLargeError(f"{len(data)} bytes of batches exceed segment.bytes {config.segment_bytes}")
        stored, assigned = assign_offsets(data, headers, self.log_end_offset, self.leader_epoch)
        prepared = self.producers.prepare(assigned, guard)
        if prepared.duplicate is not None:
            first, last = prepared.duplicate
            return AppendResult(first, last, self.log_start_offset, duplicate=True)
        append_time = -1
        if config.message_timestamp_type == LOG_APPEND_TIME:
            append_time = self._clock()
            assigned = stamp_log_append_time(stored, assigned, append_time)
        active = self._segments[-1]
        if self._should_roll(active, len(stored), max(h.max_timestamp for h in assigned)):
            active = self._roll()
        active.append(stored, assigned)
        self.producers.commit(prepared)
        for listener in list(self._listeners):
            listener()
        return AppendResult(assigned[0].base_offset, assigned[-1].last_offset, self.log_start_offset,
                            log_append_time=append_time)

    def append_marker(self, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int) -> int:
        """Write a transaction marker (Kafka's EndTransactionMarker control batch: commit or
        abort, stamped with the leader epoch and the clock's time) for `producer_id` and return
        its offset. Only the transaction coordinator calls this (WriteTxnMarkers' job in Kafka).

        Raises InvalidProducerEpochError for an epoch below the producer's and
        TransactionCoordinatorFencedError for a coordinator epoch below its last marker's;
        nothing is written then. The marker ends the producer's open transaction here (if
        any): the last stable offset moves past it, and an abort is recorded in the active
        segment's transaction index for read_committed fetches.
        """
        self.producers.check_marker(producer_id, producer_epoch, coordinator_epoch)
        now = self._clock()
        data = build_marker(producer_id, producer_epoch, commit, coordinator_epoch, now)
        header = parse_header(data, 0, 0)
        stored, assigned = assign_offsets(data, [header], self.log_end_offset, self.leader_epoch)
        if self.config.message_timestamp_type == LOG_APPEND_TIME:
            assigned = stamp_log_append_time(stored, assigned, now)
        active = self._segments[-1]
        if self._should_roll(active, len(stored), assigned[0].max_timestamp):
            active = self._roll()
        active.append(stored, assigned)
        offset = assigned[0].base_offset
        completed = self.producers.complete(producer_id, producer_epoch, coordinator_epoch, offset, commit)
        if completed is not None and completed.aborted:
            active.aborted.append(_aborted(completed))
        for listener in list(self._listeners):
            listener()
        return offset

    def _should_roll(self, active: Segment, size: int, max_timestamp: int) -> bool:
        """Kafka's LogSegment.shouldRoll for a non-empty active segment: the append would take it
        past segment.bytes, or it has waited segment.ms (from its first batch's timestamp to
        the newest timestamp appended, else from its creation to now)."""
        if active.size == 0:
            return False
        if active.size + size > self.config.segment_bytes:
            return True
        first = active.first_batch_timestamp
        waited = max_timestamp - first if first >= 0 else self._clock() - self._active_created
        return waited > self.config.segment_ms

    def become_leader(self, leader_epoch: int) -> None:
        """`raise_epoch`, with the epoch cache checkpointed (fsync) before this returns."""
        if self.raise_epoch(leader_epoch):
            self.epochs.checkpoint()

    def raise_epoch(self, leader_epoch: int) -> bool:
        """Stamp later appends with `leader_epoch`, which starts at the log end offset, if it is
        above the log's epoch (an epoch never goes back: clients validate against the latest
        one they saw). True when the epoch cache changed: the caller runs `epochs.checkpoint()`
        (in any thread) before an append at the new epoch can be acknowledged."""
        if leader_epoch <= self.leader_epoch:
            return False
        self.leader_epoch = leader_epoch
        return self.epochs.advance(leader_epoch, self.log_end_offset)


    def _roll(self) -> Segment:
        self._segments[-1].sync()
        return self._attach(Segment.create(self.directory, self.log_end_offset, self._index_interval))

    def _attach(self, segment: Segment) -> Segment:
        """Make `segment` (empty, based at the log end) the active one."""
        self._segments.append(segment)
        self._bases.append(segment.base_offset)
        self._active_created = self._clock()
        return segment

    def add_listener(self, listener: Listener) -> None:
        """Call `listener()` after every append (and when the log is deleted), on the thread
        that appends, until it is removed."""
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    # -- moving the log start --------------------------------------------------------------

    def delete_records_before(self, offset: int) -> Removal:
        """DeleteRecords: make `offset` the log start (HIGH_WATERMARK: the high watermark, which
        is the log end). Raises OffsetOutOfRangeError for any other negative offset and for one
        above the high watermark, as Kafka; an offset at or below the current start changes
        nothing. Hand the result to `finish_removal` before answering."""
        target = self.log_end_offset if offset == HIGH_WATERMARK else offset
        if not 0 <= target <= self.log_end_offset:
            raise OffsetOutOfRangeError(offset, self.log_start_offset, self.log_end_offset)
        if target <= self._log_start:
            return Removal(self._log_start, ())
        return Removal(target, self._log_start_moved(target))

    def _log_start_moved(self, new_start: int) -> tuple[Segment, ...]:
        """The one place the log start moves (DeleteRecords, retention): everything that follows
        it moving up to `new_start` is done here. Sets the start, truncates the epoch cache from
        it, and detaches the segments entirely below it from reads, returning them for removal."""
        self._log_start = new_start
        self.epochs.truncate_from_start(new_start)
        detached = []
        while len(self._segments) > 1 and self._segments[1].base_offset <= new_start:
            detached.append(self._segments.pop(0))
            self._bases.pop(0)
        return tuple(detached)

    def retention_roll_base(self) -> Optional[int]:
        """The base offset of the segment a retention pass must roll to (`stage_segment`) before
        it can delete this on-disk log's active segment: every segment expired. Else None."""
        if self.directory is None or self._expired_segments() != len(self._segments):
            return None
        return self.log_end_offset

    def stage_segment(self, base_offset: int) -> Segment:
        """Create the empty segment `retention_removal` rolls to, under staging names. Touches
        only those new files, so it may (and should: it is slow file work) run in a worker thread."""
        assert self.directory is not None
        return Segment.create_staged(self.directory, base_offset, self._index_interval)

    def retention_removal(self, staged: Optional[Segment] = None) -> Removal:
        """One retention pass (see the module docstring): detach the segments retention.bytes
        and retention.ms expire and move the log start to the first segment left. When all of
        them expired the log first rolls to `staged` (from `stage_segment`; in memory it makes
        one): renamed into place and attached in one step on the owner's thread, so a read sees
        the log before or after the roll, and without syncing the active segment it leaves,
        which goes. Without a staged segment based at the log end (none, or an append raced the
        staging) the active segment stays until the next pass; a staged one not used is deleted."""
        expired = self._expired_segments()
        if expired == len(self._segments):
            if self.directory is None:
                staged = Segment.create(None, self.log_end_offset, self._index_interval)
            if staged is not None and staged.base_offset == self.log_end_offset:
                staged.unstage()
                self._attach(staged)
                staged = None
            else:
                expired -= 1
        if staged is not None:
            staged.delete()
        if expired == 0:
            return Removal(self._log_start, ())
        new_start = max(self._log_start, self._segments[expired].base_offset)
        return Removal(new_start, self._log_start_moved(new_start))

    def _expired_segments(self) -> int:
        """How many of the oldest segments Kafka's size pass and then time pass delete."""
        config = self.config
        segments = self._segments
        count = 0

        def deletable(i: int) -> bool:  # an empty active segment stays
            return i < len(segments) and not (i == len(segments) - 1 and segments[i].size == 0)

        if config.retention_bytes >= 0:
            excess = self.size_bytes - config.retention_bytes
            while excess >= 0 and deletable(count) and excess - segments[count].size >= 0:
                excess -= segments[count].size
                count += 1
        if config.retention_ms >= 0:
            now = self._clock()
            while deletable(count) and 0 <= segments[count].max_timestamp < now - config.retention_ms:
                count += 1
        return count

    def finish_removal(self, removal: Removal) -> None:
        """Checkpoint the moved start, then close and unlink the detached segments (only close
        them when the checkpoint fails or the log is being deleted). Does file work only, on no
        state the owner's thread uses, so it may run in a worker thread."""
        def unlink() -> None:
            for segment in removal.segments:
                segment.delete()

        if self._checkpoint is None:
            unlink()
            return
        done = False
        try:
            done = self._checkpoint.commit(removal.log_start_offset, unlink)
        finally:
            if not done:  # unlinked only below a durable start
                for segment in removal.segments:
                    segment.close()

    # -- reading ---------------------------------------------------------------------------

    def read(self, offset: int, max_bytes: int, *, at_least_one: bool = True,
             max_offset: Optional[int] = None) -> bytes:
        """Whole batches starting with the one that holds `offset`, at most `max_bytes` of them
        except that with `at_least_one` the first batch comes whatever its size (KIP-74), and
        none starting at or after `max_offset` (read_committed passes the last stable offset,
        which is always a batch boundary, as Kafka's maxOffset for READ_COMMITTED).

        Empty at the log end (or `max_offset`); OffsetOutOfRangeError outside [log start, log
        end]. A read stays within one segment, so it may return less than `max_bytes` before
        the log end.
        """
        if not self.log_start_offset <= offset <= self.log_end_offset:
            raise OffsetOutOfRangeError(offset, self.log_start_offset, self.log_end_offset)
        limit = self.log_end_offset if max_offset is None else min(max_offset, self.log_end_offset)
        if offset >= limit:
            return b""
        segment = self._segments[bisect_right(self._bases, offset) - 1]
        data = segment.read(segment.position_of(offset), max_bytes, at_least_one=at_least_one)
        if limit < segment.next_offset:
            data = _batches_before(data, limit)
        return data

    def aborted_transactions(self, start_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """The aborted transactions overlapping [start_offset, upper_bound), as Kafka's
        collectAbortedTransactions: the transaction indexes from the segment holding
        `start_offset` on, until an entry's last stable offset reaches `upper_bound`."""
        found: list[AbortedTxn] = []
        first = max(bisect_right(self._bases, start_offset) - 1, 0)
        for segment in self._segments[first:]:
            txns, complete = segment.aborted.collect(start_offset, upper_bound)
            found.extend(txns)
            if complete:
                break
        return found

    def offset_for_timestamp(self, timestamp: int) -> Optional[tuple[int, int]]:
        """(offset, timestamp) of the first record at or after the log start, in offset order,
        whose timestamp is >= the given one (as ListOffsets answers); None when there is none."""
        for segment in self._segments:
            if segment.max_timestamp >= timestamp:
                found = segment.offset_for_timestamp(timestamp, self._log_start)
                if found is not None:
                    return found
        return None

    # -- lifecycle -------------------------------------------------------------------------

    def flush(self) -> None:
        """fsync what is not on disk yet (only the active segment can be dirty)."""
        self._segments[-1].sync()

    def close(self) -> None:
        """Sync, close the files and mark the shutdown clean."""
        self.flush()
        for segment in self._segments:
            segment.close()
        if self.directory is not None:
            (self.directory / CLEAN_SHUTDOWN_MARKER).touch()

    def delete(self) -> None:
        """Close the files and remove the log's directory; listeners are told so a waiting
        fetch notices at once."""
        if self._checkpoint is not None:
            self._checkpoint.retire()
        self.epochs.retire()
        for segment in self._segments:
            segment.close()
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
        for listener in list(self._listeners):
            listener()


def _aborted(completed: CompletedTxn) -> AbortedTxn:
    return AbortedTxn(completed.producer_id, completed.first_offset, completed.last_offset,
                      completed.last_stable_offset)


def _batches_before(data: bytes, limit: int) -> bytes:
    """The leading whole batches of `data` whose base offset is below `limit`."""
    pos = 0
    while pos < len(data):
        header = parse_header(data, pos, pos)
        if header.base_offset >= limit:
            break
        pos += header.size
    return data[:pos]
