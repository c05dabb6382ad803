"""The DeleteRecords handler against real partition logs (in memory), request and response
encoded and decoded with kafka-python's classes at every served version: per-partition errors
and low watermarks as Kafka answers them."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
from kafka.protocol.admin.topics import DeleteRecordsRequest

import groupctl.server.handlers.delete_records  # noqa: F401  (registers the handler)
from groupctl.coordinator.errors import ErrorCode
from groupctl.log import LogManager
from tests.server.test_produce_fetch_handlers import ORDERS, FakeTopics, call, records

Topic = DeleteRecordsRequest.DeleteRecordsTopic
Partition = Topic.DeleteRecordsPartition


@pytest.fixture
def node():
    """Node 0 leading orders-0 and orders-1 (orders-2 is node 1's), logs in memory."""
    logs = LogManager(None)
    yield SimpleNamespace(config=SimpleNamespace(node_id=0), topics=FakeTopics(ORDERS), logs=logs)
    logs.close()


def delete(node, version: int, *topics: tuple[str, list[tuple[int, int]]]) -> dict:
    """{(topic, partition): (error code, low watermark)} for one DeleteRecords request."""
    request_topics = [Topic(name=name, partitions=[Partition(partition_index=p, offset=o) for p, o in partitions])
                      for name, partitions in topics]
    response = asyncio.run(call(node, DeleteRecordsRequest, version, topics=request_topics, timeout_ms=1000))
    return {(t.name, p.partition_index): (p.error_code, p.low_watermark) for t in response.topics for p in t.partitions}


@pytest.mark.parametrize("version", [0, 1, 2])
def test_each_partition_gets_its_low_watermark_or_kafkas_error(node, version):
    for partition in (0, 1):
        node.logs.partition("orders", partition).append(records(10))
    answer = delete(node, version, ("orders", [(0, 4), (1, 11), (2, 0), (7, 0)]), ("missing", [(0, 0)]))
    assert answer == {
        ("orders", 0): (ErrorCode.NONE, 4),
        ("orders", 1): (ErrorCode.OFFSET_OUT_OF_RANGE, -1),  # above the high watermark
        ("orders", 2): (ErrorCode.NOT_LEADER_OR_FOLLOWER, -1),  # led by node 1
        ("orders", 7): (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1),
        ("missing", 0): (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1),
    }
    assert node.logs.get("orders", 0).log_start_offset == 4
    assert node.logs.get("orders", 1).log_start_offset == 0


def test_minus_one_is_the_high_watermark_and_a_lower_offset_answers_the_current_start(node):
    node.logs.partition("orders", 0).append(records(10))
    assert delete(node, 2, ("orders", [(0, -1)])) == {("orders", 0): (ErrorCode.NONE, 10)}
    assert delete(node, 2, ("orders", [(0, 3)])) == {("orders", 0): (ErrorCode.NONE, 10)}
