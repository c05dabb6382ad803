"""The coordinator's event journal on disk: numbered JSON Lines segments in one directory.

Layout (docs/lag-and-rebalances.md, "The coordinator's event journal"): `events-NNNNNNNN.jsonl`
(8 digits or more, from 00000001), the highest-numbered one active; each event one line of
compact JSON, `seq` first, then the fields the core built (`groupctl.coordinator.journal`).
`.lock` holds an flock while a journal is open, so two coordinators cannot interleave their
numbering in one directory (Spark ignores dot-files). The runtime appends the events of the
results whose records the store accepted, in core-operation order, one batch per event-loop
iteration, each batch with `os.write` on an O_APPEND descriptor: a reader of the active segment
may see a batch half-written and should skip a last line that is not whole.

Invariants:
- `seq` is +1 per written event, across segments and restarts (opening reads the last one back).
- A segment holds whole lines only: on open, a trailing partial line is truncated away and an
  empty newest segment left by a crash is removed; a batch is never split across segments.
- Rotation happens before a write once the active segment has reached `segment_bytes`; the
  oldest segments beyond `keep_segments` (0 keeps all) are deleted after the batch is written.
- Durability: no fsync per batch (it would tax every commit); an event written survives a
  kill -9 (it is in the page cache) but not a power loss, after which `seq` continues from the
  last event on disk. `close` fsyncs once.
- The journal is history, never a reason to stop serving: a failed write drops its batch (cut
  back to the last whole line; dropped events get no seq), logged once per streak of failures.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
from pathlib import Path
from typing import Any, Iterable, Optional

from groupctl import defaults

log = logging.getLogger("groupctl.journal")

LOCK_NAME = ".lock"
SEGMENT_NAME = re.compile(r"^events-(\d{8,})\.jsonl$")
_TAIL_CHUNK = 64 * 1024

# Compact and ASCII-escaped (so valid UTF-8 whatever the strings hold); made once, as
# `json.dumps` with separators would build an encoder per call.
_encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode


class JournalError(Exception):
    """The directory cannot hold this journal: in use by another process, or its newest line is
    not a journal event."""


def segment_name(number: int) -> str:
    return f"events-{number:08d}.jsonl"


def segment_numbers(directory: Path) -> list[int]:
    """The segments' numbers in `directory`, oldest first."""
    matches = (SEGMENT_NAME.match(name) for name in os.listdir(directory))
    return sorted(int(m.group(1)) for m in matches if m)


