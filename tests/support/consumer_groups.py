"""What the consumer-group (KIP-848) end-to-end tests share: a coordinator on real ZooKeeper
with a topic, records produced round-robin over its partitions, and the documents the
coordinator stored."""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from kazoo.client import KazooClient

from groupctl.coordinator.consumer.config import ConsumerGroupConfig
from tests.support.coordinator import InProcessCoordinator, node_config

FAST_CONSUMER_GROUPS = ConsumerGroupConfig(session_timeout_ms=6_000, heartbeat_interval_ms=1_000)
"""Members heartbeat every second and a silent one is fenced after 6 s (Kafka: 5 s and 45 s)."""


@contextmanager
def coordinator_with_topic(zk_connect: str, data_dir: Path, topic: str, partitions: int,
                           consumer_groups: ConsumerGroupConfig = FAST_CONSUMER_GROUPS) -> Iterator[InProcessCoordinator]:
    running = InProcessCoordinator(node_config(zk=zk_connect, data_dir=data_dir,
                                               consumer_groups=consumer_groups)).start()
    try:
        admin = AdminClient({"bootstrap.servers": running.bootstrap, "broker.address.family": "v4"})
        admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(15)
        yield running
    finally:
        running.stop()


def produce(bootstrap: str, topic: str, partitions: int, values: Iterable[str]) -> None:
    """Each value to the next partition in turn; returns once every one is acknowledged."""
    producer = Producer({"bootstrap.servers": bootstrap, "broker.address.family": "v4"})
    for i, value in enumerate(values):
        producer.produce(topic, value.encode(), partition=i % partitions)
    assert producer.flush(15) == 0


def stored(zk_connect: str, path: str) -> dict:
    """The JSON document at `path` under the test's chroot."""
    hosts, _, chroot = zk_connect.partition("/")
    client = KazooClient(hosts=hosts)
    client.start(timeout=10)
    try:
        return json.loads(client.get(f"/{chroot}{path}")[0])
    finally:
        client.stop()
        client.close()
