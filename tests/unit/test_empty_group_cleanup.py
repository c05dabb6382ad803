"""The periodic cleanup of Empty groups (`Coordinator.delete_empty_groups`, Apache Kafka's
`cleanupGroupMetadata` without offset expiry): a group nobody is in and nothing was committed
for goes, with a tombstone, at the second cleanup that finds it so and unchanged; every other
group stays."""

from __future__ import annotations

from groupctl.coordinator.classic.messages import JoinGroup, LeaveGroup, LeavingMember
from groupctl.coordinator.consumer.messages import ConsumerHeartbeat
from groupctl.coordinator.errors import ErrorCode
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


def twice(node: Node) -> list[str]:
    """What two cleanups in a row delete."""
    return cleanup(node) + cleanup(node)


def test_an_empty_classic_group_without_offsets_is_deleted_with_a_tombstone_at_the_second_cleanup():
    node = Node()
    joined_and_left(node, "gone")
    assert cleanup(node) == []  # it has only just emptied
    assert cleanup(node) == ["gone"]
    assert node.core.classic.state_of("gone") is None


def test_an_empty_consumer_group_without_offsets_is_deleted():
    node = Node()
    node.join(group="gone")
    node.call("consumer_group_heartbeat", ConsumerHeartbeat("gone", "m", -1))  # the member leaves
    assert twice(node) == ["gone"]
    assert "gone" not in node.core.consumer.groups


def test_groups_with_members_or_committed_offsets_stay():
    node = Node()
    node.call("join_group", classic_join("busy"))
    node.join(group="consuming")
    assert node.commit(group="committed") == ErrorCode.NONE  # a simple commit: an Empty group with offsets
    assert twice(node) == []
    assert node.core.classic.state_of("committed") is not None


def test_groups_this_node_does_not_serve_are_left_alone():
    node = Node(placement=Placement.everything())
    joined_and_left(node, "elsewhere")
    node.core.placement.serving.clear()
    assert twice(node) == []


def test_an_empty_group_waiting_for_a_member_it_gave_an_id_to_stays():
    node = Node()
    join = JoinGroup(**{**classic_join("joining").__dict__, "require_known_member_id": True})
    assert node.call("join_group", join).error == ErrorCode.MEMBER_ID_REQUIRED
    assert twice(node) == []


def test_a_group_used_again_between_two_cleanups_waits_for_another():
    node = Node()
    joined_and_left(node, "reused")
    assert cleanup(node) == []
    joined_and_left(node, "reused")  # a new generation, Empty again
    assert cleanup(node) == []
    assert cleanup(node) == ["reused"]
