"""The runtime's guarantees: replies never show state the store has not accepted, a failed write
makes the node give the group's partition up and reload it from the store, ZooKeeper session
loss re-registers the node, and shutdown with live clients is quick."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from kazoo.client import KazooClient

from groupctl.coordinator.offsets.messages import CommitOffsets, FetchOffsets, PartitionOffset
from groupctl.coordinator.errors import ErrorCode
from groupctl.server.runtime import CoordinatorUnavailable, Node
from groupctl.store.zookeeper import split_connect
from tests.support.consumers import ConsumerProcess
from tests.support.polling import eventually, wait_until
from tests.support.coordinator import CoordinatorProcess, node_config
from tests.support.held_writes import HeldWrites
from tests.support.zookeeper import expire_session

SCENARIO_TIMEOUT_S = 30


def run(scenario):
    async def bounded():
        return await asyncio.wait_for(scenario, SCENARIO_TIMEOUT_S)

    return asyncio.run(bounded())


def simple_commit(group: str, offset: int) -> CommitOffsets:
    return CommitOffsets(group_id=group, generation_id=-1, member_id="", group_instance_id=None,
                         offsets=(PartitionOffset("t", 0, offset),), api_version=9)


async def committed(node: Node, group: str) -> int:
    result = await node.call_groups(
        lambda core, token, now: core.fetch_offsets(token, FetchOffsets(group, (("t", 0),)), now))
    return result.offsets[0].offset


async def started_node(**overrides) -> Node:
    node = Node(node_config(topics=(("t", 1),), **overrides))
    await node.load()
    node.bound_ports["PLAINTEXT"] = 9999
    await node.join_cluster()
    return node


def test_an_offset_fetch_waits_until_an_earlier_commit_is_durable():
    async def scenario():
        node = await started_node()
        held = HeldWrites(node)
        commit = asyncio.ensure_future(node.call_groups(
            lambda core, token, now: core.commit_offsets(token, simple_commit("g", 42), now)))
        await asyncio.sleep(0)
        fetch = asyncio.ensure_future(committed(node, "g"))
        await asyncio.sleep(0)  # one loop iteration: the fetch has run as far as it can
        assert not commit.done() and not fetch.done()
        held.release.set()
        assert (await commit).partitions[0].error == ErrorCode.NONE
        assert await fetch == 42
        await node.close()

    run(scenario())


def test_a_failed_write_fails_its_request_and_the_core_reloads_what_the_store_holds():
    async def scenario():
        node = await started_node()
        await node.call_groups(lambda core, token, now: core.commit_offsets(token, simple_commit("g", 7), now))
        held = HeldWrites(node)
        held.fail = True
        commit = asyncio.ensure_future(node.call_groups(
            lambda core, token, now: core.commit_offsets(token, simple_commit("g", 42), now)))
        await asyncio.sleep(0)
        fetch = asyncio.ensure_future(committed(node, "g"))
        await asyncio.sleep(0)  # one loop iteration: the fetch is now queued behind the held write
        assert not fetch.done()
        held.release.set()
        with pytest.raises(CoordinatorUnavailable):
            await commit
        with pytest.raises(CoordinatorUnavailable):
            await fetch  # it was queued behind the failed write: it must not see 42
        held.fail = False
        assert not node.serves("g")  # the partition was given up at once and is claimed again
        await eventually(lambda: node.serves("g"), message="the partition claimed again")
        assert await committed(node, "g") == 7  # reloaded from the store, not the failed 42
        await node.close()

    run(scenario())


@pytest.mark.zookeeper
def test_a_node_whose_zookeeper_session_expires_registers_again(zk_connect):
    hosts, chroot = split_connect(zk_connect)

    def registration():
        """(document, owning session id) of /brokers/ids/0, or None."""
        client = KazooClient(hosts=hosts)
        client.start(timeout=10)
        try:
            found = client.exists(f"{chroot}/brokers/ids/0")
            if not found:
                return None
            return json.loads(client.get(f"{chroot}/brokers/ids/0")[0]), found.ephemeralOwner
        finally:
            client.stop()
            client.close()

    async def scenario():
        node = await started_node(zk=zk_connect, zk_session_timeout_s=4.0)
        node.bound_ports["PLAINTEXT"] = 9999
        old_session, password = node.store._client.client_id
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, expire_session, hosts, old_session, password)

        def registered_anew():
            found = registration()
            return found if found and found[1] != old_session else None

        document, owner = await loop.run_in_executor(None, lambda: wait_until(
            registered_anew, 20, message="the node registered again after its session expired"))
        assert document["port"] == 9999 and owner == node.store._client.client_id[0]
        await node.close()

    run(scenario())


@pytest.mark.zookeeper
def test_a_node_registered_again_after_its_session_expired_leads_its_partitions_at_a_raised_epoch(zk_connect):
    hosts, chroot = split_connect(zk_connect)

    def stored_epochs():
        client = KazooClient(hosts=hosts)
        client.start(timeout=10)
        try:
            return json.loads(client.get(f"{chroot}/brokers/topics/t")[0]).get("leader_epochs")
        finally:
            client.stop()
            client.close()

    async def scenario():
        node = await started_node(zk=zk_connect, zk_session_timeout_s=4.0)
        assert node.topics.get("t").leader_epoch(0) == 0 and node.logs.leading
        old_session, password = node.store._client.client_id
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, expire_session, hosts, old_session, password)
        await eventually(lambda: node.topics.get("t").leader_epoch(0) == 1 and node.logs.leading,
                         timeout=20, message="leading again at epoch 1")
        assert await loop.run_in_executor(None, stored_epochs) == {"0": 1}
        await node.close()

    run(scenario())


def test_sigterm_with_a_live_consumer_stops_well_within_the_drain_timeout(tmp_path):
    node = CoordinatorProcess("--topic", "jobs:2", log_path=tmp_path / "coordinator.log").start()
    consumer = ConsumerProcess("kafka-python", node.bootstrap, "workers", "jobs", client_id="w")
    try:
        wait_until(lambda: consumer.snapshot()[0], 60, message="assignment")
        started = time.monotonic()
        assert node.terminate() == 0
        assert time.monotonic() - started < 3.0
    finally:
        consumer.kill()
        node.kill()  # no-op once it exited
