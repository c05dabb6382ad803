"""One topic partition's log: segments of stored batches, offsets, reads and timestamp lookups.

Invariants:
- Offsets are consecutive across batches and segments: segment k+1 starts at segment k's
  `next_offset`; the log end offset is the last segment's `next_offset`.
- Only the last (active) segment is written; the log rolls to a new segment before an append
  that would take a non-empty active segment past `segment_bytes`, syncing the one it leaves.
- Memory per log is the sparse index (24 bytes per `index_interval_bytes` of batches) plus a
  few fields per segment; nothing is kept per batch or per record.
- Not thread-safe: one owner (the node's event loop) appends, reads and calls listeners.
- Durability: an append is in the OS page cache when it returns, so it survives the process
  dying; it reaches the disk on roll, `flush()` and `close()`. On this single-replica node
  acks=all therefore means "in the page cache". `close()` leaves a clean-shutdown marker;
  reopening without it re-checks the CRC of every batch of the active segment, and a torn tail
  is always truncated.
- Idempotent producers (`producers`): an append is checked before anything is written. The state
  is rebuilt on open from the batch headers of the active segment only, so reopening reads at
  most one segment of headers, and a producer whose last batches are older is unknown afterwards.
- Leader epochs (`epochs.py`): every batch appended carries `leader_epoch`, the epoch the log was
  opened or last made leader with, and the epoch cache's latest entry is that epoch, assigned at
  the log end offset of that moment (Kafka's makeLeader). The cache is checkpointed in
  `leader-epoch-checkpoint`; `truncate_epochs_before` keeps it in step with a moving log start.

Deliberate differences from Apache Kafka: no retention or compaction (the log start offset is
the first segment's base offset), no producer-state snapshots, no transactions, no time-based
roll; the high watermark and the last stable offset equal the log end offset (one replica).
"""

from __future__ import annotations

import shutil
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from groupctl.log.batches import assign_offsets, validate_produced
from groupctl.log.epochs import open_cache
from groupctl.log.errors import LogCorruptionError, OffsetOutOfRangeError
from groupctl.log.producers import ProducerStateManager
from groupctl.log.segment import Segment

CLEAN_SHUTDOWN_MARKER = ".clean_shutdown"

Listener = Callable[[], None]


@dataclass(frozen=True)
class AppendResult:
    base_offset: int  # offset of the first record appended
    last_offset: int  # offset of the last record appended
    log_start_offset: int
    duplicate: bool = False  # a retry of batches already in the log: nothing was written


