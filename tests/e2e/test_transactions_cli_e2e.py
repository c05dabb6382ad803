"""The installed `groupctl transactions` on what real transactional producers did: confluent-kafka
(librdkafka) producers with an open transaction are listed with their partitions, described at
their coordinator, and seen in the partition's producer state; after the commit the id is
CompleteCommit and the partition has no open transaction. `find-hanging` finds a transaction a
partition holds open that no coordinator knows of. Failures are one line."""

from __future__ import annotations

import json
import subprocess

import pytest
from confluent_kafka import Producer as RdProducer
from kafka.record.memory_records import MemoryRecordsBuilder

from tests.e2e.test_cli_e2e import assert_one_line_error, assert_quiet, installed_groupctl
from tests.support.polling import wait_until

TOPIC = "txn-cli"
CLIENT_TIMEOUT_S = 30


def run(node, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([installed_groupctl(), "--bootstrap", node.bootstrap, *args], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert_quiet(done.stdout, done.stderr)
    return done


def groupctl_json(node, *args: str):
    done = run(node, "--output", "json", *args)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return json.loads(done.stdout)


@pytest.fixture
def node(coordinator):
    coordinator.call(coordinator.node.topics.get_or_create(TOPIC, 2))
    return coordinator


@pytest.fixture
def open_transaction(node):
    """A librdkafka producer with a transaction open on both partitions of TOPIC."""
    producer = RdProducer({"bootstrap.servers": node.bootstrap, "transactional.id": "cli-orders",
                           "linger.ms": 5})
    producer.init_transactions(CLIENT_TIMEOUT_S)
    producer.begin_transaction()
    for partition in (0, 1):
        producer.produce(TOPIC, value=b"pending", partition=partition)
    producer.flush(CLIENT_TIMEOUT_S)
    yield producer
    if node.node.transactions.core.describe("cli-orders").view.state == "Ongoing":
        producer.abort_transaction(CLIENT_TIMEOUT_S)


def test_an_open_transaction_is_listed_described_and_seen_by_its_partitions_then_committed(node, open_transaction):
    [listed] = [t for t in groupctl_json(node, "transactions", "list")["transactions"]
                if t["transactional_id"] == "cli-orders"]
    assert listed["state"] == "Ongoing" and listed["coordinator_id"] == node.node.config.node_id
    assert listed["partitions"] == [{"topic": TOPIC, "partition": 0}, {"topic": TOPIC, "partition": 1}]
    assert listed["producer_epoch"] >= 0 and listed["start_time_ms"] > 0 and listed["duration_ms"] >= 0
    table = run(node, "transactions", "list", "--state", "Ongoing")
    assert "cli-orders" in table.stdout and f"{TOPIC}-0,{TOPIC}-1" in table.stdout

    [described] = groupctl_json(node, "transactions", "describe", "cli-orders")["transactions"]
    assert {k: described[k] for k in ("state", "producer_id", "producer_epoch", "partitions")} == {
        k: listed[k] for k in ("state", "producer_id", "producer_epoch", "partitions")}

    [producer] = groupctl_json(node, "transactions", "describe-producers", "--topic", TOPIC,
                               "--partition", "1")["producers"]
    assert (producer["producer_id"], producer["current_transaction_start_offset"]) == (listed["producer_id"], 0)

    open_transaction.commit_transaction(CLIENT_TIMEOUT_S)
    wait_until(lambda: groupctl_json(node, "transactions", "describe", "cli-orders")["transactions"][0]["state"]
               == "CompleteCommit", timeout=20)
    assert groupctl_json(node, "transactions", "list", "--state", "Ongoing")["transactions"] == []
    [after] = groupctl_json(node, "transactions", "describe-producers", "--topic", TOPIC,
                            "--partition", "1")["producers"]
    assert after["current_transaction_start_offset"] is None and after["coordinator_epoch"] >= 0


def test_list_filters_by_producer_id_and_duration(node, open_transaction):
    [listed] = groupctl_json(node, "transactions", "list", "--state", "Ongoing")["transactions"]
    by_producer = groupctl_json(node, "transactions", "list", "--producer-id", str(listed["producer_id"]))
    assert [t["transactional_id"] for t in by_producer["transactions"]] == ["cli-orders"]
    long_open = groupctl_json(node, "transactions", "list", "--state", "Ongoing", "--duration-filter", "3600000")
    assert long_open["transactions"] == []


def test_find_hanging_names_an_open_transaction_no_coordinator_knows(node, open_transaction):
    async def write_orphan():  # a transactional batch whose producer's coordinator is long gone
        log = await node.node.logs.open(TOPIC, 0)
        builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
        builder.set_producer_state(987_654, 3, 0, True)
        builder.append(1_000, None, b"orphan")  # written in 1970: older than any timeout
        builder.close()
        log.append(bytes(builder.buffer()))
    node.call(write_orphan())
    hanging = groupctl_json(node, "transactions", "find-hanging", "--topic", TOPIC)["producers"]
    assert [(h["partition"], h["producer_id"], h["producer_epoch"]) for h in hanging] == [(0, 987_654, 3)]
    assert groupctl_json(node, "transactions", "find-hanging", "--topic", TOPIC, "--partition", "1")["producers"] == []


def test_failures_are_one_line(node):
    assert_one_line_error(run(node, "transactions", "describe", "nobody"), 1, "not found")
    assert_one_line_error(run(node, "transactions", "describe-producers", "--topic", "missing", "--partition", "0"),
                          1, "topic 'missing' not found")
    assert_one_line_error(run(node, "transactions", "find-hanging"), 2, "--topic or --broker-id")
    assert_one_line_error(run(node, "transactions", "list", "--duration-filter", "-1"), 2, "--duration-filter")
    assert_one_line_error(run(node, "transactions", "find-hanging", "--topic", TOPIC, "--max-transaction-timeout",
                              "0"), 2, "--max-transaction-timeout")


def test_an_unknown_state_filter_is_a_warning_and_in_the_json(node):
    done = run(node, "transactions", "list", "--state", "Sleeping")
    assert done.returncode == 0 and done.stderr == "groupctl: warning: no transaction state is named Sleeping\n"
    assert groupctl_json(node, "transactions", "list", "--state", "Sleeping") == {
        "transactions": [], "unknown_state_filters": ["Sleeping"]}
