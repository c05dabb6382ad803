"""The asyncio implementation of the core's keyed `Timer`.

A fired op's `Result` goes to the runtime's `submit`, synchronously, like a request's result:
timers and requests change state through one path, and their records are persisted in the order
the core produced them. Delays are relative (event-loop monotonic time); the
`now_ms` handed to the op is the node's wall clock, which is what group documents record.
"""

from __future__ import annotations

import asyncio
from typing import Callable, Hashable

from groupctl.coordinator.results import Result
from groupctl.coordinator.timers import TimerOp


class AsyncioTimer:
    def __init__(self, now_ms: Callable[[], int], submit: Callable[[Result], None]) -> None:
        self._now_ms = now_ms
        self._submit = submit
        self._handles: dict[Hashable, asyncio.TimerHandle] = {}

    def schedule(self, key: Hashable, delay_ms: int, op: TimerOp) -> None:
        self.cancel(key)
        loop = asyncio.get_running_loop()
        self._handles[key] = loop.call_later(max(0, delay_ms) / 1000.0, self._fire, key, op)

    def cancel(self, key: Hashable) -> None:
        handle = self._handles.pop(key, None)
        if handle is not None:
            handle.cancel()

    def is_scheduled(self, key: Hashable) -> bool:
        return key in self._handles

    def _fire(self, key: Hashable, op: TimerOp) -> None:
        self._handles.pop(key, None)
        self._submit(op(self._now_ms()))

    def close(self) -> None:
        for handle in self._handles.values():
            handle.cancel()
        self._handles.clear()
