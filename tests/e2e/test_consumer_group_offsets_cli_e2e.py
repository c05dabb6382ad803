"""The installed `groupctl` changing and sampling the offsets of a live KIP-848 consumer group: an
unmodified confluent-kafka consumer (`group.protocol=consumer`) on a coordinator that keeps its
groups in a real ZooKeeper and answers DescribeGroups for a consumer group as Apache Kafka 4 does
(not a classic group). `offsets reset` refuses the live group with one line and exit status 1,
as kafka-consumer-groups.sh 4.x requires an inactive group, changes nothing, and succeeds once the
consumer has left; `lag record` and `offsets show` report the group's state, member and the owner
of each partition."""

from __future__ import annotations

import json
import subprocess

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from groupctl.coordinator.consumer.config import ConsumerGroupConfig
from tests.e2e.test_cli_e2e import assert_one_line_error, assert_quiet, installed_groupctl
from tests.e2e.test_lag_record import read_dataset
from tests.support.consumers import ConsumerProcess
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.polling import wait_until

pytestmark = pytest.mark.zookeeper
GROUP, TOPIC, PARTITIONS, PER_PARTITION = "cli-offsets", "events", 2, 5


@pytest.fixture
def node(zk_connect, tmp_path):
    """A coordinator whose consumer group members heartbeat every second, with PER_PARTITION
    records in each partition of `events`."""
    running = InProcessCoordinator(node_config(
        zk=zk_connect, data_dir=tmp_path / "data",
        consumer_groups=ConsumerGroupConfig(session_timeout_ms=6_000, heartbeat_interval_ms=1_000))).start()
    try:
        admin = AdminClient({"bootstrap.servers": running.bootstrap, "broker.address.family": "v4"})
        admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])[TOPIC].result(15)
        producer = Producer({"bootstrap.servers": running.bootstrap, "broker.address.family": "v4"})
        for i in range(PER_PARTITION * PARTITIONS):
            producer.produce(TOPIC, f"m{i}".encode(), partition=i % PARTITIONS)
        assert producer.flush(15) == 0
        yield running
    finally:
        running.stop()


def run(node, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([installed_groupctl(), "--bootstrap", node.bootstrap, *args], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert_quiet(done.stdout, done.stderr)
    return done


def shown(node) -> dict:
    done = run(node, "--output", "json", "offsets", "show", GROUP)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_offsets_reset_refuses_a_live_consumer_group_and_resets_it_once_its_consumer_has_left(node):
    consumer = ConsumerProcess("confluent", node.bootstrap, GROUP, TOPIC, client_id="reader",
                               group_protocol="consumer", max_seconds=90)
    try:
        def caught_up() -> bool:
            if run(node, "group", "list").stdout.find(GROUP) < 0:
                return False  # the member's first heartbeat has not created the group yet
            current = shown(node)
            return current["state"] == "Stable" and [o["committed_offset"] for o in current["offsets"]] == [
                PER_PARTITION] * PARTITIONS

        wait_until(caught_up, 60, interval=0.5, message="the group Stable with every record consumed and committed")

        for execute in (["--execute"], []):  # the dry run is refused as well
            refused = run(node, "offsets", "reset", GROUP, "--topic", TOPIC, "--to-earliest", *execute)
            assert refused.stdout == ""
            assert assert_one_line_error(refused, 1) == (
                f"groupctl: error: group '{GROUP}' is Stable with 1 member(s); offsets can only be changed while "
                "the group is inactive (Empty)")
        assert [o["committed_offset"] for o in shown(node)["offsets"]] == [PER_PARTITION] * PARTITIONS

        recorded = run(node, "lag", "record", "--group", GROUP, "--interval", "500ms", "--duration", "1500ms",
                       "--out", str(node.config.data_dir.parent / "lag"))
        assert recorded.returncode == 0, recorded.stderr
        rows = read_dataset(node.config.data_dir.parent / "lag")
        assert rows and {(r["partition"], r["committed"], r["log_end"], r["state"], r["members"], r["owner"])
                         for r in rows} == {(p, PER_PARTITION, PER_PARTITION, "Stable", 1, "reader")
                                            for p in range(PARTITIONS)}
    finally:
        consumer.stop()  # closes the consumer: it leaves the group

    wait_until(lambda: shown(node)["state"] == "Empty", 30, interval=0.5, message="the group Empty once it left")
    reset = run(node, "--output", "json", "offsets", "reset", GROUP, "--topic", TOPIC, "--to-earliest", "--execute")
    assert reset.returncode == 0, reset.stderr
    plan = json.loads(reset.stdout)
    assert plan["executed"] is True
    assert [(p["partition"], p["current_offset"], p["new_offset"]) for p in plan["partitions"]] == [
        (p, PER_PARTITION, 0) for p in range(PARTITIONS)]
    assert [(o["partition"], o["committed_offset"], o["lag"]) for o in shown(node)["offsets"]] == [
        (p, 0, PER_PARTITION) for p in range(PARTITIONS)]
