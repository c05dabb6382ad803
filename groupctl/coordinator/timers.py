"""Keyed timers, injected into the sans-IO core.

The core never reads a clock: it is handed `now_ms` with every call and schedules future work
through a `Timer`. A timer's op receives the time it fired at and returns a `Result`, exactly like
a request does, so the runtime applies both the same way.

Invariants:
- At most one pending timer per key; scheduling an existing key replaces it.
- `cancel` of an unknown key is a no-op (timers race with the events that make them moot).
"""

from __future__ import annotations

import heapq
import itertools
from typing import Callable, Hashable, Protocol, TYPE_CHECKING

if TYPE_CHECKING:
    from groupctl.coordinator.results import Result

TimerOp = Callable[[int], "Result"]


class Timer(Protocol):
    def schedule(self, key: Hashable, delay_ms: int, op: TimerOp) -> None: ...

    def cancel(self, key: Hashable) -> None: ...

    def is_scheduled(self, key: Hashable) -> bool: ...


class ManualTimer:
    """A timer driven by an explicit clock: for tests and for replaying history.

    `advance(ms)` moves time forward and fires every due op in deadline order (ties in
    scheduling order), returning their results.
    """

    def __init__(self, now_ms: int = 0) -> None:
        self.now_ms = now_ms
        self._heap: list[tuple[int, int, Hashable]] = []
        self._live: dict[Hashable, tuple[int, int, TimerOp]] = {}
        self._seq = itertools.count()

    def schedule(self, key: Hashable, delay_ms: int, op: TimerOp) -> None:
        deadline = self.now_ms + max(0, delay_ms)
        seq = next(self._seq)
        self._live[key] = (deadline, seq, op)
        heapq.heappush(self._heap, (deadline, seq, key))

    def cancel(self, key: Hashable) -> None:
        self._live.pop(key, None)

    def is_scheduled(self, key: Hashable) -> bool:
        return key in self._live

    def pending(self) -> dict[Hashable, int]:
        """Key -> deadline of every live timer."""
        return {key: deadline for key, (deadline, _, _) in self._live.items()}

    def advance(self, ms: int) -> list["Result"]:
        target = self.now_ms + ms
        results = []
        while self._heap and self._heap[0][0] <= target:
            deadline, seq, key = heapq.heappop(self._heap)
            live = self._live.get(key)
            if live is None or live[1] != seq:
                continue  # cancelled or replaced
            del self._live[key]
            self.now_ms = deadline
            results.append(live[2](deadline))
        self.now_ms = target
        return results
