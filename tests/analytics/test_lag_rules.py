"""The lag rules of groupctl.analytics.lag on hand-built histories whose answers are known, one
test per rule and edge case, then random histories checked against bench/lag_reference.py.

Times are written in seconds after T0 (`at(s)`); every history is one partition unless a test
says otherwise.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench import lag_reference
from groupctl.analytics.lag import (
    GROUP_COLUMNS,
    PARTITION_COLUMNS,
    STATUS_ORDER,
    group_status,
    lag_history,
    partition_status,
)
from groupctl.analytics.schemas import LAG_SAMPLE_SCHEMA

T0 = 1_763_700_000_000
KEY = ("cluster", "group", "topic", "partition")


def at(seconds: float) -> int:
    return T0 + int(seconds * 1000)


def sample(seconds: float, committed, log_end, *, members=None, owner=None, cluster="prod", group="app",
           topic="events", partition=0) -> dict:
    return {"v": 1, "ts": at(seconds), "cluster": cluster, "group": group, "topic": topic,
            "partition": partition, "committed": committed, "log_end": log_end,
            "state": None if members is None else ("Empty" if members == 0 else "Stable"),
            "members": members, "owner": owner}


def commits(lags: list[int], *, start: float = 0, every: float = 10, offset: int = 1000, step: int = 100,
            **fields) -> list[dict]:
    """One sample per `every` seconds, the offset advancing by `step`, with the given lags."""
    return [sample(start + i * every, offset + i * step, offset + i * step + lag, **fields)
            for i, lag in enumerate(lags)]


def frame(spark, rows: list[dict]):
    return spark.createDataFrame([tuple(row[field.name] for field in LAG_SAMPLE_SCHEMA.fields) for row in rows],
                                 LAG_SAMPLE_SCHEMA)


def evaluate(spark, rows: list[dict], **params) -> dict[tuple, dict]:
    """partition_status over `rows`: (cluster, group, topic, partition) -> output row."""
    result = frame(spark, rows).transform(partition_status, **params).collect()
    return {tuple(row[field] for field in KEY): row.asDict() for row in result}


def only(spark, rows: list[dict], **params) -> dict:
    (partition,) = evaluate(spark, rows, **params).values()
    return partition


def groups(spark, rows: list[dict], **params) -> dict[tuple, dict]:
    result = frame(spark, rows).transform(partition_status, **params).transform(group_status).collect()
    return {(row["cluster"], row["group"]): row.asDict() for row in result}


# -- the rules, in order -------------------------------------------------------------------------

def test_incomplete_window_is_ok_with_its_completeness(spark):
    partition = only(spark, commits([5, 6, 7, 8]), window=5)
    assert (partition["status"], partition["complete"]) == ("OK", 0.8)


def test_lag_within_allowed_lag_is_ok_and_above_it_is_evaluated(spark):
    growing = commits([1, 2, 3, 4, 5])
    assert only(spark, growing, window=5, allowed_lag=5)["status"] == "OK"
    assert only(spark, growing, window=5, allowed_lag=4)["status"] == "WARN"


def test_idle_fully_consumed_partition_is_not_stopped(spark):
    # a consumer a little behind catches up, then the producer goes quiet and the group empties;
    # long after, the partition is still fully consumed: OK, not STOP
    history = commits([3, 3, 3, 3, 0]) + [sample(40 + 60 * i, 1400, 1400, members=0) for i in range(1, 6)]
    partition = only(spark, history, window=5)
    assert (partition["status"], partition["current_lag"]) == ("OK", 0)


def test_stopped_consumer_with_producer_continuing_is_stop(spark):
    history = commits([3, 4, 3, 4, 3]) + [sample(40 + 60 * i, 1400, 1403 + 50 * i, members=0) for i in range(1, 4)]
    assert only(spark, history, window=5)["status"] == "STOP"


def test_a_stopped_consumer_never_catches_up_whatever_its_window_rates_were(spark):
    # it was gaining on the producer while it ran; then it stopped
    history = commits([50, 40, 30, 20, 10]) + [sample(40 + 60 * i, 1400, 1410 + 5 * i, members=0) for i in range(1, 4)]
    partition = only(spark, history, window=5)
    assert (partition["status"], partition["catch_up_seconds"]) == ("STOP", None)
    assert partition["consume_rate"] > partition["produce_rate"]


def test_consumer_gone_before_the_recording_began_is_stop_once_the_window_has_its_samples(spark):
    # an empty group, its offset frozen at 100 while the log grows: one commit, then silence
    history = [sample(10 * i, 100, 200 + 50 * i, members=0) for i in range(10)]
    assert only(spark, history[:9], window=10)["status"] == "OK"  # fewer samples than the window
    partition = only(spark, history, window=10)
    assert (partition["status"], partition["complete"]) == ("STOP", 0.1)


def test_consumer_gone_after_a_few_commits_is_stop_not_ok_forever(spark):
    history = commits([3, 4, 5]) + [sample(20 + 10 * i, 1200, 1205 + 10 * i, members=0) for i in range(1, 9)]
    partition = only(spark, history, window=10)
    assert (partition["status"], partition["complete"]) == ("STOP", 0.3)


def test_stop_needs_the_silence_to_outlast_the_window_span(spark):
    # entries span 40 s; the last entry is 40 s old at the last sample: not yet longer than the span
    history = commits([3, 4, 3, 4, 3]) + [sample(80, 1400, 1500, members=0)]
    assert only(spark, history, window=5)["status"] != "STOP"
    assert only(spark, history + [sample(81, 1400, 1510, members=0)], window=5)["status"] == "STOP"


def test_offsets_stuck_while_members_stay_is_stall(spark):
    history = [sample(10 * i, 1000, 1010 + 20 * i, members=2) for i in range(6)]
    assert only(spark, history, window=5)["status"] == "STALL"


def test_lag_that_never_decreases_is_warn_and_one_decrease_is_ok(spark):
    assert only(spark, commits([2, 4, 4, 7, 9]), window=5)["status"] == "WARN"
    assert only(spark, commits([2, 4, 3, 7, 9]), window=5)["status"] == "OK"


def test_offset_going_backwards_is_rewind(spark):
    history = commits([5, 5, 5, 5]) + [sample(40, 1100, 1450)]
    assert only(spark, history, window=5)["status"] == "REWIND"


def test_rewind_stops_counting_once_it_leaves_the_window(spark):
    before = commits([5, 5, 5], offset=2000)
    after = commits([300, 250, 200, 150, 100], start=30, offset=1700, step=50)
    # the drop is between the last entry before the window and the window's first entry
    assert only(spark, before + after, window=5)["status"] == "OK"
    assert only(spark, before + after[:4], window=5)["status"] == "REWIND"


@pytest.mark.parametrize("history, without_zero", [
    (commits([3, 4, 3, 4, 0]) + [sample(40 + 60 * i, 1400, 1403 + 50 * i, members=0) for i in range(1, 4)], "STOP"),
    ([sample(10 * i, 1000, 1000 + 20 * i, members=2) for i in range(5)], "STALL"),
    (commits([0, 4, 4, 7, 9]), "WARN"),
], ids=["stop", "stall", "warn"])
def test_a_zero_lag_entry_clears_stop_stall_and_warn(spark, history, without_zero):
    assert only(spark, history, window=5)["status"] == "OK"
    nonzero = [dict(row, log_end=row["log_end"] + 1) for row in history]
    assert only(spark, nonzero, window=5)["status"] == without_zero


def test_a_zero_lag_entry_does_not_clear_rewind(spark):
    history = commits([0, 5, 5, 5]) + [sample(40, 1100, 1450)]
    assert only(spark, history, window=5)["status"] == "REWIND"


# -- commit observations, current values, evaluation time ---------------------------------------

def test_rows_of_an_empty_group_count_as_commits_only_when_the_offset_moved(spark):
    idle = commits([1, 2, 3]) + [sample(30 + i, 1200, 1205, members=0) for i in range(1, 4)]
    assert only(spark, idle, window=10)["complete"] == 0.3
    reset = commits([1, 2, 3]) + [sample(31, 900, 1205, members=0), sample(32, 900, 1206, members=0)]
    assert only(spark, reset, window=10)["complete"] == 0.4
    unknown_membership = commits([1, 2, 3]) + [sample(30 + i, 1200, 1205) for i in range(1, 4)]
    assert only(spark, unknown_membership, window=10)["complete"] == 0.6


def test_current_lag_comes_from_the_latest_sample_not_the_latest_commit(spark):
    history = commits([3, 4, 3, 4, 3]) + [sample(100, 1400, 1403, members=0), sample(160, 1400, 1900, members=0)]
    partition = only(spark, history, window=5)
    assert (partition["committed"], partition["log_end"], partition["current_lag"]) == (1400, 1900, 500)
    assert (partition["window_end_ts"], partition["last_sample_ts"]) == (at(40), at(160))


def test_rows_without_a_commit_or_a_log_end_are_ignored(spark):
    history = [sample(0, None, 900, owner="c-1")] + commits([3, 4], start=10) + [sample(30, 1200, None, owner="c-2")]
    partition = only(spark, history, window=5)
    assert (partition["complete"], partition["current_lag"], partition["owner"]) == (0.4, 4, "c-2")


def test_partition_without_any_commit_is_reported_ok_and_empty(spark):
    partition = only(spark, [sample(0, None, 900, owner="c-1"), sample(10, None, 950, owner="c-1")], window=5)
    assert (partition["status"], partition["complete"], partition["current_lag"], partition["owner"]) == \
        ("OK", 0.0, None, "c-1")


def test_at_ms_evaluates_as_of_that_time(spark):
    history = commits([3, 4, 3, 4, 3]) + [sample(40 + 60 * i, 1400, 1403 + 50 * i, members=0) for i in range(1, 4)]
    earlier = only(spark, history, window=5, at_ms=at(70))
    assert (earlier["status"], earlier["evaluated_at"], earlier["current_lag"]) == ("OK", at(70), 3)
    assert only(spark, history, window=5, at_ms=at(500))["status"] == "STOP"


def test_default_evaluation_time_is_the_latest_sample_of_the_whole_dataset(spark):
    quiet = commits([3, 4, 3, 4, 3], topic="quiet")  # its own last sample is at 40 s
    busy = commits([0, 0], start=0, every=100, topic="busy")  # last sample at 100 s
    evaluated = evaluate(spark, quiet + busy, window=5)
    assert evaluated[("prod", "app", "quiet", 0)]["evaluated_at"] == at(100)
    assert evaluated[("prod", "app", "quiet", 0)]["status"] == "STOP"


# -- extras --------------------------------------------------------------------------------------

def test_lag_seconds_interpolates_the_produce_time_of_the_oldest_unconsumed_message(spark):
    history = [sample(0, 50, 100), sample(10, 60, 200), sample(20, 150, 300)]
    partition = only(spark, history, window=5)
    # offset 150 is the 51st message after log end 100: produced 5.1 s into the 0..10 s interval
    assert partition["lag_seconds"] == pytest.approx(20 - 5.1)
    assert partition["lag_seconds_is_lower_bound"] is False


def test_lag_seconds_is_a_lower_bound_when_the_message_predates_the_recording(spark):
    partition = only(spark, [sample(0, 50, 100), sample(10, 60, 200), sample(20, 70, 300)], window=5)
    assert (partition["lag_seconds"], partition["lag_seconds_is_lower_bound"]) == (20.0, True)


def test_lag_seconds_is_zero_when_caught_up(spark):
    partition = only(spark, [sample(0, 50, 100), sample(20, 300, 300)], window=5)
    assert (partition["lag_seconds"], partition["lag_seconds_is_lower_bound"]) == (0.0, False)


def test_rates_trend_and_catch_up_time_over_the_window(spark):
    # over 40 s: committed +800 (20/s), log end +400 (10/s), lag 100 at the end
    history = [sample(10 * i, 1000 + 200 * i, 1500 + 100 * i) for i in range(5)]
    partition = only(spark, history, window=5)
    assert (partition["consume_rate"], partition["produce_rate"], partition["lag_trend"]) == (20.0, 10.0, -10.0)
    assert partition["catch_up_seconds"] == pytest.approx(100 / 10)


def test_catch_up_time_is_null_when_falling_behind_and_zero_when_caught_up(spark):
    assert only(spark, commits([2, 4, 6, 8, 10]), window=5)["catch_up_seconds"] is None
    assert only(spark, commits([2, 4, 6, 8, 0]), window=5)["catch_up_seconds"] == 0.0


# -- groups --------------------------------------------------------------------------------------

def test_group_status_is_its_worst_partition_with_stop_stall_rewind_as_err(spark):
    stop = commits([3, 4, 3, 4, 3], group="stop") + [sample(40 + 60 * i, 1400, 1403 + 50 * i, members=0, group="stop")
                                                     for i in range(1, 4)]
    late = 180  # the other histories end with the stopped one's last sample (the evaluation time)
    ok = commits([0, 0, 0, 0, 0], start=late, group="ok")
    warn = commits([0, 0, 0, 0, 0], start=late, group="warn") + commits([2, 4, 4, 7, 9], start=late, group="warn",
                                                                        partition=1)
    stall = commits([2, 4, 4, 7, 9], start=late, group="stall", partition=1) + [
        sample(late + 10 * i, 1000, 1010 + 20 * i, members=2, group="stall", partition=2) for i in range(5)]
    rewind = commits([5, 5, 5, 5], start=late, group="rewind") + [sample(late + 40, 1100, 1450, group="rewind")]
    result = groups(spark, ok + warn + stall + rewind + stop, window=5)
    assert {name: row["status"] for (_, name), row in result.items()} == \
        {"ok": "OK", "warn": "WARN", "stall": "ERR", "rewind": "ERR", "stop": "ERR"}
    assert result[("prod", "stall")]["worst"] == ["events/2 STALL", "events/1 WARN"]
    assert result[("prod", "ok")]["worst"] == []


def test_group_totals_and_largest_lag(spark):
    history = (commits([0, 0, 0, 0, 40], partition=0) + commits([0, 0, 0, 0, 90], partition=1)
               + commits([0, 0, 0, 0, 90], topic="audit", partition=3))
    group = groups(spark, history, window=5)[("prod", "app")]
    assert (group["partitions"], group["complete"], group["total_lag"], group["max_lag"]) == (3, 1.0, 220, 90)
    assert (group["max_lag_topic"], group["max_lag_partition"]) == ("audit", 3)  # ties: the first topic/partition
    assert set(group) == set(GROUP_COLUMNS)


def test_group_catch_up_is_the_slowest_partition_or_null_if_one_is_not_catching_up(spark):
    catching_up = [sample(10 * i, 1000 + 200 * i, 1500 + 100 * i) for i in range(5)]  # 10 s to go
    caught_up = commits([0, 0, 0, 0, 0], partition=1)
    falling_behind = commits([2, 4, 6, 8, 10], partition=2)
    assert groups(spark, catching_up + caught_up, window=5)[("prod", "app")]["catch_up_seconds"] == pytest.approx(10)
    assert groups(spark, catching_up + falling_behind, window=5)[("prod", "app")]["catch_up_seconds"] is None


def test_same_group_name_on_two_clusters_is_two_groups(spark):
    history = commits([2, 4, 4, 7, 9], cluster="prod") + commits([0, 0, 0, 0, 0], cluster="staging")
    result = groups(spark, history, window=5)
    assert {cluster: row["status"] for (cluster, _), row in result.items()} == {"prod": "WARN", "staging": "OK"}
    assert result[("prod", "app")]["partitions"] == result[("staging", "app")]["partitions"] == 1


def test_lag_history_sums_each_round_of_a_group(spark):
    history = commits([1, 2], partition=0) + commits([10, 20], partition=1) + [sample(20, None, 5000, partition=1)]
    rows = frame(spark, history).transform(lag_history).orderBy("ts").collect()
    assert [(row["ts"], row["total_lag"]) for row in rows] == [(at(0), 11), (at(10), 22)]


def test_partition_output_columns_are_the_documented_ones(spark):
    assert tuple(frame(spark, commits([1])).transform(partition_status).columns) == PARTITION_COLUMNS


def test_window_and_allowed_lag_are_validated():
    with pytest.raises(ValueError):
        partition_status(None, window=0)
    with pytest.raises(ValueError):
        partition_status(None, allowed_lag=-1)


# -- against the reference -----------------------------------------------------------------------

MOVES = {"stay": lambda committed, log_end: committed, "step": lambda committed, log_end: committed + 2,
         "catch up": lambda committed, log_end: log_end, "rewind": lambda committed, log_end: committed - 7,
         "ahead": lambda committed, log_end: log_end + 1}
STEPS = st.tuples(
    st.sampled_from([0, 1, 2, 2, 5, 30]),                 # seconds since the previous sample
    st.sampled_from([0, 1, 3, 3, 10]),                   # messages produced
    st.sampled_from(["usual"] * 6 + sorted(MOVES)),       # the history's usual move, or another
    st.sampled_from(["both"] * 8 + ["no commit", "no log end"]),
    st.sampled_from([None, 0, 0, 1, 2]),                 # members
    st.sampled_from([None, "a", "b"]),                   # owner
)
HISTORY = st.tuples(
    st.sampled_from(["stay", "step", "catch up"]),        # the usual move
    st.sampled_from([0, 0, 0, 5, 40]),                   # seconds of silence between its end and 60 s
    st.lists(STEPS, max_size=12),
)


def build_history(index: int, history: tuple[str, int, list[tuple]]) -> list[dict]:
    usual, silence, steps = history
    cluster, group = ("prod", "staging")[index % 2], f"g{index // 4}"
    seconds = 60 - silence - sum(gap for gap, *_ in steps)
    committed, log_end, rows = 100, 105, []
    for gap, produced, move, known, members, owner in steps:
        seconds += gap
        log_end += produced
        committed = MOVES[usual if move == "usual" else move](committed, log_end)
        rows.append(sample(seconds, None if known == "no commit" else committed,
                           None if known == "no log end" else log_end, members=members, owner=owner,
                           cluster=cluster, group=group, partition=index))
    return rows


def same_value(expected, actual) -> bool:
    if isinstance(expected, float) and isinstance(actual, float):
        return math.isclose(expected, actual, rel_tol=1e-9, abs_tol=1e-6)
    return expected == actual


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                  HealthCheck.function_scoped_fixture])
@given(histories=st.lists(HISTORY, min_size=40, max_size=40),
       window=st.integers(1, 5), allowed_lag=st.sampled_from([0, 0, 4]),
       at_seconds=st.one_of(st.none(), st.integers(0, 60)))
def test_random_histories_match_the_reference(spark, histories, window, allowed_lag, at_seconds):
    rows = [row for index, history in enumerate(histories) for row in build_history(index, history)]
    params = {"window": window, "allowed_lag": allowed_lag, "at_ms": None if at_seconds is None else at(at_seconds)}
    expected = {tuple(row[field] for field in KEY): row for row in lag_reference.partition_status(rows, **params)}
    actual = evaluate(spark, rows, **params) if rows else {}
    assert actual.keys() == expected.keys()
    for key, row in expected.items():
        differing = {field: (value, actual[key][field]) for field, value in row.items()
                     if not same_value(value, actual[key][field])}
        assert not differing, (key, differing)
    assert set(STATUS_ORDER) >= {row["status"] for row in actual.values()}
