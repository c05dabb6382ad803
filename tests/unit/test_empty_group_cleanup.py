"""The periodic cleanup of Empty groups (`Coordinator.delete_empty_groups`, Apache Kafka's
`cleanupGroupMetadata` without offset expiry): a group nobody is in and nothing was committed
for goes, with a tombstone; every other group stays."""

from __future__ import annotations

from groupctl.coordinator.classic.messages import LeaveGroup, LeavingMember
from groupctl.coordinator.consumer.messages import ConsumerHeartbeat
from groupctl.coordinator.placement import Placement
from groupctl.coordinator.records import GroupTombstone
from tests.unit.test_group_types import Node, classic_join


def joined_and_left(node: Node, group: str) -> None:
    """A classic member joins `group` (its first generation completes after the initial
    rebalance delay) and leaves: the group is Empty, and nothing was committed."""
    node.call("join_group", classic_join(group))
    (joined,) = [reply.response for result in node.timer.advance(10_000) for reply in result.replies]
    node.call("leave_group", LeaveGroup(group, (LeavingMember(joined.member_id),)))


def cleanup(node: Node) -> list[str]:
    result = node.core.delete_empty_groups(node.timer.now_ms)
    assert not result.replies
    return [r.group for r in result.records if isinstance(r, GroupTombstone)]


def test_an_empty_classic_group_without_offsets_is_deleted_with_a_tombstone():
    node = Node()
    joined_and_left(node, "gone")
    assert cleanup(node) == ["gone"]
    assert node.core.classic.state_of("gone") is None


def test_an_empty_consumer_group_without_offsets_is_deleted():
    node = Node()
    node.join(group="gone")
    node.call("consumer_group_heartbeat", ConsumerHeartbeat("gone", "m", -1))  # the member leaves
    assert cleanup(node) == ["gone"]
    assert "gone" not in node.core.consumer.groups


def test_groups_with_members_or_committed_offsets_stay():
    node = Node()
    node.call("join_group", classic_join("busy"))
    node.join(group="consuming")
    assert node.commit(group="committed") == 0  # a simple commit: an Empty group with offsets
    assert cleanup(node) == []
    assert node.core.classic.state_of("committed") is not None


def test_groups_this_node_does_not_serve_are_left_alone():
    node = Node(placement=Placement.everything())
    joined_and_left(node, "elsewhere")
    node.core.placement.serving.clear()
    assert cleanup(node) == []
