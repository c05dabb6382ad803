"""Transactional offset commits in the group core, on a manual clock (KIP-98, KIP-447; Apache
Kafka's OffsetMetadataManager pending offsets): TxnOffsetCommit holds offsets per producer,
invisible until the transaction's commit marker, dropped by its abort; OffsetFetch with
require_stable answers UNSTABLE_OFFSET_COMMIT meanwhile; classic and consumer groups judge the
member as Kafka does."""

from __future__ import annotations

from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.placement import group_partition
from groupctl.coordinator.offsets.messages import (
    NO_TXN_GUARD,
    CommittedOffset,
    CompleteTxnPartition,
    DeleteOffsets,
    FetchOffsets,
    PartitionOffset,
    StartTxnVerification,
    TxnCommitOffsets,
)
from groupctl.coordinator.records import (
    OffsetCommitRecord,
    PendingOffsetsRecord,
    PendingOffsetsTombstone,
)
from tests.unit.classic_harness import Harness
from tests.unit.test_consumer_offsets import Node, joined

P0 = PartitionOffset("t", 0, 42, leader_epoch=3, metadata="m")
P1 = PartitionOffset("t", 1, 7)
PID = 1000


def txn_commit(h: Harness, *offsets: PartitionOffset, group: str = "g", generation: int = -1, member: str = "",
               instance=None, producer_id: int = PID, epoch: int = 0, guard=None) -> list[ErrorCode]:
    request = TxnCommitOffsets(group, producer_id, epoch, generation, member, instance, offsets or (P0,), guard)
    return [p.error for p in h.ask("txn_commit_offsets", request).partitions]


def complete(h: Harness, commit: bool, group: str = "g", producer_id: int = PID, epoch: int = 0,
             coordinator_epoch: int = 0) -> ErrorCode:
    """The transaction's marker on the offsets partition the group is placed on."""
    return h.ask("complete_txn_partition", CompleteTxnPartition(group_partition(group), producer_id, epoch, commit,
                                                                coordinator_epoch))


def fetch(h: Harness, require_stable: bool, partitions=(("t", 0), ("t", 1)), group: str = "g"):
    return h.ask("fetch_offsets", FetchOffsets(group, partitions, require_stable=require_stable))


def test_pending_offsets_are_invisible_until_the_commit_marker_and_then_committed_in_one_result():
    h = Harness()
    assert txn_commit(h, P0, P1) == [ErrorCode.NONE, ErrorCode.NONE]
    pending = PendingOffsetsRecord("g", PID, 0, (OffsetCommitRecord("g", "t", 0, 42, 3, "m", h.now),
                                                 OffsetCommitRecord("g", "t", 1, 7, -1, "", h.now)))
    assert h.results[-1].records == [pending]
    assert fetch(h, False).offsets == (CommittedOffset("t", 0, -1), CommittedOffset("t", 1, -1))
    h.timer.advance(5)
    assert complete(h, commit=True) is ErrorCode.NONE
    assert h.results[-1].records == [*pending.offsets, PendingOffsetsTombstone("g", PID)]
    assert fetch(h, True).offsets == (CommittedOffset("t", 0, 42, 3, "m"), CommittedOffset("t", 1, 7))


def test_require_stable_answers_unstable_offset_commit_only_for_partitions_a_transaction_holds():
    h = Harness()
    h.commit("g", -1, "", P1, version=8)
    txn_commit(h, P0)
    assert fetch(h, True).offsets == (
        CommittedOffset("t", 0, -1, error=ErrorCode.UNSTABLE_OFFSET_COMMIT), CommittedOffset("t", 1, 7))
    assert fetch(h, True, partitions=None).offsets == (CommittedOffset("t", 1, 7),)


def test_an_abort_drops_the_pending_offsets_and_a_retried_marker_changes_nothing():
    h = Harness()
    h.commit("g", -1, "", PartitionOffset("t", 0, 5), version=8)
    txn_commit(h, P0)
    assert complete(h, commit=False) is ErrorCode.NONE
    assert h.results[-1].records == [PendingOffsetsTombstone("g", PID)]
    assert fetch(h, True).offsets[0] == CommittedOffset("t", 0, 5)
    assert complete(h, commit=True) is ErrorCode.NONE
    assert h.results[-1].records == []
    assert fetch(h, True).offsets[0] == CommittedOffset("t", 0, 5)


