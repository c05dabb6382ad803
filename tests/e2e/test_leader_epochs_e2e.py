"""Leader epochs with real clients (KIP-101, KIP-320): records carry the partition's leader epoch,
librdkafka seeks and commits with it, kafka-python reads it, and OffsetForLeaderEpoch answers the
end offset of each epoch, on a real node (embedded store) with its logs on disk."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from kafka import KafkaConsumer
from kafka.protocol.consumer import OffsetForLeaderEpochRequest

from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.wire import exchange

TOPIC = "epochs"


@pytest.fixture
def node(tmp_path):
    running = InProcessCoordinator(node_config(data_dir=tmp_path / "data")).start()
    yield running
    running.stop()


def produce(bootstrap: str, count: int, start: int = 0) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "broker.address.family": "v4"})
    for i in range(start, start + count):
        producer.produce(TOPIC, f"v{i}".encode(), partition=0)
    assert producer.flush(15) == 0


def librdkafka_consumer(bootstrap: str, group: str) -> Consumer:
    return Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                     "enable.auto.commit": False, "broker.address.family": "v4"})


def poll_values(consumer: Consumer, count: int, timeout: float = 20.0) -> list:
    messages = []
    deadline = time.monotonic() + timeout
    while len(messages) < count and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is None:
            continue
        assert message.error() is None, message.error()
        messages.append(message)
    assert len(messages) == count, f"{len(messages)} of {count} records within {timeout}s"
    return messages


def end_offset_of(node, epoch: int, current_leader_epoch: int = -1, version: int = 4) -> tuple[int, int, int]:
    """(error, leader_epoch, end_offset) OffsetForLeaderEpoch answers for partition 0."""
    request_class = OffsetForLeaderEpochRequest[version]
    topic = request_class.OffsetForLeaderTopic
    request = request_class(replica_id=-1, topics=[topic(topic=TOPIC, partitions=[topic.OffsetForLeaderPartition(
        partition=0, current_leader_epoch=current_leader_epoch, leader_epoch=epoch)])])
    answer = exchange(node, request, version).topics[0].partitions[0]
    return answer.error_code, answer.leader_epoch, answer.end_offset


def test_librdkafka_records_carry_the_epoch_and_seek_and_commit_with_it(node):
    produce(node.bootstrap, 5)
    consumer = librdkafka_consumer(node.bootstrap, "seekers")
    try:
        consumer.assign([TopicPartition(TOPIC, 0, 0)])
        messages = poll_values(consumer, 5)
        assert [m.leader_epoch() for m in messages] == [0] * 5
        consumer.seek(TopicPartition(TOPIC, 0, messages[1].offset(), leader_epoch=messages[1].leader_epoch()))
        assert [m.offset() for m in poll_values(consumer, 4)] == [1, 2, 3, 4]
        consumer.commit(message=messages[3], asynchronous=False)
        committed = consumer.committed([TopicPartition(TOPIC, 0)], timeout=10)[0]
        assert (committed.offset, committed.leader_epoch) == (4, 0)
    finally:
        consumer.close()


def test_kafka_python_records_carry_the_epoch(node):
    produce(node.bootstrap, 3)
    consumer = KafkaConsumer(TOPIC, bootstrap_servers=node.bootstrap, group_id="readers",
                             auto_offset_reset="earliest", consumer_timeout_ms=10_000)
    try:
        records = []
        for record in consumer:
            records.append(record)
            if len(records) == 3:
                break
        assert [r.leader_epoch for r in records] == [0, 0, 0]
    finally:
        consumer.close()


@pytest.mark.parametrize("version", [2, 3, 4])
def test_offset_for_leader_epoch_answers_the_log_end_for_the_current_epoch(node, version):
    produce(node.bootstrap, 4)
    assert end_offset_of(node, 0, version=version) == (0, 0, 4)
    assert end_offset_of(node, 0, current_leader_epoch=0, version=version) == (0, 0, 4)
    assert end_offset_of(node, 1, version=version) == (0, -1, -1)
