"""Hostile input: whatever bytes a client sends, the node answers them, or refuses them by closing
that one connection, and never fails with a traceback; it goes on serving everyone else.

The mutated frames are `tests/support/hostile_frames.py`'s (seeds of every served API and
version, mutated field by field and byte by byte); bench/wire_fuzz.py sends a million of them."""

from __future__ import annotations

import asyncio
import logging
import random
import uuid

import pytest
from kafka.protocol.admin import CreatePartitionsRequest
from kafka.protocol.admin.groups import DescribeGroupsRequest
from kafka.protocol.consumer.group import JoinGroupRequest, OffsetFetchRequest
from kafka.protocol.metadata import ApiVersionsRequest, FindCoordinatorRequest, MetadataRequest

from groupctl.protocol.validation import MAX_ELEMENTS, MAX_STRING_BYTES
from tests.support import fuzz_sender
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.hostile_frames import FrameFactory, Names
from tests.support.wire import connect, decode_response, exchange, read_frame

FRAMES = 3_000
LIMIT_S = 30.0  # the loop stops at whichever comes first; a healthy run takes a few seconds


@pytest.fixture
def node():
    """A node with the topics the seeds name."""
    started = InProcessCoordinator(node_config(topics=(("fuzz-t0", 3), ("fuzz-t1", 3)))).start()
    yield started
    started.stop()


def tracebacks(caplog) -> list[str]:
    """Errors logged, besides the refusals of unserved API keys and versions (logged at ERROR, as
    Kafka logs them)."""
    return [r.getMessage() for r in caplog.records
            if r.exc_info is not None
            or (r.levelno >= logging.ERROR and not r.getMessage().startswith("Closing socket for "))]


def closes(node, request, version: int) -> bool:
    """Whether the node closes the connection on `request` rather than answering it."""
    request.with_header(correlation_id=1, client_id="hostile")
    with connect(node) as sock:
        sock.sendall(bytes(request.encode(version=version, header=True, framed=True)))
        try:
            read_frame(sock)
        except ConnectionError:
            return True
    return False


def still_serves(node) -> bool:
    return (exchange(node, ApiVersionsRequest[3](client_software_name="t", client_software_version="1"), 3).error_code == 0
            and exchange(node, DescribeGroupsRequest[5](groups=["fuzz-g0"], include_authorized_operations=False),
                         5).groups[0].error_code == 0)


def test_mutated_frames_of_every_api_are_answered_or_refused_without_a_traceback(node, caplog):
    caplog.set_level(logging.INFO)
    factory = FrameFactory(random.Random(7), Names(), pool=400)
    tally = asyncio.run(fuzz_sender.send("127.0.0.1", node.port, factory, frames=FRAMES, seconds=LIMIT_S,
                                         connections=8))
    assert tally.sent >= FRAMES * 0.9, tally  # the node kept up
    assert tally.answered > 0 and tally.closed_by_node > 0
    assert tracebacks(caplog) == []
    assert still_serves(node)


def test_a_valid_request_of_every_served_api_and_version_is_answered(node, caplog):
    names = Names(groups=tuple(f"warm-{i}" for i in range(1000)))  # no JoinGroup waits for another's member
    factory = FrameFactory(random.Random(3), names, pool=0)
    asyncio.run(fuzz_sender.warm_up("127.0.0.1", node.port, factory.seeds_of_every_version()))
    assert tracebacks(caplog) == []
    assert not [r for r in caplog.records if "closing connection" in r.getMessage()]


def test_a_null_in_a_non_nullable_field_closes_the_connection_as_kafka_does(node, caplog):
    join = JoinGroupRequest[5](group_id=None, session_timeout_ms=10_000, rebalance_timeout_ms=10_000, member_id="",
                               group_instance_id=None, protocol_type="consumer", protocols=[])
    assert closes(node, join, 5)
    assert any("non-nullable field group_id is null" in r.getMessage() for r in caplog.records)
    assert tracebacks(caplog) == []
    assert still_serves(node)


def test_a_null_where_the_schema_allows_one_is_answered(node):
    join = JoinGroupRequest[5](group_id="fuzz-g0", session_timeout_ms=10_000, rebalance_timeout_ms=10_000,
                               member_id="", group_instance_id=None, protocol_type="consumer", protocols=[])
    assert not closes(node, join, 5)


def test_a_request_with_more_array_elements_than_the_limit_closes_the_connection(node, caplog):
    topic = OffsetFetchRequest.OffsetFetchRequestTopic(name="fuzz-t0", partition_indexes=list(range(MAX_ELEMENTS)))
    fetch = OffsetFetchRequest[7](group_id="fuzz-g0", topics=[topic], require_stable=False)
    assert closes(node, fetch, 7)  # one topic and MAX_ELEMENTS partitions: one element too many
    assert tracebacks(caplog) == []


def test_a_string_longer_than_kafkas_limit_closes_the_connection(node):
    join = JoinGroupRequest[6](group_id="g" * (MAX_STRING_BYTES + 1), session_timeout_ms=10_000,
                               rebalance_timeout_ms=10_000, member_id="", group_instance_id=None,
                               protocol_type="consumer", protocols=[])
    assert closes(node, join, 6)  # v6 is flexible: a compact string may claim any length


def test_an_error_message_quoting_a_name_of_kafkas_longest_length_is_cut_to_fit(node, caplog):
    topic = CreatePartitionsRequest.CreatePartitionsTopic(name="t" * MAX_STRING_BYTES, count=4, assignments=None)
    request = CreatePartitionsRequest[0](topics=[topic], timeout_ms=1000, validate_only=True)
    with connect(node) as sock:
        request.with_header(correlation_id=1, client_id="hostile")
        sock.sendall(bytes(request.encode(version=0, header=True, framed=True)))
        (result,) = decode_response(request, read_frame(sock), 0).results
    assert result.error_code == 3  # UNKNOWN_TOPIC_OR_PARTITION
    assert len(result.error_message.encode()) == MAX_STRING_BYTES and result.error_message.endswith("...")
    assert tracebacks(caplog) == []


def test_an_unknown_coordinator_type_is_invalid_request_as_in_kafka(node):
    response = exchange(node, FindCoordinatorRequest[4](key_type=7, coordinator_keys=["fuzz-g0"]), 4)
    assert [c.error_code for c in response.coordinators] == [42]


@pytest.mark.parametrize("topic", [dict(name=None, topic_id=None), dict(name="fuzz-t0", topic_id=uuid.uuid4())])
def test_metadata_v10_naming_a_topic_by_id_or_not_at_all_is_invalid_request_as_in_kafka(node, topic):
    response = exchange(node, MetadataRequest[10](topics=[MetadataRequest.MetadataRequestTopic(**topic)],
                                                 allow_auto_topic_creation=False,
                                                 include_cluster_authorized_operations=False,
                                                 include_topic_authorized_operations=False), 10)
    assert [t.error_code for t in response.topics] == [42]


def test_a_group_named_many_times_in_one_describe_is_described_once(node):
    response = exchange(node, DescribeGroupsRequest[5](groups=["fuzz-g0"] * 500 + ["fuzz-g1"],
                                                       include_authorized_operations=False), 5)
    assert [g.group_id for g in response.groups] == ["fuzz-g0", "fuzz-g1"]
