"""Online migration with real clients on a coordinator that keeps its groups in a real ZooKeeper:
a live kafka-python group (classic protocol) is joined by a confluent-kafka consumer with
`group.protocol=consumer`; the group becomes a consumer group whose kafka-python members stay on
the classic protocol and keep consuming, every partition owned once; when the Kafka 4 consumer
leaves, the group is classic again and the kafka-python members share every partition."""

from __future__ import annotations

import pytest

from groupctl.coordinator.consumer.config import ConsumerGroupConfig
from tests.support.consumer_groups import coordinator_with_topic, stored
from tests.support.consumer_groups import produce as produce_values
from tests.support.consumers import ConsumerProcess
from tests.support.polling import wait_until

pytestmark = pytest.mark.zookeeper
TOPIC, PARTITIONS, GROUP = "orders", 4, "migrating"


@pytest.fixture
def node(zk_connect, tmp_path):
    with coordinator_with_topic(zk_connect, tmp_path / "data", TOPIC, PARTITIONS, ConsumerGroupConfig()) as running:
        yield running


def produce(bootstrap: str, first: int, count: int) -> set[str]:
    values = {f"m{i}" for i in range(first, first + count)}
    produce_values(bootstrap, TOPIC, PARTITIONS, sorted(values))
    return values


def stored_group(zk_connect: str) -> dict:
    return stored(zk_connect, f"/groups/{GROUP}")


def owned_once(*members: ConsumerProcess) -> bool:
    """Every partition owned by exactly one of `members`, and each owning at least one."""
    owned = [p for m in members for p in m.snapshot()[0]]
    return sorted(owned) == [(TOPIC, p) for p in range(PARTITIONS)] and all(m.snapshot()[0] for m in members)


def consumed(*members: ConsumerProcess) -> set[str]:
    return {record[3] for m in members for record in m.snapshot()[1]}


def test_a_kafka_4_consumer_upgrades_a_live_kafka_python_group_and_leaving_downgrades_it(node, zk_connect):
    classic = [ConsumerProcess("kafka-python", node.bootstrap, GROUP, TOPIC, client_id=f"classic-{i}",
                               max_seconds=150) for i in range(2)]
    modern = None
    try:
        wait_until(lambda: owned_once(*classic), 60, message="the kafka-python members sharing the partitions")
        assert stored_group(zk_connect)["type"] == "classic"
        sent = produce(node.bootstrap, 0, 20)
        wait_until(lambda: consumed(*classic) >= sent, 60, message="the first records consumed")

        modern = ConsumerProcess("confluent", node.bootstrap, GROUP, TOPIC, client_id="modern",
                                 group_protocol="consumer", max_seconds=150)
        wait_until(lambda: owned_once(*classic, modern), 90,
                   message="three members, the Kafka 4 one included, each partition owned once")
        document = stored_group(zk_connect)
        assert document["type"] == "consumer"
        protocols = {m["client_id"]: "classic" in m for m in document["members"]}
        assert protocols == {"classic-0": True, "classic-1": True, "modern": False}
        sent |= produce(node.bootstrap, 20, 40)
        wait_until(lambda: consumed(*classic, modern) >= sent, 60, message="records consumed by the mixed group")

        modern.stop()  # a clean close: it leaves with epoch -1
        wait_until(lambda: stored_group(zk_connect)["type"] == "classic" and owned_once(*classic), 90,
                   message="a classic group again, the kafka-python members sharing every partition")
        sent |= produce(node.bootstrap, 60, 20)
        wait_until(lambda: consumed(*classic, modern) >= sent, 60, message="records consumed after the downgrade")
        assert all(m.lost == [] for m in classic)
    finally:
        for member in [*classic, *([modern] if modern else [])]:
            member.stop()
