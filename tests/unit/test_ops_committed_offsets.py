"""The committed offsets the ops layer reads from OffsetFetch carry the leader epoch committed
with each offset, from a one-group answer (v5+) and from a batched one (v8+) alike, decoded from
the bytes a coordinator sends (`kafka_apis.CommittedOffsets`)."""

from __future__ import annotations

import pytest

from groupctl.client import kafka_apis as apis
from groupctl.client.kafka import decode_response, message_classes

OFFSET_FETCH = 9
# partition -> (committed offset, committed leader epoch); -1 offset: nothing committed
PARTITIONS = {0: (42, 5), 1: (7, -1), 2: (-1, 3)}


def decoded(response, version: int):
    """`response` as the ops client reads it off the wire."""
    response.API_VERSION = version
    response.with_header(correlation_id=1)
    return decode_response(message_classes(OFFSET_FETCH)[1][version], bytes(response.encode(header=True)), version)[1]


def topics(topic_cls, part_cls):
    return [topic_cls(name="t", partitions=[
        part_cls(partition_index=p, committed_offset=o, committed_leader_epoch=e, metadata="", error_code=0)
        for p, (o, e) in PARTITIONS.items()])]


def one_group_answer(version: int):
    cls = message_classes(OFFSET_FETCH)[1]
    return decoded(cls(throttle_time_ms=0, error_code=0, topics=topics(
        cls.OffsetFetchResponseTopic, cls.OffsetFetchResponseTopic.OffsetFetchResponsePartition)), version)


def batched_answer(version: int):
    cls = message_classes(OFFSET_FETCH)[1]
    group_cls = cls.OffsetFetchResponseGroup
    topic_cls = group_cls.OffsetFetchResponseTopics
    return decoded(cls(throttle_time_ms=0, groups=[group_cls(
        group_id="g", error_code=0, topics=topics(topic_cls, topic_cls.OffsetFetchResponsePartitions))]), version)


@pytest.mark.parametrize("version", range(5, 8))
def test_a_one_group_answer_carries_the_leader_epoch_committed_with_each_offset(version):
    committed = apis.parse_offset_fetch(one_group_answer(version), "g")
    assert committed == {("t", 0): 42, ("t", 1): 7}
    assert [committed.leader_epoch(("t", p)) for p in PARTITIONS] == [5, None, None]


@pytest.mark.parametrize("version", range(2, 5))
def test_an_answer_before_v5_carries_no_leader_epoch(version):
    committed = apis.parse_offset_fetch(one_group_answer(version), "g")
    assert committed == {("t", 0): 42, ("t", 1): 7} and committed.leader_epochs == {}


@pytest.mark.parametrize("version", range(8, 10))
def test_a_batched_answer_carries_each_groups_committed_leader_epochs(version):
    committed = apis.parse_offset_fetch_groups(batched_answer(version))["g"]
    assert committed == {("t", 0): 42, ("t", 1): 7}
    assert committed.leader_epochs == {("t", 0): 5}
