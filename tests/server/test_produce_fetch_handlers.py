"""The Produce, Fetch and ListOffsets handlers against real partition logs (in memory).

Each call builds a request with kafka-python's class at a given version, encodes and decodes it
(as the server receives it), runs the registered handler with a fake node holding a topic
registry and a LogManager, then encodes and decodes the response at the same version (as the
client reads it)."""

from __future__ import annotations

import asyncio
import struct
import time
import uuid
from types import SimpleNamespace
from typing import Any, Optional

import pytest
from kafka.protocol.consumer import FetchRequest, ListOffsetsRequest
from kafka.protocol.producer import ProduceRequest
from kafka.record.memory_records import MemoryRecords, MemoryRecordsBuilder

import groupctl.server.handlers.fetch  # noqa: F401  (registers the handlers)
import groupctl.server.handlers.list_offsets  # noqa: F401
import groupctl.server.handlers.produce  # noqa: F401
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.records import TopicRecord
from groupctl.log import LogCorruptionError, LogManager
from groupctl.protocol import schemas
from groupctl.protocol.registry import REGISTRY
from groupctl.server.context import RequestContext

ORDERS = TopicRecord(name="orders", topic_id=str(uuid.uuid4()), replicas={0: [0], 1: [0], 2: [1]})
UNKNOWN_ID = uuid.uuid4()


class FakeTopics:
    def __init__(self, *records: TopicRecord) -> None:
        self._records = {record.name: record for record in records}

    def get(self, name: str) -> Optional[TopicRecord]:
        return self._records.get(name)

    def by_id(self, topic_id: str) -> Optional[TopicRecord]:
        return next((r for r in self._records.values() if r.topic_id == topic_id), None)


@pytest.fixture
def node():
    logs = LogManager(None)
    yield SimpleNamespace(config=SimpleNamespace(node_id=0), topics=FakeTopics(ORDERS), logs=logs)
    logs.close()  # the manager this fixture made, even if a test swapped node.logs


def records(count: int = 1, first_timestamp: int = 1_000, value_size: int = 10, magic: int = 2) -> bytes:
    builder = MemoryRecordsBuilder(magic=magic, compression_type=0, batch_size=1 << 20)
    for i in range(count):
        builder.append(first_timestamp + i, None, bytes([i % 256]) * value_size)
    builder.close()
    return bytes(builder.buffer())


def offsets_in(data: Optional[bytes]) -> list[int]:
    batches = MemoryRecords(data or b"")
    found = []
    while batches.has_next():
        found.extend(record.offset for record in batches.next_batch())
    return found


async def call(node: Any, request_class: type, version: int, **fields: Any) -> Any:
    key = request_class.API_KEY
    request = request_class(version=version, **fields)
    decoded = request_class.decode(bytes(request.encode(version=version)), version=version)
    response_class = schemas.response_class(key)[version]
    ctx = RequestContext(node=node, api_key=key, version=version, correlation_id=1, client_id="test",
                         client_host="/127.0.0.1", response_class=response_class)
    response = await REGISTRY[key].handler(ctx, decoded)
    if response is None:
        return None
    return response_class.decode(bytes(response.encode(version=version)), version=version)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, timeout=10))


def test_the_registry_serves_the_versions_real_clients_use():
    assert (REGISTRY[0].min_version, REGISTRY[0].max_version) == (3, 13)
    assert (REGISTRY[1].min_version, REGISTRY[1].max_version) == (4, 18)
    assert (REGISTRY[2].min_version, REGISTRY[2].max_version) == (1, 11)


# --- Produce --------------------------------------------------------------------------------


def produce_topic(version: int, partitions: dict[int, Optional[bytes]], record: TopicRecord = ORDERS,
                  topic_id: Optional[uuid.UUID] = None) -> Any:
    data = ProduceRequest.TopicProduceData
    parts = [data.PartitionProduceData(index=p, records=r) for p, r in partitions.items()]
    if version >= 13:
        return data(topic_id=topic_id or uuid.UUID(record.topic_id), partition_data=parts)
    return data(name=record.name, partition_data=parts)


async def produce(node, version: int, partitions: dict[int, Optional[bytes]], acks: int = -1, **topic: Any):
    return await call(node, ProduceRequest, version, transactional_id=None, acks=acks, timeout_ms=30_000,
                      topic_data=[produce_topic(version, partitions, **topic)])


