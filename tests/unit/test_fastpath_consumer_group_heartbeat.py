"""The hand-written ConsumerGroupHeartbeat (KIP-848) codec is kafka-python's codec, only faster:
- a request kafka-python encodes (random strings including any Unicode, nulls, uuids including
  the zero uuid, owned partitions, v0 and v1) decodes to what kafka-python decodes;
- a response without an assignment encodes to kafka-python's bytes exactly, and one with an
  assignment is left to kafka-python;
- every truncation of a request is malformed (the connection closes)."""

from __future__ import annotations

import struct
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groupctl.protocol import fastpath
from groupctl.protocol.consumer_group import ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse

TEXT = st.text(max_size=12)
NULLABLE = st.none() | TEXT
INT32 = st.integers(-(2**31), 2**31 - 1)
UUIDS = st.sampled_from([uuid.UUID(int=0)]) | st.uuids()


@st.composite
def requests(draw):
    version = draw(st.sampled_from([0, 1]))
    cls = ConsumerGroupHeartbeatRequest[version]
    owned = draw(st.none() | st.lists(st.builds(
        lambda topic_id, partitions: cls.TopicPartitions(topic_id=topic_id, partitions=partitions),
        UUIDS, st.lists(INT32, max_size=6)), max_size=4))
    fields = dict(group_id=draw(TEXT), member_id=draw(TEXT), member_epoch=draw(INT32), instance_id=draw(NULLABLE),
                  rack_id=draw(NULLABLE), rebalance_timeout_ms=draw(INT32),
                  subscribed_topic_names=draw(st.none() | st.lists(TEXT, max_size=4)),
                  server_assignor=draw(NULLABLE), topic_partitions=owned)
    if version >= 1:
        fields["subscribed_topic_regex"] = draw(NULLABLE)
    request = cls(**fields)
    request.with_header(correlation_id=draw(INT32), client_id=draw(NULLABLE))
    return version, bytes(request.encode(version=version, header=True, framed=False))


def normal(topic_id):
    return None if topic_id is None or topic_id == uuid.UUID(int=0) else topic_id


@settings(max_examples=400, deadline=None)
@given(requests())
def test_a_request_decodes_to_what_kafka_python_decodes(request):
    version, frame = request
    client_id, fast = fastpath.decode_consumer_group_heartbeat_request(frame, version)
    slow = ConsumerGroupHeartbeatRequest[version].decode(frame, version=version, header=True)
    assert client_id == slow.header.client_id
    for name in ("group_id", "member_id", "member_epoch", "instance_id", "rack_id", "rebalance_timeout_ms",
                 "subscribed_topic_names", "server_assignor"):
        assert getattr(fast, name) == getattr(slow, name), name
    assert fast.subscribed_topic_regex == (slow.subscribed_topic_regex if version >= 1 else None)
    if slow.topic_partitions is None:
        assert fast.topic_partitions is None
    else:
        assert [(normal(t.topic_id), t.partitions) for t in fast.topic_partitions] == [
            (normal(t.topic_id), t.partitions) for t in slow.topic_partitions]


@settings(max_examples=200, deadline=None)
@given(version=st.sampled_from([0, 1]), correlation_id=INT32, error=st.integers(0, 200), message=NULLABLE,
       member_id=NULLABLE, epoch=INT32, interval=INT32)
def test_a_response_without_an_assignment_encodes_to_kafka_pythons_bytes(version, correlation_id, error, message,
                                                                         member_id, epoch, interval):
    response = ConsumerGroupHeartbeatResponse[version](
        throttle_time_ms=0, error_code=error, error_message=message, member_id=member_id, member_epoch=epoch,
        heartbeat_interval_ms=interval, assignment=None)
    expected = ConsumerGroupHeartbeatResponse[version](
        throttle_time_ms=0, error_code=error, error_message=message, member_id=member_id, member_epoch=epoch,
        heartbeat_interval_ms=interval, assignment=None)
    expected.with_header(correlation_id=correlation_id)
    assert fastpath.encode_response(response, correlation_id) == bytes(expected.encode(header=True, framed=True))


def test_a_response_with_an_assignment_is_left_to_kafka_python():
    cls = ConsumerGroupHeartbeatResponse[1]
    response = cls(throttle_time_ms=0, error_code=0, error_message=None, member_id="m", member_epoch=1,
                   heartbeat_interval_ms=5000, assignment=cls.Assignment(topic_partitions=[]))
    assert fastpath.encode_response(response, 1) is None


@settings(max_examples=100, deadline=None)
@given(requests(), st.data())
def test_every_truncated_request_is_malformed(request, data):
    version, frame = request
    cut = data.draw(st.integers(0, len(frame) - 1))
    with pytest.raises((ValueError, IndexError, struct.error)):  # framing makes them a FrameError
        fastpath.decode_consumer_group_heartbeat_request(frame[:cut], version)
