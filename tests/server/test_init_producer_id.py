"""The InitProducerId handler at every served version, and idempotent Produce through the
handlers: the producer id it hands out, then Produce answering duplicates, gaps and stale
epochs.

Each call builds a request with kafka-python's class at a given version, encodes and decodes it
(as the server receives it), runs the registered handler with a fake node (a real in-memory
LogManager and a fixed clock), then encodes and decodes the response at the same version (as
the client reads it)."""

from __future__ import annotations

import asyncio
import uuid
from types import SimpleNamespace
from typing import Any

import pytest
from kafka.protocol.producer import InitProducerIdRequest, ProduceRequest
from kafka.record.memory_records import MemoryRecordsBuilder

import groupctl.server.handlers.init_producer_id  # noqa: F401  (registers the handlers)
import groupctl.server.handlers.produce  # noqa: F401
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.records import TopicRecord
from groupctl.log import LogManager
from groupctl.protocol import schemas
from groupctl.protocol.registry import REGISTRY
from groupctl.server.context import RequestContext

NOW_MS = 1_763_750_000_000
VERSIONS = range(0, 6)
BUMP_VERSIONS = range(3, 6)
ORDERS = TopicRecord(name="orders", topic_id=str(uuid.uuid4()), replicas={0: [0]})


class FakeTopics:
    def get(self, name: str):
        return ORDERS if name == ORDERS.name else None

    def by_id(self, topic_id: str):
        return ORDERS if topic_id == ORDERS.topic_id else None


@pytest.fixture
def node():
    logs = LogManager(None)
    yield SimpleNamespace(config=SimpleNamespace(node_id=0), topics=FakeTopics(), logs=logs, now_ms=lambda: NOW_MS)
    logs.close()


def call(node: Any, request_class: type, version: int, **fields: Any) -> Any:
    key = request_class.API_KEY
    request = request_class(version=version, **fields)
    decoded = request_class.decode(bytes(request.encode(version=version)), version=version)
    response_class = schemas.response_class(key)[version]
    ctx = RequestContext(node=node, api_key=key, version=version, correlation_id=1, client_id="test",
                         client_host="/127.0.0.1", response_class=response_class)
    response = asyncio.run(REGISTRY[key].handler(ctx, decoded))
    return response_class.decode(bytes(response.encode(version=version)), version=version)


def init(node: Any, version: int, transactional_id=None, **fields: Any) -> Any:
    return call(node, InitProducerIdRequest, version, transactional_id=transactional_id,
                transaction_timeout_ms=60_000, **fields)


def test_init_producer_id_is_served_from_v0_to_v5():
    spec = REGISTRY[22]
    assert (spec.min_version, spec.max_version) == (0, 5)


@pytest.mark.parametrize("version", VERSIONS)
def test_an_idempotent_producer_gets_a_fresh_id_at_epoch_zero(node, version):
    first = init(node, version)
    second = init(node, version)
    assert (first.error_code, first.producer_epoch) == (ErrorCode.NONE, 0)
    assert (second.error_code, second.producer_epoch) == (ErrorCode.NONE, 0)
    assert 0 <= first.producer_id < second.producer_id


def test_producer_ids_start_from_the_node_clock(node):
    assert init(node, 4).producer_id >> 20 == NOW_MS


@pytest.mark.parametrize("version", BUMP_VERSIONS)
def test_naming_the_issued_id_and_epoch_bumps_the_epoch(node, version):
    issued = init(node, version)
    bumped = init(node, version, producer_id=issued.producer_id, producer_epoch=0)
    assert (bumped.error_code, bumped.producer_id, bumped.producer_epoch) == (ErrorCode.NONE, issued.producer_id, 1)
    again = init(node, version, producer_id=issued.producer_id, producer_epoch=0)  # the bump's retry
    assert (again.producer_id, again.producer_epoch) == (issued.producer_id, 1)


@pytest.mark.parametrize("version", BUMP_VERSIONS)
def test_naming_an_id_this_node_did_not_issue_gets_a_fresh_id(node, version):
    answer = init(node, version, producer_id=12345, producer_epoch=3)
    assert answer.error_code == ErrorCode.NONE
    assert answer.producer_id != 12345 and answer.producer_epoch == 0


@pytest.mark.parametrize("fields", [{"producer_id": 5, "producer_epoch": -1}, {"producer_id": -1, "producer_epoch": 2}])
def test_an_id_without_an_epoch_or_an_epoch_without_an_id_is_invalid(node, fields):
    answer = init(node, 4, **fields)
    assert (answer.error_code, answer.producer_id, answer.producer_epoch) == (ErrorCode.INVALID_REQUEST, -1, -1)


def test_an_empty_transactional_id_is_invalid(node):
    assert init(node, 4, transactional_id="").error_code == ErrorCode.INVALID_REQUEST


# -- idempotent Produce ---------------------------------------------------------------------


def batch(pid: int, epoch: int, seq: int, count: int = 1) -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    builder.set_producer_state(pid, epoch, seq, False)
    for i in range(count):
        builder.append(1_000 + i, None, b"value")
    builder.close()
    return bytes(builder.buffer())


def produce(node: Any, records: bytes, version: int = 9) -> Any:
    topic = ProduceRequest.TopicProduceData
    response = call(node, ProduceRequest, version, transactional_id=None, acks=-1, timeout_ms=1000,
                    topic_data=[topic(name="orders", partition_data=[
                        topic.PartitionProduceData(index=0, records=records)])])
    return response.responses[0].partition_responses[0]


def test_produce_answers_a_retried_batch_with_its_original_base_offset(node):
    pid = init(node, 4).producer_id
    assert produce(node, batch(pid, 0, 0, 3)).base_offset == 0
    assert produce(node, batch(pid, 0, 3, 2)).base_offset == 3
    retry = produce(node, batch(pid, 0, 3, 2))
    assert (retry.error_code, retry.base_offset) == (ErrorCode.NONE, 3)
    assert node.logs.partition("orders", 0).log_end_offset == 5


def test_produce_answers_a_sequence_gap_out_of_order(node):
    pid = init(node, 4).producer_id
    produce(node, batch(pid, 0, 0))
    answer = produce(node, batch(pid, 0, 2))
    assert (answer.error_code, answer.base_offset) == (ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)


def test_produce_answers_an_older_epoch_invalid_producer_epoch(node):
    issued = init(node, 4).producer_id
    bumped = init(node, 4, producer_id=issued, producer_epoch=0)
    produce(node, batch(issued, 0, 0))
    produce(node, batch(issued, bumped.producer_epoch, 0))
    answer = produce(node, batch(issued, 0, 1))
    assert answer.error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    assert node.logs.partition("orders", 0).log_end_offset == 2
