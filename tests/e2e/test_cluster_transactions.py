"""Transactions across a cluster of three groupctl nodes, with unmodified confluent-kafka clients:
the transactional id is coordinated by one node, the consumer group by another, and the output
topic has a partition on each node. The coordinator writes the markers through the partition
leaders (WriteTxnMarkers between nodes), the leaders verify each transactional batch with the
coordinator (AddPartitionsToTxn VerifyOnly between nodes), and the group's node applies or drops
the transaction's offsets. A commit makes the output visible to read_committed consumers and the
group's committed offset move; an abort shows neither. When the coordinator is killed (kill -9)
after the commit was requested and before its markers could all be written, the node that takes
the transactional id's partition over completes the commit (the producer's next transaction,
aborted, proves it wrote CompleteCommit); killed while the transaction is open, the next
coordinator takes the producer's commit. Nothing committed is lost and nothing aborted becomes
visible."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from kafka import KafkaAdminClient

from groupctl.coordinator.leadership import preferred_node
from groupctl.coordinator.placement import group_partition
from tests.support.cluster import GROUP_PARTITIONS, running
from tests.support.polling import wait_until

pytestmark = pytest.mark.zookeeper

NODES = (0, 1, 2)
TXN_NODE, GROUP_NODE = 0, 1
IN, OUT = "eos-in", "eos-out"
CLIENT_TIMEOUT_S = 30


def placed_on(node_id: int, prefix: str) -> str:
    """A name whose group partition the election gives to `node_id` while all three are live."""
    return next(name for name in (f"{prefix}-{i}" for i in range(1000))
                if preferred_node(group_partition(name, GROUP_PARTITIONS), set(NODES)) == node_id)


TXN_ID = placed_on(TXN_NODE, "eos-tx")
GROUP = placed_on(GROUP_NODE, "eos-app")


@pytest.fixture
def cluster(zk_connect, tmp_path):
    with running(zk_connect, tmp_path, len(NODES), handback_delay_s=1.0) as started:
        admin = KafkaAdminClient(bootstrap_servers=started.bootstrap(), request_timeout_ms=10000)
        try:
            admin.create_topics({IN: {"assignments": {0: [2]}}, OUT: {"assignments": {n: [n] for n in NODES}}})
        finally:
            admin.close()
        wait_until(lambda: started.leader_of(TXN_ID) == TXN_NODE and started.leader_of(GROUP) == GROUP_NODE,
                   timeout=30, message="the transactional id and the group settle on their nodes")
        yield started


def fill_input(bootstrap: str, values: list[bytes]) -> None:
    source = Producer({"bootstrap.servers": bootstrap})
    for value in values:
        source.produce(IN, value=value, partition=0)
    assert source.flush(CLIENT_TIMEOUT_S) == 0


def input_consumer(bootstrap: str) -> Consumer:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
    consumer.assign([TopicPartition(IN, 0, 0)])
    return consumer


def consume(consumer: Consumer, count: int) -> list:
    got: list = []
    deadline = time.monotonic() + 30
    while len(got) < count and time.monotonic() < deadline:
        got += [m for m in consumer.consume(num_messages=count - len(got), timeout=0.5) if m.error() is None]
    assert len(got) == count, f"read {len(got)} of {count} input messages"
    return got


def transactional_producer(bootstrap: str) -> Producer:
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": TXN_ID,
                         "transaction.timeout.ms": 60000})
    producer.init_transactions(CLIENT_TIMEOUT_S)
    return producer


def transform(producer: Producer, consumer: Consumer, messages: list, partitions=NODES) -> None:
    """Every input value, upper-cased, to each output partition (one per node by default), and
    the consumer's position, in the producer's open transaction."""
    producer.begin_transaction()
    for message in messages:
        for partition in partitions:
            producer.produce(OUT, value=message.value().upper(), partition=partition)
    producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                         consumer.consumer_group_metadata(), CLIENT_TIMEOUT_S)


def committed_values(bootstrap: str, partition: int, timeout_s: float = 60) -> list[bytes]:
    """What a read_committed consumer reads of OUT's `partition` once its position is the log end
    (the high watermark, asked again each round): it gets there only when no transaction is open
    in the partition, every marker written."""
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{partition}-{time.monotonic_ns()}",
                       "enable.auto.commit": False, "isolation.level": "read_committed"})
    probe = Consumer({"bootstrap.servers": bootstrap, "group.id": "probe", "isolation.level": "read_uncommitted"})
    got: list[bytes] = []
    try:
        reader.assign([TopicPartition(OUT, partition, 0)])
        position, end = -1, 0
        deadline = time.monotonic() + timeout_s
        while position != end and time.monotonic() < deadline:
            got += [m.value() for m in reader.consume(num_messages=500, timeout=0.5) if m.error() is None]
            position = reader.position([TopicPartition(OUT, partition)])[0].offset
            _, end = probe.get_watermark_offsets(TopicPartition(OUT, partition), timeout=CLIENT_TIMEOUT_S)
    finally:
        reader.close()
        probe.close()
    assert position == end, f"the read_committed consumer of {OUT}-{partition} stopped at {position}, not at {end}"
    return got


def committed_input_offset(bootstrap: str) -> int:
    checker = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "enable.auto.commit": False})
    try:
        return checker.committed([TopicPartition(IN, 0)], timeout=CLIENT_TIMEOUT_S)[0].offset
    finally:
        checker.close()


def test_a_transaction_spanning_three_nodes_commits_and_aborts_everywhere(cluster):
    bootstrap = cluster.bootstrap()
    fill_input(bootstrap, [b"a", b"b", b"c", b"d"])
    producer = transactional_producer(bootstrap)
    consumer = input_consumer(bootstrap)
    try:
        transform(producer, consumer, consume(consumer, 2))
        producer.commit_transaction(CLIENT_TIMEOUT_S)
        assert committed_input_offset(bootstrap) == 2
        transform(producer, consumer, consume(consumer, 2))
        producer.abort_transaction(CLIENT_TIMEOUT_S)
        assert committed_input_offset(bootstrap) == 2  # the aborted transaction's offsets never show
    finally:
        consumer.close()
    for partition in NODES:
        assert committed_values(bootstrap, partition) == [b"A", b"B"]


def test_a_commit_whose_coordinator_is_killed_before_its_markers_are_written_completes_on_the_next_coordinator(
        cluster):
    bootstrap = cluster.bootstrap()
    fill_input(bootstrap, [b"a", b"b", b"c", b"d"])
    producer = transactional_producer(bootstrap)
    consumer = input_consumer(bootstrap)
    try:
        transform(producer, consumer, consume(consumer, 2), partitions=(1, 2))  # not on the node killed
        assert producer.flush(CLIENT_TIMEOUT_S) == 0  # every batch acknowledged, so the commit only ends it
        cluster.pause(2)  # the leader of OUT-2: the coordinator cannot write that marker now
        producer.commit_transaction(CLIENT_TIMEOUT_S)  # answered once PrepareCommit is stored
        cluster.kill(TXN_NODE)
        cluster.resume(2)
        survivors = cluster.bootstrap(1, 2)
        wait_until(lambda: cluster.leader_of(TXN_ID) in (1, 2), timeout=30,
                   message="a surviving node takes the transactional id over")
        for partition in (1, 2):
            assert committed_values(survivors, partition) == [b"A", b"B"]
        assert committed_input_offset(survivors) == 2
        # The producer carries on with the new coordinator: an aborted transaction shows nothing.
        transform(producer, consumer, consume(consumer, 2), partitions=(1, 2))
        producer.abort_transaction(CLIENT_TIMEOUT_S)
    finally:
        consumer.close()
    assert committed_input_offset(survivors) == 2
    for partition in (1, 2):
        assert committed_values(survivors, partition) == [b"A", b"B"]


def test_a_transaction_open_when_its_coordinator_is_killed_commits_through_the_next_coordinator(cluster):
    bootstrap = cluster.bootstrap()
    fill_input(bootstrap, [b"a", b"b"])
    producer = transactional_producer(bootstrap)
    consumer = input_consumer(bootstrap)
    try:
        transform(producer, consumer, consume(consumer, 2), partitions=(1, 2))
        assert producer.flush(CLIENT_TIMEOUT_S) == 0
        cluster.kill(TXN_NODE)  # the transaction is open: its partitions and the group's are stored
        survivors = cluster.bootstrap(1, 2)
        wait_until(lambda: cluster.leader_of(TXN_ID) in (1, 2), timeout=30,
                   message="a surviving node takes the transactional id over")
        producer.commit_transaction(CLIENT_TIMEOUT_S)
    finally:
        consumer.close()
    for partition in (1, 2):
        assert committed_values(survivors, partition) == [b"A", b"B"]
    assert committed_input_offset(survivors) == 2
