"""audit_violations / audit_summary on a real local Spark session, over hand-written journals: a
clean history that exercises every exemption, and one with a planted breach of each invariant
(one group per breach, so each test reads its own group's rows).
"""

from __future__ import annotations

import pytest

from groupctl.analytics.audit import VIOLATION_COLUMNS, audit_summary, audit_violations
from tests.support.journal_events import Journal, as_record


def clean_history() -> Journal:
    """Owners commit their partitions, offsets only go back through explicit resets, a takeover
    node repeats a completion with the same owners, and the group is deleted and comes back."""
    journal = Journal("orders")
    journal.completed(100, 1, started_ts=90, owners={"a-1": ["t/0", "t/1"], "b-1": ["t/2"]})
    journal.commit(110, "a-1", 1, "t/0", 10)
    journal.commit(111, "a-1", 1, "t/1", 5)
    journal.commit(112, "b-1", 1, "t/2", 7)
    journal.commit(120, "a-1", 1, "t/0", 20)
    journal.completed(200, 2, started_ts=190, owners={"a-1": ["t/0"], "b-1": ["t/1", "t/2"]}, node=1)
    journal.completed(200, 2, started_ts=190, owners={"a-1": ["t/0"], "b-1": ["t/1", "t/2"]}, node=2)
    journal.commit(210, "b-1", 2, "t/1", 8)
    journal.commit(211, "a-1", 2, "t/0", 25)
    journal.completed(300, 3, started_ts=290, state="Empty", reason="leave")
    journal.commit(310, "", -1, "t/0", 3)  # offsets reset --to-offset 3
    journal.offset_delete(320, "t/1")
    journal.completed(400, 4, started_ts=390, owners={"c-1": ["t/0", "t/1", "t/2"]})
    journal.commit(410, "c-1", 4, "t/1", 0)  # first commit after the delete
    journal.commit(411, "c-1", 4, "t/0", 4)  # above the reset
    journal.completed(500, 5, started_ts=490, state="Empty", reason="leave")
    journal.group_deleted(510)
    journal.completed(600, 1, started_ts=590, owners={"d-1": ["t/0", "t/1", "t/2"]})  # generations start again
    journal.commit(610, "d-1", 1, "t/0", 1)
    journal.commit(620, "d-1", 1, "t/0", 2)
    return journal


def test_clean_journal_with_resets_deletion_and_takeover_has_no_violations(spark):
    journal = clean_history().frame(spark)
    assert audit_violations(journal).collect() == []
    assert [tuple(row) for row in audit_summary(journal).collect()] == [
        ("single_owner", 12, 0, 0),  # 3 partitions in generations 1, 2, 4 and the new generation 1
        ("owner_commits", 10, 0, 0),  # every member commit; the admin reset belongs to no generation
        ("monotonic_offsets", 5, 0, 0),  # commits after an earlier one, less the two resets
        ("txn_offsets", 0, 0, 0),  # no transactions
    ]


class Planted:
    """One group per planted breach; `events` keeps the events the assertions name."""

    def __init__(self):
        self.journal = journal = Journal()
        self.events = events = {}

        events["double"] = journal.completed(100, 1, group="double", started_ts=90,
                                             owners={"a-1": ["t/0", "t/1"], "b-1": ["t/0"]})

        events["node1"] = journal.completed(200, 5, group="split", node=1, started_ts=150,
                                            owners={"a-1": ["t/0", "t/1"]})
        events["node2"] = journal.completed(201, 5, group="split", node=2, started_ts=160,
                                            owners={"b-1": ["t/0"], "a-1": ["t/1"]})

        events["stray_gen"] = journal.completed(300, 1, group="stray", started_ts=290,
                                                owners={"a-1": ["t/0"], "b-1": ["t/1"]})
        events["stray"] = journal.commit(310, "b-1", 1, "t/0", 10, group="stray")
        events["empty_gen"] = journal.completed(320, 2, group="stray", started_ts=315, state="Empty")
        events["in_empty"] = journal.commit(330, "a-1", 2, "t/0", 11, group="stray")
        journal.commit(340, "a-1", 7, "t/0", 12, group="stray")  # generation 7 is not in the journal
        journal.completed(350, 8, group="stray", started_ts=345, members=2, member_ids=["x-1", "y-1"])
        journal.commit(360, "x-1", 8, "t/0", 13, group="stray")  # not a consumer-protocol assignment

        journal.completed(400, 1, group="rewind", started_ts=390, owners={"a-1": ["t/0"]})
        events["ahead"] = journal.commit(410, "a-1", 1, "t/0", 100, group="rewind")
        events["behind"] = journal.commit(420, "a-1", 1, "t/0", 50, group="rewind")
        events["reset"] = journal.commit(430, "", -1, "t/0", 10, group="rewind")
        events["below_reset"] = journal.commit(440, "a-1", 1, "t/0", 5, group="rewind")

    def records(self, *names: str) -> list[str]:
        return [as_record(self.events[name]) for name in names]


