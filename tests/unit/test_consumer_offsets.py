"""OffsetCommit and OffsetFetch on a consumer group (KIP-848), on a manual clock: the offset store
asks the consumer core's groups for their verdict as Apache Kafka's ConsumerGroup
validateOffsetCommit / validateOffsetFetch give it: members commit with OffsetCommit v9+ at
their current member epoch, a fetch naming a member is checked the same way, and admin tools
(no member, epoch -1) commit only to a group without members but may always fetch."""

from __future__ import annotations

from typing import Optional

import pytest

from groupctl.coordinator.consumer.member import ClassicMembership, ConsumerMember
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.offsets import OffsetStore
from groupctl.coordinator.offsets.messages import (
    CommitOffsets,
    CommittedOffset,
    FetchOffsets,
    FetchOffsetsResult,
    PartitionOffset,
)
from tests.unit.consumer_harness import Client, Harness

P0 = PartitionOffset("orders", 0, 42)
P1 = PartitionOffset("orders", 1, 7)


class Node:
    """A consumer core and the offset store that asks its groups, as the facade wires them."""

    def __init__(self) -> None:
        self.harness = Harness()
        self.store = OffsetStore(0, group=self.harness.core.groups.get, create_group=self._no_simple_group)
        self.records: list = []

    @staticmethod
    def _no_simple_group(group_id: str):
        raise AssertionError(f"these tests commit to no group that does not exist ({group_id})")

    def commit(self, member_id: str, epoch: int, *offsets: PartitionOffset, version: int = 9,
               instance_id: Optional[str] = None) -> list[ErrorCode]:
        request = CommitOffsets("g", epoch, member_id, instance_id, offsets or (P0,), version)
        result = self.store.commit("token", request, self.harness.now)
        self.records.extend(result.records)
        (reply,) = result.replies
        return [p.error for p in reply.response.partitions]

    def fetch(self, member_id: Optional[str] = None, epoch: int = -1,
              partitions=(("orders", 0),)) -> FetchOffsetsResult:
        request = FetchOffsets("g", partitions, member_id=member_id, member_epoch=epoch)
        (reply,) = self.store.fetch("token", request, self.harness.now).replies
        return reply.response


def joined(node: Node, *member_ids: str) -> list[Client]:
    """Members that joined and settled (every member at the group's epoch, nothing pending)."""
    clients = [Client(node.harness, m) for m in member_ids]
    for client in clients:
        client.join()
    for _ in range(4):
        for client in clients:
            client.beat()
    return clients


# --- OffsetCommit ------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [9, 10])
def test_a_member_commits_at_its_member_epoch_with_v9_and_later(version):
    node = Node()
    (a,) = joined(node, "a")
    assert node.commit("a", a.epoch, P0, P1, version=version) == [ErrorCode.NONE, ErrorCode.NONE]
    assert [(r.partition, r.offset) for r in node.records] == [(0, 42), (1, 7)]
    assert node.fetch(partitions=None).offsets == (CommittedOffset("orders", 0, 42), CommittedOffset("orders", 1, 7))


@pytest.mark.parametrize("version", [2, 5, 7, 8])
def test_a_consumer_protocol_member_committing_before_v9_is_unsupported_version_and_nothing_is_stored(version):
    node = Node()
    (a,) = joined(node, "a")
    assert node.commit("a", a.epoch, P0, P1, version=version) == [ErrorCode.UNSUPPORTED_VERSION] * 2
    assert node.records == [] and node.fetch().offsets == (CommittedOffset("orders", 0, -1),)


def test_the_member_is_looked_up_before_the_version_and_the_version_before_the_epoch():
    node = Node()
    (a,) = joined(node, "a")
    assert node.commit("ghost", a.epoch, version=8) == [ErrorCode.UNKNOWN_MEMBER_ID]
    assert node.commit("a", a.epoch + 5, version=8) == [ErrorCode.UNSUPPORTED_VERSION]


def test_a_commit_at_an_epoch_the_member_has_left_behind_is_stale_member_epoch():
    node = Node()
    a = joined(node, "a")[0]
    first_epoch = a.epoch
    b = Client(node.harness, "b")
    b.join()
    for _ in range(4):  # a gives partitions up to b and moves on to the new epoch
        a.beat()
        b.beat()
    assert a.epoch > first_epoch
    assert node.commit("a", first_epoch) == [ErrorCode.STALE_MEMBER_EPOCH]
    assert node.commit("a", a.epoch + 1) == [ErrorCode.STALE_MEMBER_EPOCH]  # ahead of the coordinator: stale too
    assert node.commit("a", a.epoch) == [ErrorCode.NONE]
    assert node.commit("b", b.epoch, P1) == [ErrorCode.NONE]


