"""The transaction coordinator's APIs on a running node, spoken raw (kafka-python's request
classes at each version): FindCoordinator for a transactional id, InitProducerId with one,
AddPartitionsToTxn, AddOffsetsToTxn and EndTxn, with Kafka's answers; the state each step stores
at /transactions/<id>, the commit marker in the partition log, and Produce's verification that
a transactional batch goes to a partition of the producer's open transaction."""

from __future__ import annotations

import json
import time

import pytest
from kafka.protocol.metadata import FindCoordinatorRequest
from kafka.protocol.producer import (
    AddOffsetsToTxnRequest,
    AddPartitionsToTxnRequest,
    EndTxnRequest,
    InitProducerIdRequest,
    ProduceRequest,
)
from kafka.record.memory_records import MemoryRecordsBuilder

from groupctl.coordinator.errors import ErrorCode
from groupctl.layout.paths import transaction_path
from tests.support.wire import exchange

TOPIC = "txn-out"


@pytest.fixture
def node(coordinator):
    coordinator.call(coordinator.node.topics.get_or_create(TOPIC, 2))
    return coordinator


def init(node, transactional_id: str, version: int = 4, timeout_ms: int = 60_000, **fields):
    return exchange(node, InitProducerIdRequest(version=version, transactional_id=transactional_id,
                                                transaction_timeout_ms=timeout_ms, **fields), version)


def add_partitions(node, transactional_id: str, producer, partitions, version: int = 3):
    topics = {}
    for topic, partition in partitions:
        topics.setdefault(topic, []).append(partition)
    request = AddPartitionsToTxnRequest(
        version=version, v3_and_below_transactional_id=transactional_id,
        v3_and_below_producer_id=producer.producer_id, v3_and_below_producer_epoch=producer.producer_epoch,
        v3_and_below_topics=[AddPartitionsToTxnRequest.AddPartitionsToTxnTopic(name=t, partitions=ps)
                             for t, ps in topics.items()])
    response = exchange(node, request, version)
    return {(t.name, p.partition_index): p.partition_error_code
            for t in response.results_by_topic_v3_and_below for p in t.results_by_partition}


def end(node, transactional_id: str, producer, commit: bool, version: int = 4):
    return exchange(node, EndTxnRequest(version=version, transactional_id=transactional_id,
                                        producer_id=producer.producer_id, producer_epoch=producer.producer_epoch,
                                        committed=commit), version).error_code


def stored(node, transactional_id: str):
    async def read():
        found = await node.node.store.get(transaction_path(transactional_id))
        return None if found is None else json.loads(found.data)
    return node.call(read())


def eventually(condition, timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.05)


@pytest.mark.parametrize("version", [1, 3])
def test_find_coordinator_for_a_transactional_id_names_this_node(node, version):
    answer = exchange(node, FindCoordinatorRequest(version=version, key="payments-tx", key_type=1), version)
    assert (answer.error_code, answer.node_id, answer.port) == (ErrorCode.NONE, node.node.config.node_id, node.port)
    empty = exchange(node, FindCoordinatorRequest(version=version, key="", key_type=1), version)
    assert empty.error_code == ErrorCode.INVALID_REQUEST


def test_batched_find_coordinator_answers_each_transactional_id(node):
    answer = exchange(node, FindCoordinatorRequest(version=4, key_type=1, coordinator_keys=["a", "b"]), 4)
    assert [(c.key, c.error_code, c.node_id) for c in answer.coordinators] == [
        ("a", ErrorCode.NONE, node.node.config.node_id), ("b", ErrorCode.NONE, node.node.config.node_id)]


@pytest.mark.parametrize("version", range(0, 6))
def test_init_producer_id_with_a_transactional_id_bumps_the_epoch_and_stores_the_id(node, version):
    transactional_id = f"init-{version}"
    first = init(node, transactional_id, version)
    second = init(node, transactional_id, version)
    assert (first.error_code, second.error_code) == (ErrorCode.NONE, ErrorCode.NONE)
    assert second.producer_id == first.producer_id >= 0
    assert (first.producer_epoch, second.producer_epoch) == (0, 1)
    assert stored(node, transactional_id)["state"] == "Empty"
    assert stored(node, transactional_id)["producer_epoch"] == 1


def test_a_transaction_timeout_beyond_the_maximum_is_invalid(node):
    assert init(node, "too-long", timeout_ms=900_001).error_code == ErrorCode.INVALID_TRANSACTION_TIMEOUT
    assert stored(node, "too-long") is None


