"""The node's partition logs, one directory per partition under the data dir.

Layout: `<data_dir>/<topic>-<partition>/` holding `<base offset>.log` / `.index` segment pairs
and, after a clean close, a `.clean_shutdown` marker (Kafka's naming). `<data_dir>/.lock` is
held with flock while the manager is open, so two nodes cannot write the same logs.

Logs open on first use and recover from what is on disk then; a partition nobody touches costs
nothing. With `data_dir=None` every log lives in memory and is gone when the node stops.

The manager also owns the node's producer-id allocator (`producer_ids`, see `producer_ids.py`):
producer ids exist for the partition logs' producer state, and the allocator needs no files,
only the node's id (which keeps ids of different nodes apart).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
from pathlib import Path
from typing import Optional

from groupctl.log.errors import LogDirLockedError
from groupctl.log.partition import PartitionLog
from groupctl.log.producer_ids import ProducerIdAllocator

DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024
DEFAULT_INDEX_INTERVAL_BYTES = 4096

_TOPIC = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")


class LogManager:
    def __init__(
        self,
        data_dir: Optional[Path],
        *,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
        node_id: int = 0,
    ) -> None:
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self.segment_bytes = segment_bytes
        self.index_interval_bytes = index_interval_bytes
        self._logs: dict[tuple[str, int], PartitionLog] = {}
        self.producer_ids = ProducerIdAllocator(node_id=node_id)
        self._lock_fd: Optional[int] = None
        if self.data_dir is not None:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.data_dir / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise LogDirLockedError(f"{self.data_dir} is in use by another process") from None
            self._lock_fd = fd

    def partition(self, topic: str, partition: int) -> PartitionLog:
        """The log of `topic`/`partition`, opened (and recovered) or created on first use."""
        key = (topic, partition)
        existing = self._logs.get(key)
        if existing is not None:
            return existing
        if not _TOPIC.match(topic) or topic in (".", "..") or partition < 0:
            raise ValueError(f"not a partition: {topic!r}/{partition}")
        directory = self.data_dir / f"{topic}-{partition}" if self.data_dir is not None else None
        opened = PartitionLog(
            topic, partition, directory,
            segment_bytes=self.segment_bytes, index_interval_bytes=self.index_interval_bytes,
        )
        self._logs[key] = opened
        return opened

    def delete_topic(self, topic: str) -> None:
        """Remove every partition log of `topic`, open or only on disk."""
        for key in [key for key in self._logs if key[0] == topic]:
            self._logs.pop(key).delete()
        if self.data_dir is None:
            return
        for entry in self.data_dir.iterdir():
            name, _, number = entry.name.rpartition("-")
            if name == topic and number.isdigit() and entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)

    def flush(self) -> None:
        for opened in self._logs.values():
            opened.flush()

    def close(self) -> None:
        """Sync and close every log and release the data dir; the manager is unusable after."""
        for opened in self._logs.values():
            opened.close()
        self._logs.clear()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
