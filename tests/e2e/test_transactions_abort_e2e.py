"""`groupctl transactions abort` (kafka-transactions.sh abort) on real hanging transactions: a
confluent-kafka (librdkafka) transactional producer abandoned with its transaction open, and a
transactional batch no coordinator knows of (what find-hanging finds). Before the abort a
read_committed consumer waits behind the transaction (the last stable offset stays at its start);
after it the consumer reads past it, the transaction's records skipped, and the partition's
producer state has no open transaction. Aborting is a dry run unless --execute, needs
ClusterAction on the Cluster, and every failure is one line."""

from __future__ import annotations

import json
import subprocess
import time

import confluent_kafka
import pytest
from kafka import KafkaConsumer, TopicPartition
from kafka.record.memory_records import MemoryRecordsBuilder

from groupctl.security.acls import AccessControlEntry, AclBinding, Operation, PatternType, Permission, ResourcePattern
from groupctl.security.acls import ResourceType
from tests.e2e.test_cli_e2e import assert_one_line_error, assert_quiet, installed_groupctl
from tests.support.coordinator import InProcessCoordinator, node_config

TOPIC = "txn-abort"
CLIENT_TIMEOUT_S = 30
ORPHAN_PRODUCER, ORPHAN_EPOCH = 987_654, 3


