"""A coordinator cluster losing nodes, judged by real kafka-python consumers and by ZooKeeper.

Three `groupctl coordinator run` processes share one ZooKeeper chroot (tests/support/cluster.py).
Partition logs are not replicated, so the topics the groups consume live on a node that is never
the group's coordinator (`group_least_preferring`): killing the coordinator tests the group's
move, not the availability of the messages.

What is pinned:
- kill -9 of a group's coordinator: within the consumers' session timeout plus a few seconds the
  group is Stable on another node (its document and DescribeGroups say so), with a higher
  generation and every acknowledged commit; consumption reaches the log end. Repeated, killing
  whichever node coordinates the group by then and restarting the killed one.
- SIGSTOP past the ZooKeeper session timeout: the group moves; after SIGCONT the stale node
  steps down before it answers anything, so requests it receives answer NOT_COORDINATOR and its
  writes never reach ZooKeeper, and the group document never goes back a generation.
- A ZooKeeper ensemble losing its leader: the coordinators keep serving once it re-elects.
- Metadata from any node lists every live node; a new topic spreads over the live nodes.
- A restarted node gets its preferred groups back once it has been live for the handback delay.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import uuid

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.protocol.admin.groups import DescribeGroupsRequest
from kafka.protocol.consumer.group import OffsetCommitRequest
from kafka.protocol.metadata import FindCoordinatorRequest, MetadataRequest

from groupctl.coordinator.leadership import preferred_node
from tests.support.cluster import SteadyProducer, create_topic_on, group_least_preferring, running
from tests.support.polling import wait_until
from tests.support.consumers import ConsumerProcess
from tests.support.wire import decode_response, read_frame

pytestmark = pytest.mark.zookeeper

SESSION_MS = 6000  # the consumers' session timeout (the coordinators' minimum)
FEW_S = 6.0  # what failover may take beyond the consumers' session timeout
TOPIC, PARTITIONS = "payments", 6
TOPIC_NODE = 2  # holds every partition of TOPIC and never coordinates the groups under test
CYCLES = 3
NONE, NOT_COORDINATOR = 0, 16


@pytest.fixture
def cluster(zk_connect, tmp_path):
    with running(zk_connect, tmp_path, 3) as started:
        yield started


# -- helpers -------------------------------------------------------------------------------------


def start_consumers(bootstrap: str, group: str, count: int = 3) -> list[ConsumerProcess]:
    """Consumers committing after every poll. A request to a coordinator that stopped answering
    (SIGSTOP) times out after the session timeout + 1 s (kafka-python's default, 30 s, would keep
    a consumer stuck in a commit long after its group moved)."""
    return [ConsumerProcess("kafka-python", bootstrap, group, TOPIC, client_id=f"{group}-c{i}",
                            session_timeout_ms=SESSION_MS, max_seconds=240, report_commits=True,
                            request_timeout_ms=SESSION_MS + 1000)
            for i in range(count)]


def stop_all(consumers: list[ConsumerProcess], producer: SteadyProducer | None = None) -> None:
    if producer is not None:
        producer.stop()
    for consumer in consumers:
        consumer.stop()


def cover_the_topic(consumers: list[ConsumerProcess]) -> bool:
    owned = [tp for c in consumers for tp in c.snapshot()[0]]
    return all(c.snapshot()[0] for c in consumers) and sorted(owned) == [(TOPIC, p) for p in range(PARTITIONS)]


def acknowledged(consumers: list[ConsumerProcess]) -> dict[int, int]:
    """Partition -> the highest offset any consumer's commit of it was acknowledged at."""
    highest: dict[int, int] = {}
    for consumer in consumers:
        for (_, partition), offset in consumer.acknowledged().items():
            highest[partition] = max(offset, highest.get(partition, -1))
    return highest


def commits_count(consumers: list[ConsumerProcess]) -> int:
    return sum(len(c.commits) for c in consumers)


