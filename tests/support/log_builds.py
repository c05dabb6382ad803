"""A stand-in for the PartitionLog constructor LogManager calls, to hold log builds (which run in
worker threads) until a test releases them, count them, and make some of them fail."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Callable

import groupctl.log.manager as manager_module
from groupctl.log import LogCorruptionError, PartitionLog


class Gate:
    """Records each build (topic, partition, the thread it ran on), holds it until `released` is
    set, then fails it with LogCorruptionError while `failures` > 0, else builds the real log."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self._lock = threading.Lock()
        self.calls: list[tuple[str, int, threading.Thread]] = []
        self.failures = 0  # how many of the next builds raise LogCorruptionError
        self.active = 0
        self.most_active = 0

    def __call__(self, topic: str, partition: int, directory: Path, **options) -> PartitionLog:
        with self._lock:
            self.calls.append((topic, partition, threading.current_thread()))
            self.active += 1
            self.most_active = max(self.most_active, self.active)
            failing = self.failures > 0
            if failing:
                self.failures -= 1
        try:
            assert self.released.wait(10), "the test never released the build"
            if failing:
                raise LogCorruptionError(f"{topic}-{partition}: damaged")
            return PartitionLog(topic, partition, directory, **options)
        finally:
            with self._lock:
                self.active -= 1

    def builds(self, topic: str = "orders", partition: int = 0) -> int:
        with self._lock:
            return sum(1 for t, p, _ in self.calls if (t, p) == (topic, partition))

    @classmethod
    def install(cls, monkeypatch) -> "Gate":
        """A gate in place of the constructor, for the test's duration (release it at teardown)."""
        gate = cls()
        monkeypatch.setattr(manager_module, "PartitionLog", gate)
        return gate


async def until(predicate: Callable[[], object], what: str, timeout_s: float = 5.0) -> None:
    """Return once `predicate()` is true, polling every millisecond; fail after `timeout_s`."""
    for _ in range(int(timeout_s * 1000)):
        if predicate():
            return
        await asyncio.sleep(0.001)
    raise AssertionError(f"timed out waiting for {what}")