class Journal:
    """One open journal directory. Not thread-safe: the runtime appends from its event loop."""

    def __init__(self, directory: Path, *, segment_bytes: int = defaults.JOURNAL_SEGMENT_BYTES,
                 keep_segments: int = defaults.JOURNAL_KEEP_SEGMENTS) -> None:
        if segment_bytes < 1 or keep_segments < 0:
            raise ValueError(f"segment_bytes must be >= 1 and keep_segments >= 0, not {segment_bytes}/{keep_segments}")
        self.directory = Path(directory)
        self.segment_bytes = segment_bytes
        self.keep_segments = keep_segments
        self.dropped = 0  # events dropped by the current streak of failed writes
        self._fd: Optional[int] = None
        self._prune_due = False  # a rotation happened: delete what is beyond keep_segments
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock_fd = self._lock()
        try:
            self._number, self._size, self.next_seq = self._recover()
            self._prune()
        except BaseException:
            self.close()
            raise

    @property
    def active_path(self) -> Path:
        return self.directory / segment_name(self._number)

    # -- opening ----------------------------------------------------------------------------

    def _lock(self) -> int:
        fd = os.open(self.directory / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise JournalError(f"{self.directory} is in use by another coordinator's journal") from None
        return fd

    def _recover(self) -> tuple[int, int, int]:
        """Open the newest segment (creating the first one in a new journal): its number, its
        size once a partial last line is cut off, and the next seq."""
        numbers = segment_numbers(self.directory) or [1]
        while True:  # at most once per segment: each pass keeps one or removes one
            number = numbers[-1]
            self._fd = os.open(self.directory / segment_name(number),
                               os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
            size = os.fstat(self._fd).st_size
            whole, last = _last_line(self._fd, size)
            if whole < size:
                log.warning("%s: discarding a partial last line of %d bytes",
                            self.directory / segment_name(number), size - whole)
                os.ftruncate(self._fd, whole)
            if last or len(numbers) == 1:
                break
            os.close(self._fd)  # empty: created by a rotation that crashed before its first write
            self._fd = None
            os.unlink(self.directory / segment_name(numbers.pop()))
        if not last:
            return number, whole, 1
        try:
            seq = json.loads(last)["seq"]
            if type(seq) is not int:
                raise TypeError(f"seq {seq!r} is not an integer")
        except (ValueError, KeyError, TypeError) as exc:
            raise JournalError(f"{self.directory / segment_name(number)}: the last line is not a journal event "
                               f"({exc})") from None
        return number, whole, seq + 1

    # -- writing ----------------------------------------------------------------------------

    def append(self, events: Iterable[dict[str, Any]]) -> None:
        """Number `events` (non-empty dicts without `seq`) and write them as one batch."""
        seq = self.next_seq
        lines = []
        for event in events:
            lines.append(f'{{"seq":{seq},{_encode(event)[1:]}\n')
            seq += 1
        if not lines:
            return
        data = "".join(lines).encode()
        try:
            if self._size >= self.segment_bytes:
                self._rotate()
            self._write(data)
        except OSError as exc:
            if not self.dropped:
                log.error("journal %s: writing failed (%s); dropping events until it works again",
                          self.directory, exc)
            self.dropped += len(lines)
            return
        if self.dropped:
            log.warning("journal %s: writing works again; %d event(s) were dropped", self.directory, self.dropped)
            self.dropped = 0
        self.next_seq = seq
        self._size += len(data)
        if self._prune_due:
            self._prune()

    def _write(self, data: bytes) -> None:
        """All of `data`, or none of it: a failure cuts the segment back to its last whole line."""
        written = 0
        try:
            while written < len(data):  # each pass writes at least one byte or raises
                count = os.write(self._fd, data[written:])
                if count <= 0:
                    raise OSError(f"write to {self.active_path} made no progress")
                written += count
        except OSError:
            if written:
                os.ftruncate(self._fd, self._size)
            raise

    def _rotate(self) -> None:
        fd = os.open(self.directory / segment_name(self._number + 1),
                     os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        os.close(self._fd)
        self._fd, self._number, self._size = fd, self._number + 1, 0
        self._prune_due = True

    def _prune(self) -> None:
        """Delete the oldest segments beyond `keep_segments` (never the active one)."""
        self._prune_due = False
        if not self.keep_segments:
            return
        for number in segment_numbers(self.directory)[:-self.keep_segments]:
            if number != self._number:
                try:
                    os.unlink(self.directory / segment_name(number))
                except FileNotFoundError:
                    pass

    def close(self) -> None:
        """fsync and close the active segment, release the directory."""
        if self._fd is not None:
            try:
                os.fsync(self._fd)
            finally:
                os.close(self._fd)
                self._fd = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None


def _last_line(fd: int, size: int) -> tuple[int, bytes]:
    """(length of the file's whole lines, the last whole line without its newline; b"" when
    there is none), reading backwards from `size` a chunk at a time."""
    buffer, start, end = b"", size, None
    while start > 0:
        start = max(0, start - _TAIL_CHUNK)
        buffer = os.pread(fd, size - start - len(buffer), start) + buffer
        if end is None:
            newline = buffer.rfind(b"\n")
            if newline < 0:
                continue
            end = start + newline + 1
        previous = buffer.rfind(b"\n", 0, end - start - 1)
        if previous >= 0:
            return end, buffer[previous + 1:end - start - 1]
    if end is None:
        return 0, b""
    return end, buffer[:end - 1]
