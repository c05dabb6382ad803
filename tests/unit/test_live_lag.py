"""`groupctl.lag.live`: the in-memory windows of `lag serve` give the statuses `analyze lag`'s
functions give the same samples, keep each group's partitions as its latest whole sample says,
and stay bounded without losing a dead consumer's STOP."""

from __future__ import annotations

import random

import pytest

from groupctl.lag.live import LiveLag
from groupctl.lag.report import group_reports, partition_report
from groupctl.lag.rules import Rules
from groupctl.lag.window import Sample, partition_window

G = ("local", "billing")
INTERVAL = 1_000


def key(partition: int = 0, topic: str = "events", group: tuple = G):
    return (*group, topic, partition)


def feed(live: LiveLag, rounds: list[dict], group: tuple = G) -> int:
    """Record one round per {partition: Sample}; the last round's time."""
    for samples in rounds:
        live.record([(key(p, group=group), s) for p, s in samples.items()], sampled=[group])
    return max(s.ts for samples in rounds for s in samples.values())


def consumer(ts: int, committed: int, log_end: int, members: int = 1) -> Sample:
    return Sample(ts, committed, log_end, members, "client-1" if members else None)


@pytest.mark.parametrize("rules", list(Rules))
def test_a_live_evaluation_is_what_analyze_lags_functions_give_the_same_samples(rules):
    generator = random.Random(7)
    live = LiveLag(window=4, history_ms=10**9, rules=rules)
    histories: dict[int, list[Sample]] = {0: [], 1: []}
    committed = {0: 0, 1: 0}
    for step in range(30):
        ts = step * INTERVAL
        round_ = {}
        for p in histories:
            committed[p] = max(0, committed[p] + generator.choice([0, 1, 2, -1]))
            members = generator.choice([0, 1, 1])
            sample = Sample(ts, committed[p] if generator.random() > 0.1 else None, committed[p] + generator.randint(0, 5),
                            members, None)
            histories[p].append(sample)
            round_[p] = sample
        live.record([(key(p), s) for p, s in round_.items()], sampled=[G])
        now = ts + generator.randint(0, 3 * INTERVAL)
        evaluation = live.evaluate(now)
        expected = [partition_report(key(p), partition_window(histories[p], size=4, now=now), rules=rules)
                    for p in histories]
        assert [state.report for state in evaluation.partitions[G]] == expected
        assert evaluation.groups[G] == group_reports(expected)[0]


def test_a_group_sampled_whole_keeps_only_the_partitions_of_its_latest_sample():
    live = LiveLag(window=3, history_ms=60_000)
    live.record([(key(0), consumer(0, 5, 5)), (key(1), consumer(0, 5, 5))], sampled=[G])
    live.record([(key(0), consumer(1_000, 6, 6))], sampled=[G])  # partition 1's offsets were deleted
    evaluation = live.evaluate(1_000)
    assert [state.key for state in evaluation.partitions[G]] == [key(0)]
    assert evaluation.partitions[G][0].window.samples == 2


def test_a_group_sampled_with_no_rows_is_forgotten_and_one_left_out_of_a_round_keeps_its_windows():
    other = ("local", "orders")
    live = LiveLag(window=3, history_ms=60_000)
    live.record([(key(0), consumer(0, 5, 5)), (key(0, group=other), consumer(0, 1, 9))], sampled=[G, other])
    live.record([(key(0, group=other), consumer(1_000, 2, 9))], sampled=[G, other])  # billing no longer exists
    assert live.groups == {other}
    live.record([], sampled=[])  # orders could not be sampled this round
    evaluation = live.evaluate(2_000)
    assert list(evaluation.groups) == [other] and evaluation.partitions[other][0].window.samples == 2


def test_the_history_keeps_its_span_and_at_least_a_window_of_valid_samples():
    live = LiveLag(window=3, history_ms=5_000)
    feed(live, [{0: consumer(t * INTERVAL, t, t + 1)} for t in range(20)])
    evaluation = live.evaluate(19 * INTERVAL)
    assert evaluation.partitions[G][0].window.first_valid_ts == 14 * INTERVAL  # the last 5 s
    evaluation = live.evaluate(60 * INTERVAL)  # nothing since: the window's last 3 stay
    assert [entry.ts for entry in evaluation.partitions[G][0].window.entries] == [17_000, 18_000, 19_000]


