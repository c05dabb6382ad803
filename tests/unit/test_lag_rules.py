"""The lag status rules (groupctl.lag.rules) on hand-built histories whose answers are known: one
test per verdict and edge case, for the groupctl rules and for Burrow's.

Histories (tests/support/lag_histories.py) are one partition's samples, made into its window by
groupctl.lag.window (whose own tests are in test_lag_window.py), or a window is built by hand
where the test is about the rules alone.
"""

from __future__ import annotations

import pytest

from groupctl.lag.rules import FailOn, Rules, fails_check, group_status, partition_status
from groupctl.lag.window import PartitionWindow, Reading, Sample, partition_window
from tests.support.lag_histories import at, commits, gone, sample

GROUPCTL, BURROW = Rules.GROUPCTL, Rules.BURROW


def status(history: list[Sample], *, size: int = 5, rules: Rules = GROUPCTL, allowed_lag: int = 0,
           now: float | None = None) -> str:
    moment = at(now) if now is not None else max(s.ts for s in history)
    return partition_status(partition_window(history, size=size, now=moment), rules=rules, allowed_lag=allowed_lag)


def window(entries: list[tuple[float, int, int]], *, now: float, samples: int | None = None, size: int = 5,
           recent: tuple[int, ...] = ()) -> PartitionWindow:
    """A window built by hand: entries (seconds, committed, log_end), the last one also the latest sample."""
    readings = tuple(Reading(at(s), c, e) for s, c, e in entries)
    last = readings[-1]
    return PartitionWindow(now=at(now), size=size, samples=len(readings) if samples is None else samples,
                           entries=readings, recent_log_ends=recent or tuple(r.log_end for r in readings),
                           lagging_since=last.ts if last.lag > 0 else None, latest=last,
                           first_valid_ts=readings[0].ts, produced_between=None, last_sample_ts=at(now), owner=None)


# -- groupctl rules, in order --------------------------------------------------------------------

def test_incomplete_window_is_ok():
    assert status(commits([5, 6, 7, 8])) == "OK"


def test_lag_within_allowed_lag_is_ok_and_above_it_is_evaluated():
    growing = commits([1, 2, 3, 4, 5])
    assert status(growing, allowed_lag=5) == "OK"
    assert status(growing, allowed_lag=4) == "WARN"


def test_offset_going_backwards_is_rewind():
    assert status(commits([5, 5, 5, 5]) + [sample(40, 1100, 1450)]) == "REWIND"


def test_rewind_is_flagged_until_it_leaves_the_window_even_once_recovered():
    before = commits([5, 5, 5], offset=2000)
    recovering = commits([300, 250, 200, 150, 100], start=30, offset=1700, step=200)  # back past 2000 at 60 s
    assert status(before + recovering[:4]) == "REWIND"
    # the drop is now between the last entry before the window and the window's first entry
    assert status(before + recovering) == "OK"


def test_consumer_that_stopped_lagging_is_stop():
    assert status(commits([3, 4, 3, 4, 3]) + gone(40, 1400, 1403, 3, every=60)) == "STOP"


def test_consumer_that_died_caught_up_is_stop_once_its_silence_outlasts_the_window_span():
    # the dead-consumer scenario: it kept up (lag 0 at every commit) for 40 s, then left while the
    # producer kept writing; the zero-lag commits stay in its window for ever
    history = commits([0, 0, 0, 0, 0]) + gone(40, 1400, 1400, 5)  # messages waiting from 50 s on
    assert status(history) == "OK"  # at 90 s they have waited 40 s: not longer than the 40 s span
    assert status(history + [sample(91, 1400, 1655, members=0)]) == "STOP"


def test_consumer_killed_counts_as_committing_until_its_session_expires_then_is_stop():
    # kill -9: the member stays in the group for its session timeout (30 s here), so those samples
    # count as commits of a stuck offset; then the group empties
    kept_up = commits([0, 0, 0, 0, 0], members=1)  # to offset 1400 at 40 s
    in_session = [sample(40 + 10 * i, 1400, 1400 + 50 * i, members=1) for i in range(1, 4)]
    assert status(kept_up + in_session) == "OK"  # a zero-lag commit is still in the window
    history = kept_up + in_session + gone(70, 1400, 1550, 6)
    assert status(history[:-2]) == "OK"  # waiting since 50 s: 40 s, not longer than the 40 s span
    assert status(history) == "STOP"


