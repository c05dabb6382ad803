"""Partitions added to a topic rebalance the groups subscribed to it, across a coordinator cluster.

Two nodes share one ZooKeeper chroot (tests/support/cluster.py), with a short handback delay so
that each group partition settles on its preferred node and the test can choose which node
coordinates the group. Partitions are added through CreatePartitions (kafka-python's admin client
sends it to the controller, node 0), with the group coordinated by that node or by the other
one, and by an operator rewriting `/brokers/topics/<topic>` in ZooKeeper directly. Each time the
group's documents record a rebalance with reason "topic change" and a higher generation, and
the consumers end up owning and consuming the new partitions.

How the new partitions reach the members depends on the client's group leader. librdkafka's
leader fetches metadata before it assigns, so the server's rebalance itself hands them out.
kafka-python 3.0.12's leader assigns from its cached metadata, so that rebalance still assigns
the old partitions; the metadata refresh it requests right after assigning shows the new ones,
and it rejoins at once (a second rebalance, "leader rejoin"). Without the server's rebalance it
would notice only at its next periodic refresh (`metadata_max_age_ms`, 5 minutes by default).
"""

from __future__ import annotations

import time

import pytest
from kafka import KafkaAdminClient, KafkaProducer

from tests.support.cluster import group_least_preferring, running
from tests.support.polling import wait_until
from tests.support.consumers import ConsumerProcess

pytestmark = pytest.mark.zookeeper

SESSION_MS = 6000
TOPIC = "events"
BEFORE, AFTER = 2, 4
CLIENT_SETTLE_S = 1.5
"""How long after its first assignment a consumer may still be fetching metadata it asked for
then (kafka-python does, right after joining). Partitions added before that fetch are seen by
the client itself, and the test would not tell the server's rebalance from the client's."""


@pytest.fixture
def cluster(zk_connect, tmp_path):
    with running(zk_connect, tmp_path, 2, handback_delay_s=1.0) as started:
        yield started


def create_topic(bootstrap: str, partitions: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    try:
        admin.create_topics({TOPIC: {"num_partitions": partitions, "replication_factor": 1}})
    finally:
        admin.close()


def add_partitions_with_the_admin_client(cluster) -> None:
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap(), request_timeout_ms=10000)
    try:
        admin.create_partitions({TOPIC: AFTER})
    finally:
        admin.close()
    assert len(cluster.topic(TOPIC)["partitions"]) == AFTER


def add_partitions_in_zookeeper(cluster) -> None:
    document = cluster.topic(TOPIC)
    document["partitions"].update({str(p): [p % 2] for p in range(BEFORE, AFTER)})
    cluster.write_topic(TOPIC, document)