def partition_results(response) -> list[tuple[int, int, int]]:
    return [(p.index, p.error_code, p.base_offset) for t in response.responses for p in t.partition_responses]


@pytest.mark.parametrize("version", [3, 5, 7, 8, 9, 10, 12, 13])
def test_produce_appends_and_answers_base_offsets_at_every_version(node, version):
    first = run(produce(node, version, {0: records(3), 1: records(1)}))
    second = run(produce(node, version, {0: records(2)}))
    assert partition_results(first) == [(0, 0, 0), (1, 0, 0)]
    assert partition_results(second) == [(0, 0, 3)]
    answered = second.responses[0]
    if version >= 13:
        assert answered.topic_id == uuid.UUID(ORDERS.topic_id)
    else:
        assert answered.name == "orders"
    partition = answered.partition_responses[0]
    assert partition.log_append_time_ms == -1
    if version >= 5:
        assert partition.log_start_offset == 0
    assert node.logs.partition("orders", 0).log_end_offset == 5


def test_produce_with_acks_zero_appends_and_answers_nothing(node):
    assert run(produce(node, 9, {0: records(2)}, acks=0)) is None
    assert node.logs.partition("orders", 0).log_end_offset == 2


@pytest.mark.parametrize("acks", [2, -2, 5])
def test_produce_with_other_acks_is_refused_without_writing(node, acks):
    response = run(produce(node, 9, {0: records(2)}, acks=acks))
    assert partition_results(response) == [(0, ErrorCode.INVALID_REQUIRED_ACKS, -1)]
    assert node.logs.partition("orders", 0).log_end_offset == 0


