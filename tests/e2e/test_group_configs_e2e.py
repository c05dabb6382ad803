"""A consumer group's own configs take effect at run time: an unmodified confluent-kafka member
(librdkafka 2.16, `group.protocol=consumer`) of a group whose consumer.session.timeout.ms an
operator lowers with IncrementalAlterConfigs is dropped, once silent (SIGSTOP), within the new
timeout rather than the broker's 45 s."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest
from confluent_kafka import admin as confluent
from kafka.admin import KafkaAdminClient, NewTopic

from groupctl.coordinator.consumer.config import ConsumerGroupConfig
from groupctl.coordinator.consumer.context import session_key
from tests.support.consumers import ConsumerProcess
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.polling import wait_until

GROUP, TOPIC = "billing", "invoices"
NEW_SESSION_MS = 3000


@pytest.fixture
def node():
    bounds = ConsumerGroupConfig(heartbeat_interval_ms=1000, min_session_timeout_ms=1000,
                                 min_heartbeat_interval_ms=100)
    running = InProcessCoordinator(node_config(consumer_groups=bounds)).start()
    admin = KafkaAdminClient(bootstrap_servers=running.bootstrap)
    admin.create_topics([NewTopic(TOPIC, 2, 1)])
    admin.close()
    yield running
    running.stop()


def members(client) -> list[str]:
    described = client.describe_consumer_groups([GROUP])[GROUP].result(10)
    return [m.member_id for m in described.members]


def session_left_ms(node, member_id: str) -> float:
    """How long the member's session has left on the node (inf when none is running)."""
    async def read() -> float:
        handle = node.node.timer._handles.get(session_key(GROUP, member_id))
        return float("inf") if handle is None else (handle.when() - asyncio.get_running_loop().time()) * 1000
    return node.call(read())


def test_a_lowered_session_timeout_drops_a_silent_member_within_the_new_timeout(node):
    client = confluent.AdminClient({"bootstrap.servers": node.bootstrap})
    member = ConsumerProcess("confluent", node.bootstrap, GROUP, TOPIC, client_id="m1", group_protocol="consumer",
                             max_seconds=90)
    try:
        (member_id,) = wait_until(lambda: members(client), timeout=30, message="the member to join")
        assert session_left_ms(node, member_id) > 40_000  # the broker's group.consumer.session.timeout.ms
        resource = confluent.ConfigResource(confluent.ResourceType.GROUP, GROUP, incremental_configs=[
            confluent.ConfigEntry("consumer.session.timeout.ms", str(NEW_SESSION_MS),
                                  incremental_operation=confluent.AlterConfigOpType.SET),
            confluent.ConfigEntry("consumer.heartbeat.interval.ms", "500",
                                  incremental_operation=confluent.AlterConfigOpType.SET)])
        client.incremental_alter_configs([resource])[resource].result(10)
        wait_until(lambda: session_left_ms(node, member_id) <= NEW_SESSION_MS, timeout=15,
                   message="the member's next heartbeat to restart its session on the new timeout")
        os.kill(member.proc.pid, signal.SIGSTOP)
        silent_at = time.monotonic()
        wait_until(lambda: not members(client), timeout=20, message="the silent member to be dropped")
        assert time.monotonic() - silent_at < NEW_SESSION_MS / 1000 + 3
    finally:
        if member.proc.poll() is None:
            os.kill(member.proc.pid, signal.SIGCONT)
        member.kill()
