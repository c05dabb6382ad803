"""The round loop of `groupctl lag record`: sample and write one round per slot of a fixed
cadence, until a duration elapses or a stop is requested.

Invariants:
- Cadence: slot k is due at start + k * interval on the monotonic clock. A round that runs past
  later slots skips them (`RoundOutcome.overran_slots`), so rounds neither drift nor bunch up.
  With a duration D only the slots with k * interval < D run, and the loop ends as soon as none
  is left (it does not sleep out the rest of D).
- Stopping: `request_stop()` is meant for a SIGINT/SIGTERM handler on the thread that iterates
  `rounds()`. A wait or a sample in flight is interrupted at once (nothing of it was written); a
  round's file being written is finished first. So a stop never leaves a partial file and never
  loses one that was written.
- Failures: an `OpsError` from sampling, a round in which nothing could be sampled
  (`RoundSample.failed`) and an `OSError` from writing fail that round (`RoundOutcome.error`);
  the next round runs at its slot, so recording lives through a coordinator restart.
- Bounded: the loop by the duration or a stop, each round by its sampler's timeout, each wait by
  the interval.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

from groupctl.errors import OpsError
from groupctl.ops.lag_dataset import WrittenFile
from groupctl.ops.lag_record import LagRow, RoundSample


class _StopNow(BaseException):
    """Raised by `request_stop` into the wait or sample in flight. A BaseException, as
    KeyboardInterrupt is, so that no `except Exception` on its way turns it into an error."""


@dataclass(frozen=True)
class RoundOutcome:
    number: int  # 1, 2, ... in the order rounds ran
    sample: Optional[RoundSample]  # None when sampling raised
    written: Optional[WrittenFile]  # None: no rows, or the round failed
    error: Optional[str]  # why the round failed; None when it did not
    elapsed_s: float
    overran_slots: int  # later slots this round ran past (skipped)

    @property
    def failed(self) -> bool:
        return self.error is not None


@dataclass
class RecordingTotals:
    """What a recording did so far. `skipped_groups` counts group samples left out of rounds
    (a group skipped in three rounds counts three); `missed_slots` the slots not run because a
    round ran past them; `ended_by` is "duration" or "stop" once the loop has ended."""

    rounds: int = 0
    failed_rounds: int = 0
    rows: int = 0
    files: int = 0
    skipped_groups: int = 0
    missed_slots: int = 0
    ended_by: Optional[str] = None

    def to_json(self) -> dict[str, Any]:
        return {"rounds": self.rounds, "failed_rounds": self.failed_rounds, "rows": self.rows,
                "files": self.files, "skipped_groups": self.skipped_groups,
                "missed_slots": self.missed_slots, "ended_by": self.ended_by}


class Recording:
    """Rounds of `sample` (one `RoundSample` per call) written by `write` (rows -> the file
    written, None for no rows), every `interval_s` seconds for `duration_s` seconds (None:
    until `request_stop`). `clock` and `sleep` are injectable for tests."""

    def __init__(self, sample: Callable[[], RoundSample],
                 write: Callable[[Sequence[LagRow]], Optional[WrittenFile]], *,
                 interval_s: float, duration_s: Optional[float] = None,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if not interval_s > 0 or (duration_s is not None and not duration_s > 0):
            raise ValueError("the interval and the duration must be positive")
        self._sample = sample
        self._write = write
        self._interval_s = interval_s
        self._slots = None if duration_s is None else max(1, math.ceil(duration_s / interval_s))
        self._clock = clock
        self._sleep = sleep
        self._stopping = False
        self._interruptible = False
        self.totals = RecordingTotals()

    def request_stop(self) -> None:
        """End the loop: at once while it waits or samples, after the file being written
        otherwise. Safe to call from a signal handler on the loop's thread (it raises into the
        interrupted wait or sample)."""
        self._stopping = True
        if self._interruptible:
            self._interruptible = False
            raise _StopNow()

    def rounds(self) -> Iterator[RoundOutcome]:
        """Run the rounds, yielding each outcome as it completes (see the module docstring)."""
        start = self._clock()
        slot = 0
        number = 0
        while not self._stopping:  # bounded: the duration's slots run out, or a stop ends it
            due = start + slot * self._interval_s
            waited, _ = self._interruptibly(lambda: self._sleep(max(0.0, due - self._clock())))
            if not waited:
                break
            began = self._clock()
            sampled, result = self._interruptibly(self._sample_round)
            if not sampled:
                break
            sample, error = result
            written = None
            if error is None:
                try:
                    written = self._write(sample.rows)
                except OSError as exc:
                    error = f"cannot write the round's file: {exc}"
            number += 1
            finished = self._clock()
            following = max(slot + 1, math.ceil((finished - start) / self._interval_s))
            if self._slots is not None:
                following = min(following, self._slots)
            outcome = RoundOutcome(number, sample, written, error, finished - began, following - slot - 1)
            self._count(outcome)
            yield outcome
            if self._slots is not None and following >= self._slots:
                self.totals.ended_by = "duration"
                return
            slot = following
        self.totals.ended_by = "stop"

    def _sample_round(self) -> tuple[Optional[RoundSample], Optional[str]]:
        """(the sample, None) or, for a failed round, (the sample or None, why it failed)."""
        try:
            sample = self._sample()
        except OpsError as exc:
            return None, str(exc)
        return sample, sample.problem_summary() if sample.failed else None

    def _interruptibly(self, action: Callable[[], Any]) -> tuple[bool, Any]:
        """(True, action()) unless a stop is requested before or while it runs: (False, None)."""
        try:
            self._interruptible = True
            if self._stopping:
                return False, None
            result = action()
            self._interruptible = False
            return True, result
        except _StopNow:
            return False, None
        finally:
            self._interruptible = False

    def _count(self, outcome: RoundOutcome) -> None:
        totals = self.totals
        totals.rounds += 1
        totals.failed_rounds += outcome.failed
        totals.missed_slots += outcome.overran_slots
        if outcome.sample is not None:
            totals.skipped_groups += len(outcome.sample.skipped_groups)
        if outcome.written is not None:
            totals.rows += outcome.written.rows
            totals.files += 1
