"""Kafka 4 consumers with `group.protocol=consumer` (KIP-848) on a coordinator that keeps its
groups in a real ZooKeeper, judged by unmodified confluent-kafka (librdkafka 2.16): they join,
consume and commit; a member joining moves only what must move and nobody is told a kept
partition was revoked or lost; ConsumerGroupDescribe shows who owns which partition while
DescribeGroups answers as Apache Kafka 4 does; a killed member's partitions go to the survivor;
a regex picks up a topic created later; and a killed coordinator's group resumes on the other
node of a two-node cluster with every member keeping its partitions and every commit."""

from __future__ import annotations

import pytest
from confluent_kafka import ConsumerGroupType, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaAdminClient

from tests.support.cluster import create_topic_on, group_least_preferring, running
from tests.support.consumer_groups import FAST_CONSUMER_GROUPS, coordinator_with_topic, stored
from tests.support.consumer_groups import produce as produce_values
from tests.support.consumers import ConsumerProcess
from tests.support.polling import wait_until

pytestmark = pytest.mark.zookeeper
SESSION_MS = FAST_CONSUMER_GROUPS.session_timeout_ms
TOPIC, PARTITIONS = "events", 4


@pytest.fixture
def node(zk_connect, tmp_path):
    """A coordinator whose consumer groups expire a silent member after 6 s (Kafka's default: 45 s)."""
    with coordinator_with_topic(zk_connect, tmp_path / "data", TOPIC, PARTITIONS) as running:
        yield running


def produce(bootstrap: str, count: int) -> None:
    produce_values(bootstrap, TOPIC, PARTITIONS, (f"m{i}" for i in range(count)))


def consumer(node, client_id: str) -> ConsumerProcess:
    return ConsumerProcess("confluent", node.bootstrap, "readers", TOPIC, client_id=client_id,
                           group_protocol="consumer", max_seconds=90)


def test_a_kafka_4_consumer_joins_consumes_commits_and_is_described_as_a_consumer_group(node, zk_connect):
    produce(node.bootstrap, 20)
    reader = consumer(node, "reader-1")
    try:
        wait_until(lambda: len(reader.snapshot()[1]) == 20, 60, message="all 20 records consumed")
        assert reader.snapshot()[0] == [(TOPIC, p) for p in range(PARTITIONS)]
        document = wait_until(lambda: (d := stored(zk_connect, "/groups/readers"))["state"] == "Stable" and d, 30,
                              message="a Stable consumer group document")
        assert document["type"] == "consumer" and [m["client_id"] for m in document["members"]] == ["reader-1"]
        assert document["ownership"] == {TOPIC: {str(p): document["members"][0]["member_id"] for p in range(4)}}
        offsets = wait_until(lambda: stored(zk_connect, f"/groups/readers/offsets/{TOPIC}")["partitions"], 30,
                             message="committed offsets in ZooKeeper")
        assert sorted(entry["offset"] for entry in offsets.values()) == [5, 5, 5, 5]
        admin = AdminClient({"bootstrap.servers": node.bootstrap, "broker.address.family": "v4"})
        described = admin.describe_consumer_groups(["readers"])["readers"].result(15)
        assert described.type == ConsumerGroupType.CONSUMER and described.state.name == "STABLE"
        assert [m.client_id for m in described.members] == ["reader-1"]
    finally:
        reader.stop()


def test_a_member_joining_moves_only_what_must_move_and_nobody_loses_a_kept_partition(node):
    first = consumer(node, "first")
    try:
        wait_until(lambda: len(first.snapshot()[0]) == PARTITIONS, 60, message="the first member owning all four")
        second = consumer(node, "second")
        try:
            wait_until(lambda: len(first.snapshot()[0]) == 2 and len(second.snapshot()[0]) == 2, 60,
                       message="two partitions each")
            kept, moved = set(first.snapshot()[0]), set(second.snapshot()[0])
            assert kept.isdisjoint(moved)
            assert set(first.revoked) == moved  # it gave up exactly what moved, and nothing it kept
            assert first.lost == [] and second.revoked == [] and second.lost == []
        finally:
            second.stop()
    finally:
        first.stop()


