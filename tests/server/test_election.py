"""Group-partition leadership: one leader per partition spread over the live nodes, answers that
agree on every node, fenced writes, and stepping down on session loss and event-loop stalls."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from kafka.protocol.consumer.group import HeartbeatRequest
from kazoo.client import KazooClient, KazooState

from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.leadership import TICK_MS, preferred_node
from groupctl.coordinator.placement import group_partition
from groupctl.coordinator.records import OffsetCommitRecord
from groupctl.layout.paths import leader_path, offset_topic_path, partition_path
from groupctl.server.runtime import Node
from groupctl.server.topics import TopicError
from groupctl.store.base import BadVersion, CheckVersion
from groupctl.store.persist import RecordWriter
from groupctl.store.zookeeper import ZooKeeperStore, split_connect
from tests.support.clocks import SteppedClock
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.polling import eventually, wait_until
from tests.support.wire import connect, decode_response, read_frame
from tests.support.zookeeper import expire_session

SCENARIO_TIMEOUT_S = 60
PARTITIONS = 50


def run(scenario):
    async def bounded():
        return await asyncio.wait_for(scenario, SCENARIO_TIMEOUT_S)

    return asyncio.run(bounded())


async def start_node(node_id: int, **overrides) -> Node:
    node = Node(node_config(node_id=node_id, **overrides))
    await node.load()
    node.bound_ports["PLAINTEXT"] = 10_000 + node_id
    await node.join_cluster()
    return node


def commit(group: str, offset: int) -> OffsetCommitRecord:
    return OffsetCommitRecord(group=group, topic="t", partition=0, offset=offset, leader_epoch=-1,
                              metadata="", commit_timestamp_ms=0)


def test_preferred_nodes_move_only_the_partitions_of_a_node_that_leaves():
    before = {p: preferred_node(p, {0, 1, 2}) for p in range(PARTITIONS)}
    after = {p: preferred_node(p, {0, 2}) for p in range(PARTITIONS)}
    assert {p for p in before if before[p] != after[p]} == {p for p in before if before[p] == 1}
    assert set(before.values()) == {0, 1, 2}


@pytest.mark.zookeeper
def test_three_nodes_split_the_partitions_and_agree_on_every_groups_coordinator(zk_connect):
    async def scenario():
        nodes = [await start_node(i, zk=zk_connect, zk_session_timeout_s=4.0, handback_delay_s=0.2)
                 for i in range(3)]
        try:
            def preferred(node):
                return {p for p in range(PARTITIONS) if preferred_node(p, {0, 1, 2}) == node.config.node_id}

            def settled():  # the first node led everything; the others got theirs handed back
                return all(n.election.led() == preferred(n) and not n.placement.loading for n in nodes)

            def agreed():  # each node learns the others' claims through its watches, a moment later
                views = [({p: leader.node_id for p, leader in n.election.leaders.items()}, n.live_brokers())
                         for n in nodes]
                return all(view == views[0] for view in views) and len(views[0][0]) == PARTITIONS \
                    and len(views[0][1]) == len(nodes)

            await eventually(settled, message="every partition led by its preferred node")
            await eventually(agreed, message="every node's view of the leaders agreeing")
            for node in nodes:
                assert node.placement.serving == preferred(node) and preferred(node)
            for group in ("orders", "payments", "g-17", "ünïcode"):
                answers = {n.coordinator_of(group) for n in nodes}
                (answer,) = answers
                leader = answer[0]
                assert answer[1] == ("127.0.0.1", 10_000 + leader)
                assert [n.serves(group) for n in nodes] == [n.config.node_id == leader for n in nodes]
            assert {n: nodes[0].live_brokers()[n] for n in range(3)} == {n: ("127.0.0.1", 10_000 + n) for n in range(3)}
        finally:
            for node in nodes:
                await node.close()

    run(scenario())


@pytest.mark.zookeeper
def test_a_closed_node_s_partitions_move_to_the_others_with_a_higher_epoch(zk_connect):
    async def scenario():
        a = await start_node(0, zk=zk_connect, zk_session_timeout_s=4.0, handback_delay_s=0.2)
        b = await start_node(1, zk=zk_connect, zk_session_timeout_s=4.0, handback_delay_s=0.2)
        try:
            await eventually(lambda: len(a.election.led()) + len(b.election.led()) == PARTITIONS
                             and a.election.led() and b.election.led(), message="both nodes lead")
            moved = a.election.led()
            epochs = {p: a.election.leaders[p].epoch for p in moved}
            await a.close()
            await eventually(lambda: b.election.led() == set(range(PARTITIONS)) and not b.placement.loading,
                             message="the survivor leads everything")
            assert all(b.election.leaders[p].epoch > epochs[p] for p in moved)
        finally:
            await b.close()

    run(scenario())


@pytest.mark.zookeeper
def test_a_write_carrying_a_stale_leadership_fence_is_rejected_and_changes_nothing(zk_connect):
    async def scenario():
        node = await start_node(0, zk=zk_connect, zk_session_timeout_s=4.0)
        try:
            p = group_partition("g", PARTITIONS)
            await node.writer.write([commit("g", 5)])
            stale = node.election.fence("g")
            current = await node.store.get(partition_path(p))
            # A newer election: the partition znode moves on (as another node's claim would).
            await node.store.set_if_version(partition_path(p), current.data, current.version)
            store = ZooKeeperStore(zk_connect, session_timeout_s=4.0)
            await store.start()
            try:
                writer = RecordWriter(store, 9)
                with pytest.raises(BadVersion):
                    await writer.write([commit("g", 99)], stale)
                stored = await store.get(offset_topic_path("g", "t"))
                assert json.loads(stored.data)["partitions"]["0"]["offset"] == 5
            finally:
                await store.close()
            assert stale == [CheckVersion(partition_path(p), current.version), CheckVersion(leader_path(p), 0)]
        finally:
            await node.close()

    run(scenario())


@pytest.mark.zookeeper
def test_a_node_whose_session_expires_steps_down_at_once_and_leads_again_under_a_new_epoch(zk_connect):
    hosts, _ = split_connect(zk_connect)

    async def scenario():
        node = await start_node(0, zk=zk_connect, zk_session_timeout_s=4.0)
        try:
            await node.writer.write([commit("g", 5)])
            p = group_partition("g", PARTITIONS)
            epoch = node.election.leaders[p].epoch
            lost = []
            node.store.on_session_lost(lambda: lost.append(node.serves("g") or bool(node.election.led())))
            session_id, password = node.store._client.client_id
            await asyncio.get_running_loop().run_in_executor(None, expire_session, hosts, session_id, password)
            await eventually(lambda: lost, message="the session loss")
            assert lost == [False]  # the election stepped down before anything else heard of it
            await eventually(lambda: node.serves("g") and node.election.leaders.get(p) is not None
                             and node.election.leaders[p].epoch > epoch, message="leading again")
            fetched = await node.writer.load(topics=False, wanted_group=lambda g: g == "g")
            assert [r.offset for r in fetched if isinstance(r, OffsetCommitRecord)] == [5]
        finally:
            await node.close()

    run(scenario())


def test_a_request_read_after_an_event_loop_stall_is_not_served_until_leadership_is_confirmed():
    clock = SteppedClock()
    coordinator = InProcessCoordinator(node_config(zk_session_timeout_s=2.0), clock=clock).start()
    try:
        node = coordinator.node
        assert node.serves("g")
        epoch = node.election.leaders[group_partition("g", PARTITIONS)].epoch
        with connect(coordinator) as sock:
            request = HeartbeatRequest[3](group_id="g", generation_id=1, member_id="m", group_instance_id=None)
            request.with_header(correlation_id=1, client_id="stall-test")
            stalling = threading.Event()

            def stall() -> None:  # like SIGSTOP: longer than half the session timeout, on the node's clock
                clock.jump(1_600)
                stalling.set()
                time.sleep(TICK_MS / 1000 + 0.05)  # the stall check and the request are due together

            coordinator.loop.call_soon_threadsafe(stall)
            assert stalling.wait(5)
            sock.sendall(bytes(request.encode(version=3, header=True, framed=True)))
            answer = decode_response(request, read_frame(sock), 3)
        assert answer.error_code == ErrorCode.NOT_COORDINATOR
        wait_until(lambda: node.serves("g"), 10, message="the partition served again")
        assert node.serves("g") and node.election.leaders[group_partition("g", PARTITIONS)].epoch > epoch
    finally:
        coordinator.stop()


@pytest.mark.zookeeper
def test_a_stale_no_leader_event_for_our_own_partition_is_repaired_by_claiming_it_again(zk_connect):
    async def scenario():
        node = await start_node(0, zk=zk_connect, zk_session_timeout_s=4.0)
        try:
            p = group_partition("g", PARTITIONS)
            epoch = node.election.leaders[p].epoch
            node.election._on_leader(p, None)  # as if a watch delivered an old "no leader" state late
            assert not node.serves("g")  # stepped down at once, although ZooKeeper still names us
            await eventually(lambda: node.serves("g"), message="the partition served again")
            assert node.election.leaders[p].epoch > epoch
        finally:
            await node.close()

    run(scenario())


@pytest.mark.zookeeper
def test_while_the_zookeeper_connection_is_down_groups_are_not_served_and_come_back_with_it(zk_connect):
    async def scenario():
        node = await start_node(0, zk=zk_connect, zk_session_timeout_s=4.0)
        try:
            node.store._state_changed(KazooState.SUSPENDED)  # what kazoo reports when the connection drops
            assert node.placement.error("g") is ErrorCode.COORDINATOR_NOT_AVAILABLE
            assert node.election.led() == set(range(PARTITIONS))  # the fences stay: the session may survive
            node.store._state_changed(KazooState.CONNECTED)  # the same session is back
            assert node.serves("g")
        finally:
            await node.close()

    run(scenario())


@pytest.mark.zookeeper
def test_adding_partitions_on_a_node_with_a_stale_view_cannot_shrink_the_topic(zk_connect):
    async def scenario():
        a = await start_node(0, zk=zk_connect, zk_session_timeout_s=4.0, topics=(("t", 2),))
        b = await start_node(1, zk=zk_connect, zk_session_timeout_s=4.0)
        try:
            await eventually(lambda: b.topics.get("t") is not None, message="the topic seen by node 1")
            await a.topics.add_partitions("t", 5)
            with pytest.raises(TopicError) as refused:
                await b.topics.add_partitions("t", 4)  # planned against the store, not b's watch
            assert refused.value.code is ErrorCode.INVALID_PARTITIONS
            stored = await a.writer.reload_topic("t")
            assert len(stored.replicas) == 5
        finally:
            await b.close()
            await a.close()

    run(scenario())


@pytest.mark.zookeeper
def test_a_node_that_registers_again_at_a_new_address_is_advertised_at_it(zk_connect):
    hosts, chroot = split_connect(zk_connect)

    async def scenario():
        node = await start_node(0, zk=zk_connect, zk_session_timeout_s=4.0)
        other = KazooClient(hosts=hosts)
        other.start(timeout=10)
        path = f"{chroot}/brokers/ids/5"
        try:
            other.create(path, b'{"host":"127.0.0.1","port":1,"node_id":5}', ephemeral=True)
            await eventually(lambda: node.live_brokers().get(5) == ("127.0.0.1", 1), message="node 5 at port 1")
            # Gone and back in one step: the set of live nodes never changes.
            transaction = other.transaction()
            transaction.delete(path)
            transaction.create(path, b'{"host":"127.0.0.1","port":2,"node_id":5}', ephemeral=True)
            transaction.commit()
            await eventually(lambda: node.live_brokers().get(5) == ("127.0.0.1", 2), message="node 5 at port 2")
        finally:
            other.stop()
            other.close()
            await node.close()

    run(scenario())
