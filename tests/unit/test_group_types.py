"""Classic and consumer groups behind one core (`groupctl.coordinator.coordinator`): one group id
names one group, committed offsets are shared and judged by each group's rules, the admin APIs
answer for both types, and a partition's consumer groups load back as they were stored."""

from __future__ import annotations

from groupctl.coordinator.classic.messages import JoinGroup, TriggerRebalance
from groupctl.coordinator.consumer.messages import ConsumerHeartbeat
from groupctl.coordinator.consumer.partitions import assignment
from groupctl.coordinator.consumer.topics import TopicImage, TopicInfo
from groupctl.coordinator.coordinator import Coordinator
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.offsets.messages import CommitOffsets, FetchOffsets, PartitionOffset
from groupctl.coordinator.placement import Placement
from groupctl.coordinator.records import GroupMetadataRecord
from groupctl.coordinator.timers import ManualTimer
from tests.unit.classic_harness import subscription

ORDERS = TopicInfo("orders", "orders-id", 4)


class Node:
    """A core on a manual clock that answers one request at a time."""

    def __init__(self, placement=None) -> None:
        self.timer = ManualTimer()
        self.core = Coordinator(timer=self.timer, placement=placement, new_uuid=lambda: "made")
        self.core.use_topics(TopicImage.of([ORDERS]))
        self.records: list = []

    def call(self, operation: str, request):
        """The reply, or None while the core parks the request (a classic JoinGroup)."""
        result = getattr(self.core, operation)("token", request, self.timer.now_ms)
        self.records.extend(result.records)
        return result.replies[0].response if result.replies else None

    def join(self, group="g", member="m", topics=("orders",)):
        return self.call("consumer_group_heartbeat", ConsumerHeartbeat(
            group, member, 0, rebalance_timeout_ms=60_000, subscribed_topic_names=topics, owned={}))

    def commit(self, group="g", member="", epoch=-1, offset=10, version=9):
        answer = self.call("commit_offsets", CommitOffsets(
            group, epoch, member, None, (PartitionOffset("orders", 0, offset),), version))
        return answer.partitions[0].error

    def committed(self, group="g") -> int:
        return self.call("fetch_offsets", FetchOffsets(group, (("orders", 0),))).offsets[0].offset

    def fetch_error(self, member: str, epoch: int, group="g") -> ErrorCode:
        return self.call("fetch_offsets", FetchOffsets(group, (("orders", 0),), member_id=member,
                                                       member_epoch=epoch)).error


def classic_join(group="g") -> JoinGroup:
    return JoinGroup(group_id=group, member_id="", group_instance_id=None, session_timeout_ms=10_000,
                     rebalance_timeout_ms=10_000, protocol_type="consumer", protocols=(("range", subscription("orders")),),
                     client_id="c", client_host="/127.0.0.1", require_known_member_id=False)


def test_a_consumer_join_takes_an_empty_classic_groups_id_and_keeps_its_committed_offsets():
    node = Node()
    assert node.commit(offset=42) == ErrorCode.NONE  # a simple commit: an Empty classic group
    answer = node.join()
    assert answer.error == ErrorCode.NONE and answer.member_epoch == 1
    assert node.core.classic.state_of("g") is None
    assert node.committed() == 42


def test_a_consumer_join_cannot_take_a_classic_group_whose_members_are_not_consumers():
    node = Node()
    node.call("join_group", JoinGroup(**{**classic_join().__dict__, "protocol_type": "connect"}))
    assert node.join().error == ErrorCode.GROUP_ID_NOT_FOUND  # online migration is for consumers only


def test_a_classic_join_to_a_consumer_group_with_members_joins_it_on_the_classic_protocol():
    node = Node()
    node.join()
    answer = node.call("join_group", classic_join())
    assert (answer.error, answer.generation_id, answer.leader) == (ErrorCode.NONE, 2, "")
    assert node.core.consumer.groups["g"].members[answer.member_id].classic is not None


