"""The ops client's interpreted codec frames and reads messages exactly as kafka-python's
compiled codec does (`groupctl.client.kafka.encode_request` / `decode_response`)."""

from __future__ import annotations

import struct

import pytest

import uuid

from groupctl.client import consumer_group_apis as consumer_apis
from groupctl.client import kafka_apis as apis
from groupctl.client.kafka import (
    API_VERSIONS,
    UNSUPPORTED_VERSION,
    ClusterMetadata,
    Node,
    decode_response,
    encode_request,
    message_classes,
)

NODE = Node(0, "127.0.0.1", 9092)
METADATA = ClusterMetadata({0: NODE}, {"t": {0: 0, 1: 0}}, frozenset())


def calls():
    yield apis.describe_groups_call(NODE, ["g", "h"])
    yield apis.list_groups_call(NODE, ["Stable"], ["consumer"])
    yield consumer_apis.consumer_group_describe_call(NODE, ["g", "h"])
    yield apis.offset_fetch_call(NODE, "g")
    yield apis.groupctl_document_call(NODE, "g", after_generation=3, max_wait_ms=100)


CASES = [(call, version) for call in calls() for version in range(call.versions[0], call.versions[1] + 1)]


@pytest.mark.parametrize(("call", "version"), CASES, ids=lambda c: getattr(c, "key", c))
def test_a_request_is_framed_byte_for_byte_as_kafka_python_frames_it(call, version):
    request = call.build(message_classes(call.key)[0][version], version)
    request.with_header(correlation_id=7, client_id="groupctl")
    assert encode_request(request, version) == bytes(request.encode(header=True, framed=True))


def sample_describe_groups(cls, version):
    group_cls = cls.DescribedGroup
    member_cls = group_cls.DescribedGroupMember
    member = member_cls(member_id="m-1", group_instance_id=None, client_id="c", client_host="/127.0.0.1",
                        member_metadata=b"\x00\x01", member_assignment=b"\x00\x00\x00\x00\x00\x01")
    return cls(throttle_time_ms=0, groups=[group_cls(error_code=0, group_id="g", group_state="Stable",
                                                     protocol_type="consumer", protocol_data="range",
                                                     members=[member])])


def sample_offset_fetch(cls, version):
    topic_cls = cls.OffsetFetchResponseTopic
    part_cls = topic_cls.OffsetFetchResponsePartition
    return cls(throttle_time_ms=0, error_code=0, topics=[topic_cls(name="t", partitions=[
        part_cls(partition_index=1, committed_offset=42, committed_leader_epoch=-1, metadata="", error_code=0)])])


def sample_consumer_group_describe(cls, version):
    member_cls = cls.DescribedGroup.Member
    block = member_cls.Assignment(topic_partitions=[member_cls.Assignment.TopicPartitions(
        topic_id=uuid.UUID(int=7), topic_name="t", partitions=[0, 2])])
    member = member_cls(member_id="m-1", instance_id=None, rack_id=None, member_epoch=3, client_id="c",
                        client_host="/127.0.0.1", subscribed_topic_names=["t"], subscribed_topic_regex=None,
                        assignment=block, target_assignment=block, member_type=1)
    return cls(throttle_time_ms=0, groups=[cls.DescribedGroup(
        error_code=0, error_message=None, group_id="g", group_state="Stable", group_epoch=3, assignment_epoch=3,
        assignor_name="uniform", members=[member], authorized_operations=-2**31)])


@pytest.mark.parametrize("version", range(0, 2))
def test_a_consumer_group_describe_response_decodes_as_its_compiled_codec_decodes_it(version):
    check_response(consumer_apis.CONSUMER_GROUP_DESCRIBE, version, sample_consumer_group_describe)


@pytest.mark.parametrize("version", range(0, 7))
def test_a_describe_groups_response_decodes_as_kafka_python_decodes_it(version):
    check_response(15, version, sample_describe_groups)


@pytest.mark.parametrize("version", range(2, 8))
def test_an_offset_fetch_response_decodes_as_kafka_python_decodes_it(version):
    check_response(9, version, sample_offset_fetch)


def check_response(key, version, sample):
    cls = message_classes(key)[1]
    response = sample(cls, version)
    response.API_VERSION = version
    response.with_header(correlation_id=7)
    frame = bytes(response.encode(header=True))
    correlation_id, decoded = decode_response(cls[version], frame, version)
    assert (correlation_id, decoded) == (7, cls.decode(frame, version=version, header=True))


def test_an_api_versions_error_is_read_as_a_v0_body_whatever_the_version_asked():
    cls = message_classes(API_VERSIONS)[1]
    body = struct.pack(">ihi", 7, UNSUPPORTED_VERSION, 1) + struct.pack(">hhh", API_VERSIONS, 0, 3)
    correlation_id, response = decode_response(cls[4], body, 4)
    assert (correlation_id, response.error_code) == (7, UNSUPPORTED_VERSION)
    assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [(API_VERSIONS, 0, 3)]


def test_a_truncated_response_raises_instead_of_decoding_garbage():
    cls = message_classes(9)[1]
    response = sample_offset_fetch(cls, 7)
    response.API_VERSION = 7
    response.with_header(correlation_id=7)
    frame = bytes(response.encode(header=True))
    with pytest.raises(Exception):
        decode_response(cls[7], frame[:-5], 7)
