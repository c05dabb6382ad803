"""Consumer groups on the embedded coordinator, judged by real clients (kafka-python,
confluent-kafka, kcat) and by the group document in a real ZooKeeper."""

from __future__ import annotations

import json
import subprocess
import threading
import time

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic
from kazoo.client import KazooClient

from groupctl.coordinator.consumer_protocol import decode_assignment
from tests.support.consumers import ConsumerProcess
from tests.support.polling import wait_until

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
        survivors = consumers[1:]
        # expiry (at most the session timeout), the survivors' next heartbeat (a sixth of it), their
        # rejoin and sync, and slack for a loaded machine
        wait_until(lambda: covers(survivors, "payments", 6), SESSION_MS / 1000 + 5,
                   message="survivors owning all partitions")
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


class KcatConsumer:
    """`kcat -G` in a group, its unbuffered `partition offset value` lines read by a thread."""

    def __init__(self, kcat: str, bootstrap: str, group: str, topic: str, *, client_id: str) -> None:
        self.client_id = client_id
        self.proc = subprocess.Popen(
            [kcat, "-b", bootstrap, "-G", group, "-X", f"client.id={client_id}",
             "-X", f"session.timeout.ms={SESSION_MS}", "-X", "auto.offset.reset=earliest",
             "-u", "-q", "-f", "%p %o %s\\n", topic],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        self.topic = topic
        self._records: list[tuple[str, int, int, str]] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            partition, offset, value = line.rstrip("\n").split(" ", 2)
            with self._lock:
                self._records.append((self.topic, int(partition), int(offset), value))

    def records(self) -> list[tuple[str, int, int, str]]:
        with self._lock:
            return list(self._records)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()  # its own pid (Popen.terminate signals only this child)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def test_kafka_python_confluent_and_kcat_consumers_form_one_working_group(zk_coordinator, kcat):
    bootstrap = zk_coordinator.bootstrap
    count, partitions = 60, 6
    create_topic(bootstrap, "mixed", partitions)
    members = {
        "py": ConsumerProcess("kafka-python", bootstrap, "mixed-group", "mixed", client_id="py",
                              session_timeout_ms=SESSION_MS),
        "rdkafka": ConsumerProcess("confluent", bootstrap, "mixed-group", "mixed", client_id="rdkafka",
                                   session_timeout_ms=SESSION_MS),
    }
    kcat_member = KcatConsumer(kcat, bootstrap, "mixed-group", "mixed", client_id="kcat")
    try:
        def everyone_assigned():
            """The group's description when it is Stable with exactly the three clients, each
            owning partitions, and both Python clients have seen their current assignment."""
            description = zk_coordinator.call(_describe(zk_coordinator, "mixed-group"))
            if description.state != "Stable":
                return None
            owned = {m.client_id: {("mixed", p) for p in decode_assignment(m.assignment).get("mixed", [])}
                     for m in description.members}
            if sorted(owned) != ["kcat", "py", "rdkafka"] or not all(owned.values()):
                return None
            if any(set(member.snapshot()[0]) != owned[name] for name, member in members.items()):
                return None
            return description, owned

        description, owned = wait_until(everyone_assigned, 60, message="three clients, each assigned")
        # A member may rejoin once more right after its first assignment (kafka-python's leader
        # does when its metadata catches up); produce only once a generation has held for 2 s, so
        # no partition changes hands while the messages are being consumed.
        for _ in range(5):
            time.sleep(2)
            again, owned = wait_until(everyone_assigned, 30, message="the group to settle")
            if again.generation_id == description.generation_id:
                break
            description = again
        else:
            pytest.fail("the group kept rebalancing")
        assert description.protocol in ("range", "roundrobin", "cooperative-sticky", "sticky")
        assert sorted(p for ps in owned.values() for _, p in ps) == list(range(partitions))

        produce(bootstrap, "mixed", count, partitions)

        def consumed():
            return {"py": members["py"].snapshot()[1], "rdkafka": members["rdkafka"].snapshot()[1],
                    "kcat": kcat_member.records()}
        wait_until(lambda: sum(len(r) for r in consumed().values()) >= count, 60,
                   message=f"{count} records consumed across the three clients")
        time.sleep(1)  # any duplicate delivery would arrive now
        by_client = consumed()
        values = sorted((r[3] for records in by_client.values() for r in records), key=lambda v: int(v[1:]))
        assert values == [f"m{i}" for i in range(count)], "every message consumed exactly once"
        assert by_client["kcat"], "kcat owns partitions, so it consumed some of the messages"
        for client, records in by_client.items():
            # Messages went round-robin over all partitions: each client read exactly its own.
            assert {(t, p) for t, p, _, _ in records} == owned[client], client
    finally:
        for member in members.values():
            member.stop()
        kcat_member.stop()


async def _describe(coordinator, group):
    (description,) = await coordinator.node.call_groups(
        lambda core, token, now: core.describe_groups(token, (group,), now))
    return description


def test_a_join_past_max_group_size_gets_group_max_size_reached_and_the_member_keeps_its_partitions():
    from kafka import KafkaConsumer
    from kafka.errors import GroupMaxSizeReachedError

    from tests.support.coordinator import CoordinatorProcess

    node = CoordinatorProcess("--max-group-size", "1", "--topic", "capped:2").start()
    consumers = []
    try:
        def consumer() -> KafkaConsumer:
            consumers.append(KafkaConsumer("capped", bootstrap_servers=node.bootstrap, group_id="capped",
                                           session_timeout_ms=SESSION_MS, heartbeat_interval_ms=1000))
            return consumers[-1]

        first = consumer()
        wait_until(lambda: first.poll(timeout_ms=200) is not None and first.assignment(), timeout=30,
                   message="the first member assigned")
        second = consumer()
        with pytest.raises(GroupMaxSizeReachedError):
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                second.poll(timeout_ms=200)
                first.poll(timeout_ms=100)
        first.poll(timeout_ms=500)
        assert {tp.partition for tp in first.assignment()} == {0, 1}
    finally:
        for member in consumers:
            member.close(autocommit=False)
        node.terminate()
