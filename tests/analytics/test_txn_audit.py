"""The audit's txn_offsets invariant on a real local Spark session, over hand-written journals: an
offset a transaction makes visible comes from a commit of its producer and epoch that held it; an
offset held by an aborted transaction never becomes committed; a completion the journal has no
evidence for is unverified. One group per planted breach."""

from __future__ import annotations

import pytest

from groupctl.analytics.audit import audit_summary, audit_violations
from tests.support.journal_events import Journal, as_record

P7 = (7, 0)


def txn_summary(spark, journal: Journal) -> tuple:
    return next(tuple(row) for row in audit_summary(journal.frame(spark)).collect() if row[0] == "txn_offsets")


def test_commits_aborts_a_fenced_abort_and_a_retry_after_an_abort_audit_clean(spark):
    journal = Journal("eos")
    journal.txn_commit(100, P7, "t/0", 10)
    journal.txn_commit(101, P7, "t/1", 20)
    journal.txn_completed(110, P7, "commit", {"t/0": 10, "t/1": 20})
    journal.txn_visible(110, P7, "t/0", 10)
    journal.txn_visible(110, P7, "t/1", 20)
    journal.txn_commit(200, P7, "t/0", 30)
    journal.txn_completed(210, P7, "abort", {"t/0": 30})
    journal.txn_commit(300, P7, "t/0", 30)  # the same offset held again by the next transaction
    journal.txn_completed(310, P7, "commit", {"t/0": 30})
    journal.txn_visible(310, P7, "t/0", 30)
    journal.txn_commit(400, P7, "t/0", 40)
    journal.txn_completed(410, (7, 1), "abort", {"t/0": 40})  # fenced: the marker has the epoch plus one
    journal.commit(420, "", -1, "t/0", 40)  # an admin commit of the same offset is not the transaction's
    assert audit_violations(journal.frame(spark)).collect() == []
    assert txn_summary(spark, journal) == ("txn_offsets", 8, 0, 0)  # 5 completed partitions, 3 made visible


def test_a_completion_whose_held_offsets_are_not_in_the_journal_is_unverified(spark):
    journal = Journal("rotated")
    journal.txn_completed(500, (8, 0), "commit", {"t/0": 50, "t/1": 60})  # its txn_offset_commit rotated away
    journal.txn_visible(500, (8, 0), "t/0", 50)
    assert audit_violations(journal.frame(spark)).collect() == []
    assert txn_summary(spark, journal) == ("txn_offsets", 1, 0, 2)


class Planted:
    def __init__(self):
        self.journal = journal = Journal()
        self.events = events = {}

        journal.txn_commit(100, (9, 0), "t/0", 5, group="aborted")
        events["aborted"] = journal.txn_completed(110, (9, 0), "abort", {"t/0": 5}, group="aborted")
        events["aborted_visible"] = journal.txn_visible(110, (9, 0), "t/0", 5, group="aborted")

        events["orphan"] = journal.txn_visible(200, (10, 0), "t/0", 5, group="orphan")

        journal.txn_commit(300, (11, 0), "t/0", 5, group="unheld")
        events["unheld_commit"] = journal.txn_completed(310, (11, 0), "commit", {"t/0": 5}, group="unheld")
        events["unheld"] = journal.txn_visible(310, (11, 0), "t/0", 6, group="unheld")

        journal.txn_commit(400, (12, 1), "t/0", 5, group="epoch")
        events["epoch_commit"] = journal.txn_completed(410, (12, 1), "commit", {"t/0": 5}, group="epoch")
        events["old_epoch"] = journal.txn_visible(410, (12, 0), "t/0", 5, group="epoch")

        events["held"] = journal.txn_commit(500, (13, 0), "t/0", 5, group="mismatch")
        events["mismatch"] = journal.txn_completed(510, (13, 0), "commit", {"t/0": 6}, group="mismatch")
        journal.txn_visible(510, (13, 0), "t/0", 6, group="mismatch")

        journal.txn_commit(600, (14, 0), "t/0", 5, group="back")
        events["back_abort"] = journal.txn_completed(610, (14, 0), "abort", {"t/0": 5}, group="back")
        events["back"] = journal.txn_completed(620, (14, 0), "commit", {"t/0": 5}, group="back")
        journal.txn_visible(620, (14, 0), "t/0", 5, group="back")

    def records(self, *names: str) -> list[str]:
        return [as_record(self.events[name]) for name in names]


