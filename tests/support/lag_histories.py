"""Hand-built lag histories for the lag rule, window and report tests: one partition's samples,
times written in seconds after T0 (`at(s)`)."""

from __future__ import annotations

from groupctl.lag.window import Sample

T0 = 1_763_700_000_000


def at(seconds: float) -> int:
    return T0 + int(seconds * 1000)


def sample(seconds: float, committed, log_end, members=None) -> Sample:
    return Sample(at(seconds), committed, log_end, members)


def commits(lags: list[int], *, start: float = 0, every: float = 10, offset: int = 1000, step: int = 100,
            members=None) -> list[Sample]:
    """One sample per `every` seconds, the offset advancing by `step`, with the given lags."""
    return [sample(start + i * every, offset + i * step, offset + i * step + lag, members)
            for i, lag in enumerate(lags)]


def gone(after: float, committed: int, log_end: int, count: int, *, every: float = 10,
         produced: int = 50) -> list[Sample]:
    """`count` samples of an empty group after its consumer left at `after`: the offset stays, the
    log grows by `produced` a sample."""
    return [sample(after + every * i, committed, log_end + produced * i, members=0) for i in range(1, count + 1)]
