"""Byte storage behind one segment: a file, or a bytearray when the node runs without a data dir.

Both offer the same five operations, addressed by absolute position, so the segment logic is one
code path. Writes go straight to the OS with `os.pwrite` (no Python-level buffer), which puts
them in the page cache where positional reads see them at once; durability against power loss
comes only from `sync()` (fsync), which the log calls on roll, flush and close.
"""

from __future__ import annotations

import os
from pathlib import Path


class FileStorage:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        self.size = os.fstat(self._fd).st_size

    def append(self, data: bytes | bytearray) -> None:
        view = memoryview(data)
        written = 0
        while written < len(view):
            written += os.pwrite(self._fd, view[written:], self.size + written)
        self.size += written

    def read(self, position: int, length: int) -> bytes:
        """Up to `length` bytes from `position` (fewer at the end of the file)."""
        return os.pread(self._fd, max(0, min(length, self.size - position)), position)

    def truncate(self, size: int) -> None:
        os.ftruncate(self._fd, size)
        self.size = size

    def sync(self) -> None:
        os.fsync(self._fd)

    def close(self) -> None:
        """Close the file (again: nothing)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class MemoryStorage:
    path = None  # no file

    def __init__(self) -> None:
        self._data = bytearray()

    @property
    def size(self) -> int:
        return len(self._data)

    def append(self, data: bytes | bytearray) -> None:
        self._data += data

    def read(self, position: int, length: int) -> bytes:
        return bytes(self._data[position : position + max(0, length)])

    def truncate(self, size: int) -> None:
        del self._data[size:]

    def sync(self) -> None:
        """Nothing to make durable."""

    def close(self) -> None:
        self._data = bytearray()


Storage = FileStorage | MemoryStorage
