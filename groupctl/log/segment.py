"""One segment of a partition log: a run of whole batches starting at `base_offset`, its sparse
index, and the segment's max timestamp.

Files (when file-backed): `<base offset, 20 digits>.log` holds the batches back to back exactly
as Fetch serves them; `<base offset>.index` holds the sparse index (see `index.py`);
`<base offset>.txnindex` the aborted transactions whose abort marker is in the segment (see
`txnindex.py`), created with its first entry.

Invariants:
- The storage holds whole batches only, their offsets chained: each batch's base offset is the
  previous batch's last offset + 1, the first is `base_offset`, and `next_offset` is one past
  the last batch's last offset.
- `max_timestamp` is the largest batch max timestamp in the segment (-1 when empty).
- Finding an offset or a timestamp reads at most one index interval plus one batch of headers.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Iterator, Optional

from kafka.record.default_records import DefaultRecordBatch

from groupctl.log.batches import (
    HEADER_SIZE,
    LOG_OVERHEAD,
    BatchHeader,
    batch_size_at,
    first_record_at_or_after,
    parse_header,
)
from groupctl.log.errors import CorruptBatchError, LogCorruptionError
from groupctl.log.index import SparseIndex
from groupctl.log.storage import FileStorage, MemoryStorage, Storage
from groupctl.log.txnindex import TransactionIndex

log = logging.getLogger(__name__)

SCAN_CHUNK_BYTES = 64 * 1024
STAGED_SUFFIX = ".staged"  # a segment created ahead of a roll, not part of the log yet


def txn_index_path(directory: Path, base_offset: int) -> Path:
    return directory / f"{base_offset:020d}.txnindex"


def segment_paths(directory: Path, base_offset: int) -> tuple[Path, Path]:
    stem = f"{base_offset:020d}"
    return directory / f"{stem}.log", directory / f"{stem}.index"


class _Reader:
    """Positional reads through a one-chunk cache, so walking many small batches costs a
    syscall per chunk rather than per batch."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._start = 0
        self._buf = memoryview(b"")

    def read(self, position: int, length: int) -> memoryview:
        start = position - self._start
        if start < 0 or start + length > len(self._buf):
            self._buf = memoryview(self._storage.read(position, max(length, SCAN_CHUNK_BYTES)))
            self._start = position
            start = 0
        return self._buf[start : start + length]


