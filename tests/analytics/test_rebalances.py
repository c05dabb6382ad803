"""rebalance_timeline / rebalance_summary on a real local Spark session, over hand-written journals.

The shared journal has three groups: "orders" (four rebalances of known durations 100, 200, 400
and 1000 ms, member churn, and a rebalance still running at the end), "payments" (one rebalance
that node 1 started and node 2 completed after a takeover) and "idle" (members came and went, no
rebalance completed).
"""

from __future__ import annotations

import pytest

from groupctl.analytics.rebalances import SUMMARY_COLUMNS, rebalance_summary, rebalance_timeline
from tests.support.journal_events import Journal


def history() -> Journal:
    journal = Journal("orders")
    journal.joined(1_000, "a-1", 0)
    journal.started(1_000, 0, reason="join", member_id="a-1", members=0)
    journal.completed(1_100, 1, started_ts=1_000, owners={"a-1": ["t/0", "t/1"]}, reason="join")
    journal.joined(2_000, "b-1", 1)
    journal.started(2_000, 1, reason="join", member_id="b-1", members=1)
    journal.completed(2_200, 2, started_ts=2_000, owners={"a-1": ["t/0"], "b-1": ["t/1"]}, reason="join")
    journal.left(3_000, "b-1", 2)
    journal.started(3_000, 2, reason="leave", member_id="b-1", members=2)
    journal.completed(3_400, 3, started_ts=3_000, owners={"a-1": ["t/0", "t/1"]}, reason="leave")
    journal.joined(4_000, "c-1", 3)
    journal.expired(4_000, "a-1", 3)
    journal.started(4_000, 3, reason="session expiry", member_id="a-1", members=2)
    journal.completed(5_000, 4, started_ts=4_000, owners={"c-1": ["t/0", "t/1"]}, reason="session expiry")
    journal.started(6_000, 4, reason="trigger", members=1)

    journal.started(1_500, 0, group="payments", reason="join", members=0)
    journal.completed(1_540, 1, group="payments", node=2, started_ts=1_500, owners={"p-1": ["pay/0"]},
                      reason="coordinator load")

    journal.joined(7_000, "i-1", 0, group="idle")
    journal.left(7_500, "i-1", 0, group="idle")
    return journal


@pytest.fixture(scope="module")
def journal(spark):
    return history().frame(spark)


@pytest.fixture(scope="module")
def summary(journal):
    frame = rebalance_summary(journal)
    return frame, [row.asDict() for row in frame.collect()]


def by_group(summary) -> dict:
    return {row["group"]: row for row in summary[1]}


def test_summary_has_one_row_per_group_with_membership_events_in_group_order(summary):
    frame, rows = summary
    assert tuple(frame.columns) == SUMMARY_COLUMNS
    assert [row["group"] for row in rows] == ["idle", "orders", "payments"]


def test_summary_durations_are_exact_percentiles_max_and_total(summary):
    orders = by_group(summary)["orders"]
    assert orders["rebalances"] == 4
    assert orders["p50_ms"] == pytest.approx(300.0)  # between 200 and 400
    assert orders["p95_ms"] == pytest.approx(910.0)  # rank 2.85: 400 + 0.85 * (1000 - 400)
    assert orders["max_ms"] == 1000
    assert orders["total_ms"] == 1700


def test_summary_counts_completions_by_reason_in_a_map_of_longs(summary):
    frame, _ = summary
    assert frame.schema["reasons"].dataType.simpleString() == "map<string,bigint>"
    assert by_group(summary)["orders"]["reasons"] == {"join": 2, "leave": 1, "session expiry": 1}
    assert by_group(summary)["payments"]["reasons"] == {"coordinator load": 1}


def test_summary_counts_member_churn(summary):
    orders = by_group(summary)["orders"]
    assert (orders["joins"], orders["leaves"], orders["expirations"], orders["churn"]) == (3, 1, 1, 5)


def test_started_rebalance_without_later_completion_is_unfinished(summary):
    groups = by_group(summary)
    assert groups["orders"]["unfinished"] == 1
    assert groups["payments"]["unfinished"] == 0  # started on node 1, completed on node 2


def test_groups_are_summarised_apart(summary):
    payments = by_group(summary)["payments"]
    assert (payments["rebalances"], payments["p50_ms"], payments["p95_ms"], payments["max_ms"],
            payments["total_ms"], payments["churn"]) == (1, 40.0, 40.0, 40, 40, 0)
    assert (payments["first_ts"], payments["last_ts"]) == (1_500, 1_540)


def test_summary_first_and_last_ts_bound_the_groups_membership_events(summary):
    orders = by_group(summary)["orders"]
    assert (orders["first_ts"], orders["last_ts"]) == (1_000, 6_000)


def test_group_with_only_member_events_is_listed_with_no_rebalances(summary):
    idle = by_group(summary)["idle"]
    assert (idle["rebalances"], idle["total_ms"], idle["reasons"], idle["unfinished"]) == (0, 0, {}, 0)
    assert (idle["p50_ms"], idle["p95_ms"], idle["max_ms"]) == (None, None, None)
    assert (idle["joins"], idle["leaves"], idle["churn"]) == (1, 1, 2)


def test_timeline_has_one_row_per_completion_in_event_order_with_its_fields(journal):
    rows = [row.asDict() for row in rebalance_timeline(journal).collect()]
    assert [(row["group"], row["generation"]) for row in rows] == [
        ("orders", 1), ("payments", 1), ("orders", 2), ("orders", 3), ("orders", 4)]
    assert rows[1] == {"group": "payments", "group_type": "classic", "generation": 1, "started_ts": 1_500,
                       "completed_ts": 1_540, "duration_ms": 40, "reason": "coordinator load", "members": 1,
                       "moved": None, "state": "Stable", "node": 2}


def test_events_of_two_nodes_merge_in_ts_node_seq_order(spark):
    journal = Journal("orders")
    journal.completed(10, 1, started_ts=0, owners={"a-1": ["t/0"]}, node=1)
    journal.completed(20, 1, group="late", started_ts=0, node=1)
    journal.completed(20, 2, group="same-ms", started_ts=0, node=1)
    journal.completed(20, 1, group="other-node", started_ts=0, node=2)
    journal.completed(5, 1, group="early", started_ts=0, node=2)
    journal.completed(20, 2, group="other-node", started_ts=10, node=2)
    journal.started(20, 2, group="late", node=2)
    frame = journal.frame(spark)
    rows = rebalance_timeline(frame).collect()
    assert [(row["completed_ts"], row["node"], row["group"], row["generation"]) for row in rows] == [
        (5, 2, "early", 1), (10, 1, "orders", 1), (20, 1, "late", 1), (20, 1, "same-ms", 2),
        (20, 2, "other-node", 1), (20, 2, "other-node", 2)]
    unfinished = {row["group"]: row["unfinished"] for row in rebalance_summary(frame).collect()}
    assert unfinished["late"] == 1  # node 2 started it after node 1's completion in the same millisecond
