"""The sampling side of `groupctl lag serve`: each round of `lag record`'s sampler goes into a
`LiveLag` and is evaluated at once; the latest `Evaluation` is what the HTTP API and the metrics
read, and the incidents it opens or closes are what the notifier posts.

Invariants:
- `latest` is replaced whole after each round (an immutable `Evaluation`): readers on other
  threads see one round or the next, never half of one.
- Which groups a round sampled whole (`sampled_groups`): the named groups, or with `--all-groups`
  those with rows plus every group known before (a group no longer listed is gone), except the
  groups that could not be sampled; when a node could not list its groups, only those with rows
  (the others' may merely be unlisted this round).
- A round whose sampling failed changes no group (one whose --out file could not be written did
  sample: it counts); its evaluation still runs, so windows see time pass.
- Restart: `restore` reads back the service's own dataset (`--out`): the rows of its cluster
  label (and named groups) of the last `--history` before its newest row, so a restarted server
  has its windows at once however long it was down. With --out the open incidents are kept beside
  the dataset (`lag_incidents`), after `restore` and after every round that changed one, and at
  the end the notifications not posted; `restore` resumes the incidents of the groups it watches
  under their ids (others are kept as they are), with every group's status as the last run saw
  it, so a group ERR before the restart and still ERR is not notified again, and its `close`
  carries the id of its `open`; the notifications kept are for the caller to post first. What
  changed while no server ran is told at the first round, from fresh samples: an outage must not
  pass for consumers that stopped. A dataset without kept incidents (written before they were
  kept): the incidents its windows showed at its newest row are taken as already told.
- Evaluation times never go back: a wall clock stepping back evaluates at the latest time seen.
- Keeping the incidents failing (OSError) loses no round: `Evaluated.warning` says so, and the
  file is written again at the next change.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

from groupctl.errors import OpsError
from groupctl.lag.live import Evaluation, GroupKey, LiveLag
from groupctl.lag.notify import Change, Incidents
from groupctl.lag.window import Sample
from groupctl.ops.lag_dataset import newest_round_ts, read_rows
from groupctl.ops.lag_incidents import load_incidents, save_incidents
from groupctl.ops.lag_record import LagRow, RoundSample, wall_clock_ms
from groupctl.ops.lag_schedule import RoundOutcome


@dataclass(frozen=True)
class Evaluated:
    """What one round brought: its outcome, the evaluation after it and the incidents' changes."""

    outcome: RoundOutcome
    evaluation: Evaluation
    changes: tuple[Change, ...]
    warning: Optional[str] = None


class LagService:
    """Rounds of `cluster`'s `groups` (None: all groups) into `live` (see the module docstring)."""

    def __init__(self, live: LiveLag, *, cluster: str, groups: Optional[Sequence[str]],
                 incidents: Optional[Incidents] = None, wall_ms: Callable[[], int] = wall_clock_ms) -> None:
        self.live = live
        self.cluster = cluster
        self.groups = None if groups is None else tuple(groups)
        self.incidents = incidents
        self._wall_ms = wall_ms
        self._incidents_root: Optional[Path] = None
        self._others: list[dict] = []  # kept incidents of groups this run does not watch: kept as they are
        self.pending: list[dict] = []  # notifications the last run could not post, to post now
        self.latest = Evaluation(wall_ms(), live.window, live.rules)
        self.rounds = 0  # rounds absorbed: READY once there is one

    def restore(self, root: Path) -> int:
        """Rebuild the windows from the dataset under `root` and take back what was kept there
        (see the module docstring); how many rows were read back. OpsError when the kept
        incidents cannot be read or written back."""
        newest = newest_round_ts(root)
        rows = [] if newest is None else [row for row in read_rows(root, since_ms=newest - self.live.history_ms)
                                          if self.watches(row.cluster, row.group)]
        if rows:
            self.live.restore(_samples(rows))
            self.latest = self.live.evaluate(max(row.ts for row in rows))  # as the previous run last saw it
        if self.incidents is not None:
            kept = load_incidents(root)
            if kept is not None:
                self.incidents.resume([e for e in kept.open if self.watches(e["cluster"], e["group"])],
                                      self._statuses(self.latest))
                self._others = [e for e in kept.open if not self.watches(e["cluster"], e["group"])]
                self.pending = kept.pending
            elif rows:
                self.incidents.observe(self._statuses(self.latest), self.latest.now)
            self._incidents_root = root
            try:
                self._save(self.pending)
            except OSError as exc:
                raise OpsError(f"cannot keep the open incidents under {root}: {exc}") from None
        return len(rows)

    def keep_unposted(self, notifications: list[dict]) -> Optional[str]:
        """At the end: keep the notifications not posted, for the next run to post (with --out);
        a warning when they cannot be kept."""
        if self._incidents_root is None:
            return None
        try:
            self._save(notifications)
        except OSError as exc:
            return f"cannot keep {len(notifications)} unposted notification(s) under {self._incidents_root}: {exc}"
        return None

    def watches(self, cluster: str, group: str) -> bool:
        """Whether `group` of `cluster` is this server's to watch."""
        return cluster == self.cluster and (self.groups is None or group in self.groups)

    def _save(self, pending: list[dict]) -> None:
        save_incidents(self._incidents_root, self.incidents.open_incidents() + self._others, pending)

    def absorb(self, outcome: RoundOutcome) -> Evaluated:
        """Take in one round and evaluate every known group (see the module docstring)."""
        sample = outcome.sample
        if sample is not None and not sample.failed:  # sampled, even if its --out file could not be written
            self.live.record(_samples(sample.rows), sampled=self.sampled_groups(sample))
        now = max(self._wall_ms(), self.latest.now)  # a wall clock stepping back does not turn time back
        evaluation = self.latest = self.live.evaluate(now)
        self.rounds += 1
        changes: tuple[Change, ...] = ()
        warning = None
        if self.incidents is not None:
            changes = tuple(self.incidents.observe(self._statuses(evaluation), evaluation.now))
            if changes and self._incidents_root is not None:
                try:
                    self._save([])
                except OSError as exc:
                    warning = f"cannot keep the open incidents under {self._incidents_root}: {exc}"
        return Evaluated(outcome, evaluation, changes, warning)

    @staticmethod
    def _statuses(evaluation: Evaluation) -> dict[GroupKey, str]:
        return {key: report["status"] for key, report in evaluation.groups.items()}

    def sampled_groups(self, sample: RoundSample) -> set[GroupKey]:
        skipped = set(sample.skipped_groups)
        with_rows = {row.group for row in sample.rows}
        if self.groups is not None:
            names = set(self.groups)
        elif any(problem.group is None for problem in sample.problems):
            names = with_rows
        else:
            names = with_rows | {group for cluster, group in self.live.groups if cluster == self.cluster}
        return {(self.cluster, group) for group in names - skipped}


def _samples(rows: Sequence[LagRow]):
    return [((row.cluster, row.group, row.topic, row.partition),
             Sample(row.ts, row.committed, row.log_end, row.members, row.owner)) for row in rows]
