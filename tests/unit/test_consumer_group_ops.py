"""The operator tools on KIP-848 consumer groups, pure: a ConsumerGroupDescribe answer becomes the
tools' description, ListGroups tells each group's type, and the watches report a consumer group's
epochs (each new group epoch, and the group becoming Stable at it) from a stream of
ConsumerGroupDocuments."""

from __future__ import annotations

import uuid

import pytest
from kafka.protocol.admin.groups import ListGroupsResponse

from groupctl.client.consumer_group_apis import parse_consumer_group_describe
from groupctl.client.kafka import Node
from groupctl.client.kafka_apis import CoordinatorMoved, parse_list_groups
from groupctl.errors import Unsupported
from groupctl.ops.documents import StoredDocument, milestone, milestones, settled
from groupctl.ops.rebalance import events
from groupctl.protocol.consumer_group import ConsumerGroupDescribeResponse
from tests.support.consumer_documents import EVENTS_ID, consumer_document, consumer_member


NODE = Node(3, "b", 9092)


def stored(document) -> StoredDocument:
    return StoredDocument(document, document.to_json())


ALONE = consumer_member("a-1", [0, 1, 2, 3], [0, 1, 2, 3], epoch=1)
REVOKING = consumer_member("a-1", [0, 1], [0, 1], epoch=2, revoking=[2, 3])
JOINING = consumer_member("b-1", [], [2, 3], epoch=2)
KEPT = consumer_member("a-1", [0, 1], [0, 1], epoch=2)
TOOK_OVER = consumer_member("b-1", [2, 3], [2, 3], epoch=2)

STABLE_1 = consumer_document(1, "Stable", ALONE)
RECONCILING_2 = consumer_document(2, "Reconciling", REVOKING, JOINING)
REVOKED_2 = consumer_document(2, "Reconciling", KEPT, JOINING)
STABLE_2 = consumer_document(2, "Stable", KEPT, TOOK_OVER)


# -- milestones --------------------------------------------------------------------------------


def test_a_consumer_group_is_settled_when_stable_or_empty_and_not_while_it_reconciles():
    assert settled(STABLE_1) and settled(consumer_document(3, "Empty"))
    assert not settled(RECONCILING_2) and not settled(consumer_document(2, "Assigning", KEPT))
    assert milestone(RECONCILING_2) == (2, False) and milestone(STABLE_2) == (2, True)


def test_the_watches_report_each_new_epoch_and_the_group_becoming_stable_at_it_but_no_step_between():
    written = [STABLE_1, RECONCILING_2, REVOKED_2, STABLE_2, STABLE_2]
    reported = [s.document for s in milestones(stored(d) for d in written)]
    assert reported == [STABLE_1, RECONCILING_2, STABLE_2]


def test_a_deleted_consumer_group_is_reported_once_and_its_next_document_is_new():
    reported = list(milestones([stored(STABLE_1), None, None, stored(STABLE_1)]))
    assert [s.document if s is not None else None for s in reported] == [STABLE_1, None, STABLE_1]


def test_a_consumer_groups_events_carry_its_type_epochs_and_the_partitions_the_reconciliation_moved():
    moving, settling = events(iter([stored(STABLE_1), stored(RECONCILING_2), stored(STABLE_2)]))

    assert (moving.group_type, moving.generation, moving.previous_generation, moving.state) == (
        "consumer", 2, 1, "Reconciling")
    assert moving.assignment_epoch == 2 and moving.reason is None and moving.duration_ms is None
    assert [m.member_id for m in moving.members_joined] == ["b-1"] and moving.partitions_moved == ()
    assert (settling.generation, settling.previous_generation, settling.state) == (2, 2, "Stable")
    assert [(p.partition, p.from_member, p.to_member) for p in settling.partitions_moved] == [
        (2, "a-1", "b-1"), (3, "a-1", "b-1")]
    as_json = settling.to_json()
    assert (as_json["group_type"], as_json["generation"], as_json["assignment_epoch"]) == ("consumer", 2, 2)


# -- ConsumerGroupDescribe ----------------------------------------------------------------------


def describe_response(version: int, *groups) -> ConsumerGroupDescribeResponse:
    """The answer as it crosses the wire: encoded at `version` and decoded back."""
    response = ConsumerGroupDescribeResponse[version](throttle_time_ms=0, groups=list(groups))
    return ConsumerGroupDescribeResponse[version].decode(bytes(response.encode(version=version)), version=version)