@pytest.fixture(scope="module")
def planted(spark):
    scenario = Planted()
    frame = audit_violations(scenario.journal.frame(spark))
    scenario.columns = tuple(frame.columns)
    scenario.violations = [row.asDict() for row in frame.collect()]
    scenario.summary = [tuple(row) for row in audit_summary(scenario.journal.frame(spark)).collect()]
    return scenario


def violations_of(planted: Planted, group: str) -> list[dict]:
    return [row for row in planted.violations if row["group"] == group]


def test_partition_assigned_to_two_members_in_one_completion_breaks_single_owner(planted):
    assert violations_of(planted, "double") == [{
        "invariant": "single_owner", "group": "double", "generation": 1, "topic": "t", "partition": 0,
        "detail": "generation 1 assigns t/0 to 2 members: a-1, b-1",
        "records": planted.records("double"),
    }]


def test_two_nodes_completing_one_generation_with_different_owners_break_single_owner(planted):
    assert violations_of(planted, "split") == [{
        "invariant": "single_owner", "group": "split", "generation": 5, "topic": "t", "partition": 0,
        "detail": "generation 5 assigns t/0 to 2 members: a-1, b-1",
        "records": planted.records("node1", "node2"),
    }]


def test_commit_by_a_member_not_owning_the_partition_breaks_owner_commits(planted):
    stray = [row for row in violations_of(planted, "stray") if row["generation"] == 1]
    assert stray == [{
        "invariant": "owner_commits", "group": "stray", "generation": 1, "topic": "t", "partition": 0,
        "detail": "member b-1 committed offset 10 to t/0 in generation 1, which assigns it to a-1",
        "records": planted.records("stray_gen", "stray"),
    }]


def test_member_commit_in_an_empty_generation_breaks_owner_commits(planted):
    in_empty = [row for row in violations_of(planted, "stray") if row["generation"] == 2]
    assert in_empty == [{
        "invariant": "owner_commits", "group": "stray", "generation": 2, "topic": "t", "partition": 0,
        "detail": "member a-1 committed offset 11 to t/0 in generation 2, which assigns it to no member",
        "records": planted.records("empty_gen", "in_empty"),
    }]


def test_commits_of_a_generation_whose_assignment_is_not_in_the_journal_are_unverified(planted):
    assert {row["generation"] for row in violations_of(planted, "stray")} == {1, 2}
    owner_commits = next(row for row in planted.summary if row[0] == "owner_commits")
    assert owner_commits == ("owner_commits", 5, 2, 2)  # generation 7 unknown, generation 8 unreadable


def test_offset_going_back_breaks_monotonic_offsets(planted):
    assert violations_of(planted, "rewind")[0] == {
        "invariant": "monotonic_offsets", "group": "rewind", "generation": 1, "topic": "t", "partition": 0,
        "detail": "committed offset of t/0 went back from 100 (member a-1, generation 1) "
                  "to 50 (member a-1, generation 1) with no reset in between",
        "records": planted.records("ahead", "behind"),
    }


def test_member_commit_below_an_admin_reset_breaks_monotonic_offsets(planted):
    assert violations_of(planted, "rewind")[1:] == [{
        "invariant": "monotonic_offsets", "group": "rewind", "generation": 1, "topic": "t", "partition": 0,
        "detail": "committed offset of t/0 went back from 10 (admin commit) "
                  "to 5 (member a-1, generation 1) with no reset in between",
        "records": planted.records("reset", "below_reset"),
    }]