def test_later_commits_of_the_transaction_merge_and_each_producer_has_its_own():
    h = Harness()
    txn_commit(h, P0)
    txn_commit(h, PartitionOffset("t", 0, 50), P1)
    txn_commit(h, PartitionOffset("t", 0, 9), producer_id=PID + 1)
    assert [(o.partition, o.offset) for o in h.results[-2].records[0].offsets] == [(0, 50), (1, 7)]
    complete(h, commit=False, producer_id=PID + 1)
    complete(h, commit=True)
    assert fetch(h, True).offsets == (CommittedOffset("t", 0, 50), CommittedOffset("t", 1, 7))


def test_a_regular_commit_newer_than_the_pending_offset_is_kept_at_the_commit_marker():
    h = Harness()
    txn_commit(h, P0)
    h.timer.advance(1)
    h.commit("g", -1, "", PartitionOffset("t", 0, 99), version=8)
    complete(h, commit=True)
    assert fetch(h, True).offsets[0] == CommittedOffset("t", 0, 99)


def test_an_older_producer_epoch_is_invalid_producer_epoch_for_commits_and_markers():
    h = Harness()
    txn_commit(h, P0, epoch=3)
    assert txn_commit(h, P1, epoch=2) == [ErrorCode.INVALID_PRODUCER_EPOCH]
    assert complete(h, commit=True, epoch=2) is ErrorCode.INVALID_PRODUCER_EPOCH
    assert fetch(h, True).offsets[0].error is ErrorCode.UNSTABLE_OFFSET_COMMIT
    assert complete(h, commit=True, epoch=4) is ErrorCode.NONE
    assert fetch(h, True).offsets[0] == CommittedOffset("t", 0, 42, 3, "m")


def test_a_classic_member_commits_at_its_generation_and_a_commit_naming_no_member_is_accepted():
    h = Harness()
    a, b = h.stable_group(count=2)
    assert txn_commit(h, generation=a.generation_id, member=a.member_id) == [ErrorCode.NONE]
    assert txn_commit(h, generation=a.generation_id + 1, member=a.member_id) == [ErrorCode.ILLEGAL_GENERATION]
    assert txn_commit(h, generation=a.generation_id, member="ghost") == [ErrorCode.UNKNOWN_MEMBER_ID]
    assert txn_commit(h, generation=-1, member="") == [ErrorCode.NONE]
    assert h.commit("g", -1, "", P0) == [ErrorCode.UNKNOWN_MEMBER_ID]  # a plain commit is refused


def test_a_completing_rebalance_does_not_refuse_a_transactional_commit():
    h = Harness()
    a, _ = h.joined_members("g", 2)
    assert h.commit("g", a.generation_id, a.member_id, P0) == [ErrorCode.REBALANCE_IN_PROGRESS]
    assert txn_commit(h, generation=a.generation_id, member=a.member_id) == [ErrorCode.NONE]


def test_a_static_member_replaced_by_a_new_instance_is_fenced():
    h = Harness()
    (a,) = h.stable_group(count=1, instance="i-1")
    assert txn_commit(h, generation=a.generation_id, member="other", instance="i-1") == [
        ErrorCode.FENCED_INSTANCE_ID]


def test_an_unknown_group_accepts_only_a_commit_without_generation_and_is_created():
    h = Harness()
    assert txn_commit(h, group="new", generation=3, member="m") == [ErrorCode.ILLEGAL_GENERATION]
    assert h.results[-1].records == []
    assert txn_commit(h, group="new") == [ErrorCode.NONE]
    assert h.state("new") == "Empty"


def test_offset_delete_and_group_deletion_drop_pending_offsets_and_cleanup_keeps_the_group():
    h = Harness()
    txn_commit(h, P0, P1)
    assert h.core.empty_without_offsets() == {}
    h.ask("delete_offsets", DeleteOffsets("g", (("t", 0),)))
    assert h.results[-1].records == [PendingOffsetsRecord("g", PID, 0, (OffsetCommitRecord("g", "t", 1, 7, -1, "", h.now),))]
    h.ask("delete_groups", ("g",))
    complete(h, commit=True)
    assert h.results[-1].records == []
    assert fetch(h, True).offsets == (CommittedOffset("t", 0, -1), CommittedOffset("t", 1, -1))


