"""The log start offset checkpoint: where a partition's log starts once DeleteRecords or
retention moved the start past the first segment's base offset.

One file per partition directory, `log-start-offset`, holding Kafka's checkpoint text format
with a single entry: a version line `0`, then the offset. Kafka keeps one
`log-start-offset-checkpoint` per log dir for all partitions and writes it every minute; this
node writes the partition's own file before DeleteRecords answers, so a file per partition keeps
that write O(1) whatever the number of partitions, needs no coordination between the worker
threads that open different logs, and goes away with the directory when the topic is deleted.

Invariants:
- A write is atomic and durable: a temporary file is written and fsync'ed, renamed over the
  checkpoint, then the directory is fsync'ed. A reader sees the old offset or the new one.
- The checkpointed offset never decreases: `commit` ignores an offset at or below the last one
  it wrote, so commits racing in worker threads cannot step it back.
- Once `retire`d (the log is being deleted) nothing is written or unlinked, so a commit finishing
  in a worker thread cannot leave a file in a removed directory, nor unlink one of a re-created
  topic's segments, for the same name.
- A missing file means "no checkpoint" (a new log, or one written before checkpoints existed:
  the log then starts at its first segment's base). A damaged one raises LogCorruptionError, as
  Kafka takes a log dir with a malformed checkpoint offline.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Callable, Optional

from groupctl.log.errors import LogCorruptionError

LOG_START_FILE = "log-start-offset"
VERSION = 0


class LogStartCheckpoint:
    """The checkpoint file of one partition directory."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / LOG_START_FILE
        self._lock = threading.Lock()
        self._written = -1
        self._retired = False

    def read(self) -> Optional[int]:
        """The checkpointed log start offset, None when there is no checkpoint."""
        try:
            text = self.path.read_text(encoding="ascii")
        except FileNotFoundError:
            return None
        except UnicodeDecodeError:
            raise LogCorruptionError(f"{self.path}: not a log start offset checkpoint") from None
        lines = text.split("\n")
        if len(lines) != 3 or lines[0] != str(VERSION) or lines[2] != "" or not lines[1].isdigit():
            raise LogCorruptionError(f"{self.path}: not a log start offset checkpoint: {text[:80]!r}")
        offset = int(lines[1])
        self._written = max(self._written, offset)
        return offset

    def commit(self, offset: int, then: Callable[[], None]) -> bool:
        """Durably record `offset` as the log start (unless it is at or below the last offset
        written) and then call `then()` (file work that must follow the checkpoint), both under
        the lock `retire` takes; thread-safe. False, with neither done, once retired."""
        with self._lock:
            if self._retired:
                return False
            if offset > self._written:
                self._write(offset)
            then()
            return True

    def _write(self, offset: int) -> None:
        temporary = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, f"{VERSION}\n{offset}\n".encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, self.path)
        directory = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
        self._written = offset

    def retire(self) -> None:
        """Write nothing more: the log is being deleted (waits for a commit under way)."""
        with self._lock:
            self._retired = True
