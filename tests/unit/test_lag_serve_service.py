"""`groupctl.ops.lag_serve.LagService`: which groups a round sampled whole, what a failed round
changes (nothing but time), and a restart rebuilding its windows (and incidents) from its dataset."""

from __future__ import annotations

from groupctl.lag.live import LiveLag
from groupctl.lag.notify import Incidents, NotifyThreshold
from groupctl.ops.lag_dataset import LagDatasetWriter, read_rows
from groupctl.ops.lag_record import LagRow, Problem, RoundSample
from groupctl.ops.lag_schedule import RoundOutcome
from groupctl.ops.lag_serve import LagService


class Clock:
    def __init__(self, now: int = 0) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def row(ts: int, group: str, committed: int, log_end: int, members: int = 1, cluster: str = "local") -> LagRow:
    return LagRow(ts, cluster, group, "events", 0, committed, log_end, "Stable" if members else "Empty", members,
                  "c-1" if members else None)


def outcome(rows=(), problems=(), error=None, sampled=None) -> RoundOutcome:
    """A round of `rows`: `sampled` groups sampled whole (default: those with rows)."""
    sampled = len({r.group for r in rows}) if sampled is None else sampled
    sample = RoundSample(tuple(rows), sampled, tuple(problems)) if error is None else None
    return RoundOutcome(1, sample, None, error, 0.01, 0)


def service(clock: Clock, groups=None, **options) -> LagService:
    live = LiveLag(window=3, history_ms=10_000)
    return LagService(live, cluster="local", groups=groups, wall_ms=clock, **options)


def test_all_groups_a_group_no_longer_listed_is_gone_unless_a_node_could_not_list_its_groups():
    clock = Clock(1_000)
    watching = service(clock)
    watching.absorb(outcome([row(1_000, "billing", 1, 1), row(1_000, "orders", 1, 1)]))
    clock.now = 2_000
    incomplete = outcome([row(2_000, "orders", 2, 2)], [Problem(None, "cannot list the groups of node 1")])
    assert set(watching.absorb(incomplete).evaluation.groups) == {("local", "billing"), ("local", "orders")}
    clock.now = 3_000
    assert set(watching.absorb(outcome([row(3_000, "orders", 3, 3)])).evaluation.groups) == {("local", "orders")}


def test_a_group_that_could_not_be_sampled_keeps_its_windows_and_a_named_group_with_no_rows_is_forgotten():
    clock = Clock(1_000)
    watching = service(clock, groups=["billing", "orders"])
    watching.absorb(outcome([row(1_000, "billing", 1, 1), row(1_000, "orders", 1, 1)]))
    clock.now = 2_000
    evaluated = watching.absorb(outcome([], [Problem("billing", "coordinator unreachable")], sampled=1))
    assert set(evaluated.evaluation.groups) == {("local", "billing")}  # orders sampled with no rows: gone


def test_a_failed_round_changes_no_group_but_its_evaluation_sees_time_pass():
    clock = Clock(0)
    watching = service(clock)
    for t in range(4):
        clock.now = 1_000 * t
        watching.absorb(outcome([row(clock.now, "billing", 5, 5 + t, members=0)]))
    clock.now = 60_000
    evaluated = watching.absorb(outcome(error="no bootstrap server answered"))
    assert evaluated.evaluation.now == 60_000 and evaluated.evaluation.groups[("local", "billing")]["status"] == "ERR"


def test_a_round_sampled_whose_out_file_could_not_be_written_still_counts():
    clock = Clock(0)
    watching = service(clock)
    for t in range(4):
        clock.now = 1_000 * t
        unwritten = outcome([row(clock.now, "billing", 10 * t, 10 * t)])
        unwritten = RoundOutcome(1, unwritten.sample, None, "cannot write the round's file: disk full", 0.01, 0)
        evaluated = watching.absorb(unwritten)
    state = evaluated.evaluation.partitions[("local", "billing")][0]
    assert state.window.samples == 4 and evaluated.evaluation.groups[("local", "billing")]["status"] == "OK"


def test_incidents_change_once_per_status_change():
    clock = Clock(0)
    watching = service(clock, incidents=Incidents(NotifyThreshold.ERR))
    seen = []
    for t in range(8):
        clock.now = 1_000 * t
        seen += [c.event for c in watching.absorb(outcome([row(clock.now, "billing", 5, 5 + t, members=0)])).changes]
    assert seen == ["open"]


def test_a_restart_reads_back_its_own_rows_within_the_history_and_does_not_reopen_what_it_already_showed(tmp_path):
    writer = LagDatasetWriter(tmp_path)
    writer.write_round([row(1_000, "billing", 5, 5, members=0), row(1_000, "other", 1, 1, cluster="elsewhere")])
    for t in range(20, 26):
        writer.write_round([row(1_000 * t, "billing", 5, 5 + t, members=0), row(1_000 * t, "orders", t, t)])
    (tmp_path / "date=1970-01-01" / "hour=00" / "part-9-9-9.jsonl").write_text(
        '{"v": 1, "ts": "soon"}\nnot json\n{"v": 2}\n[1]\n')  # skipped, as analyze lag skips them
    clock = Clock(26_000)
    restarted = service(clock, groups=["billing"], incidents=Incidents(NotifyThreshold.ERR))
    assert restarted.restore(tmp_path) == 6  # billing's rows of the last 10 s; not orders, not elsewhere
    assert restarted.latest.groups[("local", "billing")]["status"] == "ERR"
    assert restarted.latest.now == 25_000  # evaluated as the run before last saw it
    clock.now = 27_000
    assert restarted.absorb(outcome([row(27_000, "billing", 5, 32, members=0)])).changes == ()


def test_read_rows_skips_whole_hours_before_the_time_asked_for(tmp_path):
    writer = LagDatasetWriter(tmp_path)
    hour = 3_600_000
    writer.write_round([row(5 * hour + 1, "billing", 2, 2)])
    misplaced = tmp_path / "date=1970-01-01" / "hour=04"
    misplaced.mkdir()  # a row an hour directory before the one asked for would never be read
    (misplaced / "part-1-1-1.jsonl").write_text(
        '{"v":1,"ts":%d,"cluster":"local","group":"billing","topic":"events","partition":0,"committed":1,'
        '"log_end":1,"state":null,"members":null,"owner":null}\n' % (5 * hour + 2))
    assert [r.committed for r in read_rows(tmp_path, since_ms=5 * hour)] == [2]
    assert [r.committed for r in read_rows(tmp_path, since_ms=4 * hour)] == [1, 2]


def test_evaluation_time_never_goes_back_when_the_wall_clock_does():
    clock = Clock(10_000)
    watching = service(clock)
    watching.absorb(outcome([row(10_000, "billing", 1, 1)]))
    clock.now = 4_000  # the wall clock stepped back
    assert watching.absorb(outcome([row(4_000, "billing", 2, 2)])).evaluation.now == 10_000