def test_violations_have_the_contract_columns_in_order_of_their_last_record(planted):
    assert planted.columns == VIOLATION_COLUMNS
    assert [(row["invariant"], row["group"]) for row in planted.violations] == [
        ("single_owner", "double"), ("single_owner", "split"), ("owner_commits", "stray"),
        ("owner_commits", "stray"), ("monotonic_offsets", "rewind"), ("monotonic_offsets", "rewind")]


def test_summary_counts_checks_and_violations_per_invariant(planted):
    assert planted.summary == [
        ("single_owner", 7, 2, 0),  # t/0, t/1 of double, split, stray generation 1; t/0 of rewind
        ("owner_commits", 5, 2, 2),
        ("monotonic_offsets", 5, 2, 0),  # 3 rising commits in stray, 2 in rewind (the admin reset is exempt)
        ("txn_offsets", 0, 0, 0),
    ]


def test_a_journal_the_core_wrote_audits_clean_through_static_restarts_and_an_admin_reset(spark, tmp_path):
    """Round trip: the real classic core's events, written by the real journal writer, read back
    with the schema. A static member restarting into a Stable group keeps its old id's partition
    in the same generation (twice here), so its commits are the owner's."""
    from groupctl.analytics.schemas import JOURNAL_SCHEMA
    from groupctl.coordinator.classic.messages import LeavingMember
    from groupctl.coordinator.offsets.messages import PartitionOffset
    from groupctl.coordinator.errors import ErrorCode
    from groupctl.server.journal import Journal as JournalWriter
    from tests.unit.classic_harness import Harness

    ok = [ErrorCode.NONE]
    h = Harness()
    (first,) = h.stable_group(count=1, instance="i-0")  # owns t/0 in generation 1
    assert h.commit("g", 1, first.member_id, PartitionOffset("t", 0, 10), instance="i-0") == ok
    restarted = h.reply(h.join(client_id="c0", instance="i-0"))
    again = h.reply(h.join(client_id="c0", instance="i-0"))
    assert (restarted.generation_id, again.generation_id) == (1, 1)
    assert h.commit("g", 1, restarted.member_id, PartitionOffset("t", 0, 15), instance="i-0") == [
        ErrorCode.FENCED_INSTANCE_ID]  # the core fences the replaced id: nothing to journal
    assert h.commit("g", 1, again.member_id, PartitionOffset("t", 0, 20), instance="i-0") == ok
    h.leave("g", LeavingMember(again.member_id, "i-0"))
    assert h.commit("g", -1, "", PartitionOffset("t", 0, 0)) == ok  # offsets reset --to-earliest

    writer = JournalWriter(tmp_path / "journal")
    writer.append([event for result in h.results for event in result.events])
    writer.close()
    journal = spark.read.schema(JOURNAL_SCHEMA).option("mode", "FAILFAST").json(str(tmp_path / "journal"))
    assert audit_violations(journal).collect() == []
    summary = {row["invariant"]: tuple(row)[1:] for row in audit_summary(journal).collect()}
    assert summary["owner_commits"] == (2, 0, 0)
    assert summary["monotonic_offsets"] == (1, 0, 0)  # 10 -> 20 checked; the reset to 0 is exempt, not checked


def test_a_cooperative_revocation_commit_in_the_next_generation_is_the_previous_owners(spark):
    # cooperative-sticky: generation 2 takes t/1 from a-1 and gives it to nobody yet; a-1 commits
    # it from its revocation callback, with generation 2. b-1 never owned it: a breach.
    journal = Journal("coop")
    journal.completed(100, 1, started_ts=90, owners={"a-1": ["t/0", "t/1"], "b-1": ["t/2"]})
    journal.completed(200, 2, started_ts=190, owners={"a-1": ["t/0"], "b-1": ["t/2"]})
    journal.commit(210, "a-1", 2, "t/1", 40)
    stray = journal.commit(220, "b-1", 2, "t/1", 41)
    violations = audit_violations(journal.frame(spark)).collect()
    assert [(row["invariant"], row["detail"], row["records"][-1]) for row in violations] == [(
        "owner_commits", "member b-1 committed offset 41 to t/1 in generation 2, which assigns it to no member",
        as_record(stray))]
