"""The rows `analyze lag` reports (groupctl.lag.report): each partition's figures beyond its status
(lag in time, rates, trend, catch-up time) and each group's roll-up."""

from __future__ import annotations

import pytest

from groupctl.lag.report import GROUP_FIELDS, PARTITION_FIELDS, group_reports, partition_report
from groupctl.lag.window import partition_window
from tests.support.lag_histories import at, commits, gone, sample


def report(history, *, size: int = 5, now: float | None = None, key=("prod", "app", "events", 0), **params) -> dict:
    moment = at(now) if now is not None else max(s.ts for s in history)
    return partition_report(key, partition_window(history, size=size, now=moment), **params)


def groups(partitions: dict[tuple, list], *, size: int = 5) -> dict[tuple, dict]:
    now = max(s.ts for history in partitions.values() for s in history)
    rows = [partition_report(key, partition_window(history, size=size, now=now)) for key, history in partitions.items()]
    return {(row["cluster"], row["group"]): row for row in group_reports(rows)}


def test_partition_rows_have_the_documented_fields():
    assert tuple(report(commits([1]))) == PARTITION_FIELDS


def test_completeness_is_the_share_of_the_window_holding_commits():
    assert report(commits([5, 6, 7, 8]))["complete"] == 0.8
    assert report(commits([3, 4, 5]) + gone(20, 1200, 1205, 8), size=10)["complete"] == 0.3


def test_lag_seconds_interpolates_the_produce_time_of_the_oldest_unconsumed_message():
    row = report([sample(0, 50, 100), sample(10, 60, 200), sample(20, 150, 300)])
    # offset 150 is the 51st message after log end 100: produced 5.1 s into the 0..10 s interval
    assert row["lag_seconds"] == pytest.approx(20 - 5.1)
    assert row["lag_seconds_is_lower_bound"] is False


def test_lag_seconds_is_a_lower_bound_when_the_message_predates_the_recording():
    row = report([sample(0, 50, 100), sample(10, 60, 200), sample(20, 70, 300)])
    assert (row["lag_seconds"], row["lag_seconds_is_lower_bound"]) == (20.0, True)


def test_lag_seconds_is_zero_when_caught_up():
    row = report([sample(0, 50, 100), sample(20, 300, 300)])
    assert (row["lag_seconds"], row["lag_seconds_is_lower_bound"]) == (0.0, False)


def test_committed_offset_past_the_log_end_is_lag_zero_flagged_ahead():
    row = report([sample(0, 50, 100), sample(20, 310, 300)])
    assert (row["current_lag"], row["ahead_of_log_end"], row["lag_seconds"], row["catch_up_seconds"]) == \
        (0, True, 0.0, 0.0)
    assert report([sample(0, 50, 100)])["ahead_of_log_end"] is False


def test_rates_trend_and_catch_up_time_over_the_window():
    # over 40 s: committed +800 (20/s), log end +400 (10/s), lag 100 at the end
    row = report([sample(10 * i, 1000 + 200 * i, 1500 + 100 * i) for i in range(5)])
    assert (row["consume_rate"], row["produce_rate"], row["lag_trend"]) == (20.0, 10.0, -10.0)
    assert row["catch_up_seconds"] == pytest.approx(100 / 10)


def test_catch_up_time_is_null_when_falling_behind_and_zero_when_caught_up():
    assert report(commits([2, 4, 6, 8, 10]))["catch_up_seconds"] is None
    assert report(commits([2, 4, 6, 8, 0]))["catch_up_seconds"] == 0.0


def test_a_stopped_consumer_never_catches_up_whatever_its_window_rates_were():
    # it was gaining on the producer while it ran; then it stopped
    row = report(commits([50, 40, 30, 20, 10]) + gone(40, 1400, 1410, 3, every=60, produced=5))
    assert (row["status"], row["catch_up_seconds"]) == ("STOP", None)
    assert row["consume_rate"] > row["produce_rate"]


def test_window_times_and_evaluation_time():
    row = report(commits([3, 4, 3, 4, 3]) + gone(40, 1400, 1403, 2, every=60), now=200)
    assert (row["window_start_ts"], row["window_end_ts"], row["last_sample_ts"], row["evaluated_at"]) == \
        (at(0), at(40), at(160), at(200))


def test_partition_without_any_commit_is_reported_ok_and_empty():
    row = report([sample(0, None, 900), sample(10, None, 950)])
    assert (row["status"], row["complete"], row["current_lag"], row["ahead_of_log_end"]) == ("OK", 0.0, None, None)


# -- groups --------------------------------------------------------------------------------------

def test_group_rows_have_the_documented_fields():
    (row,) = groups({("prod", "app", "events", 0): commits([1])}).values()
    assert tuple(row) == GROUP_FIELDS


def test_group_status_is_its_worst_partition_with_the_worst_listed_most_severe_first():
    stuck = [sample(10 * i, 1000, 1010 + 20 * i, members=2) for i in range(5)]
    result = groups({("prod", "stall", "events", 1): commits([2, 4, 4, 7, 9]),
                     ("prod", "stall", "events", 2): stuck,
                     ("prod", "ok", "events", 0): commits([0, 0, 0, 0, 0])})
    assert {name: row["status"] for (_, name), row in result.items()} == {"stall": "ERR", "ok": "OK"}
    assert result[("prod", "stall")]["worst"] == ["events/2 STALL", "events/1 WARN"]
    assert result[("prod", "ok")]["worst"] == []


def test_group_totals_and_largest_lag():
    group = groups({("prod", "app", "events", 0): commits([0, 0, 0, 0, 40]),
                    ("prod", "app", "events", 1): commits([0, 0, 0, 0, 90]),
                    ("prod", "app", "audit", 3): commits([0, 0, 0, 0, 90])})[("prod", "app")]
    assert (group["partitions"], group["complete"], group["total_lag"], group["max_lag"]) == (3, 1.0, 220, 90)
    assert (group["max_lag_topic"], group["max_lag_partition"]) == ("audit", 3)  # ties: the first topic/partition


def test_group_catch_up_is_the_slowest_partition_or_null_if_one_is_not_catching_up():
    catching_up = [sample(10 * i, 1000 + 200 * i, 1500 + 100 * i) for i in range(5)]  # 10 s to go
    assert groups({("prod", "app", "events", 0): catching_up, ("prod", "app", "events", 1): commits([0] * 5)}
                  )[("prod", "app")]["catch_up_seconds"] == pytest.approx(10)
    assert groups({("prod", "app", "events", 0): catching_up, ("prod", "app", "events", 2): commits([2, 4, 6, 8, 10])}
                  )[("prod", "app")]["catch_up_seconds"] is None


def test_same_group_name_on_two_clusters_is_two_groups():
    result = groups({("prod", "app", "events", 0): commits([2, 4, 4, 7, 9]),
                     ("staging", "app", "events", 0): commits([0, 0, 0, 0, 0])})
    assert {cluster: row["status"] for (cluster, _), row in result.items()} == {"prod": "WARN", "staging": "OK"}
