"""`groupctl transactions abort` (kafka-transactions.sh abort) on real hanging transactions: a
confluent-kafka (librdkafka) transactional producer abandoned with its transaction open, and a
transactional batch no coordinator knows of (what find-hanging finds). Before the abort a
read_committed consumer waits behind the transaction (the last stable offset stays at its start);
after it the consumer reads past it, the transaction's records skipped, and the partition's
producer state has no open transaction. Aborting is a dry run unless --execute, needs
ClusterAction on the Cluster, and every failure is one line. In a cluster the marker reaches the
partition's leader whichever node is asked first."""

from __future__ import annotations

import json
import subprocess
import time

import confluent_kafka
import pytest
from kafka import KafkaConsumer, TopicPartition
from kafka.record.memory_records import MemoryRecordsBuilder

from groupctl.client.kafka import KafkaClient
from groupctl.client.transaction_apis import describe_producers
from groupctl.ops.transactions import _producers, _write_abort, spec_at_start_offset
from groupctl.security.acls import AccessControlEntry, AclBinding, Operation, PatternType, Permission, ResourcePattern
from groupctl.security.acls import ResourceType
from tests.e2e.test_cli_e2e import assert_one_line_error, assert_quiet, installed_groupctl
from tests.support.cluster import create_topic_on, running
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.polling import wait_until

TOPIC = "txn-abort"
CLIENT_TIMEOUT_S = 30
ORPHAN_PRODUCER, ORPHAN_EPOCH = 987_654, 3


