"""Lag windows on Spark (groupctl.analytics.lag) are the windows groupctl.lag.window defines: on
random histories, every partition's Spark window equals the in-process one, so the rules, which
only ever read windows, answer the same whichever built them. Then the lag history for plots.

Times are in seconds after T0 (`at(s)`).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupctl.analytics.lag import PARTITION_KEY, lag_history, partition_windows, window_of
from groupctl.analytics.schemas import LAG_SAMPLE_SCHEMA
from groupctl.lag.window import Sample, partition_window
from tests.support.lag_histories import at


def row(seconds: float, committed, log_end, *, members=None, owner=None, cluster="prod", group="app",
        topic="events", partition=0) -> dict:
    return {"v": 1, "ts": at(seconds), "cluster": cluster, "group": group, "topic": topic,
            "partition": partition, "committed": committed, "log_end": log_end,
            "state": None if members is None else ("Empty" if members == 0 else "Stable"),
            "members": members, "owner": owner}


def frame(spark, rows: list[dict]):
    return spark.createDataFrame([tuple(r[field.name] for field in LAG_SAMPLE_SCHEMA.fields) for r in rows],
                                 LAG_SAMPLE_SCHEMA)


def spark_windows(spark, rows: list[dict], *, size: int, now: int) -> dict:
    collected = frame(spark, rows).transform(partition_windows, size=size, now=now).collect()
    return dict(window_of(found, size=size, now=now) for found in collected)


def in_process_windows(rows: list[dict], *, size: int, now: int) -> dict:
    partitions: dict[tuple, list[Sample]] = {}
    for r in rows:
        partitions.setdefault(tuple(r[name] for name in PARTITION_KEY), []).append(
            Sample(r["ts"], r["committed"], r["log_end"], r["members"], r["owner"]))
    windows = {key: partition_window(samples, size=size, now=now) for key, samples in partitions.items()}
    return {key: found for key, found in windows.items() if found is not None}


MOVES = {"stay": lambda committed, log_end: committed, "step": lambda committed, log_end: committed + 2,
         "catch up": lambda committed, log_end: log_end, "rewind": lambda committed, log_end: committed - 7,
         "ahead": lambda committed, log_end: log_end + 1}
STEPS = st.tuples(
    st.sampled_from([0, 1, 2, 2, 5, 30]),                 # seconds since the previous sample
    st.sampled_from([0, 1, 3, 3, 10, -30]),              # messages produced (-30: the topic was recreated)
    st.sampled_from(["usual"] * 6 + sorted(MOVES)),       # the history's usual move, or another
    st.sampled_from(["both"] * 8 + ["no commit", "no log end"]),
    st.sampled_from([None, 0, 0, 1, 2]),                 # members
    st.sampled_from([None, "a", "b"]),                   # owner
    st.sampled_from([False] * 9 + [True]),               # recorded twice
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
    for gap, produced, move, known, members, owner, twice in steps:
        seconds += gap
        log_end = max(0, log_end + produced)
        committed = MOVES[usual if move == "usual" else move](committed, log_end)
        recorded = row(seconds, None if known == "no commit" else committed,
                       None if known == "no log end" else log_end, members=members, owner=owner,
                       cluster=cluster, group=group, partition=index)
        rows += [recorded] * (2 if twice else 1)
    return rows


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                  HealthCheck.function_scoped_fixture])
@given(histories=st.lists(HISTORY, min_size=40, max_size=40), size=st.integers(1, 5),
       now_seconds=st.integers(0, 60))
def test_spark_builds_the_windows_the_in_process_builder_builds(spark, histories, size, now_seconds):
    rows = [r for index, history in enumerate(histories) for r in build_history(index, history)]
    expected = in_process_windows(rows, size=size, now=at(now_seconds))
    actual = spark_windows(spark, rows, size=size, now=at(now_seconds)) if rows else {}
    assert actual.keys() == expected.keys()
    for key, window in expected.items():
        assert actual[key] == window, key


def test_partitions_without_a_sample_at_or_before_the_evaluation_time_have_no_window(spark):
    rows = [row(0, 10, 20, partition=0), row(30, 10, 20, partition=1)]
    assert list(spark_windows(spark, rows, size=3, now=at(10))) == [("prod", "app", "events", 0)]


def test_window_size_is_validated(spark):
    with pytest.raises(ValueError):
        partition_windows(frame(spark, [row(0, 1, 2)]), size=0, now=at(0))


def test_lag_history_sums_each_round_of_a_group_counting_an_offset_past_the_log_end_as_zero(spark):
    rows = [row(0, 100, 101, partition=0), row(0, 100, 110, partition=1), row(10, 100, 102, partition=0),
            row(10, 130, 120, partition=1), row(20, None, 5000, partition=1)]
    history = frame(spark, rows + rows[:2]).transform(lag_history).orderBy("ts").collect()  # rows read twice count once
    assert [(r["ts"], r["total_lag"]) for r in history] == [(at(0), 11), (at(10), 2)]