class PartitionLog:
    def __init__(
        self,
        topic: str,
        partition: int,
        directory: Optional[Path],
        *,
        segment_bytes: int,
        index_interval_bytes: int,
        leader_epoch: int = 0,
    ) -> None:
        self.topic = topic
        self.partition = partition
        self.directory = directory
        self._segment_bytes = segment_bytes
        self._index_interval = index_interval_bytes
        self._listeners: list[Listener] = []
        self._segments = self._open() if directory is not None else [Segment.create(None, 0, index_interval_bytes)]
        self._bases = [segment.base_offset for segment in self._segments]
        self.producers = ProducerStateManager()
        for header in self._segments[-1].walk(0):
            self.producers.replay(header)
        self.epochs = open_cache(directory, self._batch_epochs, self.log_end_offset)
        self.leader_epoch = leader_epoch
        self.epochs.assign(leader_epoch, self.log_end_offset)

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
        if not bases:
            segments = [Segment.create(self.directory, 0, self._index_interval)]
        else:
            segments = [Segment.open_closed(self.directory, base, self._index_interval) for base in bases[:-1]]
            segments.append(Segment.recover(self.directory, bases[-1], self._index_interval, verify_crc=not clean))
            for before, after in zip(segments, segments[1:]):
                if before.next_offset != after.base_offset:
                    raise LogCorruptionError(
                        f"{self.directory}: segment {before.base_offset} ends at offset "
                        f"{before.next_offset} but the next segment starts at {after.base_offset}"
                    )
        marker.unlink(missing_ok=True)
        return segments

    # -- offsets ---------------------------------------------------------------------------

    @property
    def log_start_offset(self) -> int:
        return self._segments[0].base_offset

    @property
    def log_end_offset(self) -> int:
        """One past the last offset written; also the high watermark and last stable offset."""
        return self._segments[-1].next_offset

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

    def append(self, data: bytes | bytearray | memoryview) -> AppendResult:
        """Validate produced record batches, assign them the next offsets and append them.

        Raises UnsupportedMagicError for legacy message sets, CorruptBatchError for anything
        else malformed, and InvalidProducerEpochError / OutOfOrderSequenceError when the
        producer state refuses the batches; nothing is written then. A duplicate of batches
        already appended is not written again: the result carries their original offsets and
        `duplicate=True`. Listeners run after a write.
        """
        headers = validate_produced(data)
        stored, assigned = assign_offsets(data, headers, self.log_end_offset, self.leader_epoch)
        prepared = self.producers.prepare(assigned)
        if prepared.duplicate is not None:
            first, last = prepared.duplicate
            return AppendResult(first, last, self.log_start_offset, duplicate=True)
        active = self._segments[-1]
        if active.size > 0 and active.size + len(stored) > self._segment_bytes:
            active = self._roll()
        active.append(stored, assigned)
        self.producers.commit(prepared)
        for listener in list(self._listeners):
            listener()
        return AppendResult(assigned[0].base_offset, assigned[-1].last_offset, self.log_start_offset)

    def become_leader(self, leader_epoch: int) -> None:
        """Stamp later appends with `leader_epoch`, which starts at the log end offset; the
        epoch cache is checkpointed (fsync) before this returns. Same epoch: nothing changes."""
        self.epochs.assign(leader_epoch, self.log_end_offset)
        self.leader_epoch = leader_epoch

    def truncate_epochs_before(self, offset: int) -> None:
        """The log start offset moved to `offset` (records deleted before it): the epoch cache
        forgets the epochs that ended before it, the one holding it now starts there."""
        self.epochs.truncate_from_start(offset)

    def _roll(self) -> Segment:
        self._segments[-1].sync()
        segment = Segment.create(self.directory, self.log_end_offset, self._index_interval)
        self._segments.append(segment)
        self._bases.append(segment.base_offset)
        return segment

    def add_listener(self, listener: Listener) -> None:
        """Call `listener()` after every append (and when the log is deleted), on the thread
        that appends, until it is removed."""
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    # -- reading ---------------------------------------------------------------------------

    def read(self, offset: int, max_bytes: int, *, at_least_one: bool = True) -> bytes:
        """Whole batches starting with the one that holds `offset`, at most `max_bytes` of them
        except that with `at_least_one` the first batch comes whatever its size (KIP-74).

        Empty at the log end; OffsetOutOfRangeError outside [log start, log end]. A read stays
        within one segment, so it may return less than `max_bytes` before the log end.
        """
        if not self.log_start_offset <= offset <= self.log_end_offset:
            raise OffsetOutOfRangeError(offset, self.log_start_offset, self.log_end_offset)
        if offset == self.log_end_offset:
            return b""
        segment = self._segments[bisect_right(self._bases, offset) - 1]
        return segment.read(segment.position_of(offset), max_bytes, at_least_one=at_least_one)

    def offset_for_timestamp(self, timestamp: int) -> Optional[tuple[int, int]]:
        """(offset, timestamp) of the first record, in offset order, whose timestamp is >= the
        given one (as ListOffsets answers); None when there is none."""
        for segment in self._segments:
            if segment.max_timestamp >= timestamp:
                found = segment.offset_for_timestamp(timestamp)
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
        for segment in self._segments:
            segment.close()
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
        for listener in list(self._listeners):
            listener()
