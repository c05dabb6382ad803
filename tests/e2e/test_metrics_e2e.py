"""The node's Prometheus metrics (`coordinator run --metrics-port`), scraped over HTTP and parsed
with prometheus-client's own parser while real kafka-python consumers form a group, commit,
rebalance and leave, and the group is deleted."""

from __future__ import annotations

import re
import urllib.request

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic
from prometheus_client.parser import text_string_to_metric_families

from tests.support.consumers import ConsumerProcess
from tests.support.coordinator import CoordinatorProcess, InProcessCoordinator, node_config
from tests.support.polling import wait_until

GROUP = "metered"
TOPIC = "metered-topic"
PARTITIONS = 4


@pytest.fixture
def metered_coordinator():
    node = InProcessCoordinator(node_config(metrics_port=0)).start()
    yield node
    node.stop()


def scrape(port: int) -> list[tuple[str, dict[str, str], float]]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    return [(sample.name, sample.labels, sample.value)
            for family in text_string_to_metric_families(text) for sample in family.samples]


def total(samples, name: str, **labels: str) -> float:
    """The sum of `name`'s samples whose labels include `labels` (0 when there are none)."""
    return sum(value for sample, have, value in samples
               if sample == name and all(have.get(key) == want for key, want in labels.items()))


def setup_topic(bootstrap: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    for future in [producer.send(TOPIC, value=f"m{i}".encode(), partition=i % PARTITIONS) for i in range(40)]:
        future.get(timeout=10)
    producer.close()


def test_metrics_follow_a_group_as_it_forms_commits_rebalances_and_is_deleted(metered_coordinator):
    node = metered_coordinator
    port = node.server.metrics_port
    setup_topic(node.bootstrap)
    first = ConsumerProcess("kafka-python", node.bootstrap, GROUP, TOPIC, client_id="first", report_commits=True)
    second = None
    try:
        wait_until(lambda: first.snapshot()[0] and first.commits, 60, message="the first consumer committing")
        alone = scrape(port)
        assert total(alone, "groupctl_groups", type="classic", state="Stable") == 1
        assert total(alone, "groupctl_group_members", group=GROUP, type="classic") == 1
        rebalances_alone = total(alone, "groupctl_rebalances_total", group=GROUP, type="classic")
        commits_alone = total(alone, "groupctl_offset_commits_total", group=GROUP)
        assert rebalances_alone >= 1 and commits_alone >= 1

        second = ConsumerProcess("kafka-python", node.bootstrap, GROUP, TOPIC, client_id="second")
        wait_until(lambda: first.snapshot()[0] and second.snapshot()[0]
                   and total(scrape(port), "groupctl_group_members", group=GROUP) == 2
                   and total(scrape(port), "groupctl_groups", type="classic", state="Stable") == 1,
                   60, message="two consumers sharing the partitions in a Stable group")
        heartbeats = wait_until(lambda: total(scrape(port), "groupctl_requests_total", api="Heartbeat"), 30,
                                message="heartbeats counted")
        assert heartbeats > 0
        both = scrape(port)
        assert total(both, "groupctl_rebalances_total", group=GROUP) > rebalances_alone
        assert total(both, "groupctl_rebalance_duration_seconds_count", type="classic") >= 2
        assert total(both, "groupctl_offset_commits_total", group=GROUP) >= commits_alone
        assert total(both, "groupctl_connections") > 0
        assert total(both, "groupctl_requests_total", api="JoinGroup") >= 2
        assert total(both, "groupctl_request_duration_seconds_count", api="SyncGroup") >= 2
        assert total(both, "groupctl_store_write_records_sum") > 0  # the group documents and the offsets
        assert total(both, "groupctl_group_partitions_led") > 0
        assert total(both, "groupctl_leadership_changes_total", change="gained") > 0
    finally:
        first.stop()
        if second is not None:
            second.stop()

    wait_until(lambda: total(scrape(port), "groupctl_groups", type="classic", state="Empty") == 1, 30,
               message="the group Empty once both consumers left")
    admin = KafkaAdminClient(bootstrap_servers=node.bootstrap)
    try:
        admin.delete_groups([GROUP])
    finally:
        admin.close()
    after = scrape(port)
    assert [(name, labels) for name, labels, _ in after if labels.get("group") == GROUP] == []
    assert total(after, "groupctl_groups") == 0


def test_coordinator_run_reports_where_it_serves_metrics_and_serves_them_on_loopback():
    node = CoordinatorProcess("--metrics-port", "0", "--no-metrics-per-group").start()
    try:
        match = re.search(r"metrics on http://127\.0\.0\.1:(\d+)/metrics", node.ready_line)
        assert match, node.ready_line
        samples = scrape(int(match.group(1)))
        assert total(samples, "groupctl_group_partitions_led") > 0
        assert not [labels for _, labels, _ in samples if "group" in labels]
    finally:
        assert node.terminate() == 0


def test_without_metrics_port_the_node_serves_no_metrics(coordinator):
    assert coordinator.server.metrics_port is None and coordinator.node.metrics is None


@pytest.mark.zookeeper
def test_a_zookeeper_backed_node_reports_its_session_connected(zk_connect, tmp_path):
    node = InProcessCoordinator(node_config(zk=zk_connect, data_dir=tmp_path / "data", metrics_port=0)).start()
    try:
        samples = scrape(node.server.metrics_port)
        assert total(samples, "groupctl_zookeeper_session_state", state="CONNECTED") == 1
        assert total(samples, "groupctl_zookeeper_session_state") == 1
    finally:
        node.stop()


def test_a_metrics_port_in_use_is_one_error_line_and_exit_status_1():
    import os
    import socket
    import subprocess
    import sys

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = subprocess.run([sys.executable, "-m", "groupctl", "coordinator", "run", "--port", "0",
                              "--metrics-port", str(port)], capture_output=True, text=True, timeout=60,
                             env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert run.returncode == 1
    assert run.stderr.strip().splitlines()[-1] == (
        f"groupctl: error: cannot serve metrics on 127.0.0.1:{port}: Address already in use")
