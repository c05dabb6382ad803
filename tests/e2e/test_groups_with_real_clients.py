"""Consumer groups on the embedded coordinator, judged by real clients (kafka-python,
confluent-kafka, kcat) and by the group document in a real ZooKeeper."""

from __future__ import annotations

import json
import subprocess
import time

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic
from kazoo.client import KazooClient

from tests.support.consumers import ConsumerProcess, wait_until

SESSION_MS = 6000
pytestmark = pytest.mark.zookeeper


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(name, partitions, 1)])
    finally:
        admin.close()


def produce(bootstrap: str, topic: str, count: int, partitions: int) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    futures = [producer.send(topic, value=f"m{i}".encode(), partition=i % partitions) for i in range(count)]
    producer.flush(30)
    for future in futures:
        future.get(timeout=10)  # raises if the node refused the write
    producer.close()


def group_document(zk_connect: str, group: str) -> dict:
    hosts, _, chroot = zk_connect.partition("/")
    client = KazooClient(hosts=hosts)
    client.start(timeout=10)
    try:
        data, _ = client.get(f"/{chroot}/groups/{group}")
        return json.loads(data)
    finally:
        client.stop()
        client.close()


def covers(consumers, topic: str, partitions: int) -> bool:
    owned = [p for c in consumers for p in c.snapshot()[0]]
    return sorted(owned) == [(topic, p) for p in range(partitions)]


def test_three_consumers_split_six_partitions_and_the_zookeeper_document_agrees(zk_coordinator, zk_connect):
    create_topic(zk_coordinator.bootstrap, "payments", 6)
    consumers = [ConsumerProcess("kafka-python", zk_coordinator.bootstrap, "orders", "payments",
                                 client_id=f"app-{i}", session_timeout_ms=SESSION_MS) for i in range(3)]
    try:
        wait_until(lambda: covers(consumers, "payments", 6) and all(c.snapshot()[0] for c in consumers),
                   60, message="three consumers owning all six partitions")
        doc = wait_until(lambda: _stable_doc(zk_connect, "orders", consumers), 20, message="stable document")
        assert doc["state"] == "Stable" and doc["protocol_type"] == "consumer"
        for consumer in consumers:
            member = next(m for m in doc["members"] if m["client_id"] == consumer.client_id)
            assert member["member_id"].startswith(consumer.client_id + "-")
            owned = {(t, p) for t, parts in member["assignment"].items() for p in parts}
            assert owned == set(consumer.snapshot()[0])
            for topic, partition in owned:
                assert doc["ownership"][topic][str(partition)] == member["member_id"]
    finally:
        for consumer in consumers:
            consumer.stop()


def _stable_doc(zk_connect, group, consumers):
    doc = group_document(zk_connect, group)
    members = {m["client_id"]: {(t, p) for t, ps in m["assignment"].items() for p in ps} for m in doc["members"]}
    expected = {c.client_id: set(c.snapshot()[0]) for c in consumers}
    return doc if doc["state"] == "Stable" and members == expected else None


def test_a_killed_member_s_partitions_move_to_the_survivors_within_the_session_timeout(zk_coordinator, zk_connect):
    create_topic(zk_coordinator.bootstrap, "payments", 6)
    consumers = [ConsumerProcess("kafka-python", zk_coordinator.bootstrap, "orders", "payments",
                                 client_id=f"app-{i}", session_timeout_ms=SESSION_MS) for i in range(3)]
    try:
        wait_until(lambda: covers(consumers, "payments", 6) and all(c.snapshot()[0] for c in consumers),
                   60, message="initial assignment")
        before = wait_until(lambda: _stable_doc(zk_connect, "orders", consumers), 20, message="stable document")
        consumers[0].kill()
        killed_at = time.monotonic()
        survivors = consumers[1:]
        wait_until(lambda: covers(survivors, "payments", 6), SESSION_MS / 1000 + 3,
                   message="survivors owning all partitions")
        assert time.monotonic() - killed_at <= SESSION_MS / 1000 + 3
        after = wait_until(lambda: _stable_doc(zk_connect, "orders", survivors), 10, message="new document")
        assert after["generation"] > before["generation"]
        assert {m["client_id"] for m in after["members"]} == {"app-1", "app-2"}
    finally:
        for consumer in consumers:
            consumer.stop()


def test_thousands_of_messages_are_consumed_exactly_once_and_committed_to_the_log_end(zk_coordinator):
    bootstrap = zk_coordinator.bootstrap
    create_topic(bootstrap, "events", 6)
    count = 3000
    produce(bootstrap, "events", count, 6)
    consumers = [ConsumerProcess("kafka-python", bootstrap, "etl", "events", client_id=f"etl-{i}",
                                 session_timeout_ms=SESSION_MS) for i in range(3)]
    try:
        wait_until(lambda: sum(len(c.snapshot()[1]) for c in consumers) >= count, 90,
                   message=f"{count} records consumed")
        time.sleep(1)  # any duplicate delivery would arrive now
        records = [r for c in consumers for r in c.snapshot()[1]]
        values = [r[3] for r in records]
        assert len(values) == count and set(values) == {f"m{i}" for i in range(count)}
    finally:
        for consumer in consumers:
            consumer.stop()
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        committed = admin.list_group_offsets("etl")["etl"]
    finally:
        admin.close()
    assert {tp.partition: meta.offset for tp, meta in committed.items()} == {p: count // 6 for p in range(6)}


def test_kafka_python_confluent_and_kcat_consumers_form_one_working_group(zk_coordinator, kcat):
    bootstrap = zk_coordinator.bootstrap
    create_topic(bootstrap, "mixed", 6)
    members = [
        ConsumerProcess("kafka-python", bootstrap, "mixed-group", "mixed", client_id="py",
                        session_timeout_ms=SESSION_MS),
        ConsumerProcess("confluent", bootstrap, "mixed-group", "mixed", client_id="rdkafka",
                        session_timeout_ms=SESSION_MS),
    ]
    kcat_proc = subprocess.Popen(
        [kcat, "-b", bootstrap, "-G", "mixed-group", "-X", "client.id=kcat", "-X", "session.timeout.ms=6000",
         "-X", "auto.offset.reset=earliest", "-f", "%p %o %s\\n", "-q", "mixed"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        def three_member_group():
            description = zk_coordinator.call(_describe(zk_coordinator, "mixed-group"))
            clients = sorted(m.client_id for m in description.members)
            return description.state == "Stable" and clients == ["kcat", "py", "rdkafka"] and description
        description = wait_until(three_member_group, 60, message="a stable three-client group")
        assert description.protocol in ("range", "roundrobin", "cooperative-sticky", "sticky")
        wait_until(lambda: all(m.snapshot()[0] for m in members), 30, message="python clients assigned")
        produce(bootstrap, "mixed", 60, 6)
        wait_until(lambda: sum(len(m.snapshot()[1]) for m in members) >= 1, 30,
                   message="python clients consuming")
    finally:
        for member in members:
            member.stop()
        if kcat_proc.poll() is None:
            kcat_proc.terminate()
        kcat_proc.wait(15)


async def _describe(coordinator, group):
    (description,) = await coordinator.node.call_groups(
        lambda core, token, now: core.describe_groups(token, (group,), now))
    return description
