"""The consumer group protocol's messages (KIP-848, keys 68 and 69): the bytes a Kafka 4 client
sends decode to the fields it meant, and every version round-trips byte for byte."""

from __future__ import annotations

import uuid

import pytest

from groupctl.protocol.schemas import request_class, response_class

HEARTBEAT, DESCRIBE = 68, 69
TOPIC_ID = uuid.UUID("6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b")

# The join heartbeat confluent-kafka 2.16 (librdkafka 2.16.0) sends, as captured on the wire
# (a client-made 22-character member id, epoch 0, max.poll.interval.ms, "" for no regex),
# encoded by hand from the protocol's rules (flexible version: compact strings and
# arrays are length + 1, null is 0; the body ends with an empty tagged-field section).
JOIN_HEARTBEAT_V1 = bytes.fromhex(
    "02" "67"                                        # GroupId "g"
    "17" + "61" * 22 +                               # MemberId: 22 client-made characters
    "00000000"                                       # MemberEpoch 0: join
    "00" "00"                                        # InstanceId, RackId: null
    "000493e0"                                       # RebalanceTimeoutMs 300000
    "02" "02" "74"                                   # SubscribedTopicNames ["t"]
    "01"                                             # SubscribedTopicRegex "" (not null)
    "00"                                             # ServerAssignor: null
    "01"                                             # TopicPartitions []
    "00")                                            # no tagged fields


def round_trip(message, version: int) -> bytes:
    encoded = bytes(message.encode(version=version))
    decoded = type(message).decode(encoded, version=version)
    assert bytes(decoded.encode()) == encoded  # a decoded message keeps its class's version
    return encoded


def test_the_join_heartbeat_librdkafka_sends_decodes_to_what_it_means():
    request = request_class(HEARTBEAT)[1].decode(JOIN_HEARTBEAT_V1, version=1)
    assert (request.group_id, request.member_id, request.member_epoch) == ("g", "a" * 22, 0)
    assert (request.instance_id, request.rack_id, request.server_assignor) == (None, None, None)
    assert request.rebalance_timeout_ms == 300_000
    assert request.subscribed_topic_names == ["t"]
    assert request.subscribed_topic_regex == ""
    assert request.topic_partitions == []
    assert bytes(request.encode()) == JOIN_HEARTBEAT_V1


@pytest.mark.parametrize("version", [0, 1])
def test_a_heartbeat_that_changes_nothing_sends_nulls_and_round_trips(version):
    fields = dict(group_id="g", member_id="m", member_epoch=7, instance_id=None, rack_id=None,
                  rebalance_timeout_ms=-1, subscribed_topic_names=None, server_assignor=None,
                  topic_partitions=None)
    if version >= 1:
        fields["subscribed_topic_regex"] = None
    request = request_class(HEARTBEAT)[version](**fields)
    decoded = type(request).decode(round_trip(request, version), version=version)
    assert decoded.subscribed_topic_names is None and decoded.topic_partitions is None


def test_the_regex_exists_from_version_1_only():
    request = request_class(HEARTBEAT)[0](
        group_id="g", member_id="m", member_epoch=0, instance_id=None, rack_id=None, rebalance_timeout_ms=1,
        subscribed_topic_names=[], server_assignor="uniform", topic_partitions=[])
    version_0 = round_trip(request, 0)
    version_1 = bytes(request_class(HEARTBEAT)[1](**{**request.to_dict(), "subscribed_topic_regex": None}).encode())
    assert len(version_1) == len(version_0) + 1  # the null regex: one byte, after the topic names


def test_an_acknowledged_assignment_carries_topic_ids():
    cls = request_class(HEARTBEAT)[1]
    request = cls(group_id="g", member_id="m", member_epoch=3, instance_id="i-1", rack_id="r", rebalance_timeout_ms=-1,
                  subscribed_topic_names=None, subscribed_topic_regex=None, server_assignor=None,
                  topic_partitions=[cls.TopicPartitions(topic_id=TOPIC_ID, partitions=[0, 2])])
    decoded = cls.decode(round_trip(request, 1), version=1)
    assert decoded.topic_partitions[0].topic_id == TOPIC_ID
    assert decoded.topic_partitions[0].partitions == [0, 2]


@pytest.mark.parametrize("version", [0, 1])
def test_a_heartbeat_response_without_an_assignment_is_a_null_struct_and_with_one_a_present_struct(version):
    cls = response_class(HEARTBEAT)[version]
    assignment = cls.Assignment(topic_partitions=[cls.Assignment.TopicPartitions(topic_id=TOPIC_ID, partitions=[1])])
    unchanged = cls(throttle_time_ms=0, error_code=0, error_message=None, member_id="m", member_epoch=3,
                    heartbeat_interval_ms=5000, assignment=None)
    changed = cls(throttle_time_ms=0, error_code=0, error_message=None, member_id="m", member_epoch=3,
                  heartbeat_interval_ms=5000, assignment=assignment)
    assert round_trip(unchanged, version).endswith(b"\xff\x00")  # int8 -1: null, then no tagged fields
    encoded = round_trip(changed, version)
    assert encoded[len(round_trip(unchanged, version)) - 2] == 1  # int8 1: present
    assert cls.decode(encoded, version=version).assignment.topic_partitions[0].topic_id == TOPIC_ID


@pytest.mark.parametrize("version", [0, 1])
def test_describe_round_trips_and_names_the_member_type_from_version_1(version):
    request = request_class(DESCRIBE)[version](group_ids=["a", "b"], include_authorized_operations=False)
    round_trip(request, version)
    cls = response_class(DESCRIBE)[version]
    group_cls = cls.DescribedGroup
    member_cls = group_cls.Member
    topics = [member_cls.Assignment.TopicPartitions(topic_id=TOPIC_ID, topic_name="t", partitions=[0, 1])]
    member = dict(member_id="m", instance_id=None, rack_id=None, member_epoch=4, client_id="c", client_host="/127.0.0.1",
                  subscribed_topic_names=["t"], subscribed_topic_regex=None,
                  assignment=member_cls.Assignment(topic_partitions=topics),
                  target_assignment=member_cls.Assignment(topic_partitions=topics))
    if version >= 1:
        member["member_type"] = 1
    group = group_cls(error_code=0, error_message=None, group_id="a", group_state="Stable", group_epoch=4,
                      assignment_epoch=4, assignor_name="uniform", members=[member_cls(**member)],
                      authorized_operations=-2**31)
    response = cls(throttle_time_ms=0, groups=[group])
    decoded = cls.decode(round_trip(response, version), version=version)
    described = decoded.groups[0].members[0]
    assert described.target_assignment.topic_partitions[0].topic_name == "t"
    if version >= 1:
        assert described.member_type == 1
