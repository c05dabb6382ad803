"""A partition's evaluation window: what the status rules (`rules`) read of its recorded samples.

Input: one partition's rows of the lag dataset (docs/lag-and-rebalances.md, "Recording lag") as
`Sample`s; output: the `PartitionWindow` at evaluation time `now`. Invariants, in the order applied:
- Only samples with `ts <= now` count, taken in *sample order* (ts, committed, log_end, members,
  owner ascending, a missing value first): a total order, so ties break the same way everywhere.
  A sample identical to another (overlapping inputs) counts once.
- A sample is *valid* when both `committed` and `log_end` are known; invalid ones take part in
  nothing but `last_sample_ts` and `owner`.
- A valid sample is a *commit observation* (an entry of Burrow's window) unless the group had no
  members (`members == 0`) and its offset equals the previous valid sample's. Kafka does not say
  when an offset was committed, only what it is: this tells a consumer that is gone from one that
  keeps committing a stuck offset. Unknown membership (null) counts as a commit.
- The window holds the last `size` entries, oldest first; `recent_log_ends` the log ends of the
  last `size` valid samples (Burrow's broker offsets).
- `lagging_since`: the first valid sample, from the last entry on, with lag > 0.

`groupctl.analytics.lag` builds the same windows on Spark; the tests check the two agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, NamedTuple, Optional

from groupctl.lag.offsets import consumer_lag


class Sample(NamedTuple):
    """One recorded row of one partition (its cluster, group, topic and partition are the caller's)."""

    ts: int
    committed: Optional[int]
    log_end: Optional[int]
    members: Optional[int] = None
    owner: Optional[str] = None

    @property
    def valid(self) -> bool:
        return self.committed is not None and self.log_end is not None


class Reading(NamedTuple):
    """A valid sample's committed offset and log end at time `ts`."""

    ts: int
    committed: int
    log_end: int

    @property
    def lag(self) -> int:
        return consumer_lag(self.committed, self.log_end)


@dataclass(frozen=True)
class PartitionWindow:
    """What the rules and the report read of one partition at time `now`."""

    now: int
    """The evaluation time (ms since the epoch)."""
    size: int
    """The window's size in entries (`--window`, Burrow's `intervals`)."""
    samples: int
    """Valid samples at or before `now`."""
    entries: tuple[Reading, ...]
    """The last `size` commit observations, oldest first (fewer when there were fewer)."""
    recent_log_ends: tuple[int, ...]
    """The log ends of the last `size` valid samples, oldest first."""
    latest: Optional[Reading]
    """The latest valid sample: the current committed offset and log end (None: no valid sample)."""
    first_valid_ts: Optional[int]
    """The first valid sample's time: how far back the recording sees this partition's messages."""
    lagging_since: Optional[int]
    """When the log end first passed the committed offset after the last commit (None: it has not,
    or there is no commit)."""
    produced_between: Optional[tuple[Reading, Reading]]
    """The two consecutive valid samples whose log ends straddle the current committed offset
    (before.log_end <= committed < after.log_end; the latest such pair), between which the oldest
    unconsumed message was produced. None when it was produced before the first valid sample, or
    when nothing is unconsumed."""
    last_sample_ts: int
    """The time of the latest sample, valid or not."""
    owner: Optional[str]
    """The latest sample's owner (client id of the member assigned the partition)."""


def sample_order(sample: Sample) -> tuple:
    """The sort key of sample order: fields ascending, a missing value before any value."""
    return tuple((False, 0) if value is None else (True, value) for value in sample)


def in_sample_order(samples: set[Sample]) -> list[Sample]:
    """`samples` (each counted once: a set) in sample order; by time alone when no two share one
    (the same order, and the common case of one sample a round, at a fraction of the cost of the
    full key)."""
    if len({sample.ts for sample in samples}) == len(samples):
        return sorted(samples, key=_time)
    return sorted(samples, key=sample_order)


def _time(sample: Sample) -> int:
    return sample.ts


def partition_window(samples: Iterable[Sample], *, size: int, now: int) -> Optional[PartitionWindow]:
    """The window of one partition's `samples` at `now`; None when it has no sample at or before `now`."""
    if size < 1:
        raise ValueError(f"the window must hold at least 1 entry, got {size}")
    seen = in_sample_order({sample for sample in samples if sample.ts <= now})
    if not seen:
        return None
    valid = [Reading(s.ts, s.committed, s.log_end) for s in seen if s.valid]
    members = [s.members for s in seen if s.valid]
    entry_indexes = [index for index, reading in enumerate(valid)
                     if not (index > 0 and members[index] == 0 and reading.committed == valid[index - 1].committed)]
    entries = [valid[index] for index in entry_indexes]
    since_last_entry = valid[entry_indexes[-1]:] if entry_indexes else []
    latest = valid[-1] if valid else None
    return PartitionWindow(
        now=now, size=size, samples=len(valid), entries=tuple(entries[-size:]),
        recent_log_ends=tuple(reading.log_end for reading in valid[-size:]),
        lagging_since=next((reading.ts for reading in since_last_entry if reading.lag > 0), None),
        latest=latest, first_valid_ts=valid[0].ts if valid else None,
        produced_between=_produced_between(valid, latest.committed) if latest and latest.lag > 0 else None,
        last_sample_ts=seen[-1].ts, owner=seen[-1].owner)


def _produced_between(valid: list[Reading], committed: int) -> Optional[tuple[Reading, Reading]]:
    """The latest consecutive pair of valid samples with before.log_end <= committed < after.log_end."""
    for before, after in zip(reversed(valid[:-1]), reversed(valid[1:])):
        if before.log_end <= committed < after.log_end:
            return before, after
    return None
