"""Leader epochs rise whenever a node starts leading its partitions (KIP-101), with real clients:
a restart with the same data dir raises the epoch Metadata reports (embedded store and ZooKeeper),
OffsetForLeaderEpoch still answers the old epoch's end offset, new batches carry the new epoch,
kafka-python and librdkafka consumers read on across the restart without a truncation or an
error, and in a two-node ZooKeeper cluster the other node reports the raised epoch.
DescribeTopicPartitions reports the same epoch, and a log start that DeleteRecords moves keeps
the epoch of the batch it lands in."""

from __future__ import annotations

import json
import logging
import time
from dataclasses import replace

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from kafka import KafkaAdminClient, KafkaConsumer
from kazoo.client import KazooClient
from kafka.admin import NewTopic
from kafka.structs import TopicPartition as KafkaTopicPartition
from kafka.protocol.consumer import ListOffsetsRequest, OffsetForLeaderEpochRequest
from kafka.protocol.metadata import MetadataRequest

from groupctl.store.zookeeper import split_connect
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.polling import wait_until
from tests.support.wire import exchange

pytestmark = pytest.mark.zookeeper
TOPIC = "epochs"


@pytest.fixture(params=["embedded", "zookeeper"])
def store_config(request, tmp_path):
    zk = request.getfixturevalue("zk_connect") if request.param == "zookeeper" else None
    return node_config(data_dir=tmp_path / "data", zk=zk)


def produce(bootstrap: str, values: range, topic: str = TOPIC, partition: int = 0) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "broker.address.family": "v4"})
    for i in values:
        producer.produce(topic, f"v{i}".encode(), partition=partition)
    assert producer.flush(15) == 0


def metadata_epochs(node, topic: str = TOPIC) -> dict[int, int]:
    request = MetadataRequest[12](topics=[MetadataRequest[12].MetadataRequestTopic(name=topic, topic_id=None)],
                                  allow_auto_topic_creation=False, include_topic_authorized_operations=False)
    (answer,) = exchange(node, request, 12).topics
    return {p.partition_index: p.leader_epoch for p in answer.partitions}


def brokers(node) -> list[int]:
    request = MetadataRequest[12](topics=[], allow_auto_topic_creation=False, include_topic_authorized_operations=False)
    return [broker.node_id for broker in exchange(node, request, 12).brokers]


def end_offset_of(node, epoch: int) -> tuple[int, int, int]:
    request_class = OffsetForLeaderEpochRequest[4]
    topic = request_class.OffsetForLeaderTopic
    request = request_class(replica_id=-1, topics=[topic(topic=TOPIC, partitions=[topic.OffsetForLeaderPartition(
        partition=0, current_leader_epoch=-1, leader_epoch=epoch)])])
    answer = exchange(node, request, 4).topics[0].partitions[0]
    return answer.error_code, answer.leader_epoch, answer.end_offset


def test_a_restart_raises_the_epoch_and_the_old_epochs_keep_their_end_offsets(store_config):
    node = InProcessCoordinator(store_config).start()
    try:
        produce(node.bootstrap, range(3))
        assert metadata_epochs(node) == {0: 0}
    finally:
        node.stop()
    for restart in (1, 2):
        node = InProcessCoordinator(replace(store_config, port=0)).start()
        try:
            assert metadata_epochs(node) == {0: restart}
            produce(node.bootstrap, range(2))
            assert end_offset_of(node, restart) == (0, restart, 3 + 2 * restart)
            assert end_offset_of(node, restart - 1) == (0, restart - 1, 3 + 2 * (restart - 1))
            assert end_offset_of(node, 0) == (0, 0, 3)
        finally:
            node.stop()
    checkpoint = store_config.data_dir / "log" / f"{TOPIC}-0" / "leader-epoch-checkpoint"
    assert checkpoint.read_text() == "0\n3\n0 0\n1 3\n2 5\n"