def described_group(**fields):
    cls = ConsumerGroupDescribeResponse[1].DescribedGroup
    defaults = dict(error_code=0, error_message=None, group_id="readers", group_state="Reconciling", group_epoch=2,
                    assignment_epoch=2, assignor_name="uniform", members=[], authorized_operations=-2**31)
    return cls(**{**defaults, **fields})


def described_member(member_id: str, epoch: int, assigned: dict, target: dict, instance_id=None, member_type=1):
    member = ConsumerGroupDescribeResponse[1].DescribedGroup.Member
    topics = member.Assignment.TopicPartitions

    def block(partitions: dict):
        return member.Assignment(topic_partitions=[
            topics(topic_id=uuid.UUID(EVENTS_ID) if name == "events" else uuid.uuid4(), topic_name=name,
                   partitions=ps) for name, ps in partitions.items()])

    return member(member_id=member_id, instance_id=instance_id, rack_id=None, member_epoch=epoch, client_id="c",
                  client_host="/127.0.0.1", subscribed_topic_names=["events"], subscribed_topic_regex=None,
                  assignment=block(assigned), target_assignment=block(target), member_type=member_type)


def test_a_consumer_group_describe_answer_gives_epochs_assignor_and_each_members_current_and_target_partitions():
    answer = describe_response(1, described_group(members=[
        described_member("a-1", 2, {"events": [3, 0, 1, 2]}, {"events": [0, 1]}, instance_id="i-a"),
        described_member("b-1", 1, {}, {"events": [2, 3], "audit": [0]})]))

    [info] = parse_consumer_group_describe(answer)

    assert (info.group, info.state, info.group_epoch, info.assignment_epoch, info.assignor) == (
        "readers", "Reconciling", 2, 2, "uniform")
    a, b = info.members
    assert (a.member_id, a.instance_id, a.member_epoch) == ("a-1", "i-a", 2)
    assert a.assignment == {"events": (0, 1, 2, 3)} and a.target_assignment == {"events": (0, 1)}
    assert b.assignment == {} and b.target_assignment == {"audit": (0,), "events": (2, 3)}


def test_a_members_type_tells_a_classic_member_of_a_migrating_group_from_an_upgraded_one_from_version_1():
    members = [described_member("a-1", 2, {}, {}), described_member("k-1", 2, {}, {}, member_type=0)]
    [v1] = parse_consumer_group_describe(describe_response(1, described_group(members=members)))
    [v0] = parse_consumer_group_describe(describe_response(0, described_group(members=members)))
    assert [m.upgraded for m in v1.members] == [True, False]
    assert [m.upgraded for m in v0.members] == [None, None]


def test_a_group_the_coordinator_does_not_describe_as_a_consumer_group_parses_as_none():
    not_consumer = described_group(error_code=69, error_message="Group readers is not a consumer group.",
                                   group_state="", group_epoch=0, assignment_epoch=0, assignor_name="")
    assert parse_consumer_group_describe(describe_response(0, not_consumer)) == [None]


def test_a_coordinator_that_no_longer_coordinates_the_group_sends_the_describe_to_the_new_one():
    moved = described_group(error_code=16, group_state="", group_epoch=0, assignment_epoch=0, assignor_name="")
    with pytest.raises(CoordinatorMoved, match="NOT_COORDINATOR"):
        parse_consumer_group_describe(describe_response(1, moved))


# -- ListGroups ---------------------------------------------------------------------------------


def list_groups_response(version: int):
    cls = ListGroupsResponse[version]
    group = cls.ListedGroup(group_id="readers", protocol_type="consumer", group_state="Stable", group_type="consumer")
    response = cls(throttle_time_ms=0, error_code=0, groups=[group])
    return cls.decode(bytes(response.encode(version=version)), version=version)


def test_list_groups_tells_each_groups_type_from_version_5_and_none_before():
    [v5] = parse_list_groups(list_groups_response(5), NODE, ["consumer"])
    [v4] = parse_list_groups(list_groups_response(4), NODE)
    assert (v5.group, v5.state, v5.group_type) == ("readers", "Stable", "consumer")
    assert (v4.state, v4.group_type) == ("Stable", None)


def test_a_broker_before_list_groups_version_5_cannot_filter_by_type_and_says_so():
    with pytest.raises(Unsupported, match=r"node 3 \(b:9092\) cannot list groups by type \(it serves ListGroups "
                                          r"up to v4; types need v5\)"):
        parse_list_groups(list_groups_response(4), NODE, ["consumer"])
