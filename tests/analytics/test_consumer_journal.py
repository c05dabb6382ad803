"""`analyze rebalances` and `analyze audit` over consumer-group (KIP-848) event histories, on a real
local Spark session, with hand-written journals.

"stream" joins two members, is triggered, changes subscription (superseding the triggered epoch)
and ends with a member gone and its epoch unfinished; "gone" empties by a session expiry; "moved"
is bumped on node 1 and becomes stable on node 2 after a takeover; "mixed" is a classic group that
a consumer-protocol member upgrades; "reborn" is deleted and starts again at epoch 1.
"""

from __future__ import annotations

import pytest

from groupctl.analytics.audit import audit_summary, audit_violations
from groupctl.analytics.rebalances import TIMELINE_COLUMNS, rebalance_summary, rebalance_timeline
from tests.support.journal_events import Journal, as_record

ALL = ["t/0", "t/1", "t/2", "t/3"]


def history() -> Journal:
    journal = Journal("stream")
    journal.joined(1_000, "a-1", 0)
    journal.bumped(1_000, 1, member_id="a-1")
    journal.target(1_000, 1, {"a-1": ALL}, moved=4)
    journal.reconciled(1_000, "a-1", 1, ALL)
    journal.stable(1_000, 1)
    journal.commit(1_500, "a-1", 1, "t/0", 10)
    journal.joined(2_000, "b-1", 1)
    journal.bumped(2_000, 2, member_id="b-1", members=2)
    journal.target(2_000, 2, {"a-1": ["t/0", "t/1"], "b-1": ["t/2", "t/3"]}, moved=2)
    journal.reconciled(2_000, "b-1", 2, [], state="unreleased_partitions")
    journal.reconciled(2_100, "a-1", 1, ["t/0", "t/1"], revoking=["t/2", "t/3"], state="unrevoked_partitions",
                       epoch=2)
    journal.commit(2_150, "a-1", 1, "t/2", 7)  # from its revocation callback, before it acknowledges
    journal.reconciled(2_300, "a-1", 2)  # on to epoch 2 with the same two: listed by the event before
    journal.reconciled(2_500, "b-1", 2, ["t/2", "t/3"])
    journal.stable(2_500, 2, members=2)
    journal.commit(2_600, "b-1", 2, "t/2", 8)
    journal.commit(2_700, "a-1", 2, "t/1", 3)
    journal.bumped(3_000, 3, "trigger", members=2)
    journal.bumped(3_100, 4, "subscription change", member_id="a-1", members=2)
    journal.target(3_100, 4, {}, moved=0, members=2)
    journal.reconciled(3_200, "a-1", 4)
    journal.reconciled(3_400, "b-1", 4)
    journal.stable(3_400, 4, members=2)
    journal.left(5_000, "b-1", 4)
    journal.bumped(5_000, 5, "leave", member_id="b-1")

    journal.joined(1_000, "g-1", 0, group="gone")
    journal.bumped(1_000, 1, member_id="g-1", group="gone")
    journal.reconciled(1_010, "g-1", 1, ["u/0"], group="gone")
    journal.stable(1_010, 1, group="gone")
    journal.expired(9_000, "g-1", 1, group="gone")
    journal.bumped(9_000, 2, "session expiry", member_id="g-1", members=0, group="gone")

    journal.bumped(1_000, 7, "topic change", group="moved", node=1)
    journal.stable(1_800, 7, group="moved", node=2)

    journal.completed(1_000, 3, group="mixed", started_ts=900, owners={"k-1": ["t/0"]})
    journal.migrated(2_000, "consumer", 3, group="mixed", member_id="n-1")
    journal.reconciled(2_000, "k-1", 3, ["t/0"], group="mixed")
    journal.bumped(2_000, 4, member_id="n-1", members=2, group="mixed")
    journal.reconciled(2_000, "n-1", 4, [], state="unreleased_partitions", group="mixed")

    journal.bumped(1_000, 1, member_id="r-1", group="reborn")
    journal.reconciled(1_000, "r-1", 1, ["t/0"], group="reborn")
    journal.stable(1_000, 1, group="reborn")
    journal.bumped(2_000, 2, "leave", member_id="r-1", members=0, group="reborn")
    journal.group_deleted(2_100, group="reborn")
    journal.bumped(3_000, 1, member_id="q-1", group="reborn")
    journal.reconciled(3_000, "q-1", 1, ["t/0"], group="reborn")  # epoch 1 again, another incarnation
    journal.stable(3_050, 1, group="reborn")
    return journal


@pytest.fixture(scope="module")
def journal(spark):
    return history().frame(spark)


@pytest.fixture(scope="module")
def timeline(journal):
    return [row.asDict() for row in rebalance_timeline(journal).collect()]


@pytest.fixture(scope="module")
def summary(journal):
    return {row["group"]: row.asDict() for row in rebalance_summary(journal).collect()}


def of(timeline: list[dict], group: str) -> list[dict]:
    return [row for row in timeline if row["group"] == group]


def test_a_consumer_group_has_one_timeline_row_per_group_epoch_with_time_to_stable_and_partitions_moved(timeline):
    rows = of(timeline, "stream")
    assert [(row["generation"], row["state"], row["duration_ms"]) for row in rows] == [
        (1, "Stable", 0), (2, "Stable", 500), (3, None, None), (4, "Stable", 300), (5, None, None)]
    assert rows[1] == {"group": "stream", "group_type": "consumer", "generation": 2, "started_ts": 2_000,
                       "completed_ts": 2_500, "duration_ms": 500, "reason": "join", "members": 2, "moved": 2,
                       "state": "Stable", "node": 1}
    assert (rows[2]["reason"], rows[2]["started_ts"], rows[2]["completed_ts"], rows[2]["moved"]) == (
        "trigger", 3_000, None, None)  # superseded by epoch 4 before it settled
    assert (rows[4]["reason"], rows[4]["members"]) == ("leave", 1)
    assert set(rows[0]) == set(TIMELINE_COLUMNS)


