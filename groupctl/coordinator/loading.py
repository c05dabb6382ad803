"""Which won group partitions to read from the store next, and how long to wait after a failure.

Sans-IO: the runtime reads the batch `next_batch` names and reports `loaded` or `failed`.

Invariants:
- A partition is queued from the moment it is won until a read of it starts; one won again while
  its read is under way is queued anew, one lost is dropped (`discard`).
- Partitions load a batch at a time (one scan of `/groups` for all queued). After a failed read
  they load one at a time until one succeeds, so one unreadable partition (a corrupt document)
  does not hold the others up; a failed partition is retried while it is still wanted.
"""

from __future__ import annotations

from groupctl.coordinator.backoff import Backoff


class LoadQueue:
    def __init__(self, backoff: Backoff) -> None:
        self._queued: set[int] = set()
        self._singly = False
        self._backoff = backoff

    def __bool__(self) -> bool:
        return bool(self._queued)

    def add(self, partitions: set[int]) -> None:
        self._queued |= partitions

    def discard(self, partitions: set[int]) -> None:
        self._queued -= partitions

    def next_batch(self) -> set[int]:
        """The partitions to read now (taken off the queue)."""
        batch = {min(self._queued)} if self._singly and self._queued else set(self._queued)
        self._queued -= batch
        return batch

    def loaded(self) -> None:
        self._singly = False
        self._backoff.succeeded()

    def failed(self, batch: set[int], still_wanted: set[int]) -> int:
        """Reading `batch` failed: queue what is still wanted of it again; the ms to wait."""
        self._queued |= batch & still_wanted
        self._singly = True
        return self._backoff.failed()
