"""Topic log configs judged by real clients against a node with a data dir: retention deletes a
producer's old segments every --log-retention-check-interval-ms (disk stays bounded, ListOffsets
earliest moves, a consumer at earliest keeps up), max.message.bytes answers MESSAGE_TOO_LARGE to
librdkafka and kafka-python producers, and LogAppendTime reaches consumers and producers; a
subprocess node applies Kafka's default retention.ms at the CLI's interval and keeps the moved
start through kill -9."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import TIMESTAMP_LOG_APPEND_TIME, KafkaError
from confluent_kafka import Consumer as RdConsumer
from confluent_kafka import Producer as RdProducer
from confluent_kafka import TopicPartition as RdTopicPartition
from kafka import KafkaConsumer, KafkaProducer
from kafka.errors import MessageSizeTooLargeError

from groupctl.log import LogConfig
from groupctl.log.config import LOG_APPEND_TIME
from tests.support.coordinator import CoordinatorProcess, InProcessCoordinator, node_config
from tests.support.polling import wait_until

SEGMENT_BYTES = 16 * 1024
RETENTION_BYTES = 64 * 1024
HOUR_MS = 3_600_000


@pytest.fixture
def node(tmp_path):
    config = node_config(data_dir=tmp_path / "data", log_retention_check_interval_ms=100,
                         topics=(("metrics", 1), ("aged", 1), ("small", 1), ("stamped", 1)))
    running = InProcessCoordinator(config).start()
    yield running
    running.stop()


def set_config(node: InProcessCoordinator, topic: str, config: LogConfig) -> None:
    async def apply() -> None:
        node.node.logs.set_topic_config(topic, config)
    node.call(apply())


def log_bytes(node: InProcessCoordinator, topic: str) -> int:
    """The size of the partition's segment files (retention may unlink one while this looks)."""
    total = 0
    for path in (node.config.data_dir / "log" / f"{topic}-0").glob("*.log"):
        try:
            total += path.stat().st_size
        except FileNotFoundError:
            pass
    return total


def earliest_and_latest(bootstrap: str, topic: str) -> tuple[int, int]:
    consumer = RdConsumer({"bootstrap.servers": bootstrap, "group.id": "watermarks"})
    try:
        return consumer.get_watermark_offsets(RdTopicPartition(topic, 0), timeout=30)
    finally:
        consumer.close()


