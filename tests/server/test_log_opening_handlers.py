"""Produce, Fetch and ListOffsets while partition logs on disk are being opened: the logs are
built in worker threads, so the node keeps answering everything else meanwhile.

Handler-level tests use the fake node of test_produce_fetch_handlers.py with a LogManager on a
temp dir; wire-level ones an in-process node with a --data-dir. In both, a `Gate`
(tests/support/log_builds.py) holds every log build until the test releases it, so "answers
while logs are being built" is an ordering, not a timing: nothing is released until the other
answer has arrived."""

from __future__ import annotations

import asyncio
import select
import uuid
from types import SimpleNamespace

import pytest
from kafka.protocol.admin import CreatePartitionsRequest, CreateTopicsRequest
from kafka.protocol.consumer import ListOffsetsRequest
from kafka.protocol.metadata import ApiVersionsRequest

from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.records import TopicRecord
from groupctl.log import LogManager
from tests.server.test_produce_fetch_handlers import (
    FakeTopics,
    answers,
    fetch,
    fetched,
    list_offsets,
    partition_results,
    produce,
    records,
)
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.log_builds import Gate, until
from tests.support.wire import connect, decode_response, exchange, read_frame, roundtrip

ORDERS = TopicRecord(name="orders", topic_id=str(uuid.uuid4()), replicas={p: [0] for p in range(8)})


@pytest.fixture
def gate(monkeypatch):
    gate = Gate.install(monkeypatch)
    yield gate
    gate.released.set()


@pytest.fixture
def node(tmp_path, gate):
    logs = LogManager(tmp_path / "logs")
    yield SimpleNamespace(config=SimpleNamespace(node_id=0), topics=FakeTopics(ORDERS), logs=logs)
    gate.released.set()
    logs.close()


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, timeout=20))


async def opened(node, *partitions: int) -> None:
    """Open the logs of `partitions` of orders (the gate must be released)."""
    for p in partitions:
        await node.logs.open("orders", p)


# --- handlers -------------------------------------------------------------------------------


def test_an_open_partition_is_served_while_new_logs_are_being_built(node, gate):
    async def scenario():
        gate.released.set()
        await opened(node, 0)
        node.logs.get("orders", 0).append(records(2))
        gate.released.clear()
        new = asyncio.create_task(list_offsets(node, 10, [(p, -1) for p in range(1, 8)]))
        await until(lambda: len(gate.calls) >= 2, "the new logs' builds")
        kept = await fetch(node, 12, [(0, 0)])  # answered while the builds wait
        assert fetched(kept) == [(0, 0, [0, 1])]
        produced = await produce(node, 9, {0: records(1)})
        assert partition_results(produced) == [(0, 0, 2)]
        assert not new.done()
        gate.released.set()
        return await new

    assert answers(run(scenario())) == [(p, 0, 0, -1) for p in range(1, 8)]


def test_a_fetch_of_new_partitions_waits_for_their_logs_and_keeps_the_request_order(node, gate):
    async def scenario():
        gate.released.set()
        await opened(node, 1)
        node.logs.get("orders", 1).append(records(3))
        gate.released.clear()
        waiting = asyncio.create_task(fetch(node, 12, [(0, 0), (1, 0), (2, 0), (9, 0)]))
        await until(lambda: len(gate.calls) == 3, "the builds of partitions 0 and 2")
        assert not waiting.done()
        gate.released.set()
        return await waiting

    assert fetched(run(scenario())) == [(0, 0, []), (1, 0, [0, 1, 2]), (2, 0, []),
                                        (9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])]


def test_produce_to_new_and_open_partitions_answers_in_request_order(node, gate):
    async def scenario():
        gate.released.set()
        await opened(node, 1)
        node.logs.get("orders", 1).append(records(4))
        return await produce(node, 9, {3: records(2), 1: records(1), 9: records(1), 0: records(1)})

    assert partition_results(run(scenario())) == [
        (3, 0, 0), (1, 0, 4), (9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1), (0, 0, 0),
    ]


def test_concurrent_produces_to_a_new_partition_share_one_log(node, gate):
    async def scenario():
        producing = [asyncio.create_task(produce(node, 9, {5: records(2)})) for _ in range(4)]
        await until(lambda: gate.calls, "the build")
        await asyncio.sleep(0.01)
        gate.released.set()
        return await asyncio.gather(*producing)

    results = run(scenario())
    assert sorted(partition_results(r)[0][2] for r in results) == [0, 2, 4, 6]
    assert gate.builds("orders", 5) == 1
    assert node.logs.get("orders", 5).log_end_offset == 8