def describe(bootstrap: str, group: str) -> dict:
    """`groupctl group describe --output json` against `bootstrap` (any node)."""
    done = subprocess.run([sys.executable, "-m", "groupctl", "--bootstrap", bootstrap, "--output", "json",
                           "group", "describe", group], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    try:
        ends = consumer.end_offsets([TopicPartition(topic, p) for p in range(partitions)])
    finally:
        consumer.close()
    return {tp.partition: offset for tp, offset in ends.items()}


def consumed_values(consumers: list[ConsumerProcess]) -> set[str]:
    return {record[3] for c in consumers for record in c.snapshot()[1]}


def drained(cluster, group: str, consumers, producer: SteadyProducer) -> None:
    """Stop producing; every acknowledged message is consumed and the committed offsets reach
    the log end."""
    producer.stop()
    produced = producer.values()
    wait_until(lambda: produced <= consumed_values(consumers), 60,
               message=f"all {len(produced)} produced messages consumed")
    ends = end_offsets(cluster.bootstrap(), TOPIC, PARTITIONS)
    wait_until(lambda: cluster.committed(group, TOPIC) == ends, 30,
               message=f"committed offsets at the log end {ends}")


def exchange_with(port: int, request, version: int):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        request.with_header(correlation_id=11, client_id="cluster-test")
        sock.sendall(bytes(request.encode(version=version, header=True, framed=True)))
        return decode_response(request, read_frame(sock), version)


def find_coordinator(port: int, group: str):
    return exchange_with(port, FindCoordinatorRequest[3](key=group, key_type=0), 3)


def describe_error(port: int, group: str) -> int:
    return exchange_with(port, DescribeGroupsRequest[5](groups=[group], include_authorized_operations=False),
                         5).groups[0].error_code


def offset_commit(group: str, generation: int, member_id: str, partition: int, offset: int):
    topic = OffsetCommitRequest.OffsetCommitRequestTopic
    return OffsetCommitRequest[8](
        group_id=group, generation_id_or_member_epoch=generation, member_id=member_id, group_instance_id=None,
        topics=[topic(name=TOPIC, partitions=[topic.OffsetCommitRequestPartition(
            partition_index=partition, committed_offset=offset, committed_leader_epoch=-1,
            committed_metadata="")])])


def commit_error(response) -> int:
    return response.topics[0].partitions[0].error_code


def refused(error_code_of) -> bool:
    """Whether a request to a node that lost its groups was refused: answered NOT_COORDINATOR, or
    (when it was queued behind the node's own earlier writes, which ZooKeeper fenced) its
    connection closed unanswered. Any other answer is a test failure."""
    try:
        error = error_code_of()
    except ConnectionError:
        return True
    assert error == NOT_COORDINATOR, error
    return True


def group_at_work(cluster, prefix: str):
    """A topic on TOPIC_NODE, a steady producer and three committing consumers in a Stable group
    that TOPIC_NODE never coordinates: (group, producer, consumers, the group's Stable document)."""
    group = group_least_preferring(TOPIC_NODE, [0, 1, 2], prefix)
    create_topic_on(cluster.bootstrap(), TOPIC, PARTITIONS, TOPIC_NODE)
    producer = SteadyProducer(cluster.bootstrap(), TOPIC, PARTITIONS)
    consumers = start_consumers(cluster.bootstrap(), group)
    try:
        wait_until(lambda: cover_the_topic(consumers), 60, message="three consumers owning all partitions")
        document = wait_until(lambda: cluster.stable_on(group, cluster.leader_of(group), after_generation=0,
                                                        members=3), 30, message="a Stable group document")
    except BaseException:
        stop_all(consumers, producer)
        raise
    return group, producer, consumers, document


# -- a. kill -9 ----------------------------------------------------------------------------------


def test_a_killed_coordinator_s_group_is_stable_on_another_node_with_every_acknowledged_commit(cluster):
    group, producer, consumers, document = group_at_work(cluster, "orders")
    try:
        timings = []
        for cycle in range(CYCLES):
            victim = document["coordinator"]
            assert victim != TOPIC_NODE, f"cycle {cycle}: the topic's node coordinates {group}"
            commits = commits_count(consumers)
            wait_until(lambda: commits_count(consumers) >= commits + 10, 30, message="commits before the kill")

            cluster.kill(victim)
            killed_at = time.monotonic()
            successor = wait_until(lambda: cluster.leader_of(group) not in (None, victim), 30,
                                   message=f"a new leader for {group}'s partition") and cluster.leader_of(group)
            # No commit can be acknowledged between the kill and the new leader's election, and
            # what ZooKeeper holds then is what the new leader loads.
            acknowledged_before = acknowledged(consumers)
            at_election = cluster.committed(group, TOPIC)
            assert all(at_election.get(p, -1) >= offset for p, offset in acknowledged_before.items()), (
                acknowledged_before, at_election)
            document = wait_until(
                lambda: cluster.stable_on(group, successor, after_generation=document["generation"], members=3),
                SESSION_MS / 1000 + FEW_S, message=f"{group} Stable on node {successor}")
            timings.append(round(time.monotonic() - killed_at, 1))
            assert document["rebalance"]["reason"] == "coordinator load"

            stored = cluster.committed(group, TOPIC)
            assert all(stored.get(p, -1) >= offset for p, offset in acknowledged_before.items()), (
                acknowledged_before, stored)
            other = next(n for n in cluster.live if n != successor)  # describe finds the coordinator
            described = describe(cluster.bootstrap(other), group)
            assert described["state"] == "Stable" and described["coordinator"]["node_id"] == successor
            assert described["generation"] >= document["generation"]

            cluster.restart(victim)
        print(f"kill -9 -> Stable on another node, per cycle: {timings} s")
        drained(cluster, group, consumers, producer)
        assert producer.failures == 0  # the topic's node stayed up: the messages were always there
    finally:
        stop_all(consumers, producer)


# -- b. SIGSTOP past the session timeout ---------------------------------------------------------

FENCED_OFFSET = 10**12  # an offset nobody else commits


def test_a_paused_coordinator_steps_down_when_resumed_and_its_stale_writes_are_rejected(cluster):
    group, producer, consumers, before = group_at_work(cluster, "audit")
    try:
        stale = before["coordinator"]
        member = before["members"][0]["member_id"]

        cluster.pause(stale)
        paused_at = time.monotonic()
        successor = wait_until(lambda: cluster.leader_of(group) not in (None, stale), 30,
                               message=f"a new leader for {group}'s partition") and cluster.leader_of(group)
        moved = wait_until(lambda: cluster.stable_on(group, successor, after_generation=before["generation"],
                                                     members=3), 60, message=f"{group} Stable on node {successor}")
        print(f"SIGSTOP -> Stable on node {successor}: {time.monotonic() - paused_at:.1f} s")

        # A commit that reaches the stale node while it is stopped, from the member and generation
        # it knows: once resumed, it must refuse it rather than write it.
        with socket.create_connection(("127.0.0.1", cluster.port(stale)), timeout=10) as sock:
            request = offset_commit(group, before["generation"], member, 0, FENCED_OFFSET)
            request.with_header(correlation_id=5, client_id="stale-writer")
            sock.sendall(bytes(request.encode(version=8, header=True, framed=True)))
            cluster.resume(stale)
            assert refused(lambda: commit_error(decode_response(request, read_frame(sock), 8)))
        assert refused(lambda: describe_error(cluster.port(stale), group))
        assert refused(lambda: commit_error(exchange_with(cluster.port(stale), offset_commit(
            group, moved["generation"], member, 0, FENCED_OFFSET), 8)))

        found = wait_until(lambda: (lambda r: r if r.error_code == NONE and r.node_id == successor else None)(
            find_coordinator(cluster.port(stale), group)), 15, message="the stale node naming the new leader")
        assert found.port == cluster.port(successor)
        watch_until = time.monotonic() + 5
        generation = moved["generation"]
        while time.monotonic() < watch_until:
            document = cluster.group_document(group)
            assert document["generation"] >= generation and document["coordinator"] == successor, document
            generation = document["generation"]
            assert cluster.committed(group, TOPIC).get(0) != FENCED_OFFSET
            time.sleep(0.1)
        assert "stepping down" in cluster.log(stale)
        wait_until(lambda: stale in cluster.registered(), 15, message=f"node {stale} registered again")

        commits = commits_count(consumers)
        wait_until(lambda: commits_count(consumers) >= commits + 10, 30, message="commits after the move")
        drained(cluster, group, consumers, producer)
    finally:
        stop_all(consumers, producer)


# -- c. the ZooKeeper leader dies ----------------------------------------------------------------


def test_the_cluster_keeps_serving_when_the_zookeeper_ensemble_loses_its_leader(zookeeper_ensemble, tmp_path):
    connect = f"{zookeeper_ensemble.connect}/t-{uuid.uuid4().hex}"
    with running(connect, tmp_path, 3, session_timeout_s=6.0) as cluster:
        group = "ledger"
        create_topic_on(cluster.bootstrap(), TOPIC, PARTITIONS, TOPIC_NODE)
        producer = SteadyProducer(cluster.bootstrap(), TOPIC, PARTITIONS)
        consumers = start_consumers(cluster.bootstrap(), group)
        try:
            wait_until(lambda: cover_the_topic(consumers), 60, message="three consumers owning all partitions")
            before = wait_until(lambda: cluster.stable_on(group, cluster.leader_of(group), after_generation=0,
                                                          members=3), 30, message="a Stable group document")

            killed = zookeeper_ensemble.kill_leader()
            killed_at = time.monotonic()
            wait_until(lambda: zookeeper_ensemble.leader() not in (None, killed), 30,
                       message="a new ZooKeeper leader")
            print(f"ZooKeeper leader {killed} killed; new leader after {time.monotonic() - killed_at:.1f} s")

            commits = commits_count(consumers)
            wait_until(lambda: commits_count(consumers) >= commits + 20, 30,
                       message="commits acknowledged after the re-election")
            for node_id in cluster.live:
                answer = wait_until(lambda: (lambda r: r if r.error_code == NONE else None)(
                    find_coordinator(cluster.port(node_id), group)), 15, message=f"FindCoordinator on node {node_id}")
                assert answer.node_id in cluster.live and answer.port == cluster.port(answer.node_id)
            drained(cluster, group, consumers, producer)
            after = cluster.group_document(group)
            assert after["state"] == "Stable" and after["generation"] >= before["generation"]
            print(f"group {group}: coordinator {before['coordinator']} -> {after['coordinator']}, "
                  f"generation {before['generation']} -> {after['generation']}")
        finally:
            stop_all(consumers, producer)


# -- d. Metadata and topic placement -------------------------------------------------------------


def brokers_seen_by(port: int) -> dict[int, tuple[str, int]]:
    response = exchange_with(port, MetadataRequest[1](topics=[]), 1)
    return {b.node_id: (b.host, b.port) for b in response.brokers}


def leaders_per_node(cluster, topic: str) -> dict[int, int]:
    leaders: dict[int, int] = {}
    for replicas in cluster.topic(topic)["partitions"].values():
        leaders[replicas[0]] = leaders.get(replicas[0], 0) + 1
    return leaders


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    try:
        admin.create_topics({topic: {"num_partitions": partitions, "replication_factor": 1}})
    finally:
        admin.close()


def test_metadata_from_any_node_lists_the_live_nodes_and_new_topics_spread_over_them(cluster):
    def everyone_sees(nodes: list[int]) -> bool:
        expected = {n: ("127.0.0.1", cluster.port(n)) for n in nodes}
        return all(brokers_seen_by(cluster.port(n)) == expected for n in nodes)

    wait_until(lambda: everyone_sees([0, 1, 2]), 10, message="every node listing nodes 0-2")
    create_topic(cluster.bootstrap(1), "spread", 6)
    assert leaders_per_node(cluster, "spread") == {0: 2, 1: 2, 2: 2}

    cluster.kill(2)
    wait_until(lambda: everyone_sees([0, 1]), cluster.session_timeout_s + 10, message="nodes 0 and 1 listing only 0-1")
    create_topic(cluster.bootstrap(0), "spread-later", 4)
    assert leaders_per_node(cluster, "spread-later") == {0: 2, 1: 2}


# -- e. handback -----------------------------------------------------------------------------------


def test_a_restarted_node_gets_its_preferred_group_back_after_the_handback_delay(zk_connect, tmp_path):
    with running(zk_connect, tmp_path, 3, handback_delay_s=2.0) as cluster:
        group = group_least_preferring(TOPIC_NODE, [0, 1, 2], "billing")
        preferred = preferred_node(cluster.partition_of(group), {0, 1, 2})
        create_topic_on(cluster.bootstrap(), TOPIC, PARTITIONS, TOPIC_NODE)
        producer = SteadyProducer(cluster.bootstrap(), TOPIC, PARTITIONS)
        consumers = start_consumers(cluster.bootstrap(), group)
        try:
            wait_until(lambda: cover_the_topic(consumers), 60, message="three consumers owning all partitions")
            settled = wait_until(lambda: cluster.stable_on(group, preferred, after_generation=0, members=3), 30,
                                 message=f"{group} Stable on its preferred node {preferred}")
            cluster.kill(preferred)
            moved = wait_until(lambda: (lambda n: n not in (None, preferred) and cluster.stable_on(
                group, n, after_generation=settled["generation"], members=3))(cluster.leader_of(group)),
                SESSION_MS / 1000 + FEW_S, message=f"{group} Stable on another node")

            restarted_at = time.monotonic()  # before: the handback delay counts from its registration, inside
            cluster.restart(preferred)
            acknowledged_before = acknowledged(consumers)
            back = wait_until(lambda: cluster.stable_on(group, preferred, after_generation=moved["generation"],
                                                        members=3), 2.0 + SESSION_MS / 1000 + FEW_S,
                              message=f"{group} handed back to node {preferred}")
            assert time.monotonic() - restarted_at >= 2.0  # not before the handback delay
            assert back["rebalance"]["reason"] == "coordinator load"
            stored = cluster.committed(group, TOPIC)
            assert all(stored.get(p, -1) >= offset for p, offset in acknowledged_before.items())
            drained(cluster, group, consumers, producer)
        finally:
            stop_all(consumers, producer)