def test_a_deleted_topic_takes_its_pending_offsets_with_it():
    h = Harness()
    txn_commit(h, P0, PartitionOffset("u", 0, 1))
    h.absorb(h.core.delete_topic_offsets(("u",), h.now))
    assert h.results[-1].records == [PendingOffsetsRecord("g", PID, 0, (OffsetCommitRecord("g", "t", 0, 42, 3, "m", h.now),))]
    h.absorb(h.core.delete_topic_offsets(("t",), h.now))
    assert h.results[-1].records == [PendingOffsetsTombstone("g", PID)]


def test_replayed_pending_records_restore_the_transaction_after_a_takeover():
    h = Harness()
    txn_commit(h, P0)
    records = list(h.records)
    again = Harness()
    again.absorb(again.core.load(records, again.now, "test"))
    assert fetch(again, True).offsets[0].error is ErrorCode.UNSTABLE_OFFSET_COMMIT
    assert complete(again, commit=True) is ErrorCode.NONE
    assert fetch(again, True).offsets[0] == CommittedOffset("t", 0, 42, 3, "m")


# --- verification guards (KIP-890 part 1) -------------------------------------------------------


def start_verification(h: Harness, group: str = "g", producer_id: int = PID) -> int:
    return h.ask("start_txn_verification", StartTxnVerification(group, producer_id))


def test_a_commit_carrying_the_guard_taken_before_its_verification_is_held():
    h = Harness()
    assert txn_commit(h, P0, guard=start_verification(h)) == [ErrorCode.NONE]
    assert fetch(h, True).offsets[0].error is ErrorCode.UNSTABLE_OFFSET_COMMIT


def test_a_marker_reaching_the_group_during_the_verification_voids_the_guard():
    h = Harness()
    guard = start_verification(h)
    assert complete(h, commit=False) is ErrorCode.NONE  # the transaction aborted meanwhile
    assert txn_commit(h, P0, guard=guard) == [ErrorCode.INVALID_TXN_STATE]
    assert dict(h.core.pending_offsets("g")) == {}
    assert txn_commit(h, P0, guard=start_verification(h)) == [ErrorCode.NONE]  # the next verification's


def test_a_producer_whose_offsets_are_held_commits_more_only_while_they_are_still_held():
    h = Harness()
    assert txn_commit(h, P0, guard=start_verification(h)) == [ErrorCode.NONE]
    guard = start_verification(h)
    assert guard == NO_TXN_GUARD
    assert txn_commit(h, P1, guard=guard) == [ErrorCode.NONE]
    assert complete(h, commit=True) is ErrorCode.NONE
    assert txn_commit(h, P1, guard=guard) == [ErrorCode.INVALID_TXN_STATE]


def test_an_unverified_commit_cannot_start_holding_offsets():
    h = Harness()
    assert txn_commit(h, P0, guard=NO_TXN_GUARD) == [ErrorCode.INVALID_TXN_STATE]


# --- coordinator epochs (a zombie coordinator's stale marker) ------------------------------------


def test_a_marker_from_a_lower_coordinator_epoch_than_one_accepted_is_fenced_and_changes_nothing():
    h = Harness()
    txn_commit(h, P0)
    assert complete(h, commit=True, coordinator_epoch=3) is ErrorCode.NONE  # T1
    txn_commit(h, PartitionOffset("t", 0, 99))  # T2, same producer epoch
    records = len(h.records)
    assert complete(h, commit=True, coordinator_epoch=2) is ErrorCode.TRANSACTION_COORDINATOR_FENCED
    assert len(h.records) == records
    assert fetch(h, True).offsets[0].error is ErrorCode.UNSTABLE_OFFSET_COMMIT
    assert complete(h, commit=False, coordinator_epoch=3) is ErrorCode.NONE  # T2's own abort
    assert fetch(h, True).offsets[0] == CommittedOffset("t", 0, 42, 3, "m")