def produce_to(bootstrap: str, partitions: range) -> set[str]:
    """One acknowledged message per partition; returns their values."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, max_block_ms=10000)
    try:
        values = {f"new-{p}": producer.send(TOPIC, value=f"new-{p}".encode(), partition=p) for p in partitions}
        for future in values.values():
            future.get(timeout=10)
    finally:
        producer.close()
    return set(values)


def owned(consumers) -> list[tuple[str, int]]:
    return sorted(tp for c in consumers for tp in c.snapshot()[0])


def group_on(cluster, node_id: int, group: str) -> str:
    """A group coordinated by `node_id` once the cluster has settled."""
    name = group_least_preferring(1 - node_id, [0, 1], group)
    wait_until(lambda: cluster.leader_of(name) == node_id, 20,
               message=f"node {node_id} leading {name}'s partition (handback)")
    return name


def consuming_group(cluster, client: str, group: str) -> tuple[list[ConsumerProcess], dict, list[dict]]:
    """Two consumers of TOPIC (BEFORE partitions) in a Stable group, its document, and the list
    that collects its documents from then on."""
    create_topic(cluster.bootstrap(), BEFORE)
    consumers = [ConsumerProcess(client, cluster.bootstrap(), group, TOPIC, client_id=f"{group}-c{i}",
                                 session_timeout_ms=SESSION_MS, max_seconds=120) for i in range(2)]
    wait_until(lambda: owned(consumers) == [(TOPIC, p) for p in range(BEFORE)]
               and all(c.snapshot()[0] for c in consumers), 60,
               message=f"the consumers owning all {BEFORE} partitions")
    wait_until(lambda: (lambda d: d and d["state"] == "Stable" and len(d["members"]) == 2)(
        cluster.group_document(group)), 20, message="a Stable document")
    time.sleep(CLIENT_SETTLE_S)
    history = cluster.group_history(group)  # the baseline is the newest document, read once the watch is set
    document = wait_until(lambda: history and history[-1]["state"] == "Stable" and len(history[-1]["members"]) == 2
                          and history[-1], 20, message="a Stable document seen by the watch")
    return consumers, document, history


def topic_change(history: list[dict], before: dict) -> dict:
    """The first document after `before` (the rebalance the added partitions caused)."""
    after = wait_until(lambda: next((d for d in list(history) if d["generation"] > before["generation"]), None),
                       30, message="a new generation after the partitions were added")
    assert after["state"] == "Stable" and after["rebalance"]["reason"] == "topic change", after["rebalance"]
    assert after["rebalance"]["detail"] == f"topic {TOPIC} grew from {BEFORE} to {AFTER} partitions"
    return after


def assigned(document: dict) -> set[int]:
    return {int(p) for p in document["ownership"].get(TOPIC, {})}


def assert_consumers_got_the_new_partitions(cluster, consumers) -> None:
    wait_until(lambda: owned(consumers) == [(TOPIC, p) for p in range(AFTER)], 30,
               message=f"the consumers owning all {AFTER} partitions")
    values = produce_to(cluster.bootstrap(), range(BEFORE, AFTER))
    wait_until(lambda: values <= {r[3] for c in consumers for r in c.snapshot()[1]}, 30,
               message="the messages on the new partitions consumed")


def stop(consumers) -> None:
    for consumer in consumers:
        consumer.stop()


@pytest.mark.parametrize("coordinator", [0, 1], ids=["coordinated-by-the-controller", "coordinated-elsewhere"])
def test_partitions_added_with_create_partitions_rebalance_the_group_onto_them(cluster, coordinator):
    group = group_on(cluster, coordinator, "readers")
    consumers, before, history = consuming_group(cluster, "confluent", group)
    try:
        add_partitions_with_the_admin_client(cluster)
        assert assigned(topic_change(history, before)) == set(range(AFTER))
        assert_consumers_got_the_new_partitions(cluster, consumers)
    finally:
        stop(consumers)


def test_partitions_added_by_rewriting_the_topic_znode_rebalance_the_group_onto_them(cluster):
    group = group_on(cluster, 1, "auditors")
    consumers, before, history = consuming_group(cluster, "confluent", group)
    try:
        add_partitions_in_zookeeper(cluster)
        assert assigned(topic_change(history, before)) == set(range(AFTER))
        assert_consumers_got_the_new_partitions(cluster, consumers)
    finally:
        stop(consumers)


def test_kafka_python_consumers_get_the_new_partitions_when_their_leader_rejoins_after_the_topic_change(cluster):
    group = group_on(cluster, 1, "loaders")
    consumers, before, history = consuming_group(cluster, "kafka-python", group)
    try:
        add_partitions_with_the_admin_client(cluster)
        changed = topic_change(history, before)
        assert_consumers_got_the_new_partitions(cluster, consumers)
        if assigned(changed) != set(range(AFTER)):  # the leader assigned from its cached metadata
            rejoined = [d for d in list(history) if d["generation"] > changed["generation"]]
            assert rejoined and rejoined[0]["rebalance"]["reason"] == "leader rejoin", rejoined[:1]
    finally:
        stop(consumers)
