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
- The checkpointed offset never decreases: `write` ignores an offset at or below the last one it
  wrote, so writes racing in worker threads cannot step it back.
- A missing file means "no checkpoint" (a new log, or one written before checkpoints existed:
  the log then starts at its first segment's base). A damaged one raises LogCorruptionError, as
  Kafka takes a log dir with a malformed checkpoint offline.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Optional

from groupctl.log.errors import LogCorruptionError

LOG_START_FILE = "log-start-offset"
VERSION = 0


class LogStartCheckpoint:
    """The checkpoint file of one partition directory."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / LOG_START_FILE
        self._lock = threading.Lock()
        self._written = -1

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

    def write(self, offset: int) -> None:
        """Durably record `offset` as the log start (thread-safe; an offset at or below the last
        one written is not written again)."""
        with self._lock:
            if offset <= self._written:
                return
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