class Readers:
    """A kafka-python and a librdkafka consumer of TOPIC in groups of their own: (offset, epoch)
    of every record each has read, and librdkafka's consumer errors."""

    def __init__(self, bootstrap: str) -> None:
        self.kafka_python = KafkaConsumer(TOPIC, bootstrap_servers=bootstrap, group_id="kp",
                                          auto_offset_reset="earliest", metadata_max_age_ms=500)
        self.librdkafka = Consumer({"bootstrap.servers": bootstrap, "group.id": "rd", "auto.offset.reset": "earliest",
                                    "broker.address.family": "v4", "topic.metadata.refresh.interval.ms": 500})
        self.librdkafka.subscribe([TOPIC])
        self.read: dict[str, list[tuple[int, int]]] = {"kafka-python": [], "librdkafka": []}
        self.errors: list[str] = []

    def read_until(self, count: int, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while min(len(r) for r in self.read.values()) < count and time.monotonic() < deadline:
            for records in self.kafka_python.poll(200).values():
                self.read["kafka-python"] += [(r.offset, r.leader_epoch) for r in records]
            message = self.librdkafka.poll(0.2)
            if message is not None and message.error() is not None:
                self.errors.append(str(message.error()))
            elif message is not None:
                self.read["librdkafka"].append((message.offset(), message.leader_epoch()))

    def close(self) -> None:
        self.kafka_python.close()
        self.librdkafka.close()


def test_consumers_read_on_across_a_restart_without_truncation_or_errors(store_config, caplog):
    caplog.set_level(logging.WARNING, logger="kafka")
    node = InProcessCoordinator(store_config).start()
    port = node.port
    produce(node.bootstrap, range(5))
    readers = Readers(node.bootstrap)
    try:
        readers.read_until(5)
        node.stop()
        node = InProcessCoordinator(replace(store_config, port=port)).start()
        produce(node.bootstrap, range(5, 10))
        readers.read_until(10)
    finally:
        readers.close()
        node.stop()
    expected = [(offset, 0 if offset < 5 else 1) for offset in range(10)]
    assert readers.read == {"kafka-python": expected, "librdkafka": expected}
    assert readers.errors == []
    complaints = [r.getMessage() for r in caplog.records
                  if "IncompatibleBrokerVersion" in r.getMessage() or "runcation" in r.getMessage()]
    assert complaints == []


def test_the_other_node_of_a_cluster_reports_the_raised_epoch(zk_connect, tmp_path):
    configs = [node_config(node_id=n, zk=zk_connect, data_dir=tmp_path / f"data-{n}") for n in (0, 1)]
    nodes = [InProcessCoordinator(config).start() for config in configs]
    try:
        wait_until(lambda: all(len(brokers(node)) == 2 for node in nodes), 15, message="each node sees both")
        admin = KafkaAdminClient(bootstrap_servers=nodes[1].bootstrap)
        try:
            admin.create_topics([NewTopic(TOPIC, replica_assignments={0: [0], 1: [1]})])
        finally:
            admin.close()
        wait_until(lambda: metadata_epochs(nodes[0]) == {0: 0, 1: 0}, 15, message="both nodes know the topic")
        nodes[0].stop()
        nodes[0] = InProcessCoordinator(replace(configs[0], port=0)).start()
        assert metadata_epochs(nodes[0]) == {0: 1, 1: 0}
        wait_until(lambda: metadata_epochs(nodes[1]) == {0: 1, 1: 0}, 15, message="node 1 sees the raised epoch")
    finally:
        for node in nodes:
            node.stop()


def test_a_topic_document_that_lost_its_epochs_is_raised_above_the_epoch_the_log_led_at(zk_connect, tmp_path):
    config = node_config(zk=zk_connect, data_dir=tmp_path / "data")
    for restart in range(3):  # leads at epochs 0, 1, 2
        node = InProcessCoordinator(replace(config, port=0)).start()
        try:
            produce(node.bootstrap, range(2))
        finally:
            node.stop()
    hosts, chroot = split_connect(zk_connect)
    client = KazooClient(hosts=hosts)
    client.start(timeout=10)
    try:  # as an older node rewrites it: without the leader_epochs field
        path = f"{chroot}/brokers/topics/{TOPIC}"
        document = json.loads(client.get(path)[0])
        assert document.pop("leader_epochs") == {"0": 2}
        client.set(path, json.dumps(document).encode())
    finally:
        client.stop()
        client.close()
    node = InProcessCoordinator(replace(config, port=0)).start()
    try:
        assert metadata_epochs(node) == {0: 3}
        assert end_offset_of(node, 2) == (0, 2, 6)
        assert end_offset_of(node, 1) == (0, 1, 4)
        produce(node.bootstrap, range(1))
        assert end_offset_of(node, 3) == (0, 3, 7)
    finally:
        node.stop()


def test_librdkafka_resumes_from_an_offset_committed_with_its_epoch_after_a_restart(store_config):
    node = InProcessCoordinator(store_config).start()
    produce(node.bootstrap, range(4))
    consumer = Consumer({"bootstrap.servers": node.bootstrap, "group.id": "resume", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "broker.address.family": "v4"})
    try:
        consumer.subscribe([TOPIC])
        read = []
        deadline = time.monotonic() + 30
        while len(read) < 2 and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                read.append(message)
        consumer.commit(message=read[1], asynchronous=False)
    finally:
        consumer.close()
        node.stop()
    node = InProcessCoordinator(replace(store_config, port=0)).start()
    consumer = Consumer({"bootstrap.servers": node.bootstrap, "group.id": "resume", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "broker.address.family": "v4"})
    try:
        consumer.subscribe([TOPIC])
        read, errors = [], []
        deadline = time.monotonic() + 30
        while len(read) < 2 and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is not None:
                errors.append(str(message.error()))
            elif message is not None:
                read.append((message.offset(), message.leader_epoch()))
        committed = consumer.committed([TopicPartition(TOPIC, 0)], timeout=10)[0]
        assert (committed.offset, committed.leader_epoch) == (2, 0)
        assert (read, errors) == ([(2, 0), (3, 0)], [])
    finally:
        consumer.close()
        node.stop()


def test_after_a_restart_describe_topic_partitions_and_a_log_start_moved_by_delete_records_carry_the_raised_epoch(
        tmp_path):
    config = node_config(data_dir=tmp_path / "data")
    node = InProcessCoordinator(config).start()
    try:
        produce(node.bootstrap, range(3))
    finally:
        node.stop()
    node = InProcessCoordinator(replace(config, port=0)).start()
    admin = KafkaAdminClient(bootstrap_servers=node.bootstrap, request_timeout_ms=10_000)
    try:
        produce(node.bootstrap, range(2))
        [topic] = admin.describe_topic_partitions([TOPIC])["topics"]
        assert [p["leader_epoch"] for p in topic["partitions"]] == [1] == list(metadata_epochs(node).values())
        admin.delete_records({KafkaTopicPartition(TOPIC, 0): 4})
        request_class = ListOffsetsRequest[10]
        wanted = request_class.ListOffsetsTopic(name=TOPIC, partitions=[
            request_class.ListOffsetsTopic.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1,
                                                                timestamp=-2)])
        answer = exchange(node, request_class(replica_id=-1, isolation_level=0, topics=[wanted], timeout_ms=5000),
                          10).topics[0].partitions[0]
        assert (answer.error_code, answer.offset, answer.leader_epoch) == (0, 4, 1)
        assert end_offset_of(node, 1) == (0, 1, 5)
    finally:
        admin.close()
        node.stop()
    checkpoint = config.data_dir / "log" / f"{TOPIC}-0" / "leader-epoch-checkpoint"
    assert checkpoint.read_text() == "0\n2\n0 0\n1 3\n"  # truncated from the start when the log opens
