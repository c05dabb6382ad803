"""DeleteRecords with real clients: confluent-kafka's and kafka-python's admin clients move a
partition's log start; consumers at earliest start there, a consumer positioned below it gets
OFFSET_OUT_OF_RANGE and resets per auto.offset.reset, `groupctl offsets reset --to-earliest`
lands there, and the start survives kill -9 of the node and a restart."""

from __future__ import annotations

import json
import subprocess
import time

import pytest
from confluent_kafka import Consumer as RdConsumer
from confluent_kafka import KafkaError
from confluent_kafka import Producer as RdProducer
from confluent_kafka import TopicPartition as RdTopicPartition
from confluent_kafka.admin import AdminClient
from kafka import KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient
from kafka.errors import OffsetOutOfRangeError

from tests.e2e.test_cli_e2e import assert_quiet, installed_groupctl
from tests.support.coordinator import CoordinatorProcess, InProcessCoordinator, node_config

TOPIC = "ledger"
COUNT = 100


@pytest.fixture
def node(tmp_path):
    running = InProcessCoordinator(node_config(data_dir=tmp_path / "data", topics=((TOPIC, 1),))).start()
    produce(running.bootstrap, COUNT)
    yield running
    running.stop()


def produce(bootstrap: str, count: int, first: int = 0) -> None:
    producer = RdProducer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(first, first + count):
        producer.produce(TOPIC, value=f"m{i}".encode(), partition=0)
    assert producer.flush(30) == 0


def rd_delete_records(bootstrap: str, offset: int) -> int:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.delete_records([RdTopicPartition(TOPIC, 0, offset)])
    (deleted,) = [future.result(timeout=30) for future in futures.values()]
    return deleted.low_watermark


def watermarks(bootstrap: str) -> tuple[int, int]:
    """(earliest, latest) as a consumer reads them with ListOffsets."""
    consumer = RdConsumer({"bootstrap.servers": bootstrap, "group.id": "watermarks"})
    try:
        return consumer.get_watermark_offsets(RdTopicPartition(TOPIC, 0), timeout=30)
    finally:
        consumer.close()


def first_offset_read(config: dict, seek_to: int | None = None) -> int:
    """The offset of the first message an assigned confluent consumer reads."""
    consumer = RdConsumer({"bootstrap.servers": config.pop("bootstrap"), "group.id": "readers",
                           "enable.auto.commit": False, **config})
    try:
        start = seek_to if seek_to is not None else -2  # OFFSET_BEGINNING
        consumer.assign([RdTopicPartition(TOPIC, 0, start)])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            message = consumer.poll(1)
            if message is not None and message.error() is None:
                return message.offset()
        raise AssertionError("no message within 30 s")
    finally:
        consumer.close()


def test_confluent_delete_records_moves_the_start_for_earliest_consumers_and_list_offsets(node):
    assert rd_delete_records(node.bootstrap, 40) == 40
    assert watermarks(node.bootstrap) == (40, COUNT)
    assert first_offset_read({"bootstrap": node.bootstrap}) == 40
    assert rd_delete_records(node.bootstrap, -1) == COUNT  # OFFSET_END: up to the high watermark
    produce(node.bootstrap, 5, first=COUNT)
    assert first_offset_read({"bootstrap": node.bootstrap}) == COUNT


def test_an_offset_above_the_high_watermark_is_refused_with_offset_out_of_range(node):
    admin = AdminClient({"bootstrap.servers": node.bootstrap})
    (future,) = admin.delete_records([RdTopicPartition(TOPIC, 0, COUNT + 1)]).values()
    with pytest.raises(Exception) as refused:
        future.result(timeout=30)
    assert refused.value.args[0].code() == KafkaError.OFFSET_OUT_OF_RANGE
    assert watermarks(node.bootstrap) == (0, COUNT)


