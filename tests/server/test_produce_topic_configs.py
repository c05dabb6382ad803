"""Produce answers what the topic's log configs decide, as Kafka: MESSAGE_TOO_LARGE above
max.message.bytes, RECORD_LIST_TOO_LARGE above segment.bytes, and log_append_time_ms with
LogAppendTime (-1 with CreateTime)."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from groupctl.coordinator.errors import ErrorCode
from groupctl.log import LogConfig, LogManager
from groupctl.log.config import LOG_APPEND_TIME
from tests.server.test_produce_fetch_handlers import ORDERS, FakeTopics, produce, records, run


@pytest.fixture
def node():
    logs = LogManager(None)
    yield SimpleNamespace(config=SimpleNamespace(node_id=0), topics=FakeTopics(ORDERS), logs=logs)
    logs.close()


def answered(response) -> list[tuple[int, int, int, int]]:
    return [(p.index, p.error_code, p.base_offset, p.log_append_time_ms)
            for t in response.responses for p in t.partition_responses]


def test_batches_too_large_for_the_topic_are_refused_per_partition(node):
    node.logs.set_topic_config("orders", LogConfig(max_message_bytes=200, segment_bytes=300))
    small = records(1)
    response = run(produce(node, 9, {0: records(1, value_size=500), 1: small * 5}))
    assert answered(response) == [(0, ErrorCode.MESSAGE_TOO_LARGE, -1, -1),
                                  (1, ErrorCode.RECORD_LIST_TOO_LARGE, -1, -1)]
    assert answered(run(produce(node, 9, {0: small}))) == [(0, ErrorCode.NONE, 0, -1)]


def test_log_append_time_is_answered_with_the_time_the_log_stamped(node):
    node.logs.set_topic_config("orders", LogConfig(message_timestamp_type=LOG_APPEND_TIME))
    before = int(time.time() * 1000)
    ((_, error, _, stamped),) = answered(run(produce(node, 9, {0: records(2, first_timestamp=5)})))
    assert error == ErrorCode.NONE and before <= stamped <= int(time.time() * 1000)