def test_a_consumer_that_died_behind_is_stop_long_after_its_last_commit_left_the_history():
    live = LiveLag(window=3, history_ms=10_000)
    feed(live, [{0: consumer(t * INTERVAL, 10 * t, 10 * t)} for t in range(5)])  # keeping up
    # It dies: the group is empty, its offset stands at 40 while messages keep arriving.
    last = feed(live, [{0: consumer(t * INTERVAL, 40, 40 + t, members=0)} for t in range(5, 100)])
    evaluation = live.evaluate(last)
    state = evaluation.partitions[G][0]
    assert state.report["status"] == "STOP" and evaluation.groups[G]["status"] == "ERR"
    assert [entry.ts for entry in state.window.entries] == [2_000, 3_000, 4_000]  # its last commits, kept
    assert state.window.lagging_since == 5_000
    assert state.window.samples == 11 + 3 + 1  # bounded: the last 10 s, the last commits, when lag began


@pytest.mark.parametrize("rules", list(Rules))
def test_trimming_the_history_never_changes_a_status_of_groups_with_or_without_members(rules):
    generator = random.Random(11)
    for _ in range(150):
        live = LiveLag(window=3, history_ms=4 * INTERVAL, rules=rules)
        everything: list[Sample] = []
        committed = 0
        for step in range(40):
            committed = max(0, committed + generator.choice([0, 0, 0, 1, 3, -2]))
            sample = Sample(step * INTERVAL, committed if generator.random() > 0.1 else None,
                            committed + generator.choice([0, 0, 1, 4]), generator.choice([0, 0, 1, None]), None)
            everything.append(sample)
            live.record([(key(0), sample)], sampled=[G])
            now = step * INTERVAL + generator.choice([0, 500, 5 * INTERVAL])
            [state] = live.evaluate(now).partitions[G]
            full = partition_report(key(0), partition_window(everything, size=3, now=now), rules=rules)
            assert (state.report["status"], state.report["complete"], state.report["current_lag"]) == \
                (full["status"], full["complete"], full["current_lag"]), (everything, now)


def test_a_partition_keeps_its_latest_sample_however_old():
    live = LiveLag(window=3, history_ms=1_000)
    live.record([(key(0), Sample(0, None, None, 1, None))], sampled=[G])  # nothing known of it yet
    assert list(live.evaluate(60_000).groups) == [G]


def test_restored_samples_count_as_recorded_ones_whatever_order_they_come_in():
    rounds = [consumer(t * INTERVAL, 40, 40 + t, members=0) for t in range(8)]
    restored, recorded = LiveLag(window=4, history_ms=60_000), LiveLag(window=4, history_ms=60_000)
    restored.restore([(key(0), sample) for sample in reversed(rounds + rounds[:3])])  # duplicates count once
    feed(recorded, [{0: sample} for sample in rounds])
    assert restored.evaluate(8_000) == recorded.evaluate(8_000)


def test_a_window_and_a_history_must_make_sense():
    with pytest.raises(ValueError):
        LiveLag(window=0, history_ms=1)
    with pytest.raises(ValueError):
        LiveLag(window=1, history_ms=-1)


def test_samples_later_than_the_evaluation_time_leave_the_history_untrimmed():
    live = LiveLag(window=2, history_ms=2 * INTERVAL)
    everything = [consumer(t * INTERVAL, 5, 5 + t, members=0) for t in range(10)]
    live.record([(key(0), sample) for sample in everything[:1]], sampled=[G])
    for sample in everything[1:]:
        live.record([(key(0), sample)], sampled=[G])
    [state] = live.evaluate(5 * INTERVAL).partitions[G]  # a clock that stepped back: samples up to 9 s exist
    assert state.report == partition_report(key(0), partition_window(everything, size=2, now=5 * INTERVAL))
    [state] = live.evaluate(9 * INTERVAL).partitions[G]
    assert state.report == partition_report(key(0), partition_window(everything, size=2, now=9 * INTERVAL))
