"""What survives a coordinator crash or restart: acknowledged commits (kill -9), groups and their
generations, topics and produced messages; and a clean exit on SIGTERM."""

from __future__ import annotations

import signal
import threading
import time
from dataclasses import replace

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

from tests.support.coordinator import CoordinatorProcess, InProcessCoordinator, node_config
from tests.support.consumers import ConsumerProcess
from tests.support.polling import wait_until

pytestmark = pytest.mark.zookeeper


@pytest.fixture(params=["embedded", "zookeeper"])
def store_args(request, tmp_path):
    if request.param == "embedded":
        return ["--data-dir", str(tmp_path / "data")]
    zk_connect = request.getfixturevalue("zk_connect")
    return ["--data-dir", str(tmp_path / "data"), "--zk", zk_connect]


@pytest.fixture(params=["embedded", "zookeeper"])
def store_config(request, tmp_path):
    zk = request.getfixturevalue("zk_connect") if request.param == "zookeeper" else None
    return node_config(data_dir=tmp_path / "data", zk=zk, topics=(("jobs", 3),))


def start(store_args, tmp_path, *extra) -> CoordinatorProcess:
    return CoordinatorProcess(*store_args, *extra, log_path=tmp_path / "coordinator.log").start()


def admin_for(bootstrap: str) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000)


def test_acknowledged_commits_survive_kill_9(store_args, tmp_path):
    node = start(store_args, tmp_path, "--topic", "ledger:2")
    acknowledged: list[int] = []
    stop = threading.Event()

    def commit_steadily():
        admin = admin_for(node.bootstrap)
        try:
            for offset in range(1, 100_000):
                if stop.is_set():
                    return
                admin.alter_group_offsets("books", {TopicPartition("ledger", 0): OffsetAndMetadata(offset, "", -1)})
                acknowledged.append(offset)
        except Exception:
            return  # the coordinator died under us: only acknowledged commits count
        finally:
            admin.close()

    committer = threading.Thread(target=commit_steadily, daemon=True)
    committer.start()
    wait_until(lambda: len(acknowledged) >= 50, 60, message="50 acknowledged commits")
    node.kill()
    stop.set()
    committer.join(30)
    last_acknowledged = acknowledged[-1]

    restarted = CoordinatorProcess(*store_args, log_path=tmp_path / "coordinator.log").start()
    try:
        admin = admin_for(restarted.bootstrap)
        try:
            committed = admin.list_group_offsets("books")["books"]
        finally:
            admin.close()
        # The commit in flight at the kill may or may not have landed; nothing acknowledged is lost.
        assert committed[TopicPartition("ledger", 0)].offset in (last_acknowledged, last_acknowledged + 1)
    finally:
        restarted.kill()


def test_sigterm_stops_the_coordinator_cleanly_with_exit_status_0(store_args, tmp_path):
    node = start(store_args, tmp_path)
    try:
        assert node.terminate() == 0
    finally:
        node.kill()  # no-op once it exited


def test_sigint_stops_the_coordinator_cleanly_with_exit_status_0(tmp_path):
    node = CoordinatorProcess(log_path=tmp_path / "coordinator.log").start()
    try:
        node.signal(signal.SIGINT)
        assert node.proc.wait(15) == 0
    finally:
        node.kill()  # no-op once it exited


def test_a_restarted_coordinator_reloads_groups_and_the_next_generation_continues(store_config):
    first = InProcessCoordinator(store_config).start()
    try:
        consumer = ConsumerProcess("kafka-python", first.bootstrap, "workers", "jobs", client_id="w")
        try:
            wait_until(lambda: consumer.snapshot()[0], 60, message="assignment")
            stored = wait_until(lambda: _document(first, "workers"), 10, message="stable document")
        finally:
            consumer.kill()  # a crash: no LeaveGroup, the member is still in the stored document
    finally:
        first.stop()

    second = InProcessCoordinator(replace(store_config, port=0)).start()
    try:
        reloaded = second.node.core.classic.group_document("workers")
        assert reloaded.generation == stored.generation
        assert [m.member_id for m in reloaded.members] == [m.member_id for m in stored.members]
        consumer = ConsumerProcess("kafka-python", second.bootstrap, "workers", "jobs", client_id="w2")
        try:
            after = wait_until(lambda: _document(second, "workers", exclude=stored.members[0].member_id),
                               60, message="the group rebalanced on the restarted node")
            assert after.generation > stored.generation
        finally:
            consumer.stop()
    finally:
        second.stop()


def _document(coordinator, group, exclude=None):
    doc = coordinator.node.core.classic.group_document(group)
    if doc and doc.state == "Stable" and doc.members and all(m.member_id != exclude for m in doc.members):
        return doc
    return None


def test_topics_and_produced_messages_survive_a_restart(tmp_path):
    args = ["--data-dir", str(tmp_path / "data")]
    node = start(args, tmp_path, "--topic", "audit:2")
    try:
        producer = KafkaProducer(bootstrap_servers=node.bootstrap, acks="all")
        futures = [producer.send("audit", value=f"a{i}".encode(), partition=i % 2) for i in range(200)]
        producer.flush(30)
        for future in futures:
            future.get(timeout=10)  # raises if the node refused the write
        producer.close()
        assert node.terminate() == 0
    finally:
        node.kill()  # no-op once it exited

    restarted = start(args, tmp_path)
    try:
        consumer = KafkaConsumer(bootstrap_servers=restarted.bootstrap, auto_offset_reset="earliest",
                                 consumer_timeout_ms=5000)
        consumer.assign([TopicPartition("audit", 0), TopicPartition("audit", 1)])
        values = set()
        deadline = time.monotonic() + 30
        while len(values) < 200 and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                values.update(r.value.decode() for r in records)
        consumer.close()
        assert values == {f"a{i}" for i in range(200)}
    finally:
        restarted.kill()