def test_a_member_still_revoking_commits_at_the_epoch_it_has_not_left_yet():
    """Up to Apache Kafka 4.2 the epoch must equal the member's (KIP-1251, 4.3, relaxes it)."""
    node = Node()
    a = joined(node, "a")[0]
    Client(node.harness, "b").join()  # the target moves partitions from a to b
    a.beat()  # told to revoke; it still owns them, so its epoch stays until it acknowledges
    member = node.harness.group().members["a"]
    assert member.pending_revocation and member.member_epoch == a.epoch
    assert node.commit("a", a.epoch) == [ErrorCode.NONE]
    assert node.commit("a", node.harness.group().group_epoch) == [ErrorCode.STALE_MEMBER_EPOCH]


def test_an_unknown_member_or_one_that_left_is_unknown_member_id():
    node = Node()
    a, b = joined(node, "a", "b")
    assert node.commit("ghost", a.epoch) == [ErrorCode.UNKNOWN_MEMBER_ID]
    b.leave()
    assert node.commit("b", b.epoch) == [ErrorCode.UNKNOWN_MEMBER_ID]
    node.harness.advance(45_001)  # a's session runs out: fenced, and the group is empty
    assert node.harness.group().members == {}
    assert node.commit("a", a.epoch) == [ErrorCode.UNKNOWN_MEMBER_ID]  # an epoch >= 0 always names a member


@pytest.mark.parametrize("version", [2, 8, 9])
def test_an_admin_commit_is_refused_while_the_group_has_members_and_accepted_once_it_is_empty(version):
    node = Node()
    (a,) = joined(node, "a")
    assert node.commit("", -1, version=version) == [ErrorCode.UNKNOWN_MEMBER_ID]
    a.leave()
    assert node.commit("", -1, version=version) == [ErrorCode.NONE]
    assert node.fetch().offsets == (CommittedOffset("orders", 0, 42),)


# --- a classic-protocol member inside a consumer group (online migration) ----------------------

def classic_member(node: Node, member_id: str = "c-1", epoch: int = 3) -> ConsumerMember:
    member = ConsumerMember(member_id, member_epoch=epoch, previous_member_epoch=epoch - 1,
                            classic=ClassicMembership(10_000, (("range", b""),)))
    node.harness.group().put_member(member)
    return member


@pytest.mark.parametrize("version", [2, 8, 9])
def test_a_classic_protocol_member_commits_at_any_version_and_a_wrong_epoch_is_illegal_generation(version):
    node = Node()
    joined(node, "a")
    classic_member(node, "c-1", epoch=3)
    assert node.commit("c-1", 3, version=version) == [ErrorCode.NONE]
    assert node.commit("c-1", 2, version=version) == [ErrorCode.ILLEGAL_GENERATION]


# --- OffsetFetch -------------------------------------------------------------------------------

@pytest.mark.parametrize("member_id", [None, ""])
def test_a_fetch_naming_no_member_is_always_answered(member_id):
    node = Node()
    (a,) = joined(node, "a")
    node.commit("a", a.epoch)
    assert node.fetch(member_id, -1) == FetchOffsetsResult(ErrorCode.NONE, (CommittedOffset("orders", 0, 42),))


def test_a_member_fetches_at_its_current_epoch_only():
    node = Node()
    (a,) = joined(node, "a")
    node.commit("a", a.epoch)
    assert node.fetch("a", a.epoch).offsets == (CommittedOffset("orders", 0, 42),)
    assert node.fetch("a", a.epoch - 1) == FetchOffsetsResult(ErrorCode.STALE_MEMBER_EPOCH)
    assert node.fetch("a", -1) == FetchOffsetsResult(ErrorCode.STALE_MEMBER_EPOCH)  # an id names a member
    assert node.fetch("a", a.epoch, partitions=None).error is ErrorCode.NONE


def test_a_fetch_naming_an_unknown_member_is_unknown_member_id():
    node = Node()
    a, b = joined(node, "a", "b")
    assert node.fetch("ghost", a.epoch) == FetchOffsetsResult(ErrorCode.UNKNOWN_MEMBER_ID)
    assert node.fetch(None, a.epoch) == FetchOffsetsResult(ErrorCode.UNKNOWN_MEMBER_ID)
    assert node.fetch("", 0) == FetchOffsetsResult(ErrorCode.UNKNOWN_MEMBER_ID)
    b.leave()
    assert node.fetch("b", b.epoch) == FetchOffsetsResult(ErrorCode.UNKNOWN_MEMBER_ID)


def test_a_fetch_from_a_group_that_does_not_exist_checks_no_member():
    """Apache Kafka's fetchOffsets answers -1 offsets, not GROUP_ID_NOT_FOUND, even with an epoch."""
    node = Node()
    request = FetchOffsets("nope", (("orders", 0),), member_id="a", member_epoch=3)
    (reply,) = node.store.fetch("token", request, node.harness.now).replies
    assert reply.response == FetchOffsetsResult(ErrorCode.NONE, (CommittedOffset("orders", 0, -1),))


def test_a_classic_protocol_members_fetch_at_a_wrong_epoch_is_illegal_generation():
    node = Node()
    joined(node, "a")
    classic_member(node, "c-1", epoch=3)
    assert node.fetch("c-1", 3).error is ErrorCode.NONE
    assert node.fetch("c-1", 4) == FetchOffsetsResult(ErrorCode.ILLEGAL_GENERATION)