def test_an_epoch_that_leaves_the_group_empty_completes_at_once(timeline):
    rows = of(timeline, "gone")
    assert [(r["generation"], r["reason"], r["state"], r["duration_ms"], r["members"]) for r in rows] == [
        (1, "join", "Stable", 10, 1), (2, "session expiry", "Empty", 0, 0)]


def test_an_epoch_bumped_on_one_node_and_stable_on_another_is_one_row(timeline):
    [row] = of(timeline, "moved")
    assert (row["generation"], row["started_ts"], row["completed_ts"], row["duration_ms"], row["node"]) == (
        7, 1_000, 1_800, 800, 2)


def test_an_upgraded_group_has_its_classic_rebalances_then_its_epochs(timeline, summary):
    assert [(r["group_type"], r["generation"], r["state"]) for r in of(timeline, "mixed")] == [
        ("classic", 3, "Stable"), ("consumer", 4, None)]
    assert (summary["mixed"]["group_type"], summary["mixed"]["rebalances"], summary["mixed"]["unfinished"]) == (
        "consumer", 1, 1)


def test_incarnations_of_a_deleted_group_are_epochs_apart(timeline):
    assert [(r["generation"], r["started_ts"], r["completed_ts"]) for r in of(timeline, "reborn")] == [
        (1, 1_000, 1_000), (2, 2_000, 2_000), (1, 3_000, 3_050)]


def test_the_summary_counts_settled_and_superseded_epochs_with_their_reasons_and_the_unfinished_one(summary):
    stream = summary["stream"]
    assert (stream["group_type"], stream["rebalances"], stream["unfinished"]) == ("consumer", 4, 1)
    assert stream["reasons"] == {"join": 2, "subscription change": 1, "trigger": 1}
    assert (stream["p50_ms"], stream["max_ms"], stream["total_ms"]) == (300.0, 500, 800)
    assert (stream["joins"], stream["leaves"], stream["expirations"], stream["churn"]) == (2, 1, 0, 3)
    assert (stream["first_ts"], stream["last_ts"]) == (1_000, 5_000)
    assert (summary["gone"]["rebalances"], summary["gone"]["unfinished"], summary["gone"]["expirations"]) == (2, 0, 1)


# -- audit ----------------------------------------------------------------------------------------

def test_a_consumer_groups_clean_history_audits_clean_and_its_commits_are_checked_at_their_member_epochs(journal):
    assert audit_violations(journal).collect() == []
    summary = {row["invariant"]: tuple(row)[1:] for row in audit_summary(journal).collect()}
    # epochs 1, 2, 4 of stream (4 + 4 + 4 partitions), gone 1, mixed 3 (classic and consumer), reborn 1 twice
    assert summary["single_owner"] == (17, 0, 0)
    assert summary["owner_commits"] == (4, 0, 0)  # a-1's revocation commit at epoch 1 included


def planted() -> Journal:
    journal = Journal("twice")
    journal.reconciled(100, "a-1", 3, ["t/0"])
    journal.reconciled(110, "b-1", 3, ["t/0", "t/1"])
    journal.reconciled(200, "a-1", 2, ["t/5"], group="filled")
    journal.reconciled(210, "a-1", 3, group="filled")  # still t/5, listed by the event before
    journal.reconciled(220, "c-1", 3, ["t/5"], group="filled")
    journal.reconciled(300, "s-1", 7, ["t/0"], instance_id="i-s", group="static")
    journal.left(310, "s-1", 7, group="static")
    journal.reconciled(310, "s-1", -2, instance_id="i-s", group="static")
    journal.joined(320, "s-2", 7, instance_id="i-s", replaced_member_id="s-1", group="static")
    journal.reconciled(320, "s-2", 7, ["t/0"], instance_id="i-s", group="static")  # the same owner: no breach
    journal.commit(330, "s-2", 7, "t/0", 4, group="static")
    journal.reconciled(400, "a-1", 2, ["t/0"], group="stray")
    journal.commit(410, "a-1", 2, "t/1", 9, group="stray")
    journal.commit(420, "a-1", 6, "t/1", 9, group="stray")  # epoch 6 is not in the journal: unverified
    return journal


def test_a_partition_two_members_own_at_one_member_epoch_and_a_commit_outside_ownership_are_violations(spark):
    journal = planted()
    frame = journal.frame(spark)
    violations = [row.asDict() for row in audit_violations(frame).collect()]
    assert [(v["invariant"], v["group"], v["generation"], v["topic"], v["partition"]) for v in violations] == [
        ("single_owner", "twice", 3, "t", 0), ("single_owner", "filled", 3, "t", 5), ("owner_commits", "stray", 2, "t", 1)]
    twice, filled, stray = violations
    assert twice["detail"] == "member epoch 3: t/0 is owned by 2 members: a-1, b-1"
    assert twice["records"] == [as_record(e) for e in journal.events[:2]]
    assert filled["records"] == [as_record(e) for e in journal.events[2:5]]  # the listing event too
    assert stray["detail"] == "member a-1 committed offset 9 to t/1 at member epoch 2, when it did not own it"
    assert stray["records"] == [as_record(journal.events[-3]), as_record(journal.events[-2])]
    summary = {row["invariant"]: tuple(row)[1:] for row in audit_summary(frame).collect()}
    assert summary["single_owner"] == (6, 2, 0)  # twice t/0 t/1, filled t/5 at 2 and 3, static t/0, stray t/0
    assert summary["owner_commits"] == (2, 1, 1)
