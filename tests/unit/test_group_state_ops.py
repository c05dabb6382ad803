"""What the tools learn of a group's state and members, for both group types, pure: DescribeGroups
and (where the coordinator serves it) ConsumerGroupDescribe are asked together, and a KIP-848
consumer group — which Apache Kafka 4, and groupctl, describe through DescribeGroups as Dead (v0-5)
or GROUP_ID_NOT_FOUND "not a classic group" (v6) — takes its state, members and assignments from
ConsumerGroupDescribe. The offsets safety checks, group delete's refusal and `lag record` read
that, so a live consumer group is never mistaken for a dead one."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from groupctl.client import consumer_group_apis as consumer_apis
from groupctl.client import kafka_apis as apis
from groupctl.client.kafka import ConnectionFailed, Node, message_classes
from groupctl.coordinator import consumer_protocol
from groupctl.errors import NotFound, OpsError, Refused
from groupctl.ops import lag_record
from groupctl.ops.groups import check_group_exists
from groupctl.ops.offsets import check_inactive

NODE = Node(0, "127.0.0.1", 9092)
DESCRIBE_GROUPS = message_classes(15)[1]
CONSUMER_GROUP_DESCRIBE = message_classes(consumer_apis.CONSUMER_GROUP_DESCRIBE)[1]
OFFSET_FETCH = message_classes(9)[1]


def wire(cls, version: int, response):
    """`response` as it crosses the wire: encoded at `version` and decoded back."""
    return cls[version].decode(bytes(response.encode(version=version)), version=version)


def describe_groups(version: int, *groups) -> Any:
    return wire(DESCRIBE_GROUPS, version, DESCRIBE_GROUPS[version](throttle_time_ms=0, groups=list(groups)))


def classic_group(group: str, state: str = "Stable", members=(), error_code: int = 0, error_message=None):
    return DESCRIBE_GROUPS.DescribedGroup(error_code=error_code, error_message=error_message, group_id=group,
                                          group_state=state, protocol_type="consumer" if state else "",
                                          protocol_data="range" if members else "", members=list(members))


def classic_member(member_id: str, client_id: str, assignment: dict):
    member = DESCRIBE_GROUPS.DescribedGroup.DescribedGroupMember
    return member(member_id=member_id, group_instance_id=None, client_id=client_id, client_host="/10.0.0.1",
                  member_metadata=b"", member_assignment=consumer_protocol.encode_assignment(assignment, 0))


def not_a_classic_group(group: str, version: int):
    """How Apache Kafka 4 answers DescribeGroups for a consumer group."""
    if version >= 6:
        return classic_group(group, "", error_code=apis.GROUP_ID_NOT_FOUND,
                             error_message=f"Group {group} is not a classic group.")
    return classic_group(group, "Dead")


def consumer_group_describe(*groups) -> Any:
    return wire(CONSUMER_GROUP_DESCRIBE, 1, CONSUMER_GROUP_DESCRIBE[1](throttle_time_ms=0, groups=list(groups)))


def consumer_group(group: str, state: str = "Stable", members=(), error_code: int = 0):
    return CONSUMER_GROUP_DESCRIBE.DescribedGroup(
        error_code=error_code, error_message=None if not error_code else f"Group {group} is not a consumer group.",
        group_id=group, group_state=state if not error_code else "", group_epoch=4, assignment_epoch=4,
        assignor_name="uniform" if not error_code else "", members=list(members), authorized_operations=-2**31)


def consumer_member(member_id: str, client_id: str, owned: dict, target: dict | None = None, instance_id=None):
    member = CONSUMER_GROUP_DESCRIBE.DescribedGroup.Member

    def block(partitions: dict):
        return member.Assignment(topic_partitions=[member.Assignment.TopicPartitions(
            topic_id=uuid.uuid4(), topic_name=name, partitions=ps) for name, ps in partitions.items()])

    return member(member_id=member_id, instance_id=instance_id, rack_id=None, member_epoch=4, client_id=client_id,
                  client_host="/10.0.0.2", subscribed_topic_names=sorted(owned), subscribed_topic_regex=None,
                  assignment=block(owned), target_assignment=block(owned if target is None else target),
                  member_type=1)


LIVE = consumer_group("readers", "Reconciling", [
    consumer_member("m-a", "pay-1", {"events": [2, 0]}, {"events": [0]}, instance_id="i-1"),
    consumer_member("m-b", "pay-2", {}, {"events": [1, 2]})])


class FakeClient:
    """`group_state_calls` asks the client only whether the coordinator serves API 69."""

    def __init__(self, serves: set[int]) -> None:
        self.serves = serves

    def supports(self, node, key: int) -> bool:
        return key in self.serves


# -- which calls ---------------------------------------------------------------------------------


def test_consumer_group_describe_is_asked_beside_describe_groups_only_of_a_coordinator_that_serves_it():
    both = consumer_apis.group_state_calls(FakeClient({15, 69}), NODE, ["readers", "orders"])
    assert [(c.key, c.node) for c in both] == [(15, NODE), (69, NODE)]
    [alone] = consumer_apis.group_state_calls(FakeClient({15}), NODE, ["readers"])
    assert alone.key == 15


# -- reading the answers -------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 5, 6])
def test_a_live_consumer_group_takes_its_state_members_and_assignments_from_consumer_group_describe(version):
    [info] = consumer_apis.parse_group_states([describe_groups(version, not_a_classic_group("readers", version)),
                                               consumer_group_describe(LIVE)])
    assert (info.group, info.exists, info.state, info.group_type) == ("readers", True, "Reconciling", "consumer")
    assert (info.protocol_type, info.protocol) == ("consumer", "uniform")
    a, b = info.members
    assert (a.member_id, a.client_id, a.client_host, a.group_instance_id) == ("m-a", "pay-1", "/10.0.0.2", "i-1")
    assert a.assignment == {"events": (0, 2)}  # what it owns now, revoking included, not its target
    assert (b.member_id, b.assignment) == ("m-b", {})


def test_a_classic_group_beside_a_consumer_group_is_as_describe_groups_describes_it():
    classic = classic_group("orders", members=[classic_member("c-1", "app-1", {"orders": [0, 1]})])
    answers = [describe_groups(6, not_a_classic_group("readers", 6), classic, classic_group("ghost", "Dead")),
               consumer_group_describe(LIVE, consumer_group("orders", error_code=69),
                                       consumer_group("ghost", error_code=69))]
    readers, orders, ghost = consumer_apis.parse_group_states(answers)
    assert (readers.group_type, readers.state, len(readers.members)) == ("consumer", "Reconciling", 2)
    assert (orders.group_type, orders.state, orders.protocol) == ("classic", "Stable", "range")
    assert [(m.client_id, m.assignment) for m in orders.members] == [("app-1", {"orders": (0, 1)})]
    assert (ghost.exists, ghost.state) == (False, "Dead")


def test_without_consumer_group_describe_describe_groups_alone_answers_as_before():
    classic = classic_group("orders", members=[classic_member("c-1", "app-1", {"orders": [0]})])
    [info] = consumer_apis.parse_group_states([describe_groups(5, classic)])
    assert info == apis.parse_describe_groups(describe_groups(5, classic))[0]
    assert info.group_type == "classic"


def test_describe_groups_errors_still_count_for_a_group_consumer_group_describe_does_not_describe():
    refused = classic_group("orders", "", error_code=30)  # GROUP_AUTHORIZATION_FAILED
    with pytest.raises(OpsError, match="DescribeGroups for group 'orders' failed: GROUP_AUTHORIZATION_FAILED"):
        consumer_apis.parse_group_states([describe_groups(6, refused),
                                          consumer_group_describe(consumer_group("orders", error_code=30))])
    moved = consumer_group("readers", error_code=16)  # NOT_COORDINATOR
    with pytest.raises(apis.CoordinatorMoved):
        consumer_apis.parse_group_states([describe_groups(6, not_a_classic_group("readers", 6)),
                                          consumer_group_describe(moved)])


# -- the checks that read them -------------------------------------------------------------------


def states(consumer, version: int = 6):
    [info] = consumer_apis.parse_group_states([describe_groups(version, not_a_classic_group(consumer.group_id,
                                                                                             version)),
                                               consumer_group_describe(consumer)])
    return info


@pytest.mark.parametrize("version", [5, 6])
def test_offsets_of_a_live_consumer_group_are_refused_naming_its_state_and_members(version):
    with pytest.raises(Refused, match=r"^group 'readers' is Reconciling with 2 member\(s\); offsets can only be "
                                      r"changed while the group is inactive \(Empty\)$"):
        check_inactive("readers", states(LIVE, version))


def test_an_empty_consumer_group_exists_and_its_offsets_may_be_changed():
    info = states(consumer_group("readers", "Empty"))
    check_inactive("readers", info)
    check_group_exists("readers", info, {})  # no committed offsets needed: the coordinator knows it


def test_a_group_neither_api_describes_and_without_offsets_does_not_exist():
    [info] = consumer_apis.parse_group_states([describe_groups(6, classic_group("nope", "", error_code=69)),
                                               consumer_group_describe(consumer_group("nope", error_code=69))])
    check_inactive("nope", info)
    with pytest.raises(NotFound, match="group 'nope' does not exist"):
        check_group_exists("nope", info, {})


# -- lag record ----------------------------------------------------------------------------------


def offset_fetch(committed: dict[int, int]):
    topic = OFFSET_FETCH.OffsetFetchResponseTopic
    part = topic.OffsetFetchResponsePartition
    return wire(OFFSET_FETCH, 7, OFFSET_FETCH[7](throttle_time_ms=0, error_code=0, topics=[topic(
        name="events", partitions=[part(partition_index=p, committed_offset=o, committed_leader_epoch=-1, metadata="",
                                        error_code=0) for p, o in committed.items()])]))


def test_a_lag_sample_of_a_live_consumer_group_has_its_state_member_count_and_owners():
    described = [describe_groups(6, not_a_classic_group("readers", 6)), consumer_group_describe(LIVE)]
    snapshot = lag_record._snapshot("readers", 1000, described, offset_fetch({1: 5}))
    assert (snapshot.state, snapshot.members) == ("Reconciling", 2)
    assert snapshot.owners == {("events", 0): "pay-1", ("events", 2): "pay-1"}
    assert snapshot.partitions() == [("events", 0), ("events", 1), ("events", 2)]


def test_a_lag_sample_of_a_classic_group_from_a_broker_without_consumer_groups_is_unchanged():
    classic = classic_group("orders", members=[classic_member("c-1", "app-1", {"events": [0]})])
    snapshot = lag_record._snapshot("orders", 1000, [describe_groups(4, classic)], offset_fetch({}))
    assert (snapshot.state, snapshot.members, snapshot.owners) == ("Stable", 1, {("events", 0): "app-1"})


def group_of(call) -> str:
    """The one group a DescribeGroups, ConsumerGroupDescribe or OffsetFetch call asks about."""
    request = call.build(message_classes(call.key)[0][call.versions[1]], call.versions[1])
    return {15: lambda: request.groups[0], 69: lambda: request.group_ids[0], 9: lambda: request.group_id}[call.key]()


class SamplingClient(FakeClient):
    """Node 0 serves both describe APIs; node 1 cannot be reached (not even for ApiVersions)."""

    DOWN = Node(1, "127.0.0.1", 9093)

    def __init__(self, answers: dict[tuple[int, str], Any]) -> None:
        super().__init__({15, 69})
        self.answers, self.exchanges, self.probes = answers, [], []

    def supports(self, node, key: int) -> bool:
        self.probes.append(node.node_id)
        if node == self.DOWN:
            raise ConnectionFailed(f"cannot reach node 1 ({node.address}) within 8s: connection refused", node)
        return super().supports(node, key)

    def call_many(self, calls):
        self.exchanges.append([(c.key, group_of(c)) for c in calls])
        return [self.answers[(c.key, group_of(c))] for c in calls]


def test_a_lag_round_asks_both_describe_apis_and_offsets_in_one_exchange_and_skips_an_unreachable_coordinator():
    classic = classic_group("orders", members=[classic_member("c-1", "app-1", {"events": [1]})])
    client = SamplingClient({
        (15, "orders"): describe_groups(6, classic),
        (69, "orders"): consumer_group_describe(consumer_group("orders", error_code=69)),
        (9, "orders"): offset_fetch({1: 3}),
        (15, "readers"): describe_groups(6, not_a_classic_group("readers", 6)),
        (69, "readers"): consumer_group_describe(LIVE),
        (9, "readers"): offset_fetch({}),
    })
    sampler = lag_record.LagSampler("127.0.0.1:9092", "c", ["orders", "readers", "x", "y"], wall_ms=lambda: 7)
    sampler._coordinators.update(orders=NODE, readers=NODE, x=SamplingClient.DOWN, y=SamplingClient.DOWN)

    snapshots, problems = sampler._snapshots(client, dict(sampler._coordinators))

    assert client.exchanges == [[(15, "orders"), (69, "orders"), (9, "orders"),
                                 (15, "readers"), (69, "readers"), (9, "readers")]]
    assert client.probes == [0, 0, 1]  # the unreachable node is tried once per round, not per group
    assert [(s.group, s.state, s.members, dict(s.owners)) for s in snapshots] == [
        ("orders", "Stable", 1, {("events", 1): "app-1"}),
        ("readers", "Reconciling", 2, {("events", 0): "pay-1", ("events", 2): "pay-1"})]
    assert [(p.group, p.message) for p in problems] == [
        ("x", "cannot reach node 1 (127.0.0.1:9093) within 8s: connection refused"),
        ("y", "cannot reach node 1 (127.0.0.1:9093) within 8s: connection refused")]
    assert sorted(sampler._coordinators) == ["orders", "readers"]  # found again next round