def test_kafka_python_delete_records_and_a_consumer_below_the_start_resets_per_auto_offset_reset(node):
    admin = KafkaAdminClient(bootstrap_servers=node.bootstrap, request_timeout_ms=30_000)
    try:
        answer = admin.delete_records({TopicPartition(TOPIC, 0): 60})
    finally:
        admin.close()
    assert answer[TopicPartition(TOPIC, 0)]["low_watermark"] == 60

    # librdkafka: a fetch at 10 is OFFSET_OUT_OF_RANGE; earliest resets to the new start.
    assert first_offset_read({"bootstrap": node.bootstrap, "auto.offset.reset": "earliest"}, seek_to=10) == 60

    # kafka-python: the same with 'earliest', and with no reset policy the error reaches the caller.
    consumer = KafkaConsumer(bootstrap_servers=node.bootstrap, auto_offset_reset="earliest",
                             enable_auto_commit=False, consumer_timeout_ms=30_000)
    try:
        partition = TopicPartition(TOPIC, 0)
        consumer.assign([partition])
        consumer.seek(partition, 10)
        assert next(iter(consumer)).offset == 60
    finally:
        consumer.close()
    consumer = KafkaConsumer(bootstrap_servers=node.bootstrap, auto_offset_reset="none", enable_auto_commit=False)
    try:
        consumer.assign([partition])
        consumer.seek(partition, 10)
        with pytest.raises(OffsetOutOfRangeError):
            for _ in range(30):
                consumer.poll(timeout_ms=1_000)
    finally:
        consumer.close()


def groupctl(bootstrap: str, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([installed_groupctl(), "--bootstrap", bootstrap, "--output", "json", *args],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert_quiet(done.stdout, done.stderr)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return json.loads(done.stdout)


def test_offsets_reset_to_earliest_lands_at_the_new_start_and_lag_counts_from_the_log_end(node):
    committer = RdConsumer({"bootstrap.servers": node.bootstrap, "group.id": "audit"})
    try:
        committer.commit(offsets=[RdTopicPartition(TOPIC, 0, 20)], asynchronous=False)
    finally:
        committer.close()
    rd_delete_records(node.bootstrap, 70)
    # Lag counts from the log end whatever the start, as kafka-consumer-groups.sh shows it.
    (shown,) = groupctl(node.bootstrap, "offsets", "show", "--group", "audit")
    assert [(o["committed_offset"], o["log_end_offset"], o["lag"]) for o in shown["offsets"]] == [(20, COUNT, 80)]
    assert groupctl(node.bootstrap, "group", "describe", "audit")["offsets"] == shown["offsets"]

    plan = groupctl(node.bootstrap, "offsets", "reset", "audit", "--topic", TOPIC, "--to-earliest", "--execute")
    assert [(p["current_offset"], p["new_offset"]) for p in plan["partitions"]] == [(20, 70)]
    (shown,) = groupctl(node.bootstrap, "offsets", "show", "--group", "audit")
    assert [(o["committed_offset"], o["lag"]) for o in shown["offsets"]] == [(70, 30)]
    consumer = RdConsumer({"bootstrap.servers": node.bootstrap, "group.id": "audit", "auto.offset.reset": "latest"})
    try:
        consumer.subscribe([TOPIC])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            message = consumer.poll(1)
            if message is not None and message.error() is None:
                break
        assert message is not None and message.offset() == 70  # resumes at the committed new start
    finally:
        consumer.close()


def test_the_start_survives_kill_9_and_a_restart(tmp_path):
    data_dir = tmp_path / "data"
    process = CoordinatorProcess("--data-dir", str(data_dir), "--topic", f"{TOPIC}:1",
                                 log_path=tmp_path / "node.log").start()
    try:
        produce(process.bootstrap, COUNT)
        assert rd_delete_records(process.bootstrap, 55) == 55
    finally:
        process.kill()
    restarted = CoordinatorProcess("--data-dir", str(data_dir), log_path=tmp_path / "node.log").start()
    try:
        assert watermarks(restarted.bootstrap) == (55, COUNT)
        assert first_offset_read({"bootstrap": restarted.bootstrap}) == 55
    finally:
        restarted.terminate()
