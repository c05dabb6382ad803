"""A segment's transaction index: the aborted transactions whose abort marker the segment holds,
in Kafka's `.txnindex` file format, which read_committed fetches use to skip aborted records.

File (`<base offset, 20 digits>.txnindex`, as Kafka's TransactionIndex): fixed 34-byte entries,
big-endian: version int16 (0), producer id int64, first offset int64, last offset int64 (the
abort marker's offset), last stable offset int64 (the LSO once the transaction completed).
The file is created with the first entry; a segment with no aborted transaction has none.

Invariants: entries are in marker order (last offsets increasing); the file holds exactly the
entries in memory after `append` / `truncate_to` (a torn tail entry is dropped at `load`); the
file reaches the disk with the segment (`sync` on roll, flush and close).
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Optional

ENTRY = struct.Struct(">hqqqq")  # Kafka's AbortedTxn.TOTAL_SIZE: 34 bytes
VERSION = 0


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


class TransactionIndex:
    def __init__(self, path: Optional[Path]) -> None:
        self.path = path
        self.entries: list[AbortedTxn] = []
        self._file: Optional[BinaryIO] = None

    def load(self) -> None:
        """Read the file's whole entries (none when it does not exist)."""
        if self.path is None or not self.path.exists():
            return
        data = self.path.read_bytes()
        whole = len(data) - len(data) % ENTRY.size
        self.entries = [AbortedTxn(*ENTRY.unpack_from(data, pos)[1:]) for pos in range(0, whole, ENTRY.size)]
        if whole != len(data):
            self._rewrite()

    @property
    def last_offset(self) -> int:
        """The last indexed abort marker's offset, -1 when there is none."""
        return self.entries[-1].last_offset if self.entries else -1

    def append(self, txn: AbortedTxn) -> None:
        self.entries.append(txn)
        if self.path is None:
            return
        if self._file is None:
            self._file = open(self.path, "ab")
        self._file.write(ENTRY.pack(VERSION, txn.producer_id, txn.first_offset, txn.last_offset,
                                    txn.last_stable_offset))
        self._file.flush()

    def truncate_to(self, next_offset: int) -> None:
        """Drop the entries whose marker is at or after `next_offset` (a truncated log tail)."""
        kept = [txn for txn in self.entries if txn.last_offset < next_offset]
        if len(kept) != len(self.entries):
            self.entries = kept
            self._rewrite()

    def collect(self, fetch_offset: int, upper_bound: int) -> tuple[list[AbortedTxn], bool]:
        """Kafka's collectAbortedTxns: the entries overlapping [fetch_offset, upper_bound), and
        whether the search is complete (an entry's LSO reached `upper_bound`: no later segment
        can hold an aborted transaction that started before it)."""
        found = []
        for txn in self.entries:
            if txn.last_offset >= fetch_offset and txn.first_offset < upper_bound:
                found.append(txn)
            if txn.last_stable_offset >= upper_bound:
                return found, True
        return found, False

    def _rewrite(self) -> None:
        if self.path is None:
            return
        self.close()
        self.path.write_bytes(b"".join(ENTRY.pack(VERSION, t.producer_id, t.first_offset, t.last_offset,
                                                  t.last_stable_offset) for t in self.entries))

    def sync(self) -> None:
        if self._file is not None:
            os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def clear(self) -> None:
        """Forget the entries and remove the file (a segment created over leftovers)."""
        self.close()
        self.entries = []
        if self.path is not None:
            self.path.unlink(missing_ok=True)