@pytest.fixture(scope="module")
def planted(spark):
    scenario = Planted()
    frame = scenario.journal.frame(spark)
    scenario.violations = [row.asDict() for row in audit_violations(frame).collect()]
    scenario.summary = [tuple(row) for row in audit_summary(frame).collect()]
    return scenario


def violation_of(planted: Planted, group: str) -> dict:
    (row,) = [row for row in planted.violations if row["group"] == group]
    return row


def test_an_offset_made_visible_after_its_transaction_aborted_breaks_txn_offsets(planted):
    assert violation_of(planted, "aborted") == {
        "invariant": "txn_offsets", "group": "aborted", "generation": None, "topic": "t", "partition": 0,
        "detail": "offset 5 of t/0 was made visible for producer 9 epoch 0 after its transaction aborted",
        "records": planted.records("aborted", "aborted_visible"),
    }


def test_an_offset_made_visible_with_no_completion_of_its_transaction_breaks_txn_offsets(planted):
    row = violation_of(planted, "orphan")
    assert (row["detail"], row["records"]) == (
        "offset 5 of t/0 was made visible for producer 10 epoch 0 with no completion of its transaction before it",
        planted.records("orphan"))


def test_an_offset_made_visible_that_the_committed_transaction_did_not_hold_breaks_txn_offsets(planted):
    row = violation_of(planted, "unheld")
    assert (row["detail"], row["records"]) == (
        "offset 6 of t/0 was made visible for producer 11 epoch 0 by a commit that did not hold it",
        planted.records("unheld_commit", "unheld"))


def test_an_offset_made_visible_under_another_epoch_than_the_commit_breaks_txn_offsets(planted):
    row = violation_of(planted, "epoch")
    assert (row["detail"], row["records"]) == (
        "offset 5 of t/0 was made visible for producer 12 epoch 0 by a commit of epoch 1",
        planted.records("epoch_commit", "old_epoch"))


def test_a_completion_listing_another_offset_than_the_producer_held_breaks_txn_offsets(planted):
    row = violation_of(planted, "mismatch")
    assert (row["detail"], row["records"]) == (
        "producer 13's commit completed offset 6 of t/0, where it held 5", planted.records("held", "mismatch"))


def test_an_aborted_offset_completed_again_by_the_next_commit_breaks_txn_offsets(planted):
    row = violation_of(planted, "back")
    assert (row["detail"], row["records"]) == (
        "producer 14's commit completed offset 5 of t/0, which its previous transaction held and aborted",
        planted.records("back_abort", "back"))


def test_summary_counts_each_completed_partition_and_each_offset_made_visible(planted):
    assert planted.summary[-1] == ("txn_offsets", 12, 6, 0)


def test_a_journal_the_core_wrote_for_a_commit_and_an_abort_audits_clean(spark, tmp_path):
    """Round trip: the real group core's transactional events, written by the real journal
    writer, read back with the schema."""
    from groupctl.analytics.schemas import JOURNAL_SCHEMA
    from groupctl.coordinator.errors import ErrorCode
    from groupctl.coordinator.offsets.messages import CompleteTxnPartition, PartitionOffset, TxnCommitOffsets
    from groupctl.coordinator.placement import group_partition
    from groupctl.server.journal import Journal as JournalWriter
    from tests.unit.classic_harness import Harness

    h = Harness()
    for epoch, offset, commit in ((0, 10, True), (0, 20, False), (0, 20, True), (1, 30, False)):
        h.ask("txn_commit_offsets", TxnCommitOffsets("g", 7, 0, -1, "", None, (PartitionOffset("t", 0, offset),)))
        assert h.ask("complete_txn_partition", CompleteTxnPartition(group_partition("g"), 7, epoch, commit, 0)) is ErrorCode.NONE
    writer = JournalWriter(tmp_path / "journal")
    writer.append([event for result in h.results for event in result.events])
    writer.close()
    journal = spark.read.schema(JOURNAL_SCHEMA).option("mode", "FAILFAST").json(str(tmp_path / "journal"))
    assert audit_violations(journal).collect() == []
    summary = {row["invariant"]: tuple(row)[1:] for row in audit_summary(journal).collect()}
    assert summary["txn_offsets"] == (6, 0, 0)  # 4 completions of one partition, 2 made visible
