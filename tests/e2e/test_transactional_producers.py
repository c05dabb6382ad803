"""Transactional producers against the embedded node, judged by real clients: confluent-kafka's
(librdkafka) and kafka-python's transactional producers commit and abort; a consumer reading with
isolation.level=read_committed sees exactly the committed messages, a read_uncommitted one sees
them all; a second producer with the same transactional.id fences the first; a transaction left
open past its transaction.timeout.ms is aborted by the coordinator; a node killed with -9 in the
middle of a transaction restarts with every committed message and none of the aborted ones."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer as RdConsumer
from confluent_kafka import KafkaException
from confluent_kafka import Producer as RdProducer
from confluent_kafka import TopicPartition as RdTopicPartition
from kafka import KafkaProducer

from tests.support.coordinator import CoordinatorProcess

CLIENT_TIMEOUT_S = 30


def transactional_producer(bootstrap: str, transactional_id: str, **config) -> RdProducer:
    producer = RdProducer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                           "linger.ms": 5, **config})
    producer.init_transactions(CLIENT_TIMEOUT_S)
    return producer


def produce_in_transaction(producer: RdProducer, topic: str, values: list[bytes], *, commit: bool) -> None:
    producer.begin_transaction()
    for value in values:
        producer.produce(topic, value=value, partition=0)
    producer.flush(CLIENT_TIMEOUT_S)
    if commit:
        producer.commit_transaction(CLIENT_TIMEOUT_S)
    else:
        producer.abort_transaction(CLIENT_TIMEOUT_S)


def read_all(bootstrap: str, topic: str, isolation: str, *, until: int, timeout_s: float = 20) -> list[bytes]:
    """Every value of partition 0 up to offset `until` (the log end, markers included), read
    with `isolation`; then one more poll to catch anything beyond."""
    consumer = RdConsumer({"bootstrap.servers": bootstrap, "group.id": f"check-{topic}-{isolation}",
                           "enable.auto.commit": False, "isolation.level": isolation})
    got: list[bytes] = []
    position = -1
    try:
        consumer.assign([RdTopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + timeout_s
        while position < until and time.monotonic() < deadline:
            for message in consumer.consume(num_messages=500, timeout=0.5):
                if message.error() is None:
                    got.append(message.value())
            position = consumer.position([RdTopicPartition(topic, 0)])[0].offset
    finally:
        consumer.close()
    assert position == until, f"the {isolation} consumer stopped at {position}, not at the log end {until}"
    return got


def log_end_offset(coordinator, topic: str) -> int:
    async def end() -> int:
        return coordinator.node.logs.partition(topic, 0).log_end_offset
    return coordinator.call(end())


def test_a_read_committed_consumer_sees_only_the_committed_transactions_of_librdkafka(coordinator):
    topic = "txn-librdkafka"
    producer = transactional_producer(coordinator.bootstrap, "txn-librdkafka-app")
    produce_in_transaction(producer, topic, [b"c1", b"c2"], commit=True)
    produce_in_transaction(producer, topic, [b"a1", b"a2", b"a3"], commit=False)
    produce_in_transaction(producer, topic, [b"c3"], commit=True)
    end = log_end_offset(coordinator, topic)
    assert end == 6 + 3  # six records and three markers
    assert read_all(coordinator.bootstrap, topic, "read_committed", until=end) == [b"c1", b"c2", b"c3"]
    assert read_all(coordinator.bootstrap, topic, "read_uncommitted", until=end) == [
        b"c1", b"c2", b"a1", b"a2", b"a3", b"c3"]


def test_a_new_producer_with_the_same_transactional_id_fences_the_old_one_and_aborts_its_transaction(coordinator):
    topic = "txn-zombie"
    zombie = transactional_producer(coordinator.bootstrap, "txn-zombie-app")
    zombie.begin_transaction()
    zombie.produce(topic, value=b"from-the-zombie", partition=0)
    zombie.flush(CLIENT_TIMEOUT_S)
    successor = transactional_producer(coordinator.bootstrap, "txn-zombie-app")  # aborts the zombie's
    produce_in_transaction(successor, topic, [b"from-the-successor"], commit=True)
    with pytest.raises(KafkaException) as raised:
        zombie.commit_transaction(CLIENT_TIMEOUT_S)
    assert raised.value.args[0].fatal(), "a fenced producer cannot go on"
    end = log_end_offset(coordinator, topic)
    assert read_all(coordinator.bootstrap, topic, "read_committed", until=end) == [b"from-the-successor"]


def test_a_transaction_left_open_past_its_timeout_is_aborted(coordinator):
    topic = "txn-timeout"
    producer = transactional_producer(coordinator.bootstrap, "txn-timeout-app", **{"transaction.timeout.ms": 2000})
    producer.begin_transaction()
    producer.produce(topic, value=b"never-committed", partition=0)
    producer.flush(CLIENT_TIMEOUT_S)
    deadline = time.monotonic() + 20
    while log_end_offset(coordinator, topic) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)  # the coordinator's abort marker follows the record
    assert log_end_offset(coordinator, topic) == 2
    with pytest.raises(KafkaException):
        producer.commit_transaction(CLIENT_TIMEOUT_S)
    assert read_all(coordinator.bootstrap, topic, "read_committed", until=2) == []


def test_kafka_pythons_transactional_producer_commits_and_aborts(coordinator):
    topic = "txn-kafka-python"
    producer = KafkaProducer(bootstrap_servers=coordinator.bootstrap, transactional_id="txn-kafka-python-app")
    try:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(topic, value=b"kept", partition=0)
        producer.commit_transaction()
        producer.begin_transaction()
        producer.send(topic, value=b"dropped", partition=0)
        producer.flush(timeout=CLIENT_TIMEOUT_S)  # in the log, so the abort has a record to hide
        producer.abort_transaction()
    finally:
        producer.close(timeout=10)
    end = log_end_offset(coordinator, topic)
    assert end == 4
    assert read_all(coordinator.bootstrap, topic, "read_committed", until=end) == [b"kept"]


def test_after_kill_9_mid_transaction_committed_data_stays_and_the_open_transaction_is_aborted(tmp_path):
    options = ("--data-dir", str(tmp_path / "data"), "--topic", "txn-durable:1")
    process = CoordinatorProcess(*options, log_path=tmp_path / "node.log").start()
    try:
        producer = transactional_producer(process.bootstrap, "txn-durable-app")
        produce_in_transaction(producer, "txn-durable", [b"c1", b"c2"], commit=True)
        produce_in_transaction(producer, "txn-durable", [b"a1"], commit=False)
        producer.begin_transaction()
        producer.produce("txn-durable", value=b"open-at-the-kill", partition=0)
        producer.flush(CLIENT_TIMEOUT_S)
    finally:
        process.kill()
    restarted = CoordinatorProcess(*options, log_path=tmp_path / "node.log").start()
    try:
        successor = transactional_producer(restarted.bootstrap, "txn-durable-app")  # aborts the open one
        produce_in_transaction(successor, "txn-durable", [b"c3"], commit=True)
        # c1 c2 +commit, a1 +abort, open-at-the-kill +abort (after the restart), c3 +commit
        assert read_all(restarted.bootstrap, "txn-durable", "read_committed", until=9) == [b"c1", b"c2", b"c3"]
        assert read_all(restarted.bootstrap, "txn-durable", "read_uncommitted", until=9) == [
            b"c1", b"c2", b"a1", b"open-at-the-kill", b"c3"]
    finally:
        restarted.terminate()