def run(bootstrap: str, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([installed_groupctl(), "--bootstrap", bootstrap, *args], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert_quiet(done.stdout, done.stderr)
    return done


def groupctl_json(bootstrap: str, *args: str):
    done = run(bootstrap, "--output", "json", *args)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return json.loads(done.stdout)


def abort_args(*args: str) -> tuple[str, ...]:
    return ("transactions", "abort", "--topic", TOPIC, "--partition", "0", *args)


@pytest.fixture
def node(coordinator):
    coordinator.call(coordinator.node.topics.get_or_create(TOPIC, 1))
    return coordinator


@pytest.fixture
def secured_node():
    """The authorizer on; a Cluster ACL for someone else, so the CLI's principal (ANONYMOUS, found
    in no ACL otherwise) may read the topic but has no ClusterAction."""
    node = InProcessCoordinator(node_config(authorizer=True, allow_everyone_if_no_acl_found=True)).start()
    try:
        node.call(node.node.topics.get_or_create(TOPIC, 1))
        binding = AclBinding(ResourcePattern(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL),
                             AccessControlEntry("User:ops", "*", Operation.CLUSTER_ACTION, Permission.ALLOW))
        assert node.call(node.node.authorizer.create([binding])) == [None]
        yield node
    finally:
        node.stop()


def write_orphan(node) -> None:
    """A transactional batch whose producer's coordinator is long gone: open in the log, known to
    no coordinator, last written in 1970 (older than any transaction timeout)."""
    async def write():
        log = await node.node.logs.open(TOPIC, 0)
        builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
        builder.set_producer_state(ORPHAN_PRODUCER, ORPHAN_EPOCH, 0, True)
        builder.append(1_000, None, b"orphan")
        builder.close()
        log.append(bytes(builder.buffer()))
    node.call(write())


def abandoned_producer(bootstrap: str) -> confluent_kafka.Producer:
    """A transactional producer whose transactions its coordinator would time out only after the
    test (10 minutes)."""
    return confluent_kafka.Producer({"bootstrap.servers": bootstrap, "transactional.id": "abandoned",
                                     "transaction.timeout.ms": 600_000, "linger.ms": 5})


def produce_plain(bootstrap: str, value: bytes) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    producer.produce(TOPIC, value=value, partition=0)
    assert producer.flush(CLIENT_TIMEOUT_S) == 0


def stable_and_end(bootstrap: str) -> tuple[int, int]:
    """The partition's last stable offset (a read_committed ListOffsets) and its log end."""
    ends = []
    for isolation in ("read_committed", "read_uncommitted"):
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation,
                                 request_timeout_ms=10_000)
        try:
            ends.append(consumer.end_offsets([TopicPartition(TOPIC, 0)])[TopicPartition(TOPIC, 0)])
        finally:
            consumer.close()
    return ends[0], ends[1]


def read_committed(bootstrap: str, timeout_s: float = 30) -> list[bytes]:
    """Everything a read_committed librdkafka consumer reads of the partition, up to its log end."""
    settings = {"bootstrap.servers": bootstrap, "enable.auto.commit": False, "group.id": "abort-reader"}
    reader = confluent_kafka.Consumer({**settings, "isolation.level": "read_committed"})
    _, end = stable_and_end(bootstrap)
    got: list[bytes] = []
    position = -1
    try:
        reader.assign([confluent_kafka.TopicPartition(TOPIC, 0, 0)])
        deadline = time.monotonic() + timeout_s
        while position != end and time.monotonic() < deadline:
            got += [m.value() for m in reader.consume(num_messages=100, timeout=0.5) if m.error() is None]
            position = reader.position([confluent_kafka.TopicPartition(TOPIC, 0)])[0].offset
    finally:
        reader.close()
    assert position == end, f"the read_committed consumer stopped at {position}, not {end}"
    return got


def producer_of(bootstrap: str, producer_id: int, partition: int = 0) -> dict:
    [found] = [p for p in groupctl_json(bootstrap, "transactions", "describe-producers", "--topic", TOPIC,
                                        "--partition", str(partition))["producers"] if p["producer_id"] == producer_id]
    return found


def test_an_abandoned_producers_transaction_is_aborted_by_its_start_offset_and_consumers_read_past_it(node):
    bootstrap = node.bootstrap
    producer = abandoned_producer(bootstrap)
    producer.init_transactions(CLIENT_TIMEOUT_S)
    producer.begin_transaction()
    producer.produce(TOPIC, value=b"committed", partition=0)
    producer.commit_transaction(CLIENT_TIMEOUT_S)  # the partition now holds the coordinator's epoch
    producer.begin_transaction()
    producer.produce(TOPIC, value=b"abandoned", partition=0)
    assert producer.flush(CLIENT_TIMEOUT_S) == 0  # ... and never committed
    produce_plain(bootstrap, b"after")
    [open_txn] = [p for p in groupctl_json(bootstrap, "transactions", "describe-producers", "--topic", TOPIC,
                                           "--partition", "0")["producers"]
                  if p["current_transaction_start_offset"] is not None]
    start = open_txn["current_transaction_start_offset"]
    assert stable_and_end(bootstrap)[0] == start  # read_committed consumers wait behind it
    assert open_txn["coordinator_epoch"] >= 1  # the commit's marker: a marker of coordinator epoch 0 is fenced
    fenced = run(bootstrap, *abort_args("--producer-id", str(open_txn["producer_id"]), "--producer-epoch",
                                        str(open_txn["producer_epoch"]), "--coordinator-epoch", "0", "--execute"))
    assert_one_line_error(fenced, 1, "TRANSACTION_COORDINATOR_FENCED")

    dry = run(bootstrap, *abort_args("--start-offset", str(start)))
    assert dry.returncode == 0 and dry.stdout.startswith(f"would abort the transaction of producer "
                                                         f"{open_txn['producer_id']}")
    assert dry.stderr == "dry run: nothing was aborted (add --execute to abort)\n"
    assert stable_and_end(bootstrap)[0] == start

    aborted = groupctl_json(bootstrap, *abort_args("--start-offset", str(start), "--execute"))
    assert aborted == {"topic": TOPIC, "partition": 0, "producer_id": open_txn["producer_id"],
                       "producer_epoch": open_txn["producer_epoch"],
                       "coordinator_epoch": open_txn["coordinator_epoch"], "start_offset": start,
                       "aborted": True}
    stable, end = stable_and_end(bootstrap)
    assert stable == end
    assert read_committed(bootstrap) == [b"committed", b"after"]
    assert producer_of(bootstrap, open_txn["producer_id"])["current_transaction_start_offset"] is None
    del producer  # abandoned: its transaction at the coordinator times out long after the test


def test_a_transaction_find_hanging_names_is_aborted_by_its_ids_and_a_stale_epoch_is_refused(node):
    bootstrap = node.bootstrap
    write_orphan(node)
    produce_plain(bootstrap, b"after")
    [hanging] = groupctl_json(bootstrap, "transactions", "find-hanging", "--topic", TOPIC)["producers"]
    assert (hanging["producer_id"], hanging["producer_epoch"], hanging["coordinator_epoch"],
            hanging["current_transaction_start_offset"]) == (ORPHAN_PRODUCER, ORPHAN_EPOCH, -1, 0)
    assert stable_and_end(bootstrap)[0] == 0

    ids = ("--producer-id", str(ORPHAN_PRODUCER), "--producer-epoch", str(ORPHAN_EPOCH))
    done = run(bootstrap, *abort_args(*ids, "--coordinator-epoch", "-1", "--execute"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == (f"aborted the transaction of producer {ORPHAN_PRODUCER} (epoch {ORPHAN_EPOCH}, "
                           f"coordinator epoch 0) on {TOPIC}-0\n")
    assert groupctl_json(bootstrap, "transactions", "find-hanging", "--topic", TOPIC)["producers"] == []
    assert producer_of(bootstrap, ORPHAN_PRODUCER)["coordinator_epoch"] == 0
    assert read_committed(bootstrap) == [b"after"]

    stale = run(bootstrap, *abort_args("--producer-id", str(ORPHAN_PRODUCER), "--producer-epoch",
                                       str(ORPHAN_EPOCH - 1), "--coordinator-epoch", "0", "--execute"))
    assert_one_line_error(stale, 1, "INVALID_PRODUCER_EPOCH", f"producer {ORPHAN_PRODUCER}")


def test_a_start_offset_no_open_transaction_starts_at_is_one_line_and_aborts_nothing(node):
    bootstrap = node.bootstrap
    write_orphan(node)
    produce_plain(bootstrap, b"after")
    assert_one_line_error(run(bootstrap, *abort_args("--start-offset", "1", "--execute")), 1,
                          f"no open transaction starts at offset 1 on {TOPIC}-0", "those open there start at 0")
    assert stable_and_end(bootstrap)[0] == 0
    assert_one_line_error(run(bootstrap, "transactions", "abort", "--topic", "missing", "--partition", "0",
                              "--start-offset", "0"), 1, "topic 'missing' not found")


def test_usage_errors_are_one_line_and_contact_nothing():
    bootstrap = "127.0.0.1:9"  # nothing listens: contacting it would be exit 1
    assert_one_line_error(run(bootstrap, *abort_args()), 2, "--start-offset, or --producer-id")
    assert_one_line_error(run(bootstrap, *abort_args("--start-offset", "0", "--producer-id", "7")), 2, "not both")
    assert_one_line_error(run(bootstrap, *abort_args("--producer-id", "7", "--producer-epoch", "0")), 2,
                          "missing --coordinator-epoch")
    assert_one_line_error(run(bootstrap, *abort_args("--start-offset", "0", "--execute", "--dry-run")), 2,
                          "--dry-run or --execute")


def test_a_principal_without_cluster_action_is_refused(secured_node):
    bootstrap = secured_node.bootstrap
    write_orphan(secured_node)
    assert json.loads(run(bootstrap, "--output", "json", *abort_args("--start-offset", "0")).stdout)[
        "producer_id"] == ORPHAN_PRODUCER  # finding it needs Read on the topic only
    refused = run(bootstrap, *abort_args("--start-offset", "0", "--execute"))
    assert_one_line_error(refused, 1, "CLUSTER_AUTHORIZATION_FAILED", "ClusterAction on the Cluster")
    assert producer_of(bootstrap, ORPHAN_PRODUCER)["current_transaction_start_offset"] == 0


@pytest.mark.zookeeper
def test_the_marker_goes_to_the_partitions_leader_whichever_node_is_asked_first(zk_connect, tmp_path):
    with running(zk_connect, tmp_path, 2) as cluster:
        create_topic_on(cluster.bootstrap(), TOPIC, 2, node_id=1)
        producer = abandoned_producer(cluster.bootstrap())
        producer.init_transactions(CLIENT_TIMEOUT_S)
        producer.begin_transaction()
        for partition in (0, 1):
            producer.produce(TOPIC, value=b"abandoned", partition=partition)
        assert producer.flush(CLIENT_TIMEOUT_S) == 0
        produce_plain(cluster.bootstrap(), b"after")
        not_the_leader = cluster.bootstrap(0)
        wait_until(lambda: run(not_the_leader, "transactions", "describe-producers", "--topic", TOPIC,
                               "--partition", "0").returncode == 0, timeout=20, message="node 0 knows the topic")

        # the CLI, bootstrapped from node 0, finds the leader (node 1) through Metadata
        aborted = groupctl_json(not_the_leader, *abort_args("--start-offset", "0", "--execute"))
        assert aborted["aborted"] and aborted["start_offset"] == 0
        stable, end = stable_and_end(cluster.bootstrap())
        assert stable == end
        assert read_committed(cluster.bootstrap()) == [b"after"]

        # a marker sent to node 0 (NOT_LEADER_OR_FOLLOWER) is sent again to the leader Metadata names
        with KafkaClient(not_the_leader) as client:
            node_0 = client.metadata([]).brokers[0]
            spec = spec_at_start_offset(TOPIC, 1, [p.producer for p in _producers(describe_producers(
                client, client.metadata([TOPIC]).leader(TOPIC, 1), {TOPIC: [1]}))], 0)
            _write_abort(client, node_0, spec)
        after = producer_of(cluster.bootstrap(), spec.producer_id, partition=1)
        assert after["current_transaction_start_offset"] is None
        del producer