class Segment:
    def __init__(self, base_offset: int, storage: Storage, index: SparseIndex, index_interval_bytes: int) -> None:
        self.base_offset = base_offset
        self.next_offset = base_offset
        self.max_timestamp = -1
        self.storage = storage
        self.index = index
        self._index_interval = index_interval_bytes
        self._bytes_since_entry = 0
        # No file while staged (an unused staged segment is deleted, and an append may have
        # rolled to a live segment of the same base meanwhile); `unstage` names it.
        staged = storage.path is None or storage.path.name.endswith(STAGED_SUFFIX)
        self.aborted = TransactionIndex(None if staged else txn_index_path(storage.path.parent, base_offset))

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def create(cls, directory: Optional[Path], base_offset: int, index_interval_bytes: int) -> "Segment":
        """A new empty segment (replacing any leftover files of the same name)."""
        if directory is None:
            return cls(base_offset, MemoryStorage(), SparseIndex(None), index_interval_bytes)
        log_path, index_path = segment_paths(directory, base_offset)
        segment = cls(base_offset, FileStorage(log_path), SparseIndex(index_path), index_interval_bytes)
        segment.storage.truncate(0)
        segment.index.clear()
        segment.aborted.clear()
        return segment

    @classmethod
    def create_staged(cls, directory: Path, base_offset: int, index_interval_bytes: int) -> "Segment":
        """A new empty segment under staging names (`<stem>.log.staged`, `<stem>.index.staged`),
        so it can be created in a worker thread while the log's owner keeps using the log: no
        name the log reads, rolls to or deletes is touched. `unstage` gives it its real names."""
        log_path, index_path = segment_paths(directory, base_offset)
        segment = cls(base_offset, FileStorage(log_path.with_name(log_path.name + STAGED_SUFFIX)),
                      SparseIndex(index_path.with_name(index_path.name + STAGED_SUFFIX)), index_interval_bytes)
        segment.storage.truncate(0)
        segment.index.clear()
        return segment

    def unstage(self) -> None:
        """Rename a staged segment's files to their real names (two renames, no data written)
        and name its transaction index file (created with its first entry)."""
        for holder in (self.storage, self.index):
            if holder.path is not None and holder.path.name.endswith(STAGED_SUFFIX):
                final = holder.path.with_name(holder.path.name.removesuffix(STAGED_SUFFIX))
                os.replace(holder.path, final)
                holder.path = final
        if self.storage.path is not None:
            self.aborted.path = txn_index_path(self.storage.path.parent, self.base_offset)

    @classmethod
    def open_closed(cls, directory: Path, base_offset: int, index_interval_bytes: int) -> "Segment":
        """Reopen a segment that was synced when the log rolled past it.

        Loads the index file (rebuilding it from the batches when it is missing or damaged)
        and reads only the batches after the last index entry to find the segment's end and
        max timestamp. Damage in the batches themselves raises LogCorruptionError: dropping
        them would leave a gap before the next segment.
        """
        log_path, index_path = segment_paths(directory, base_offset)
        segment = cls(base_offset, FileStorage(log_path), SparseIndex(index_path), index_interval_bytes)
        segment.aborted.load()
        size = segment.storage.size
        if segment.index.load(size):
            relative, position, max_timestamp = segment.index.last()
            segment.next_offset = base_offset + relative
            segment.max_timestamp = max_timestamp
            try:
                for header in segment.walk(position):
                    if header.base_offset != segment.next_offset or header.position + header.size > size:
                        raise CorruptBatchError(f"batch at {header.position} does not chain")
                    segment.max_timestamp = max(segment.max_timestamp, header.max_timestamp)
                    segment.next_offset = header.next_offset
            except CorruptBatchError as exc:
                raise LogCorruptionError(f"{log_path}: {exc}") from exc
        else:
            log.warning("%s: index missing or damaged, rebuilding it", index_path)
            end = segment._reindex(verify_crc=False)
            if end != size:
                raise LogCorruptionError(f"{log_path}: damaged batch at position {end} of {size}")
        return segment

    @classmethod
    def recover(cls, directory: Path, base_offset: int, index_interval_bytes: int, *, verify_crc: bool) -> "Segment":
        """Reopen the active (last) segment: re-index it from its batches and truncate
        whatever follows the last whole, chained (and, after an unclean shutdown, CRC-valid)
        batch, which is what a crash mid-write leaves behind."""
        log_path, index_path = segment_paths(directory, base_offset)
        segment = cls(base_offset, FileStorage(log_path), SparseIndex(index_path), index_interval_bytes)
        end = segment._reindex(verify_crc=verify_crc)
        if end < segment.storage.size:
            log.warning("%s: truncating %d bytes of torn or invalid batches at position %d",
                        log_path, segment.storage.size - end, end)
            segment.storage.truncate(end)
        segment.aborted.load()
        segment.aborted.truncate_to(segment.next_offset)
        return segment

    def _reindex(self, *, verify_crc: bool) -> int:
        """Rebuild the index and the segment's end from its bytes; return the position where
        the valid, chained batches end."""
        self.index.clear()
        self.next_offset = self.base_offset
        self.max_timestamp = -1
        self._bytes_since_entry = 0
        reader = _Reader(self.storage)
        size = self.storage.size
        position = 0
        while position < size:
            head = reader.read(position, HEADER_SIZE)
            if len(head) < HEADER_SIZE:
                break
            try:
                header = parse_header(head, 0, position)
            except CorruptBatchError:
                break
            if header.base_offset != self.next_offset or position + header.size > size:
                break
            if verify_crc and not DefaultRecordBatch(reader.read(position, header.size)).validate_crc():
                break
            self._track(header, position)
            position += header.size
        return position

    # -- writing ---------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return self.storage.size

    @property
    def first_batch_timestamp(self) -> int:
        """The first batch's max timestamp (index entry 0 records it), -1 when empty: what
        segment.ms counts from, as Kafka's rollingBasedTimestamp."""
        first = self.index.first()
        return first[2] if first is not None else -1

    def append(self, data: bytes | bytearray, headers: list[BatchHeader]) -> None:
        """Append validated batches whose offsets start at `next_offset`; `headers` give their
        positions within `data`."""
        start = self.storage.size
        try:
            self.storage.append(data)
        except OSError:
            self.storage.truncate(start)
            raise
        for header in headers:
            self._track(header, start + header.position)

    def _track(self, header: BatchHeader, position: int) -> None:
        self.max_timestamp = max(self.max_timestamp, header.max_timestamp)
        if len(self.index) == 0 or self._bytes_since_entry >= self._index_interval:
            self.index.append(header.base_offset - self.base_offset, position, self.max_timestamp)
            self._bytes_since_entry = 0
        self._bytes_since_entry += header.size
        self.next_offset = header.next_offset

    def sync(self) -> None:
        self.storage.sync()
        self.index.sync()
        self.aborted.sync()

    def close(self) -> None:
        self.storage.close()
        self.index.close()
        self.aborted.close()

    def delete(self) -> None:
        """Close the segment and remove its files (nothing may read it any more)."""
        self.close()
        for path in (self.storage.path, self.index.path, self.aborted.path):
            if path is not None:
                path.unlink(missing_ok=True)

    # -- reading ---------------------------------------------------------------------------

    def walk(self, start: int) -> Iterator[BatchHeader]:
        """Headers of the batches from `start` (a batch boundary) to the end of the segment."""
        reader = _Reader(self.storage)
        position = start
        end = self.storage.size
        while position < end:
            head = reader.read(position, HEADER_SIZE)
            if len(head) < HEADER_SIZE:
                raise CorruptBatchError(f"torn batch header at position {position}")
            header = parse_header(head, 0, position)
            yield header
            position += header.size

    def position_of(self, offset: int) -> int:
        """Position of the batch holding `offset`, which must lie in [base_offset, next_offset)."""
        for header in self.walk(self.index.floor_position(offset - self.base_offset)):
            if header.last_offset >= offset:
                return header.position
        raise LogCorruptionError(f"offset {offset} not found in segment {self.base_offset}")

    def read(self, position: int, max_bytes: int, *, at_least_one: bool) -> bytes:
        """Whole batches from `position` totalling at most `max_bytes`; when even the first
        batch is larger, that one batch if `at_least_one`, else nothing."""
        available = self.storage.size - position
        if available <= 0:
            return b""
        chunk = self.storage.read(position, min(max(max_bytes, 0), available))
        end = 0
        while end + LOG_OVERHEAD <= len(chunk):
            size = batch_size_at(chunk, end)
            if end + size > len(chunk):
                break
            end += size
        if end == 0:
            if not at_least_one:
                return b""
            return self.storage.read(position, batch_size_at(self.storage.read(position, LOG_OVERHEAD), 0))
        return chunk if end == len(chunk) else chunk[:end]

    def offset_for_timestamp(self, timestamp: int, min_offset: int) -> Optional[tuple[int, int]]:
        """(offset, timestamp) of the first record in this segment at or after `min_offset` (the
        log start) with a timestamp >= the given one, or None."""
        if self.max_timestamp < timestamp:
            return None
        start = max(self.index.timestamp_scan_start(timestamp),
                    self.index.floor_position(min_offset - self.base_offset))
        for header in self.walk(start):
            if header.last_offset >= min_offset and header.max_timestamp >= timestamp:
                batch = self.storage.read(header.position, header.size)
                found = first_record_at_or_after(batch, timestamp, min_offset)
                if found is not None:
                    return found
        return None