def test_consumer_without_membership_that_caught_up_and_idled_is_not_stop_when_a_message_arrives():
    # assign() + commit, no group membership: its samples count as commits only when the offset
    # moves, so after it caught up and the topic went quiet its last commit is long past
    caught_up = [sample(10 * i, 1000 + 100 * i, 1000 + 100 * i + (50 if i < 4 else 0), members=0) for i in range(6)]
    idle = [sample(50 + 100 * i, 1500, 1500, members=0) for i in range(1, 40)]
    arrived = [sample(4000, 1500, 1501, members=0)]
    assert status(caught_up + idle + arrived, size=5) == "OK"
    unconsumed = [sample(4000 + 10 * i, 1500, 1501, members=0) for i in range(1, 6)]
    assert status(caught_up + idle + arrived + unconsumed, size=5) == "STOP"  # waited 50 s > the 50 s span


def test_stop_needs_the_silence_to_outlast_the_window_span():
    history = commits([3, 4, 3, 4, 3]) + [sample(80, 1400, 1500, members=0)]
    assert status(history) != "STOP"
    assert status(history + [sample(81, 1400, 1510, members=0)]) == "STOP"


def test_consumer_gone_before_the_recording_began_is_stop_once_the_window_has_its_samples():
    # an empty group, its offset frozen at 100 while the log grows: one commit, then silence
    history = [sample(10 * i, 100, 200 + 50 * i, members=0) for i in range(10)]
    assert status(history[:9], size=10) == "OK"  # fewer samples than the window
    assert status(history, size=10) == "STOP"


def test_offsets_stuck_while_members_stay_is_stall():
    assert status([sample(10 * i, 1000, 1010 + 20 * i, members=2) for i in range(6)]) == "STALL"


def test_lag_that_never_decreases_is_warn_and_one_decrease_is_ok():
    assert status(commits([2, 4, 4, 7, 9])) == "WARN"
    assert status(commits([2, 4, 3, 7, 9])) == "OK"


def test_slow_consumer_falling_behind_is_warn():
    # consumes 60 a round while 100 are produced: lag grows by 40 a round
    history = [sample(10 * i, 1000 + 60 * i, 1010 + 100 * i, members=1) for i in range(6)]
    assert status(history) == "WARN"


@pytest.mark.parametrize("history, without_zero", [
    ([sample(10 * i, 1000, 1000 + 20 * i, members=2) for i in range(5)], "STALL"),
    (commits([0, 4, 4, 7, 9]), "WARN"),
], ids=["stall", "warn"])
def test_a_zero_lag_entry_clears_stall_and_warn(history, without_zero):
    assert status(history) == "OK"
    assert status([s._replace(log_end=s.log_end + 1) for s in history]) == without_zero


def test_a_zero_lag_entry_clears_neither_stop_nor_rewind():
    assert status(commits([0, 4, 3, 4, 3]) + gone(40, 1400, 1403, 3, every=60)) == "STOP"
    assert status(commits([0, 5, 5, 5]) + [sample(40, 1100, 1450)]) == "REWIND"


def test_idle_fully_consumed_partition_is_ok_not_stop():
    # the consumer caught up, the producer went quiet and the group emptied; long after, nothing
    # is unconsumed: OK, however long the silence
    history = commits([3, 3, 3, 3, 0]) + [sample(40 + 60 * i, 1400, 1400, members=0) for i in range(1, 6)]
    assert status(history) == "OK"


def test_committed_offset_past_the_log_end_is_caught_up():
    history = [sample(10 * i, 1000 + 10 * i, 995 + 10 * i, members=1) for i in range(6)]
    assert status(history) == "OK"


# -- Burrow's rules ------------------------------------------------------------------------------

def test_burrow_holds_stop_back_while_a_recent_log_end_is_at_the_committed_offset():
    kept_up = commits([0, 0, 0, 0, 0])  # to offset 1400 at 40 s, then it left
    silent = kept_up + [sample(45, 1400, 1450, members=0), sample(90, 1400, 1700, members=0)]
    # messages have waited 45 s, longer than the 40 s span, but the log end was at 1400 three
    # samples ago
    assert status(silent, rules=GROUPCTL) == "STOP"
    assert status(silent, rules=BURROW) == "OK"
    # once none of the last `size` log ends is at the committed offset, Burrow says STOP too
    assert status(silent + gone(90, 1400, 1700, 2), rules=BURROW) == "OK"
    assert status(silent + gone(90, 1400, 1700, 3), rules=BURROW) == "STOP"


