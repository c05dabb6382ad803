"""Leader epochs in the handlers (KIP-101, KIP-320), as Apache Kafka answers them: Metadata reports
the epoch, OffsetForLeaderEpoch answers each epoch's end offset, and Fetch, ListOffsets and
OffsetForLeaderEpoch fence a stale current_leader_epoch and refuse one from the future; Fetch
answers diverging_epoch when a fetcher's last fetched epoch ended before its offset.

Requests are kafka-python's classes, encoded and decoded at the version under test, against a
real in-memory partition log whose epoch is raised with `become_leader`."""

from __future__ import annotations

import asyncio
import uuid
from types import SimpleNamespace
from typing import Any

import pytest
from kafka.protocol.consumer import FetchRequest, ListOffsetsRequest, OffsetForLeaderEpochRequest
from kafka.record.memory_records import MemoryRecordsBuilder

import groupctl.server.handlers.fetch  # noqa: F401  (registers the handlers)
import groupctl.server.handlers.list_offsets  # noqa: F401
import groupctl.server.handlers.offset_for_leader_epoch  # noqa: F401
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.records import TopicRecord
from groupctl.log import LogManager
from groupctl.protocol import schemas
from groupctl.protocol.registry import REGISTRY
from groupctl.security.acls import Operation, ResourceType
from groupctl.server.context import RequestContext

ORDERS = TopicRecord(name="orders", topic_id=str(uuid.uuid4()), replicas={0: [0], 1: [1]})
SECRET = TopicRecord(name="secret", topic_id=str(uuid.uuid4()), replicas={0: [0]})


class Topics:
    def get(self, name):
        return {"orders": ORDERS, "secret": SECRET}.get(name)

    def by_id(self, topic_id):
        return next((r for r in (ORDERS, SECRET) if r.topic_id == topic_id), None)


class DescribeOrdersOnly:
    """An authorizer that allows only Describe/Read on topic `orders`."""

    def authorize(self, principal, host, operation, resource_type, name):
        return resource_type is ResourceType.TOPIC and name == "orders"


@pytest.fixture
def node():
    logs = LogManager(None)
    yield SimpleNamespace(config=SimpleNamespace(node_id=0), topics=Topics(), logs=logs)
    logs.close()


@pytest.fixture
def epochs(node):
    """orders-0: offsets 0-2 at epoch 0 (timestamps 1000-1002), 3-4 at epoch 2 (2000-2001),
    current epoch 4 (log end 5)."""
    log = node.logs.partition("orders", 0)
    log.append(records(3))
    log.become_leader(2)
    log.append(records(2, first_timestamp=2_000))
    log.become_leader(4)
    return log


def records(count: int, first_timestamp: int = 1_000) -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    for i in range(count):
        builder.append(first_timestamp + i, None, b"v")
    builder.close()
    return bytes(builder.buffer())


def call(node: Any, request_class: type, version: int, authorizer: Any = None, **fields: Any) -> Any:
    key = request_class.API_KEY
    request = request_class(version=version, **fields)
    decoded = request_class.decode(bytes(request.encode(version=version)), version=version)
    response_class = schemas.response_class(key)[version]
    ctx = RequestContext(node=node, api_key=key, version=version, correlation_id=1, client_id="test",
                         client_host="/127.0.0.1", response_class=response_class)
    ctx.authorizer = authorizer
    response = asyncio.run(asyncio.wait_for(REGISTRY[key].handler(ctx, decoded), timeout=10))
    return response_class.decode(bytes(response.encode(version=version)), version=version)


