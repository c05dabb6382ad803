"""Clocks tests hand the node instead of waiting real time out."""

from __future__ import annotations

import time


class SteppedClock:
    """Monotonic milliseconds that follow real time and that a test can move forward at once, e.g.
    to make the node see an event-loop stall without stalling it for that long."""

    def __init__(self) -> None:
        self._ahead_ms = 0

    def __call__(self) -> int:
        return int(time.monotonic() * 1000) + self._ahead_ms

    def jump(self, ms: int) -> None:
        self._ahead_ms += ms