def run(node, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([installed_groupctl(), "--bootstrap", node.bootstrap, *args], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert_quiet(done.stdout, done.stderr)
    return done


def groupctl_json(node, *args: str):
    done = run(node, "--output", "json", *args)
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


def produce_plain(node, value: bytes) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": node.bootstrap})
    producer.produce(TOPIC, value=value, partition=0)
    assert producer.flush(CLIENT_TIMEOUT_S) == 0


def stable_and_end(node) -> tuple[int, int]:
    """The partition's last stable offset (a read_committed ListOffsets) and its log end."""
    ends = []
    for isolation in ("read_committed", "read_uncommitted"):
        consumer = KafkaConsumer(bootstrap_servers=node.bootstrap, isolation_level=isolation,
                                 request_timeout_ms=10_000)
        try:
            ends.append(consumer.end_offsets([TopicPartition(TOPIC, 0)])[TopicPartition(TOPIC, 0)])
        finally:
            consumer.close()
    return ends[0], ends[1]


def read_committed(node, timeout_s: float = 30) -> list[bytes]:
    """Everything a read_committed librdkafka consumer reads of the partition, up to its log end."""
    settings = {"bootstrap.servers": node.bootstrap, "enable.auto.commit": False, "group.id": "abort-reader"}
    reader = confluent_kafka.Consumer({**settings, "isolation.level": "read_committed"})
    _, end = stable_and_end(node)
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


def producer_of(node, producer_id: int) -> dict:
    [found] = [p for p in groupctl_json(node, "transactions", "describe-producers", "--topic", TOPIC,
                                        "--partition", "0")["producers"] if p["producer_id"] == producer_id]
    return found


def test_an_abandoned_producers_transaction_is_aborted_by_its_start_offset_and_consumers_read_past_it(node):
    producer = confluent_kafka.Producer({"bootstrap.servers": node.bootstrap, "transactional.id": "abandoned",
                                         "transaction.timeout.ms": 600_000, "linger.ms": 5})
    producer.init_transactions(CLIENT_TIMEOUT_S)
    producer.begin_transaction()
    producer.produce(TOPIC, value=b"committed", partition=0)
    producer.commit_transaction(CLIENT_TIMEOUT_S)  # the partition now holds the coordinator's epoch
    producer.begin_transaction()
    producer.produce(TOPIC, value=b"abandoned", partition=0)
    assert producer.flush(CLIENT_TIMEOUT_S) == 0  # ... and never committed
    produce_plain(node, b"after")
    [open_txn] = [p for p in groupctl_json(node, "transactions", "describe-producers", "--topic", TOPIC,
                                           "--partition", "0")["producers"]
                  if p["current_transaction_start_offset"] is not None]
    start = open_txn["current_transaction_start_offset"]
    assert stable_and_end(node)[0] == start  # read_committed consumers wait behind it
    assert open_txn["coordinator_epoch"] >= 1  # the commit's marker: a marker of coordinator epoch 0 is fenced
    fenced = run(node, *abort_args("--producer-id", str(open_txn["producer_id"]), "--producer-epoch",
                                   str(open_txn["producer_epoch"]), "--coordinator-epoch", "0", "--execute"))
    assert_one_line_error(fenced, 1, "TRANSACTION_COORDINATOR_FENCED")

    dry = run(node, *abort_args("--start-offset", str(start)))
    assert dry.returncode == 0 and dry.stdout.startswith(f"would abort the transaction of producer "
                                                         f"{open_txn['producer_id']}")
    assert dry.stderr == "dry run: nothing was aborted (add --execute to abort)\n"
    assert stable_and_end(node)[0] == start

    aborted = groupctl_json(node, *abort_args("--start-offset", str(start), "--execute"))
    assert aborted == {"topic": TOPIC, "partition": 0, "producer_id": open_txn["producer_id"],
                       "producer_epoch": open_txn["producer_epoch"],
                       "coordinator_epoch": open_txn["coordinator_epoch"], "start_offset": start,
                       "aborted": True}
    stable, end = stable_and_end(node)
    assert stable == end
    assert read_committed(node) == [b"committed", b"after"]
    assert producer_of(node, open_txn["producer_id"])["current_transaction_start_offset"] is None
    del producer  # abandoned: its transaction at the coordinator times out long after the test


def test_a_transaction_find_hanging_names_is_aborted_by_its_ids_and_a_stale_epoch_is_refused(node):
    write_orphan(node)
    produce_plain(node, b"after")
    [hanging] = groupctl_json(node, "transactions", "find-hanging", "--topic", TOPIC)["producers"]
    assert (hanging["producer_id"], hanging["producer_epoch"], hanging["coordinator_epoch"],
            hanging["current_transaction_start_offset"]) == (ORPHAN_PRODUCER, ORPHAN_EPOCH, -1, 0)
    assert stable_and_end(node)[0] == 0

    ids = ("--producer-id", str(ORPHAN_PRODUCER), "--producer-epoch", str(ORPHAN_EPOCH))
    done = run(node, *abort_args(*ids, "--coordinator-epoch", "-1", "--execute"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == (f"aborted the transaction of producer {ORPHAN_PRODUCER} (epoch {ORPHAN_EPOCH}, "
                           f"coordinator epoch 0) on {TOPIC}-0\n")
    assert groupctl_json(node, "transactions", "find-hanging", "--topic", TOPIC)["producers"] == []
    assert producer_of(node, ORPHAN_PRODUCER)["coordinator_epoch"] == 0
    assert read_committed(node) == [b"after"]

    stale = run(node, *abort_args("--producer-id", str(ORPHAN_PRODUCER), "--producer-epoch", str(ORPHAN_EPOCH - 1),
                                  "--coordinator-epoch", "0", "--execute"))
    assert_one_line_error(stale, 1, "INVALID_PRODUCER_EPOCH", f"producer {ORPHAN_PRODUCER}")


def test_a_start_offset_no_open_transaction_starts_at_is_one_line_and_aborts_nothing(node):
    write_orphan(node)
    produce_plain(node, b"after")
    assert_one_line_error(run(node, *abort_args("--start-offset", "1", "--execute")), 1,
                          f"no open transaction starts at offset 1 on {TOPIC}-0", "those open there start at 0")
    assert stable_and_end(node)[0] == 0
    assert_one_line_error(run(node, "transactions", "abort", "--topic", "missing", "--partition", "0",
                              "--start-offset", "0"), 1, "topic 'missing' not found")


def test_usage_errors_are_one_line_and_contact_nothing(node):
    assert_one_line_error(run(node, *abort_args()), 2, "--start-offset, or --producer-id")
    assert_one_line_error(run(node, *abort_args("--start-offset", "0", "--producer-id", "7")), 2, "not both")
    assert_one_line_error(run(node, *abort_args("--producer-id", "7", "--producer-epoch", "0")), 2,
                          "missing --coordinator-epoch")
    assert_one_line_error(run(node, *abort_args("--start-offset", "0", "--execute", "--dry-run")), 2,
                          "--dry-run or --execute")


def test_a_principal_without_cluster_action_is_refused(secured_node):
    write_orphan(secured_node)
    assert json.loads(run(secured_node, "--output", "json", *abort_args("--start-offset", "0")).stdout)[
        "producer_id"] == ORPHAN_PRODUCER  # finding it needs Read on the topic only
    refused = run(secured_node, *abort_args("--start-offset", "0", "--execute"))
    assert_one_line_error(refused, 1, "CLUSTER_AUTHORIZATION_FAILED", "ClusterAction on the Cluster")
    assert producer_of(secured_node, ORPHAN_PRODUCER)["current_transaction_start_offset"] == 0