def end_offsets(node, version: int, asks: list[tuple[str, int, int, int]], authorizer: Any = None):
    """[(topic, partition, error, leader_epoch, end_offset)] for (topic, partition,
    current_leader_epoch, leader_epoch) asks."""
    topic = OffsetForLeaderEpochRequest.OffsetForLeaderTopic
    by_topic: dict[str, list] = {}
    for name, p, current, epoch in asks:
        by_topic.setdefault(name, []).append(
            topic.OffsetForLeaderPartition(partition=p, current_leader_epoch=current, leader_epoch=epoch))
    response = call(node, OffsetForLeaderEpochRequest, version, authorizer, replica_id=-1,
                    topics=[topic(topic=name, partitions=parts) for name, parts in by_topic.items()])
    return [(t.topic, p.partition, p.error_code, p.leader_epoch, p.end_offset)
            for t in response.topics for p in t.partitions]


def test_offset_for_leader_epoch_is_served_at_the_versions_clients_send():
    assert (REGISTRY[23].min_version, REGISTRY[23].max_version) == (2, 4)


@pytest.mark.parametrize("version", [2, 3, 4])
def test_each_epoch_ends_where_the_next_begins_and_the_current_one_at_the_log_end(node, epochs, version):
    assert end_offsets(node, version, [("orders", 0, -1, e) for e in (0, 1, 2, 3, 4, 5, -1)]) == [
        ("orders", 0, 0, 0, 3), ("orders", 0, 0, 0, 3), ("orders", 0, 0, 2, 5), ("orders", 0, 0, 2, 5),
        ("orders", 0, 0, 4, 5), ("orders", 0, 0, -1, -1), ("orders", 0, 0, -1, -1),
    ]


def test_a_stale_current_epoch_is_fenced_and_a_future_one_unknown(node, epochs):
    assert end_offsets(node, 4, [("orders", 0, 3, 0), ("orders", 0, 5, 0), ("orders", 0, 4, 0)]) == [
        ("orders", 0, ErrorCode.FENCED_LEADER_EPOCH, -1, -1),
        ("orders", 0, ErrorCode.UNKNOWN_LEADER_EPOCH, -1, -1),
        ("orders", 0, 0, 0, 3),
    ]


def test_partitions_not_led_here_or_unknown_are_answered_as_kafka_does(node, epochs):
    assert end_offsets(node, 4, [("orders", 1, -1, 0), ("orders", 7, -1, 0), ("nope", 0, -1, 0)]) == [
        ("orders", 1, ErrorCode.NOT_LEADER_OR_FOLLOWER, -1, -1),
        ("orders", 7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1),
        ("nope", 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1),
    ]


def test_topics_the_principal_may_not_describe_are_refused_and_listed_last(node, epochs):
    node.logs.partition("secret", 0)
    answered = end_offsets(node, 4, [("secret", 0, -1, 0), ("orders", 0, -1, 0)], DescribeOrdersOnly())
    assert answered == [("orders", 0, 0, 0, 3), ("secret", 0, ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1, -1)]


def test_cluster_action_allows_every_topic():
    class ClusterAction:
        def authorize(self, principal, host, operation, resource_type, name):
            return resource_type is ResourceType.CLUSTER and operation is Operation.CLUSTER_ACTION

    logs = LogManager(None)
    node = SimpleNamespace(config=SimpleNamespace(node_id=0), topics=Topics(), logs=logs)
    logs.partition("secret", 0)
    assert end_offsets(node, 4, [("secret", 0, -1, 0)], ClusterAction()) == [("secret", 0, 0, 0, 0)]
    logs.close()


# --- Fetch ----------------------------------------------------------------------------------


def fetch(node, version: int, offset: int, current: int = -1, last_fetched: int = -1):
    topic = FetchRequest.FetchTopic
    part = topic.FetchPartition(partition=0, current_leader_epoch=current, fetch_offset=offset,
                                last_fetched_epoch=last_fetched, log_start_offset=-1, partition_max_bytes=1 << 20)
    fields = {"topic_id": uuid.UUID(ORDERS.topic_id)} if version >= 13 else {"topic": "orders"}
    response = call(node, FetchRequest, version, replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
                    isolation_level=0, session_id=0, session_epoch=-1, topics=[topic(partitions=[part], **fields)],
                    forgotten_topics_data=[], rack_id="")
    return response.responses[0].partitions[0]