def test_a_consumer_member_commits_at_its_member_epoch_only():
    node = Node()
    node.join(member="m")
    assert node.commit(member="m", epoch=1, offset=5) == ErrorCode.NONE
    assert node.commit(member="m", epoch=0) == ErrorCode.STALE_MEMBER_EPOCH
    assert node.commit(member="m", epoch=1, version=8) == ErrorCode.UNSUPPORTED_VERSION  # KIP-848: v9+
    assert node.commit(member="who", epoch=1) == ErrorCode.UNKNOWN_MEMBER_ID
    assert node.commit(member="", epoch=-1) == ErrorCode.UNKNOWN_MEMBER_ID  # a simple commit needs no members
    assert node.committed() == 5


def test_a_fetch_naming_a_member_is_checked_by_a_consumer_group_only():
    node = Node()
    node.join(member="m")
    node.call("join_group", classic_join("old"))
    assert node.fetch_error("m", 1) == ErrorCode.NONE
    assert node.fetch_error("m", 0) == ErrorCode.STALE_MEMBER_EPOCH
    assert node.fetch_error("who", 1) == ErrorCode.UNKNOWN_MEMBER_ID
    assert node.fetch_error("who", 1, group="old") == ErrorCode.NONE  # a classic group checks no member
    assert node.fetch_error("who", 1, group="nowhere") == ErrorCode.NONE


def test_list_groups_names_both_types_and_filters_by_type():
    node = Node()
    node.join(group="new")
    node.call("join_group", classic_join("old"))
    every = node.call("list_groups", (frozenset(), frozenset()))
    assert [(g.group_id, g.group_type) for g in every] == [("new", "consumer"), ("old", "classic")]
    consumer = node.call("list_groups", (frozenset(), frozenset({"Consumer"})))
    assert [g.group_id for g in consumer] == ["new"]


def test_a_consumer_group_is_deleted_only_empty_and_its_offsets_go_with_it():
    node = Node()
    node.join(member="m")
    node.commit(member="m", epoch=1, offset=5)
    assert node.call("delete_groups", ("g",))[0].error == ErrorCode.NON_EMPTY_GROUP
    node.call("consumer_group_heartbeat", ConsumerHeartbeat("g", "m", -1))
    assert node.call("delete_groups", ("g",))[0].error == ErrorCode.NONE
    assert node.committed() == -1 and "g" not in node.core.consumer.groups


def test_describe_groups_answers_a_consumer_group_as_kafka_4_and_trigger_bumps_its_epoch():
    node = Node()
    node.join(member="m")
    (described,) = node.call("describe_groups", ("g",))
    assert (described.error, described.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND,
                                                          "Group g is not a classic group.")
    assert node.call("trigger_rebalance", TriggerRebalance("g")).started
    assert node.core.consumer.groups["g"].group_epoch == 2


def test_a_loaded_consumer_group_resumes_as_stored_with_its_offsets():
    before = Node()
    before.join(member="m")
    before.commit(member="m", epoch=1, offset=7)
    document = [r for r in before.records if isinstance(r, GroupMetadataRecord)][-1]
    offsets = [r for r in before.records if not isinstance(r, GroupMetadataRecord)]
    after = Node()
    loaded = after.core.load([document, *offsets], 0, "takeover")
    (rewritten,) = loaded.records  # the document once more, naming this node
    assert rewritten.document.members == document.document.members
    member = after.core.consumer.groups["g"].members["m"]
    assert (member.member_epoch, member.assigned) == (1, assignment({ORDERS.topic_id: range(4)}))
    assert after.committed() == 7
    answer = after.call("consumer_group_heartbeat", ConsumerHeartbeat("g", "m", 1, owned=member.assigned))
    assert (answer.error, answer.member_epoch, answer.assignment) == (ErrorCode.NONE, 1, None)  # nothing moved
    after.core.unload(lambda group: True)
    assert after.core.consumer.groups == {} and after.committed() == -1


def test_a_group_this_node_does_not_serve_is_not_coordinator_for_the_consumer_apis_too():
    node = Node(placement=Placement(50))
    assert node.join().error == ErrorCode.NOT_COORDINATOR
    (described,) = node.call("describe_consumer_groups", ("g",))
    assert described.error == ErrorCode.NOT_COORDINATOR