def test_a_failed_open_answers_storage_errors_and_the_next_request_tries_again(node, gate):
    gate.released.set()
    gate.failures = 3
    assert partition_results(run(produce(node, 9, {0: records(1)}))) == [(0, ErrorCode.KAFKA_STORAGE_ERROR, -1)]
    assert fetched(run(fetch(node, 12, [(0, 0)], max_wait_ms=60_000))) == [(0, ErrorCode.KAFKA_STORAGE_ERROR, [])]
    assert answers(run(list_offsets(node, 10, [(0, -1)]))) == [(0, ErrorCode.KAFKA_STORAGE_ERROR, -1, -1)]
    assert partition_results(run(produce(node, 9, {0: records(1)}))) == [(0, 0, 0)]
    assert gate.builds("orders", 0) == 4


def test_a_failed_open_fails_only_its_partition(node, gate):
    gate.released.set()
    gate.failures = 1
    response = run(list_offsets(node, 10, [(0, -1)]))  # fails: the next builds succeed
    assert answers(response) == [(0, ErrorCode.KAFKA_STORAGE_ERROR, -1, -1)]
    gate.failures = 1
    response = run(fetch(node, 12, [(1, 0), (2, 0)]))
    codes = [error for _, error, _ in fetched(response)]
    assert sorted(codes) == [0, ErrorCode.KAFKA_STORAGE_ERROR]


def test_a_topic_deleted_while_its_log_is_built_answers_unknown_topic(node, gate):
    async def scenario():
        waiting = asyncio.create_task(fetch(node, 12, [(0, 0)], max_wait_ms=60_000))
        await until(lambda: gate.calls, "the build")
        node.topics = FakeTopics()
        node.logs.delete_topic("orders")
        gate.released.set()
        return await waiting

    assert fetched(run(scenario())) == [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])]


# --- over the wire --------------------------------------------------------------------------


@pytest.fixture
def disk_coordinator(tmp_path, gate):
    node = InProcessCoordinator(node_config(data_dir=tmp_path / "data")).start()
    yield node
    gate.released.set()
    node.stop()


def create_topic(coordinator, name: str, partitions: int) -> None:
    cls = CreateTopicsRequest.CreatableTopic
    topic = cls(name=name, num_partitions=partitions, replication_factor=1, assignments=[], configs=[])
    (result,) = exchange(coordinator, CreateTopicsRequest[7](topics=[topic], timeout_ms=5000, validate_only=False),
                         7).topics
    assert result.error_code == 0


def test_the_node_answers_other_connections_while_logs_are_being_built(disk_coordinator, gate):
    create_topic(disk_coordinator, "wide", 40)  # starts building its logs in the background
    topic = ListOffsetsRequest.ListOffsetsTopic
    request = ListOffsetsRequest[7](replica_id=-1, isolation_level=0, timeout_ms=5000, topics=[topic(
        name="wide", partitions=[topic.ListOffsetsPartition(partition_index=p, current_leader_epoch=-1, timestamp=-1)
                                 for p in range(40)])])
    request.with_header(correlation_id=1, client_id="wire-test")
    with connect(disk_coordinator) as waiting, connect(disk_coordinator) as other:
        waiting.sendall(bytes(request.encode(version=7, header=True, framed=True)))
        probe = ApiVersionsRequest[3](client_software_name="t", client_software_version="1")
        for _ in range(3):  # while every builder thread is held and more builds are queued
            assert decode_response(probe, roundtrip(other, probe, 3), 3).error_code == 0
        assert gate.calls, "no log build started"
        assert select.select([waiting], [], [], 0)[0] == []  # ListOffsets is still waiting for its logs
        gate.released.set()
        response = decode_response(request, read_frame(waiting), 7)
    assert [(p.partition_index, p.error_code, p.offset) for p in response.topics[0].partitions] == [
        (p, 0, 0) for p in range(40)]
    assert all(gate.builds("wide", p) == 1 for p in range(40))


def test_partitions_added_to_a_topic_open_in_the_background(disk_coordinator, gate):
    gate.released.set()
    create_topic(disk_coordinator, "growing", 2)
    grow = CreatePartitionsRequest.CreatePartitionsTopic(name="growing", count=12, assignments=None)
    (result,) = exchange(disk_coordinator, CreatePartitionsRequest[3](topics=[grow], timeout_ms=5000,
                                                                      validate_only=False), 3).results
    assert result.error_code == 0

    async def all_open():
        await until(lambda: all(disk_coordinator.node.logs.get("growing", p) is not None for p in range(12)),
                    "the new partitions' logs")

    disk_coordinator.call(all_open(), timeout=15)  # no request asked for them
    assert all(gate.builds("growing", p) == 1 for p in range(12))