@pytest.mark.parametrize("version", [9, 12, 13, 18])
def test_fetch_fences_a_stale_current_epoch_and_refuses_a_future_one(node, epochs, version):
    assert fetch(node, version, 0, current=3).error_code == ErrorCode.FENCED_LEADER_EPOCH
    assert fetch(node, version, 0, current=5).error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
    assert fetch(node, version, 0, current=4).error_code == 0
    assert fetch(node, version, 0, current=-1).records


def test_fetch_answers_the_diverging_epoch_when_the_last_fetched_epoch_ended_before_the_offset(node, epochs):
    answer = fetch(node, 12, 4, last_fetched=0)
    assert (answer.error_code, answer.diverging_epoch.epoch, answer.diverging_epoch.end_offset) == (0, 0, 3)
    assert not answer.records
    assert answer.high_watermark == 5


def test_fetch_answers_the_diverging_epoch_under_an_older_epoch_for_one_this_log_never_had(node, epochs):
    answer = fetch(node, 12, 5, last_fetched=3)
    assert (answer.diverging_epoch.epoch, answer.diverging_epoch.end_offset) == (2, 5)


def test_fetch_serves_records_when_the_last_fetched_epoch_agrees(node, epochs):
    answer = fetch(node, 12, 3, last_fetched=0)
    assert answer.error_code == 0 and answer.records and answer.diverging_epoch is None


def test_fetch_with_a_last_fetched_epoch_this_log_cannot_place_is_out_of_range(node, epochs):
    assert fetch(node, 12, 5, last_fetched=9).error_code == ErrorCode.OFFSET_OUT_OF_RANGE


# --- ListOffsets ----------------------------------------------------------------------------


def list_offsets(node, version: int, timestamp: int, current: int = -1):
    topic = ListOffsetsRequest.ListOffsetsTopic
    part = topic.ListOffsetsPartition(partition_index=0, current_leader_epoch=current, timestamp=timestamp)
    response = call(node, ListOffsetsRequest, version, replica_id=-1, isolation_level=0,
                    topics=[topic(name="orders", partitions=[part])], timeout_ms=30_000)
    p = response.topics[0].partitions[0]
    return p.error_code, p.offset, p.leader_epoch


def test_list_offsets_answers_the_current_epoch_with_latest_and_the_batch_epoch_otherwise(node, epochs):
    assert list_offsets(node, 7, -1) == (0, 5, 4)
    assert list_offsets(node, 7, -2) == (0, 0, 0)
    assert list_offsets(node, 7, 1_001) == (0, 1, 0)
    assert list_offsets(node, 7, 2_000) == (0, 3, 2)
    assert list_offsets(node, 7, -3) == (0, 4, 2)
    assert list_offsets(node, 7, 9_999) == (0, -1, -1)


def test_list_offsets_fences_a_stale_current_epoch_and_refuses_a_future_one(node, epochs):
    assert list_offsets(node, 7, -1, current=3) == (ErrorCode.FENCED_LEADER_EPOCH, -1, -1)
    assert list_offsets(node, 7, -1, current=5) == (ErrorCode.UNKNOWN_LEADER_EPOCH, -1, -1)
    assert list_offsets(node, 7, -1, current=4) == (0, 5, 4)


def test_while_the_node_raises_its_epochs_its_partitions_answer_not_leader(node, epochs):
    node.logs.leading = False
    assert end_offsets(node, 4, [("orders", 0, -1, 0)]) == [("orders", 0, ErrorCode.NOT_LEADER_OR_FOLLOWER, -1, -1)]
    assert fetch(node, 12, 0).error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert list_offsets(node, 7, -1) == (ErrorCode.NOT_LEADER_OR_FOLLOWER, -1, -1)