@pytest.mark.parametrize("version, topic, partition, error", [
    (9, {"record": TopicRecord("nope", str(uuid.uuid4()), {0: [0]})}, 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    (13, {"topic_id": UNKNOWN_ID}, 0, ErrorCode.UNKNOWN_TOPIC_ID),
    (9, {}, 7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    (13, {}, 7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    (9, {}, 2, ErrorCode.NOT_LEADER_OR_FOLLOWER),
], ids=["unknown-name", "unknown-id", "unknown-partition", "unknown-partition-by-id", "other-leader"])
def test_produce_to_a_partition_this_node_does_not_lead_is_refused(node, version, topic, partition, error):
    response = run(produce(node, version, {partition: records(1)}, **topic))
    assert partition_results(response) == [(partition, error, -1)]
    if version >= 13:
        assert response.responses[0].topic_id == topic.get("topic_id", uuid.UUID(ORDERS.topic_id))


@pytest.mark.parametrize("data, error", [
    (None, ErrorCode.CORRUPT_MESSAGE),
    (records(2)[:-3], ErrorCode.CORRUPT_MESSAGE),
    (records(2, magic=1), ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT),
    (records(2, magic=0), ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT),
], ids=["null", "truncated", "magic-1", "magic-0"])
def test_produce_of_unusable_records_answers_the_kafka_error_and_writes_nothing(node, data, error):
    response = run(produce(node, 9, {0: data, 1: records(1)}))
    assert partition_results(response) == [(0, error, -1), (1, 0, 0)]
    assert node.logs.partition("orders", 0).log_end_offset == 0


# --- Fetch ----------------------------------------------------------------------------------


def fetch_topic(version: int, partitions: list[tuple[int, int]], partition_max_bytes: int = 1 << 20,
                record: TopicRecord = ORDERS, topic_id: Optional[uuid.UUID] = None) -> Any:
    topic = FetchRequest.FetchTopic
    parts = [topic.FetchPartition(partition=p, current_leader_epoch=-1, fetch_offset=offset, last_fetched_epoch=-1,
                                  log_start_offset=-1, partition_max_bytes=partition_max_bytes)
             for p, offset in partitions]
    if version >= 13:
        return topic(topic_id=topic_id or uuid.UUID(record.topic_id), partitions=parts)
    return topic(topic=record.name, partitions=parts)


def fetch(node, version: int, partitions: list[tuple[int, int]], *, max_wait_ms: int = 0, min_bytes: int = 1,
          max_bytes: int = 50 << 20, session_epoch: int = -1, isolation_level: int = 0, **topic: Any):
    return call(node, FetchRequest, version, replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=min_bytes,
                max_bytes=max_bytes, isolation_level=isolation_level, session_id=0, session_epoch=session_epoch,
                topics=[fetch_topic(version, partitions, **topic)], forgotten_topics_data=[], rack_id="")


def fetched(response) -> list[tuple[int, int, list[int]]]:
    return [(p.partition_index, p.error_code, offsets_in(p.records)) for t in response.responses for p in t.partitions]


@pytest.mark.parametrize("version", [4, 5, 7, 11, 12, 13, 15, 16, 18])
def test_fetch_serves_produced_records_with_offsets_at_every_version(node, version):
    log = node.logs.partition("orders", 0)
    log.append(records(3))
    log.append(records(2))
    response = run(fetch(node, version, [(0, 0), (1, 0)]))
    assert fetched(response) == [(0, 0, [0, 1, 2, 3, 4]), (1, 0, [])]
    topic = response.responses[0]
    if version >= 13:
        assert topic.topic_id == uuid.UUID(ORDERS.topic_id)
    else:
        assert topic.topic == "orders"
    partition = topic.partitions[0]
    assert (partition.high_watermark, partition.last_stable_offset) == (5, 5)
    if version >= 5:
        assert partition.log_start_offset == 0
    if version >= 7:
        assert (response.error_code, response.session_id) == (0, 0)
    assert partition.aborted_transactions is None


def test_fetch_from_inside_a_batch_serves_the_whole_batch(node):
    log = node.logs.partition("orders", 0)
    log.append(records(3))
    log.append(records(3))
    assert fetched(run(fetch(node, 12, [(0, 4)]))) == [(0, 0, [3, 4, 5])]


@pytest.mark.parametrize("offset", [-1, 4])
def test_fetch_outside_the_log_is_out_of_range_with_unknown_offsets(node, offset):
    node.logs.partition("orders", 0).append(records(3))
    response = run(fetch(node, 12, [(0, offset)], max_wait_ms=60_000, min_bytes=1 << 20))
    partition = response.responses[0].partitions[0]
    assert partition.error_code == ErrorCode.OFFSET_OUT_OF_RANGE
    assert (partition.high_watermark, partition.log_start_offset) == (-1, -1)


@pytest.mark.parametrize("version, topic, partition, error", [
    (12, {"record": TopicRecord("nope", str(uuid.uuid4()), {0: [0]})}, 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    (13, {"topic_id": UNKNOWN_ID}, 0, ErrorCode.UNKNOWN_TOPIC_ID),
    (12, {}, 9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    (16, {}, 2, ErrorCode.NOT_LEADER_OR_FOLLOWER),
], ids=["unknown-name", "unknown-id", "unknown-partition", "other-leader"])
def test_fetch_errors_answer_at_once_whatever_the_wait(node, version, topic, partition, error):
    response = run(fetch(node, version, [(partition, 0)], max_wait_ms=60_000, min_bytes=1, **topic))
    assert fetched(response) == [(partition, error, [])]
    assert response.responses[0].partitions[0].high_watermark == -1


def test_fetch_returns_whole_batches_within_the_partition_limit(node):
    one = records(1, value_size=100)
    log = node.logs.partition("orders", 0)
    for _ in range(5):
        log.append(one)
    response = run(fetch(node, 12, [(0, 0)], partition_max_bytes=2 * len(one) + 10))
    assert fetched(response) == [(0, 0, [0, 1])]


def test_the_first_partition_with_data_returns_a_batch_larger_than_the_limits(node):
    node.logs.partition("orders", 0).append(records(1, value_size=4_000))
    node.logs.partition("orders", 1).append(records(1, value_size=10))
    response = run(fetch(node, 12, [(0, 0), (1, 0)], partition_max_bytes=1_000, max_bytes=1_000))
    assert fetched(response) == [(0, 0, [0]), (1, 0, [])]
    assert response.responses[0].partitions[1].high_watermark == 1


def test_max_bytes_bounds_the_whole_response(node):
    one = records(1, value_size=100)
    for p in (0, 1):
        for _ in range(3):
            node.logs.partition("orders", p).append(one)
    response = run(fetch(node, 12, [(0, 0), (1, 0)], max_bytes=4 * len(one)))
    assert fetched(response) == [(0, 0, [0, 1, 2]), (1, 0, [0])]


def test_an_empty_fetch_with_no_wait_answers_at_once(node):
    assert fetched(run(fetch(node, 12, [(0, 0)], max_wait_ms=0))) == [(0, 0, [])]


def test_an_empty_fetch_answers_empty_when_max_wait_passes(node):
    response = run(fetch(node, 12, [(0, 0)], max_wait_ms=20))
    assert fetched(response) == [(0, 0, [])]


def test_a_waiting_fetch_answers_as_soon_as_a_record_is_appended():
    async def scenario():
        logs = LogManager(None)
        fake = SimpleNamespace(config=SimpleNamespace(node_id=0), topics=FakeTopics(ORDERS), logs=logs)
        try:
            waiting = asyncio.create_task(fetch(fake, 12, [(0, 0)], max_wait_ms=60_000))
            for _ in range(5):
                await asyncio.sleep(0)
            assert not waiting.done()
            logs.partition("orders", 0).append(records(2))
            return await waiting
        finally:
            logs.close()

    assert fetched(run(scenario())) == [(0, 0, [0, 1])]


def test_a_waiting_fetch_keeps_waiting_until_min_bytes_are_available():
    one = records(1, value_size=100)

    async def scenario():
        logs = LogManager(None)
        fake = SimpleNamespace(config=SimpleNamespace(node_id=0), topics=FakeTopics(ORDERS), logs=logs)
        try:
            waiting = asyncio.create_task(
                fetch(fake, 12, [(0, 0), (1, 0)], max_wait_ms=60_000, min_bytes=2 * len(one)))
            for _ in range(5):
                await asyncio.sleep(0)
            logs.partition("orders", 0).append(one)
            for _ in range(5):
                await asyncio.sleep(0)
            assert not waiting.done()
            logs.partition("orders", 1).append(one)
            return await waiting
        finally:
            logs.close()

    assert fetched(run(scenario())) == [(0, 0, [0]), (1, 0, [0])]


def test_a_full_session_request_gets_a_full_response_without_a_session(node):
    node.logs.partition("orders", 0).append(records(2))
    response = run(fetch(node, 12, [(0, 0)], session_epoch=0))
    assert response.session_id == 0 and response.error_code == 0
    assert fetched(response) == [(0, 0, [0, 1])]


def test_an_incremental_session_request_is_told_the_session_does_not_exist(node):
    response = run(fetch(node, 12, [(0, 0)], session_epoch=3))
    assert response.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    assert response.responses == []


def test_read_committed_fetches_of_a_log_without_aborts_get_an_empty_aborted_list(node):
    node.logs.partition("orders", 0).append(records(1))
    response = run(fetch(node, 12, [(0, 0)], isolation_level=1))
    assert response.responses[0].partitions[0].aborted_transactions == []


# --- read_committed (markers written through the log: the transaction coordinator that writes
# them is not wired yet, so no client can open a transaction against the node) --------------


def transactional(pid: int, seq: int, count: int = 1, epoch: int = 0, timestamp: Optional[int] = None) -> bytes:
    """A transactional batch, stamped now by default (markers carry the node's time, and a
    segment.ms roll between them would split the reads)."""
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    builder.set_producer_state(pid, epoch, seq, True)
    first = int(time.time() * 1000) if timestamp is None else timestamp
    for i in range(count):
        builder.append(first + i, None, b"t")
    builder.close()
    return bytes(builder.buffer())


def partition_answer(response) -> Any:
    return response.responses[0].partitions[0]


def batch_offsets(data: Optional[bytes]) -> list[int]:
    """Base offsets of the batches in `data`, control batches (markers) included (kafka-python's
    MemoryRecords skips those)."""
    data = data or b""
    found = []
    pos = 0
    while pos < len(data):
        base_offset, length = struct.unpack_from(">qi", data, pos)
        found.append(base_offset)
        pos += 12 + length
    return found


@pytest.mark.parametrize("version", [4, 11, 12, 18])
def test_a_read_committed_fetch_stops_at_the_last_stable_offset(node, version):
    log = node.logs.partition("orders", 0)
    log.append(records(2))  # 0-1
    log.append(transactional(7, 0, 2, timestamp=1_000))  # 2-3, open
    log.append(records(1))  # 4
    committed = partition_answer(run(fetch(node, version, [(0, 0)], isolation_level=1)))
    assert offsets_in(committed.records) == [0, 1]
    assert (committed.high_watermark, committed.last_stable_offset) == (5, 2)
    uncommitted = partition_answer(run(fetch(node, version, [(0, 0)])))
    assert offsets_in(uncommitted.records) == [0, 1, 2, 3, 4]
    assert (uncommitted.high_watermark, uncommitted.last_stable_offset) == (5, 2)
    assert uncommitted.aborted_transactions is None


def test_a_read_committed_fetch_at_the_last_stable_offset_answers_no_records(node):
    log = node.logs.partition("orders", 0)
    log.append(transactional(7, 0))
    answer = partition_answer(run(fetch(node, 12, [(0, 0)], isolation_level=1)))
    assert (answer.error_code, offsets_in(answer.records), answer.aborted_transactions) == (0, [], [])


def test_a_read_committed_fetch_lists_the_aborted_transactions_in_what_it_returns(node):
    log = node.logs.partition("orders", 0)
    log.append(transactional(7, 0, 2))  # 0-1
    log.append(transactional(8, 0))  # 2
    log.append_marker(7, 0, commit=False, coordinator_epoch=0)  # 3
    log.append_marker(8, 0, commit=True, coordinator_epoch=0)  # 4
    answer = partition_answer(run(fetch(node, 12, [(0, 0)], isolation_level=1)))
    assert batch_offsets(answer.records) == [0, 2, 3, 4]  # the markers included
    assert [(t.producer_id, t.first_offset) for t in answer.aborted_transactions] == [(7, 0)]
    assert answer.last_stable_offset == 5
    later = partition_answer(run(fetch(node, 12, [(0, 4)], isolation_level=1)))
    assert later.aborted_transactions == []


def test_a_waiting_read_committed_fetch_answers_when_the_commit_marker_is_written():
    async def scenario():
        logs = LogManager(None)
        fake = SimpleNamespace(config=SimpleNamespace(node_id=0), topics=FakeTopics(ORDERS), logs=logs)
        try:
            log = logs.partition("orders", 0)
            log.append(transactional(7, 0))
            waiting = asyncio.create_task(fetch(fake, 12, [(0, 0)], max_wait_ms=60_000, isolation_level=1))
            for _ in range(5):
                await asyncio.sleep(0)
            assert not waiting.done()
            log.append_marker(7, 0, commit=True, coordinator_epoch=0)
            return await waiting
        finally:
            logs.close()

    assert batch_offsets(partition_answer(run(scenario())).records) == [0, 1]


def test_produce_of_a_plain_batch_while_the_producer_has_a_transaction_open_is_invalid_txn_state(node):
    run(produce(node, 9, {0: transactional(7, 0)}))
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    builder.set_producer_state(7, 0, 1, False)
    builder.append(1_000, None, b"x")
    builder.close()
    response = run(produce(node, 9, {0: bytes(builder.buffer())}))
    assert partition_results(response) == [(0, ErrorCode.INVALID_TXN_STATE, -1)]


# --- ListOffsets ----------------------------------------------------------------------------


def list_offsets(node, version: int, queries: list[tuple[int, int]], name: str = "orders", isolation_level: int = 0):
    topic = ListOffsetsRequest.ListOffsetsTopic
    parts = [topic.ListOffsetsPartition(partition_index=p, current_leader_epoch=-1, timestamp=ts)
             for p, ts in queries]
    return call(node, ListOffsetsRequest, version, replica_id=-1, isolation_level=isolation_level,
                topics=[topic(name=name, partitions=parts)], timeout_ms=30_000)


def answers(response) -> list[tuple[int, int, int, int]]:
    return [(p.partition_index, p.error_code, p.offset, p.timestamp)
            for t in response.topics for p in t.partitions]


@pytest.fixture
def timed(node):
    """Partition 0 holds offsets 0-5 stamped 1000, 1001, 1002, 2000, 2001, 1500."""
    log = node.logs.partition("orders", 0)
    log.append(records(3, first_timestamp=1_000))
    log.append(records(2, first_timestamp=2_000))
    log.append(records(1, first_timestamp=1_500))
    return node


@pytest.mark.parametrize("version", [1, 2, 4, 5, 6, 7, 9, 10, 11])
def test_list_offsets_answers_earliest_latest_and_timestamps_at_every_version(timed, version):
    response = run(list_offsets(timed, version, [(0, -2), (0, -1), (0, 1_001), (0, 1_200), (0, 9_999)]))
    assert answers(response) == [
        (0, 0, 0, -1), (0, 0, 6, -1), (0, 0, 1, 1_001), (0, 0, 3, 2_000), (0, 0, -1, -1),
    ]
    assert response.topics[0].name == "orders"
    if version >= 4:  # the batches' epoch, and -1 with the offset not found
        assert [p.leader_epoch for p in response.topics[0].partitions] == [0, 0, 0, 0, -1]


def test_max_timestamp_answers_the_first_record_carrying_it(timed):
    timed.logs.partition("orders", 0).append(records(1, first_timestamp=2_001))
    assert answers(run(list_offsets(timed, 7, [(0, -3)]))) == [(0, 0, 4, 2_001)]


def test_tiered_storage_positions_answer_the_local_log(timed):
    assert answers(run(list_offsets(timed, 11, [(0, -4), (0, -5), (0, -6)]))) == [
        (0, 0, 0, -1), (0, 0, -1, -1), (0, 0, -1, -1),
    ]


def test_an_empty_partition_answers_zero_and_no_timestamp(node):
    assert answers(run(list_offsets(node, 10, [(1, -2), (1, -1), (1, -3), (1, 0)]))) == [
        (1, 0, 0, -1), (1, 0, 0, -1), (1, 0, -1, -1), (1, 0, -1, -1),
    ]


def test_list_offsets_for_partitions_this_node_does_not_lead(timed):
    assert answers(run(list_offsets(timed, 10, [(2, -1), (9, -1)]))) == [
        (2, ErrorCode.NOT_LEADER_OR_FOLLOWER, -1, -1), (9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1),
    ]
    assert answers(run(list_offsets(timed, 10, [(0, -1)], name="nope"))) == [
        (0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1),
    ]


# --- A log that cannot be opened --------------------------------------------------------------


class DamagedLogs:
    leading = True

    def get(self, topic: str, partition: int):
        return None  # never open

    async def open(self, topic: str, partition: int):
        raise LogCorruptionError(f"{topic}-{partition}: damaged batch")


def test_a_log_that_cannot_be_opened_answers_storage_errors_everywhere(node):
    node.logs = DamagedLogs()
    assert partition_results(run(produce(node, 9, {0: records(1)}))) == [(0, ErrorCode.KAFKA_STORAGE_ERROR, -1)]
    assert fetched(run(fetch(node, 12, [(0, 0)], max_wait_ms=60_000))) == [(0, ErrorCode.KAFKA_STORAGE_ERROR, [])]
    assert answers(run(list_offsets(node, 10, [(0, -1)]))) == [(0, ErrorCode.KAFKA_STORAGE_ERROR, -1, -1)]


@pytest.mark.parametrize("version", [2, 7, 11])
def test_list_offsets_latest_read_committed_answers_the_last_stable_offset(node, version):
    log = node.logs.partition("orders", 0)
    log.append(records(2, first_timestamp=1_000))  # 0-1
    log.append(transactional(7, 0, timestamp=1_000))  # 2, open
    log.append(records(1, first_timestamp=3_000))  # 3
    committed = run(list_offsets(node, version, [(0, -1), (0, 2_000), (0, 1_001)], isolation_level=1))
    assert answers(committed) == [(0, 0, 2, -1), (0, 0, -1, -1), (0, 0, 1, 1_001)]
    uncommitted = run(list_offsets(node, version, [(0, -1), (0, 2_000)]))
    assert answers(uncommitted) == [(0, 0, 4, -1), (0, 0, 3, 3_000)]
    log.append_marker(7, 0, commit=True, coordinator_epoch=0)  # 4
    assert answers(run(list_offsets(node, version, [(0, -1)], isolation_level=1))) == [(0, 0, 5, -1)]
