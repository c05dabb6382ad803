"""The lag status rules: a partition's `PartitionWindow` -> OK, WARN, STOP, STALL or REWIND, and a
group's partitions -> OK, WARN or ERR. Two rule sets, chosen with `analyze lag --rules`:

GROUPCTL (the default), first match wins:
  1. fewer than `size` valid samples: OK (the window is not full yet);
  2. current lag <= allowed lag: OK;
  3. an entry's committed offset is below the entry's before it: REWIND;
  4. messages have waited, with no commit, for longer than the window spans (now - the time the
     log end passed the committed offset after the last commit > last - first entry): STOP,
     whatever lag the window held before the commits stopped;
  5. no entry caught up (lag 0): STALL if every entry has the same offset, else WARN if lag never
     decreased from one entry to the next;
  6. OK.

BURROW: Burrow's evaluator as its code has it (linkedin/Burrow, core/internal/evaluator/caching.go,
the same from v1.3.7 to v1.9.5), with `minimum-complete` 0 (its default), over the same windows:
  if current lag > allowed lag:
  1. no commit for longer than the window spans, and none of the recent log ends is at or below
     the last committed offset: STOP;
  2. the first drop of the committed offset in the window, unless a later entry is back at or
     above the offset before the drop: REWIND;
  3. no entry with lag <= allowed lag: STALL if every entry has the same offset, else WARN if lag
     never decreased;
  otherwise OK.

Where they differ, and why GROUPCTL does:
- STOP. Burrow's test is "no commit for longer than the window spans", held back while any of
  the recent log ends (its last `intervals` broker offsets) is at the last committed offset, so a
  consumer that dies caught up is OK for up to a window of sampling rounds. GROUPCTL times the
  silence from when messages started waiting instead of from the last commit: a consumer that
  dies caught up is STOP once they have waited longer than the window spans, and a consumer
  without group membership that caught up and idled (commits only when its offset moves) is not
  STOP the moment one new message arrives. (Burrow's wiki lists "any zero lag in the window: OK"
  as its first rule, which would keep a dead consumer OK for ever, and groupctl's rules had that
  blind spot before; Burrow's code has checked STOP first since v1.0.0, PR #292, and has held it
  back on recent broker offsets since v1.1.0, PR #338.)
- An incomplete window. Burrow judges a partition from its first commit (a single lagging commit
  is STALL); GROUPCTL waits for `size` samples.
- REWIND. Burrow forgets a rewind once the offset is back where it was; GROUPCTL flags it until
  the rewind leaves the window (an operator wants an explicit rewind seen).

Both read the window built by `groupctl.lag.window`, and neither has a second implementation: the
Spark pipeline only builds windows, and every caller evaluates them here.
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
