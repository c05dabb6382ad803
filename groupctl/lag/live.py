"""Lag status kept current as rounds of samples arrive: the memory of `groupctl lag serve`.

`LiveLag` holds each partition's recent samples and evaluates them with the same functions as
`analyze lag` (`window.partition_window`, `report.partition_report`, `report.group_reports`), so a
partition served live has the status `analyze lag` gives the same samples at the same time.

Invariants:
- Keys are `analyze lag`'s: a partition is (cluster, group, topic, partition), a group (cluster,
  group).
- A group sampled whole in a round (`record(..., sampled=...)`) has exactly the partitions of that
  round's samples: a partition missing from them (its offsets were deleted, its topic too) is
  forgotten with its history, and a group with no samples (deleted, or its offsets expired) is
  forgotten. A group left out of a round (it could not be sampled) keeps what it had, and its
  windows see time pass with no new sample.
- Memory is bounded per partition: `evaluate(now)` keeps the samples of the last `history_ms`
  and, whatever their age, what the rules read of older ones: the last `window` valid samples, the
  last `window` commit observations (the window's entries: a group without members commits nothing
  while its offset stands still, so its last commits can be old), the first sample lagging after
  the last commit (when messages started waiting: STOP's clock) and the latest sample. Dropping
  the others changes no status: a sample kept keeps its standing as a commit or not, since every
  sample dropped between two kept ones that is not a commit repeats the offset before it. Only
  `lag_seconds` can differ: of a message older than the history kept it is a lower bound, flagged
  as one, as for a message older than the recording. That holds while samples arrive in time
  order; a wall clock stepping back (a sample older than one before it) can make the two differ
  until the history has passed the step, and a sample later than `now` stops trimming.
- Pure: no I/O and no clock; `now` is the caller's.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from groupctl.lag.report import group_reports, partition_report
from groupctl.lag.rules import Rules
from groupctl.lag.window import PartitionWindow, Sample, in_sample_order, partition_window

PartitionKey = tuple[str, str, str, int]
"""(cluster, group, topic, partition)"""
GroupKey = tuple[str, str]
"""(cluster, group)"""


@dataclass(frozen=True)
class PartitionState:
    """One partition at an evaluation: its window and its `analyze lag` row."""

    key: PartitionKey
    window: PartitionWindow
    report: dict


@dataclass(frozen=True)
class Evaluation:
    """Every known group at time `now`: its `analyze lag` group row and its partitions (by topic,
    then partition). Immutable: readers on other threads hold one while the next is built."""

    now: int
    window: int
    rules: Rules
    groups: Mapping[GroupKey, dict] = field(default_factory=dict)
    partitions: Mapping[GroupKey, tuple[PartitionState, ...]] = field(default_factory=dict)

    def group_names(self, cluster: str) -> list[str]:
        """The groups of `cluster`, sorted."""
        return sorted(group for c, group in self.groups if c == cluster)


class LiveLag:
    """The recent samples of every partition of the groups being watched (see the module docstring)."""

    def __init__(self, *, window: int, history_ms: int, rules: Rules = Rules.GROUPCTL, allowed_lag: int = 0) -> None:
        if window < 1:
            raise ValueError(f"the window must hold at least 1 entry, got {window}")
        if history_ms < 0 or allowed_lag < 0:
            raise ValueError("the history and the allowed lag must not be negative")
        self.window = window
        self.history_ms = history_ms
        self.rules = rules
        self.allowed_lag = allowed_lag
        self._samples: dict[GroupKey, dict[tuple[str, int], deque[Sample]]] = {}

    @property
    def groups(self) -> set[GroupKey]:
        return set(self._samples)

    def restore(self, samples: Iterable[tuple[PartitionKey, Sample]]) -> None:
        """Add samples of an earlier run (a restart rebuilding its windows from its dataset),
        forgetting nothing."""
        for (cluster, group, topic, partition), sample in samples:
            self._samples.setdefault((cluster, group), {}).setdefault((topic, partition), deque()).append(sample)
        for partitions in self._samples.values():
            for key, history in partitions.items():
                partitions[key] = deque(in_sample_order(set(history)))

    def record(self, samples: Iterable[tuple[PartitionKey, Sample]], *, sampled: Iterable[GroupKey]) -> None:
        """A round: `samples` of the groups in `sampled`, each sampled whole (see the module
        docstring for what a group sampled without samples loses)."""
        incoming: dict[GroupKey, dict[tuple[str, int], Sample]] = {group: {} for group in sampled}
        for (cluster, group, topic, partition), sample in samples:
            incoming.setdefault((cluster, group), {})[(topic, partition)] = sample
        for group, partitions in incoming.items():
            if not partitions:
                self._samples.pop(group, None)
                continue
            known = self._samples.get(group, {})
            self._samples[group] = {tp: known.get(tp, deque()) for tp in partitions}
            for tp, sample in partitions.items():
                self._samples[group][tp].append(sample)

    def forget(self, groups: Iterable[GroupKey]) -> None:
        for group in groups:
            self._samples.pop(group, None)

    def evaluate(self, now: int) -> Evaluation:
        """Every group's status at `now`, after dropping the samples the history no longer keeps."""
        groups: dict[GroupKey, dict] = {}
        partitions: dict[GroupKey, tuple[PartitionState, ...]] = {}
        for group_key in sorted(self._samples):
            states = []
            for (topic, partition), history in sorted(self._samples[group_key].items()):
                self._trim(history, now)
                window = partition_window(history, size=self.window, now=now)
                if window is None:
                    continue  # only samples later than `now`
                key = (*group_key, topic, partition)
                states.append(PartitionState(key, window, partition_report(key, window, rules=self.rules,
                                                                           allowed_lag=self.allowed_lag)))
            if states:
                partitions[group_key] = tuple(states)
                [groups[group_key]] = group_reports(state.report for state in states)
        return Evaluation(now, self.window, self.rules, groups, partitions)

    def _trim(self, history: deque[Sample], now: int) -> None:
        """Drop the samples the window at any later time cannot read (see the module docstring)."""
        horizon = now - self.history_ms
        if not history or min(sample.ts for sample in history) >= horizon:
            return
        ordered = in_sample_order(set(history))
        if ordered[-1].ts > now:
            return  # a sample later than `now` (a clock stepped back): what the rules read is not settled
        valid = [index for index, sample in enumerate(ordered) if sample.valid]
        entries = [index for n, index in enumerate(valid)
                   if not (n > 0 and ordered[index].members == 0
                           and ordered[index].committed == ordered[valid[n - 1]].committed)]
        keep = {*valid[-self.window:], *entries[-self.window:], len(ordered) - 1}
        lagging = next((index for index in valid[valid.index(entries[-1]):]
                        if ordered[index].log_end > ordered[index].committed), None) if entries else None
        if lagging is not None:
            keep.add(lagging)
        history.clear()
        history.extend(sample for index, sample in enumerate(ordered) if sample.ts >= horizon or index in keep)