def test_burrow_judges_a_window_from_its_first_commit():
    # Burrow's minimum-complete is 0: one lagging commit is a window whose offset never moved
    assert status([sample(0, 1000, 1010, members=1)], rules=BURROW) == "STALL"
    assert status([sample(0, 1000, 1010, members=1)], rules=GROUPCTL) == "OK"


def test_burrow_forgets_a_rewind_once_the_offset_is_back():
    history = commits([5, 5, 5], offset=2000) + commits([300, 250, 200, 150], start=30, offset=1700, step=200)
    assert status(history, rules=BURROW) == "OK"
    assert status(history, rules=GROUPCTL) == "REWIND"
    assert status(history[:5], rules=BURROW) == "REWIND"


def test_burrow_stall_and_warn_need_lag_above_the_allowed_lag_at_every_commit():
    stuck = [sample(10 * i, 1000, 1004 + 20 * i, members=2) for i in range(5)]
    assert status(stuck, rules=BURROW) == "STALL"
    assert status(stuck, rules=BURROW, allowed_lag=4) == "OK"  # the first commit was within it
    assert status(commits([2, 4, 4, 7, 9]), rules=BURROW) == "WARN"


def test_burrow_and_groupctl_agree_on_ordinary_histories():
    histories = [commits([2, 4, 4, 7, 9]), commits([5, 5, 5, 5]) + [sample(40, 1100, 1450)],
                 [sample(10 * i, 1000, 1010 + 20 * i, members=2) for i in range(6)],
                 commits([3, 4, 3, 4, 3]) + gone(40, 1400, 1403, 6, every=60), commits([0, 0, 0, 0, 0])]
    assert [status(h, rules=BURROW) for h in histories] == [status(h, rules=GROUPCTL) for h in histories] == \
        ["WARN", "REWIND", "STALL", "STOP", "OK"]


# -- hand-made windows ---------------------------------------------------------------------------

def test_every_verdict_on_hand_made_windows():
    full = {"samples": 5}
    assert partition_status(window([(0, 100, 110)], now=0, samples=4)) == "OK"
    assert partition_status(window([(0, 100, 100)] * 5, now=0, **full)) == "OK"
    assert partition_status(window([(0, 100, 110), (10, 90, 110)], now=10, **full)) == "REWIND"
    assert partition_status(window([(0, 100, 100), (10, 110, 115)], now=21, **full)) == "STOP"
    assert partition_status(window([(0, 100, 110), (10, 100, 120)], now=10, **full)) == "STALL"
    assert partition_status(window([(0, 100, 110), (10, 110, 125)], now=10, **full)) == "WARN"
    assert partition_status(window([(0, 100, 110), (10, 120, 125)], now=10, **full)) == "OK"


def test_burrow_stop_reads_the_recent_log_ends():
    silent = window([(0, 100, 100), (10, 110, 115)], now=21, recent=(105, 110, 115))
    assert partition_status(silent, rules=BURROW) == "OK"
    assert partition_status(window([(0, 100, 100), (10, 110, 115)], now=21, recent=(111, 115)),
                            rules=BURROW) == "STOP"


def test_negative_allowed_lag_is_refused():
    with pytest.raises(ValueError):
        partition_status(window([(0, 100, 110)], now=0), allowed_lag=-1)


# -- groups --------------------------------------------------------------------------------------

@pytest.mark.parametrize("statuses, expected", [
    (["OK", "OK"], "OK"), (["OK", "WARN"], "WARN"), (["WARN", "STOP"], "ERR"), (["STALL"], "ERR"),
    (["OK", "REWIND", "WARN"], "ERR"), ([], "OK"),
])
def test_group_is_as_bad_as_its_worst_partition(statuses, expected):
    assert group_status(statuses) == expected


@pytest.mark.parametrize("status, fail_on, fails", [
    ("OK", FailOn.WARN, False), ("WARN", FailOn.WARN, True), ("ERR", FailOn.WARN, True),
    ("OK", FailOn.ERR, False), ("WARN", FailOn.ERR, False), ("ERR", FailOn.ERR, True),
    ("NOTFOUND", FailOn.WARN, True), ("NOTFOUND", FailOn.ERR, True)])
def test_a_check_fails_on_a_group_at_or_above_its_threshold_or_not_found(status, fail_on, fails):
    assert fails_check(status, fail_on) is fails