def test_retention_bytes_keeps_the_disk_bounded_under_a_producer_and_an_earliest_consumer_keeps_up(node):
    set_config(node, "metrics", LogConfig(segment_bytes=SEGMENT_BYTES, retention_bytes=RETENTION_BYTES))
    producer = RdProducer({"bootstrap.servers": node.bootstrap, "linger.ms": 5, "batch.size": 4096})
    consumer = RdConsumer({"bootstrap.servers": node.bootstrap, "group.id": "dashboards",
                           "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe(["metrics"])
    bound = RETENTION_BYTES + 2 * SEGMENT_BYTES  # retention leaves less than a segment over, plus the active one
    last_read = -1
    try:
        for round_ in range(8):
            for i in range(300):
                producer.produce("metrics", value=b"v" * 100, partition=0)
            assert producer.flush(30) == 0
            wait_until(lambda: log_bytes(node, "metrics") <= bound, 30, interval=0.05,
                       message="retention brought the log under its bound")
            deadline = time.monotonic() + 30
            while last_read < 300 * (round_ + 1) - 1 and time.monotonic() < deadline:
                message = consumer.poll(0.5)
                if message is not None and message.error() is None:
                    last_read = message.offset()
            assert last_read == 300 * (round_ + 1) - 1, "the earliest consumer keeps up with the producer"
    finally:
        consumer.close()
    earliest, latest = earliest_and_latest(node.bootstrap, "metrics")
    assert latest == 2400 and 0 < earliest < latest
    assert 2400 * 100 > 2 * bound  # what was produced would not have fit without retention


def test_retention_ms_deletes_old_records_and_rolls_an_entirely_expired_active_segment(node):
    set_config(node, "aged", LogConfig(retention_ms=HOUR_MS))
    producer = RdProducer({"bootstrap.servers": node.bootstrap, "linger.ms": 5})
    two_hours_ago = int(time.time() * 1000) - 2 * HOUR_MS
    for i in range(50):
        producer.produce("aged", value=f"old{i}".encode(), partition=0, timestamp=two_hours_ago)
    assert producer.flush(30) == 0
    wait_until(lambda: earliest_and_latest(node.bootstrap, "aged") == (50, 50), 30, interval=0.2,
               message="the expired records are deleted, the active segment with them")
    producer.produce("aged", value=b"fresh", partition=0)
    assert producer.flush(30) == 0
    consumer = RdConsumer({"bootstrap.servers": node.bootstrap, "group.id": "auditors",
                           "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe(["aged"])
        deadline = time.monotonic() + 30
        message = None
        while time.monotonic() < deadline and (message is None or message.error() is not None):
            message = consumer.poll(0.5)
        assert (message.offset(), message.value()) == (50, b"fresh")
    finally:
        consumer.close()


def test_a_batch_above_max_message_bytes_is_message_too_large_for_real_producers(node):
    set_config(node, "small", LogConfig(max_message_bytes=1_000))
    reports = []
    producer = RdProducer({"bootstrap.servers": node.bootstrap, "linger.ms": 0, "retries": 0})
    for value in (b"x" * 5_000, b"fits"):  # one batch each (a batch is refused whole)
        producer.produce("small", value=value, partition=0, on_delivery=lambda err, msg: reports.append(err))
        assert producer.flush(30) == 0
    assert [err.code() if err else None for err in reports] == [KafkaError.MSG_SIZE_TOO_LARGE, None]

    producer = KafkaProducer(bootstrap_servers=node.bootstrap, retries=0)
    try:
        with pytest.raises(MessageSizeTooLargeError):
            producer.send("small", value=b"x" * 5_000, partition=0).get(timeout=30)
        assert producer.send("small", value=b"fits", partition=0).get(timeout=30).offset == 1
    finally:
        producer.close()


def test_log_append_time_reaches_consumers_and_producers(node):
    set_config(node, "stamped", LogConfig(message_timestamp_type=LOG_APPEND_TIME))
    before = int(time.time() * 1000)
    reports = []
    producer = RdProducer({"bootstrap.servers": node.bootstrap})
    producer.produce("stamped", value=b"a", partition=0, timestamp=1_000,
                     on_delivery=lambda err, msg: reports.append((err, msg.timestamp())))
    assert producer.flush(30) == 0
    kp = KafkaProducer(bootstrap_servers=node.bootstrap)
    try:
        sent = kp.send("stamped", value=b"b", partition=0, timestamp_ms=1_000).get(timeout=30)
    finally:
        kp.close()
    after = int(time.time() * 1000)
    ((err, (kind, stamped)),) = reports
    assert err is None and kind == TIMESTAMP_LOG_APPEND_TIME and before <= stamped <= after
    assert before <= sent.timestamp <= after

    consumer = RdConsumer({"bootstrap.servers": node.bootstrap, "group.id": "stamps", "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe(["stamped"])
        deadline = time.monotonic() + 30
        message = None
        while time.monotonic() < deadline and (message is None or message.error() is not None):
            message = consumer.poll(0.5)
        kind, timestamp = message.timestamp()
        assert kind == TIMESTAMP_LOG_APPEND_TIME and before <= timestamp <= after
    finally:
        consumer.close()
    reader = KafkaConsumer("stamped", bootstrap_servers=node.bootstrap, auto_offset_reset="earliest",
                           consumer_timeout_ms=30_000)
    try:
        records = [next(reader), next(reader)]
    finally:
        reader.close()
    assert [(r.timestamp_type, before <= r.timestamp <= after) for r in records] == [(1, True), (1, True)]


def test_kafkas_default_retention_of_seven_days_runs_at_the_cli_interval_and_its_start_survives_kill_9(tmp_path):
    data_dir = tmp_path / "data"
    options = ("--data-dir", str(data_dir), "--topic", "history:1", "--log-retention-check-interval-ms", "100")
    process = CoordinatorProcess(*options, log_path=tmp_path / "node.log").start()
    try:
        producer = RdProducer({"bootstrap.servers": process.bootstrap, "linger.ms": 5})
        eight_days_ago = int(time.time() * 1000) - 8 * 24 * HOUR_MS
        for i in range(10):
            producer.produce("history", value=f"h{i}".encode(), partition=0, timestamp=eight_days_ago)
        assert producer.flush(30) == 0
        wait_until(lambda: earliest_and_latest(process.bootstrap, "history") == (10, 10), 30, interval=0.2,
                   message="records older than retention.ms' default 7 days are deleted")
    finally:
        process.kill()
    restarted = CoordinatorProcess(*options, log_path=tmp_path / "node.log").start()
    try:
        assert earliest_and_latest(restarted.bootstrap, "history") == (10, 10)
    finally:
        restarted.terminate()
