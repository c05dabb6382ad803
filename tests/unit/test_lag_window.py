"""A partition's evaluation window (groupctl.lag.window): which samples are commits, which are in
the window, the current values, and what happens at the edges (ties, duplicates, missing values,
the evaluation time)."""

from __future__ import annotations

import pytest

from groupctl.lag.window import Reading, Sample, partition_window
from tests.support.lag_histories import at, commits, sample


def test_rows_of_an_empty_group_count_as_commits_only_when_the_offset_moved():
    idle = commits([1, 2, 3]) + [sample(30 + i, 1200, 1205, members=0) for i in range(1, 4)]
    assert len(partition_window(idle, size=10, now=at(40)).entries) == 3
    reset = commits([1, 2, 3]) + [sample(31, 900, 1205, members=0), sample(32, 900, 1206, members=0)]
    assert len(partition_window(reset, size=10, now=at(40)).entries) == 4
    unknown_membership = commits([1, 2, 3]) + [sample(30 + i, 1200, 1205) for i in range(1, 4)]
    assert len(partition_window(unknown_membership, size=10, now=at(40)).entries) == 6


def test_window_holds_the_last_entries_oldest_first_and_the_last_log_ends():
    history = commits([1, 2, 3, 4, 5, 6, 7])
    window = partition_window(history, size=3, now=at(60))
    assert window.entries == tuple(Reading(s.ts, s.committed, s.log_end) for s in history[-3:])
    assert window.recent_log_ends == tuple(s.log_end for s in history[-3:])
    assert window.samples == 7


def test_current_values_come_from_the_latest_sample_not_the_latest_commit():
    history = commits([3, 4, 3, 4, 3]) + [sample(100, 1400, 1403, members=0), sample(160, 1400, 1900, members=0)]
    window = partition_window(history, size=5, now=at(160))
    assert window.latest == Reading(at(160), 1400, 1900)
    assert (window.entries[-1].ts, window.last_sample_ts) == (at(40), at(160))


def test_samples_without_a_commit_or_a_log_end_only_give_the_owner_and_last_sample_time():
    history = ([Sample(at(0), None, 900, owner="c-1")] + commits([3, 4], start=10)
               + [Sample(at(30), 1200, None, owner="c-2")])
    window = partition_window(history, size=5, now=at(30))
    assert (window.samples, len(window.entries), window.latest.lag) == (2, 2, 4)
    assert (window.owner, window.last_sample_ts, window.first_valid_ts) == ("c-2", at(30), at(10))


def test_partition_without_any_commit_has_an_empty_window():
    window = partition_window([Sample(at(0), None, 900, owner="c-1")], size=5, now=at(0))
    assert (window.samples, window.entries, window.latest, window.owner) == (0, (), None, "c-1")


def test_samples_after_the_evaluation_time_are_not_seen():
    history = commits([3, 4, 3, 4, 3])
    window = partition_window(history, size=5, now=at(25))
    assert (len(window.entries), window.latest.ts, window.now) == (3, at(20), at(25))
    assert partition_window(history, size=5, now=at(-1)) is None


def test_the_same_samples_read_twice_count_once():
    history = commits([1, 2, 3, 4]) + [sample(40 + i, 1300, 1310, members=1) for i in range(3)]
    assert partition_window(history + history, size=10, now=at(60)) == partition_window(history, size=10, now=at(60))


def test_samples_of_equal_time_are_taken_in_sample_order_whatever_the_input_order():
    tied = [sample(10, 1100, 1200, members=1), sample(10, 1000, 1200, members=0), sample(0, 900, 950)]
    assert partition_window(tied, size=5, now=at(10)) == partition_window(tied[::-1], size=5, now=at(10))
    assert partition_window(tied, size=5, now=at(10)).latest.committed == 1100


def test_lagging_since_is_when_messages_started_waiting_after_the_last_commit():
    history = commits([0, 0, 3]) + [sample(20 + 10 * i, 1200, 1203 + i, members=0) for i in range(1, 4)]
    assert partition_window(history, size=5, now=at(50)).lagging_since == at(20)  # the last commit lagged
    caught_up = commits([3, 0]) + [sample(10 + 10 * i, 1100, 1100 + (i > 2), members=0) for i in range(1, 5)]
    assert partition_window(caught_up, size=5, now=at(50)).lagging_since == at(40)
    assert partition_window(caught_up[:4], size=5, now=at(50)).lagging_since is None  # nothing waits yet
    assert partition_window([Sample(at(0), None, 10)], size=5, now=at(0)).lagging_since is None


def test_committed_offset_past_the_log_end_has_lag_zero():
    assert Reading(at(0), 1010, 1000).lag == 0


@pytest.mark.parametrize("history, expected", [
    # log ends 100, 200, 300; committed 150: produced between the samples at 0 s and 10 s
    ([sample(0, 50, 100), sample(10, 60, 200), sample(20, 150, 300)], (0, 10)),
    # nothing sampled at or below the committed offset: produced before the recording
    ([sample(0, 50, 100), sample(10, 60, 200), sample(20, 70, 300)], None),
    # nothing unconsumed
    ([sample(0, 50, 100), sample(20, 300, 300)], None),
])
def test_produced_between_is_the_pair_of_samples_straddling_the_committed_offset(history, expected):
    between = partition_window(history, size=5, now=at(20)).produced_between
    assert (None if between is None else tuple((o.ts - at(0)) // 1000 for o in between)) == expected


def test_window_size_is_validated():
    with pytest.raises(ValueError):
        partition_window([], size=0, now=0)
