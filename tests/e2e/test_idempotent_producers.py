"""Idempotent producers against the embedded node, judged by real clients: kafka-python's
KafkaProducer (idempotent by default) and librdkafka (confluent-kafka, enable.idempotence)
write 1000 messages while the node drops one Produce response; the client retries that batch
with the same sequence, the node acknowledges the retry without writing it again, and a
consumer reads every message exactly once."""

from __future__ import annotations

import time
from typing import Callable

from confluent_kafka import Consumer as RdConsumer
from confluent_kafka import Producer as RdProducer
from confluent_kafka import TopicPartition as RdTopicPartition
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from groupctl.log.batches import HEADER_SIZE, parse_header

COUNT = 1000
PRODUCE = 0
CLIENT_TIMEOUT_MS = 2000  # how long a client waits for the dropped response before retrying


def record_sent_batches(coordinator) -> list[tuple[int, int, int]]:
    """(producer id, epoch, base sequence) of every batch the node receives in Produce, filled
    in as requests arrive."""
    sent: list[tuple[int, int, int]] = []

    def observe(_ctx, request) -> None:
        for topic in request.topic_data:
            for partition in topic.partition_data:
                data = partition.records or b""
                position = 0
                while position + HEADER_SIZE <= len(data):
                    header = parse_header(data, position, position)
                    sent.append((header.producer_id, header.producer_epoch, header.base_sequence))
                    position += header.size

    coordinator.node.faults.observe(PRODUCE, observe)
    return sent


def log_end_offset(coordinator, topic: str) -> int:
    return coordinator.call(_log_end_offset(coordinator, topic))


async def _log_end_offset(coordinator, topic: str) -> int:
    return coordinator.node.logs.partition(topic, 0).log_end_offset


def values() -> list[bytes]:
    return [f"m{i}".encode() for i in range(COUNT)]


def assert_one_batch_was_retried_and_written_once(sent: list[tuple[int, int, int]]) -> None:
    assert all(pid >= 0 for pid, _, _ in sent), "every batch carries a producer id"
    retried = {batch for batch in sent if sent.count(batch) > 1}
    assert len(retried) == 1, f"expected exactly one retried batch, got {sorted(retried)}"


def poll_until(fetch: Callable[[], list[bytes]], count: int, timeout_s: float) -> list[bytes]:
    """Collect what `fetch` returns until `count` values arrived or the time is up."""
    got: list[bytes] = []
    deadline = time.monotonic() + timeout_s
    while len(got) < count and time.monotonic() < deadline:
        got.extend(fetch())
    return got


def read_back_with_kafka_python(bootstrap: str, topic: str) -> list[bytes]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    try:
        partition = TopicPartition(topic, 0)
        consumer.assign([partition])
        consumer.seek_to_beginning(partition)

        def fetch() -> list[bytes]:
            return [m.value for batch in consumer.poll(timeout_ms=500).values() for m in batch]

        got = poll_until(fetch, COUNT, 20)
        got.extend(fetch())  # anything beyond COUNT would be a duplicate
        return got
    finally:
        consumer.close()


def test_kafka_python_default_producer_writes_each_message_once_despite_a_lost_response(coordinator):
    topic = "idempotent-kafka-python"
    sent = record_sent_batches(coordinator)
    producer = KafkaProducer(bootstrap_servers=coordinator.bootstrap, linger_ms=5,
                             request_timeout_ms=CLIENT_TIMEOUT_MS)
    try:
        assert producer.config["enable_idempotence"], "kafka-python producers are idempotent by default"
        futures = [producer.send(topic, value=value, partition=0) for value in values()[: COUNT // 2]]
        producer.flush(30)
        coordinator.node.faults.drop_next(PRODUCE)
        futures += [producer.send(topic, value=value, partition=0) for value in values()[COUNT // 2 :]]
        producer.flush(60)
        offsets = [future.get(timeout=10).offset for future in futures]
    finally:
        producer.close(timeout=10)
    assert offsets == list(range(COUNT))
    assert_one_batch_was_retried_and_written_once(sent)
    assert log_end_offset(coordinator, topic) == COUNT
    assert read_back_with_kafka_python(coordinator.bootstrap, topic) == values()


def test_librdkafka_idempotent_producer_writes_each_message_once_despite_a_lost_response(coordinator):
    topic = "idempotent-librdkafka"
    sent = record_sent_batches(coordinator)
    delivered: list[tuple[object, int]] = []
    producer = RdProducer({
        "bootstrap.servers": coordinator.bootstrap,
        "enable.idempotence": True,
        "linger.ms": 5,
        "batch.num.messages": 50,
        "socket.timeout.ms": CLIENT_TIMEOUT_MS,  # librdkafka's client-side Produce timeout
    })

    def on_delivery(error, message) -> None:
        delivered.append((error, message.offset()))

    for value in values()[: COUNT // 2]:
        producer.produce(topic, value=value, partition=0, on_delivery=on_delivery)
    assert producer.flush(30) == 0
    coordinator.node.faults.drop_next(PRODUCE)
    for value in values()[COUNT // 2 :]:
        producer.produce(topic, value=value, partition=0, on_delivery=on_delivery)
    assert producer.flush(60) == 0
    assert [error for error, _ in delivered if error is not None] == []
    assert sorted(offset for _, offset in delivered) == list(range(COUNT))
    assert_one_batch_was_retried_and_written_once(sent)
    assert log_end_offset(coordinator, topic) == COUNT

    consumer = RdConsumer({"bootstrap.servers": coordinator.bootstrap, "group.id": "idempotent-check",
                           "enable.auto.commit": False})
    try:
        consumer.assign([RdTopicPartition(topic, 0, 0)])

        def fetch() -> list[bytes]:
            return [m.value() for m in consumer.consume(num_messages=500, timeout=0.5) if m.error() is None]

        got = poll_until(fetch, COUNT, 20)
        got.extend(fetch())
    finally:
        consumer.close()
    assert got == values()