def test_a_consumer_group_is_described_by_consumer_group_describe_not_describe_groups_as_in_kafka_4(node):
    """Confluent's admin (ConsumerGroupDescribe) shows who owns what; kafka-python's admin, which
    speaks only DescribeGroups (v6), hears what Apache Kafka 4 answers for a consumer group."""
    members = [consumer(node, f"member-{i}") for i in range(2)]
    kafka_python = KafkaAdminClient(bootstrap_servers=node.bootstrap, request_timeout_ms=10_000)
    confluent = AdminClient({"bootstrap.servers": node.bootstrap, "broker.address.family": "v4"})
    try:
        wait_until(lambda: sorted(len(m.snapshot()[0]) for m in members) == [2, 2], 60,
                   message="two partitions each")

        def described():
            group = confluent.describe_consumer_groups(["readers"])["readers"].result(15)
            return group if group.state.name == "STABLE" else None

        group = wait_until(described, 30, message="a Stable group described")
        reported = {m.client_id: sorted((tp.topic, tp.partition) for tp in m.assignment.topic_partitions)
                    for m in group.members}
        assert reported == {m.client_id: m.snapshot()[0] for m in members}
        classic_view = kafka_python.describe_groups(["readers"])["readers"]
        assert "GroupIdNotFound" in classic_view["error"] and "is not a classic group" in classic_view["error"]
        assert classic_view["members"] == []
    finally:
        kafka_python.close()
        for member in members:
            member.stop()


def test_a_killed_members_partitions_go_to_the_survivor_within_the_session_timeout(node):
    survivor, victim = consumer(node, "survivor"), consumer(node, "victim")
    try:
        wait_until(lambda: len(survivor.snapshot()[0]) == 2 and len(victim.snapshot()[0]) == 2, 60,
                   message="two partitions each")
        victim.kill()
        wait_until(lambda: len(survivor.snapshot()[0]) == PARTITIONS, SESSION_MS / 1000 + 5,
                   message="the survivor owning all four within the session timeout + 5 s")
        assert survivor.lost == []
    finally:
        survivor.stop()
        victim.stop()


def test_a_regex_subscription_picks_up_a_topic_created_later(node):
    reader = ConsumerProcess("confluent", node.bootstrap, "pattern-readers", "^events.*", client_id="pattern",
                             group_protocol="consumer", max_seconds=90)
    try:
        wait_until(lambda: len(reader.snapshot()[0]) == PARTITIONS, 60, message="the existing topic assigned")
        admin = AdminClient({"bootstrap.servers": node.bootstrap, "broker.address.family": "v4"})
        admin.create_topics([NewTopic("events-late", 2, 1)])["events-late"].result(15)
        wait_until(lambda: {t for t, _ in reader.snapshot()[0]} == {TOPIC, "events-late"}, 30,
                   message="the new topic assigned at a later heartbeat")
        producer = Producer({"bootstrap.servers": node.bootstrap, "broker.address.family": "v4"})
        producer.produce("events-late", b"late", partition=1)
        assert producer.flush(15) == 0
        wait_until(lambda: any(r[0] == "events-late" for r in reader.snapshot()[1]), 30,
                   message="the new topic's record consumed")
    finally:
        reader.stop()


def test_a_killed_coordinator_s_consumer_group_resumes_on_another_node_and_nobody_loses_a_partition(
        zk_connect, tmp_path):
    topic_node, victim = 1, 0  # node 1 holds the topic (and survives); node 0 coordinates the group
    with running(zk_connect, tmp_path, 2) as cluster:
        group = group_least_preferring(topic_node, [0, 1], "kip848")
        create_topic_on(cluster.bootstrap(), TOPIC, PARTITIONS, topic_node)
        wait_until(lambda: cluster.leader_of(group) == victim, 60, message="node 0 coordinating the group")
        members = [ConsumerProcess("confluent", cluster.bootstrap(), group, TOPIC, client_id=f"member-{i}",
                                   group_protocol="consumer", max_seconds=120) for i in range(2)]
        try:
            wait_until(lambda: sorted(len(m.snapshot()[0]) for m in members) == [2, 2], 60,
                       message="two partitions each")
            owned = [m.snapshot()[0] for m in members]
            revoked = [list(m.revoked) for m in members]
            produce(cluster.bootstrap(topic_node), 40)
            wait_until(lambda: sum(len(m.snapshot()[1]) for m in members) >= 40, 30, message="40 records consumed")
            before = wait_until(lambda: len(cluster.committed(group, TOPIC)) == PARTITIONS
                                and cluster.committed(group, TOPIC), 30, message="every partition committed")
            assert cluster.leader_of(group) == victim
            cluster.kill(victim)
            wait_until(lambda: cluster.leader_of(group) not in (None, victim), 30, message="a new coordinator")
            produce(cluster.bootstrap(topic_node), 40)
            wait_until(lambda: sum(len(m.snapshot()[1]) for m in members) >= 80, 60,
                       message="the next 40 records consumed through the new coordinator")
            assert [m.snapshot()[0] for m in members] == owned  # nothing moved ...
            assert [list(m.revoked) for m in members] == revoked and all(m.lost == [] for m in members)  # ... or was lost
            after = cluster.committed(group, TOPIC)
            assert all(after[p] >= offset for p, offset in before.items())
            document = cluster.group_document(group)
            assert document["type"] == "consumer" and document["coordinator"] != victim
        finally:
            for member in members:
                member.stop()
