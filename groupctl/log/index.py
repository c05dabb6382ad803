"""A segment's sparse index: one entry per `interval` bytes of batches, not one per batch.

Entry i is (relative offset, position, max timestamp so far): the base offset of a batch minus
the segment's base offset, the batch's byte position in the segment, and the largest batch max
timestamp in the segment up to and including that batch. The first batch of a segment always
has an entry, and a later batch gets one when at least `interval` bytes of batches lie between
it and the previous entry, so a segment of S bytes has at most 1 + S / interval entries and
finding a batch scans at most `interval` bytes plus one batch.

Entries live in three `array('q')` columns (24 bytes per entry, no per-entry Python objects)
and, for file-backed segments, are appended to an `.index` file of fixed 24-byte records so a
closed segment does not need a full scan to reopen.

Invariants: relative offsets and positions strictly increase; max timestamps never decrease;
entry 0, when present, is (0, 0, _).
"""

from __future__ import annotations

import os
import struct
from array import array
from bisect import bisect_left, bisect_right
from pathlib import Path
from typing import Optional

ENTRY = struct.Struct(">qqq")


class SparseIndex:
    def __init__(self, path: Optional[Path]) -> None:
        self.path = path
        self._offsets = array("q")
        self._positions = array("q")
        self._timestamps = array("q")
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644) if path is not None else None

    def __len__(self) -> int:
        return len(self._offsets)

    def append(self, relative_offset: int, position: int, max_timestamp: int) -> None:
        if self._fd is not None:
            os.pwrite(self._fd, ENTRY.pack(relative_offset, position, max_timestamp), len(self) * ENTRY.size)
        self._offsets.append(relative_offset)
        self._positions.append(position)
        self._timestamps.append(max_timestamp)

    def clear(self) -> None:
        """Drop every entry, in memory and in the file."""
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
        self.clear_memory()

    def load(self, segment_size: int) -> bool:
        """Read the entries from the index file. False (and the index left empty) when the file
        is missing entries, torn, or breaks an invariant for a segment of `segment_size` bytes."""
        assert self._fd is not None, "only a file-backed index loads"
        raw = os.pread(self._fd, os.fstat(self._fd).st_size, 0)
        self.clear_memory()
        if not raw or len(raw) % ENTRY.size:
            return False
        previous = None
        for offset, position, timestamp in ENTRY.iter_unpack(raw):
            if previous is None:
                if (offset, position) != (0, 0):
                    break
            elif offset <= previous[0] or position <= previous[1] or timestamp < previous[2]:
                break
            if position >= segment_size:
                break
            self._offsets.append(offset)
            self._positions.append(position)
            self._timestamps.append(timestamp)
            previous = (offset, position, timestamp)
        else:
            return True
        self.clear_memory()
        return False

    def clear_memory(self) -> None:
        """Drop the in-memory entries, leaving the file as it is."""
        self._offsets = array("q")
        self._positions = array("q")
        self._timestamps = array("q")

    def first(self) -> Optional[tuple[int, int, int]]:
        if not self._offsets:
            return None
        return self._offsets[0], self._positions[0], self._timestamps[0]

    def last(self) -> Optional[tuple[int, int, int]]:
        if not self._offsets:
            return None
        return self._offsets[-1], self._positions[-1], self._timestamps[-1]

    def floor_position(self, relative_offset: int) -> int:
        """Position of the last indexed batch whose base offset is <= `relative_offset` (0 when
        none): the batch holding that offset starts there or later."""
        i = bisect_right(self._offsets, relative_offset) - 1
        return self._positions[i] if i >= 0 else 0

    def timestamp_scan_start(self, timestamp: int) -> int:
        """Where to start scanning for the first batch whose max timestamp is >= `timestamp`:
        every batch before the returned position has a smaller max timestamp."""
        i = bisect_left(self._timestamps, timestamp)
        if i == 0:
            return 0
        return self._positions[i - 1]

    def sync(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
