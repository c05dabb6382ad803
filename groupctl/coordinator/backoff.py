"""Retry delays that double from `initial_ms` up to `maximum_ms` and start over after a success.

Sans-IO: the caller sleeps; this only says for how long. Used wherever the node retries the
store (loading group partitions, registering again after a session loss).
"""

from __future__ import annotations


class Backoff:
    def __init__(self, initial_ms: int, maximum_ms: int) -> None:
        self.initial_ms = initial_ms
        self.maximum_ms = maximum_ms
        self._next_ms = initial_ms

    @classmethod
    def store_retries(cls) -> "Backoff":
        """How the node retries its store: 100 ms, doubling up to 2 s."""
        return cls(initial_ms=100, maximum_ms=2_000)

    def failed(self) -> int:
        """The delay before the next try (each consecutive failure doubles it, up to the maximum)."""
        delay, self._next_ms = self._next_ms, min(self._next_ms * 2, self.maximum_ms)
        return delay

    def succeeded(self) -> None:
        self._next_ms = self.initial_ms
