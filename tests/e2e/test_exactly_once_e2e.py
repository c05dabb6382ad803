"""Consume-transform-produce with exactly-once semantics, as applications write it with
confluent-kafka: a group consumer reads the input, a transactional producer writes the output and
`send_offsets_to_transaction` commits the consumer's position inside the transaction. On commit a
read_committed reader sees the output and the group's committed offset moves; on abort neither
happens, and the offsets OffsetFetch reports for the group stay where the last commit left them."""

from __future__ import annotations

import time

from confluent_kafka import Consumer, Producer, TopicPartition

from tests.e2e.test_transactional_producers import log_end_offset, read_all

CLIENT_TIMEOUT_S = 30
GROUP = "eos-app"


def input_consumer(bootstrap: str) -> Consumer:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
    consumer.assign([TopicPartition("eos-in", 0, 0)])
    return consumer


def consume(consumer: Consumer, count: int) -> list:
    got: list = []
    deadline = time.monotonic() + 20
    while len(got) < count and time.monotonic() < deadline:
        got += [m for m in consumer.consume(num_messages=count - len(got), timeout=0.5) if m.error() is None]
    assert len(got) == count, f"read {len(got)} of {count} input messages"
    return got


def transform(producer: Producer, consumer: Consumer, messages: list, *, commit: bool) -> None:
    producer.begin_transaction()
    for message in messages:
        producer.produce("eos-out", value=message.value().upper(), partition=0)
    producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                         consumer.consumer_group_metadata(), CLIENT_TIMEOUT_S)
    if commit:
        producer.commit_transaction(CLIENT_TIMEOUT_S)
    else:
        producer.abort_transaction(CLIENT_TIMEOUT_S)


def committed_input_offset(bootstrap: str) -> int:
    checker = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "enable.auto.commit": False})
    try:
        return checker.committed([TopicPartition("eos-in", 0)], timeout=CLIENT_TIMEOUT_S)[0].offset
    finally:
        checker.close()


def test_send_offsets_to_transaction_moves_the_groups_offsets_only_when_the_transaction_commits(coordinator):
    bootstrap = coordinator.bootstrap
    source = Producer({"bootstrap.servers": bootstrap})
    for value in (b"a", b"b", b"c", b"d"):
        source.produce("eos-in", value=value, partition=0)
    assert source.flush(CLIENT_TIMEOUT_S) == 0
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": "eos-app-1"})
    producer.init_transactions(CLIENT_TIMEOUT_S)
    consumer = input_consumer(bootstrap)
    try:
        transform(producer, consumer, consume(consumer, 2), commit=True)
        assert committed_input_offset(bootstrap) == 2
        transform(producer, consumer, consume(consumer, 2), commit=False)
        assert committed_input_offset(bootstrap) == 2  # the aborted transaction's offsets never show
    finally:
        consumer.close()
    end = log_end_offset(coordinator, "eos-out")
    assert read_all(bootstrap, "eos-out", "read_committed", until=end) == [b"A", b"B"]