def test_a_marker_with_nothing_pending_still_raises_the_fence_for_the_next_transaction():
    h = Harness()
    assert complete(h, commit=True, coordinator_epoch=5) is ErrorCode.NONE
    txn_commit(h, P0)
    assert h.records[-1].coordinator_epoch == 5
    assert complete(h, commit=True, coordinator_epoch=4) is ErrorCode.TRANSACTION_COORDINATOR_FENCED


def test_the_fence_a_pending_record_carries_holds_after_a_takeover():
    h = Harness()
    assert complete(h, commit=True, coordinator_epoch=5) is ErrorCode.NONE
    txn_commit(h, P0)
    again = Harness()
    again.absorb(again.core.load(list(h.records), again.now, "test"))
    assert complete(again, commit=True, coordinator_epoch=4) is ErrorCode.TRANSACTION_COORDINATOR_FENCED
    assert complete(again, commit=True, coordinator_epoch=6) is ErrorCode.NONE
    assert fetch(again, True).offsets[0] == CommittedOffset("t", 0, 42, 3, "m")


def test_a_marker_on_another_offsets_partition_does_not_raise_this_ones_fence():
    other = next(g for g in (f"o{i}" for i in range(500)) if group_partition(g) != group_partition("g"))
    h = Harness()
    assert complete(h, commit=True, group=other, coordinator_epoch=9) is ErrorCode.NONE
    txn_commit(h, P0)
    assert complete(h, commit=True, coordinator_epoch=1) is ErrorCode.NONE


# --- consumer groups (KIP-848) ------------------------------------------------------------------

def consumer_txn_commit(node: Node, member: str, epoch: int) -> list[ErrorCode]:
    request = TxnCommitOffsets("g", PID, 0, epoch, member, None, (PartitionOffset("orders", 0, 42),))
    result = node.store.txn_commit("token", request, group_partition("g"), node.harness.now)
    (reply,) = result.replies
    return [p.error for p in reply.response.partitions]


def test_a_consumer_member_commits_transactionally_at_its_member_epoch_and_a_stale_epoch_is_illegal_generation():
    node = Node()
    (client,) = joined(node, "m1")
    epoch = node.harness.core.groups["g"].members["m1"].member_epoch
    assert consumer_txn_commit(node, "m1", epoch) == [ErrorCode.NONE]
    assert consumer_txn_commit(node, "m1", epoch - 1) == [ErrorCode.ILLEGAL_GENERATION]
    assert consumer_txn_commit(node, "ghost", epoch) == [ErrorCode.UNKNOWN_MEMBER_ID]
    assert consumer_txn_commit(node, "", -1) == [ErrorCode.UNKNOWN_MEMBER_ID]
    assert node.fetch().offsets == (CommittedOffset("orders", 0, -1),)
    marker = CompleteTxnPartition(group_partition("g"), PID, 0, True, 0)
    (reply,) = node.store.complete_txn_partition("token", marker, lambda group: True, node.harness.now).replies
    assert reply.response is ErrorCode.NONE
    assert node.fetch().offsets == (CommittedOffset("orders", 0, 42),)


def groups_on_partition(partition: int, count: int) -> list[str]:
    return [g for g in (f"g{i}" for i in range(2000)) if group_partition(g) == partition][:count]


def test_an_offsets_partition_marker_completes_every_group_there_holding_the_producers_offsets_and_no_other():
    h = Harness()
    first, second = groups_on_partition(group_partition("g"), 2)
    elsewhere = next(g for g in (f"x{i}" for i in range(100)) if group_partition(g) != group_partition("g"))
    for group in (first, second, elsewhere):
        assert txn_commit(h, P0, group=group) == [ErrorCode.NONE]
    assert txn_commit(h, P1, group=first, producer_id=PID + 1) == [ErrorCode.NONE]
    assert complete(h, commit=True, group=first) is ErrorCode.NONE
    assert fetch(h, False, group=first).offsets[0] == CommittedOffset("t", 0, 42, 3, "m")
    assert fetch(h, False, group=second).offsets[0] == CommittedOffset("t", 0, 42, 3, "m")
    assert fetch(h, False, group=elsewhere).offsets[0].offset == -1  # another partition's marker
    assert fetch(h, True, group=first).offsets[1].error is ErrorCode.UNSTABLE_OFFSET_COMMIT  # another producer
