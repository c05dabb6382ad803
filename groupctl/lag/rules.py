"""The lag status rules: a partition's `PartitionWindow` -> OK, WARN, STOP, STALL or REWIND, and a
group's partitions -> OK, WARN or ERR (as bad as its worst partition; STOP, STALL, REWIND are ERR).

Two rule sets, chosen with `analyze lag --rules`; docs/lag-and-rebalances.md ("analyze lag") states
both, rule by rule, and how they differ:
- GROUPCTL (the default), first match wins: window not full yet, or lag <= allowed: OK; a
  committed offset went back within the window: REWIND; messages have waited with no commit for
  longer than the window spans: STOP; no entry caught up: STALL (offset never moved) or WARN (lag
  never decreased); else OK. STOP is timed from when messages started waiting
  (`lagging_since`), not from the last commit, so a consumer that dies caught up turns STOP, and
  one that caught up and idles (committing only when its offset moves) does not turn STOP the
  moment one message arrives.
- BURROW: Burrow's evaluator as its code has it (linkedin/Burrow,
  core/internal/evaluator/caching.go, v1.3.7 to v1.9.5) with `minimum-complete` 0, over the same
  windows, to compare with a Burrow.

Invariants: pure functions of the window (its `now` is the only time they read). Both rule sets
read the windows `groupctl.lag.window` defines, and neither has a second implementation: the Spark
pipeline only builds windows, and every caller evaluates them here.
"""

from __future__ import annotations

from enum import Enum
from typing import Iterable, Sequence

from groupctl.lag.window import PartitionWindow, Reading

STATUS_ORDER = ("OK", "WARN", "STOP", "STALL", "REWIND")
"""Partition statuses, least severe first."""
ROLLS_UP_TO_ERR = ("STOP", "STALL", "REWIND")


class Rules(str, Enum):
    """A rule set (`analyze lag --rules`)."""

    GROUPCTL = "groupctl"
    BURROW = "burrow"


def partition_status(window: PartitionWindow, *, rules: Rules = Rules.GROUPCTL, allowed_lag: int = 0) -> str:
    """The status of one partition's window under `rules`."""
    if allowed_lag < 0:
        raise ValueError(f"the allowed lag must not be negative, got {allowed_lag}")
    if rules is Rules.BURROW:
        return _burrow(window, allowed_lag)
    return _groupctl(window, allowed_lag)


def group_status(statuses: Iterable[str]) -> str:
    """A group is as bad as its worst partition: ERR (STOP, STALL, REWIND), WARN or OK."""
    seen = set(statuses)
    if seen & set(ROLLS_UP_TO_ERR):
        return "ERR"
    return "WARN" if "WARN" in seen else "OK"


class FailOn(str, Enum):
    """The group status from which `analyze lag --fail-on` fails a check (exit status 3)."""

    WARN = "warn"
    ERR = "err"


def fails_check(group_status_: str, fail_on: FailOn) -> bool:
    """Whether a group's status fails a check at `fail_on`: ERR always; WARN at `warn`; and
    NOTFOUND (a group asked for, not in the data) always, since nothing vouches for it."""
    if group_status_ in ("ERR", "NOTFOUND"):
        return True
    return fail_on is FailOn.WARN and group_status_ == "WARN"


def severity(status: str) -> int:
    """A partition status's rank in STATUS_ORDER (0 = OK)."""
    return STATUS_ORDER.index(status)


def _groupctl(window: PartitionWindow, allowed_lag: int) -> str:
    entries = window.entries
    if window.samples < window.size or window.latest is None:
        return "OK"
    if window.latest.lag <= allowed_lag:
        return "OK"
    if _first_drop(entries) is not None:
        return "REWIND"
    if window.lagging_since is not None and window.now - window.lagging_since > _span(entries):
        return "STOP"
    if not any(entry.lag == 0 for entry in entries):
        if _offsets_unmoved(entries):
            return "STALL"
        if _lag_never_decreased(entries):
            return "WARN"
    return "OK"


def _burrow(window: PartitionWindow, allowed_lag: int) -> str:
    entries, latest = window.entries, window.latest
    if not entries or latest is None or latest.lag <= allowed_lag:
        return "OK"
    recently_caught_up = any(log_end <= latest.committed for log_end in window.recent_log_ends)
    if window.now - entries[-1].ts > _span(entries) and not recently_caught_up:
        return "STOP"
    drop = _first_drop(entries)
    if drop is not None and not any(entry.committed >= entries[drop - 1].committed for entry in entries[drop:]):
        return "REWIND"
    if all(entry.lag > allowed_lag for entry in entries):
        if _offsets_unmoved(entries):
            return "STALL"
        if _lag_never_decreased(entries):
            return "WARN"
    return "OK"


def _span(entries: Sequence[Reading]) -> int:
    """How long the window's commits span (ms): the yardstick of STOP."""
    return entries[-1].ts - entries[0].ts


def _first_drop(entries: Sequence[Reading]) -> int | None:
    """The index of the first entry whose committed offset is below the one before it."""
    return next((index for index in range(1, len(entries)) if entries[index].committed < entries[index - 1].committed),
                None)


def _offsets_unmoved(entries: Sequence[Reading]) -> bool:
    return all(entry.committed == entries[0].committed for entry in entries)


def _lag_never_decreased(entries: Sequence[Reading]) -> bool:
    return all(after.lag >= before.lag for before, after in zip(entries, entries[1:]))