@pytest.mark.parametrize("version, fenced", [(0, ErrorCode.INVALID_PRODUCER_EPOCH), (1, ErrorCode.INVALID_PRODUCER_EPOCH),
                                             (2, ErrorCode.PRODUCER_FENCED), (3, ErrorCode.PRODUCER_FENCED)])
def test_a_fenced_producer_is_told_in_the_words_its_version_knows(node, version, fenced):
    transactional_id = f"fenced-{version}"
    zombie = init(node, transactional_id)
    init(node, transactional_id)
    assert add_partitions(node, transactional_id, zombie, [(TOPIC, 0)], version) == {(TOPIC, 0): fenced}


def test_a_committed_transaction_is_stored_at_each_step_and_ends_with_a_commit_marker(node):
    producer = init(node, "commit-tx")
    assert add_partitions(node, "commit-tx", producer, [(TOPIC, 0), (TOPIC, 1)]) == {
        (TOPIC, 0): ErrorCode.NONE, (TOPIC, 1): ErrorCode.NONE}
    assert stored(node, "commit-tx")["state"] == "Ongoing"
    assert stored(node, "commit-tx")["partitions"] == {TOPIC: [0, 1]}
    assert end(node, "commit-tx", producer, commit=True) == ErrorCode.NONE
    eventually(lambda: stored(node, "commit-tx")["state"] == "CompleteCommit")

    async def log_ends():
        return [(await node.node.logs.open(TOPIC, p)).log_end_offset for p in (0, 1)]
    assert node.call(log_ends()) == [1, 1]  # a marker in each partition
    assert end(node, "commit-tx", producer, commit=True) == ErrorCode.NONE  # a retry of the end
    assert end(node, "commit-tx", producer, commit=False) == ErrorCode.INVALID_TXN_STATE


def test_add_partitions_answers_an_unknown_partition_and_attempts_none_of_the_others(node):
    producer = init(node, "unknown-tx")
    assert add_partitions(node, "unknown-tx", producer, [(TOPIC, 0), (TOPIC, 9)]) == {
        (TOPIC, 0): ErrorCode.OPERATION_NOT_ATTEMPTED, (TOPIC, 9): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert stored(node, "unknown-tx")["state"] == "Empty"


def test_end_txn_without_an_open_transaction_is_an_invalid_state(node):
    producer = init(node, "idle-tx")
    assert end(node, "idle-tx", producer, commit=True) == ErrorCode.INVALID_TXN_STATE


def test_add_offsets_puts_the_groups_offsets_partition_in_the_transaction(node):
    producer = init(node, "offsets-tx")
    answer = exchange(node, AddOffsetsToTxnRequest(version=3, transactional_id="offsets-tx",
                                                   producer_id=producer.producer_id,
                                                   producer_epoch=producer.producer_epoch, group_id="app"), 3)
    assert answer.error_code == ErrorCode.NONE
    partition = node.node.placement.partition_of("app")
    assert stored(node, "offsets-tx")["partitions"] == {"__consumer_offsets": [partition]}


def transactional_batch(producer, sequence: int = 0) -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    builder.set_producer_state(producer.producer_id, producer.producer_epoch, sequence, True)
    builder.append(1_000, None, b"value")
    builder.close()
    return bytes(builder.buffer())


def produce(node, transactional_id: str, partition: int, records: bytes, version: int = 9):
    topic = ProduceRequest.TopicProduceData
    response = exchange(node, ProduceRequest(
        version=version, transactional_id=transactional_id, acks=-1, timeout_ms=1000,
        topic_data=[topic(name=TOPIC, partition_data=[topic.PartitionProduceData(index=partition, records=records)])]),
        version)
    return response.responses[0].partition_responses[0].error_code


def test_a_transactional_batch_goes_only_to_a_partition_added_to_the_producers_transaction(node):
    producer = init(node, "verify-tx")
    add_partitions(node, "verify-tx", producer, [(TOPIC, 0)])
    assert produce(node, "verify-tx", 1, transactional_batch(producer)) == ErrorCode.INVALID_TXN_STATE
    assert produce(node, "verify-tx", 0, transactional_batch(producer)) == ErrorCode.NONE
    # A new producer with the id fences `producer` (and is told to retry while its transaction aborts).
    assert init(node, "verify-tx").error_code == ErrorCode.CONCURRENT_TRANSACTIONS
    assert produce(node, "verify-tx", 0, transactional_batch(producer, 1)) == ErrorCode.INVALID_PRODUCER_EPOCH
