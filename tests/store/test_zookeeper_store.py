"""ZooKeeperStore behaviour beyond the shared contract: chroot, reachability, session loss,
leader failover (real ZooKeeper servers)."""

from __future__ import annotations

import asyncio
import time

import pytest

from groupctl.store.base import BadVersion, Node, StoreUnavailable
from groupctl.store.zookeeper import ZooKeeperStore, split_connect
from tests.support.zookeeper import expire_session, free_port

pytestmark = pytest.mark.zookeeper


def test_connect_string_splits_hosts_from_chroot():
    assert split_connect("h1:2181,h2:2181/app/x") == ("h1:2181,h2:2181", "/app/x")
    assert split_connect("h1:2181/app/") == ("h1:2181", "/app")
    assert split_connect("h1:2181") == ("h1:2181", "")


def test_start_creates_the_chroot_and_paths_are_relative_to_it(zookeeper, zk_connect, run):
    chroot = split_connect(zk_connect)[1]

    async def scenario():
        store = ZooKeeperStore(zk_connect + "/nested")
        await store.start()
        await store.create("/inside", b"x")
        await store.close()
        root = ZooKeeperStore(zookeeper.connect)
        await root.start()
        assert await root.get(f"{chroot}/nested/inside") == Node(b"x", 0)
        await root.close()

    run(scenario())


def test_unreachable_zookeeper_fails_start_within_the_connect_timeout(run):
    connect = f"127.0.0.1:{free_port()}"  # nothing listens there

    async def scenario():
        store = ZooKeeperStore(connect, connect_timeout_s=1.0)
        started = time.monotonic()
        with pytest.raises(StoreUnavailable, match=connect):
            await store.start()
        return time.monotonic() - started

    elapsed = run(scenario())
    assert elapsed < 5.0


def test_session_expiry_is_reported_and_ephemeral_nodes_are_gone(zk_connect, run):
    hosts = split_connect(zk_connect)[0]

    async def scenario():
        store = ZooKeeperStore(zk_connect, session_timeout_s=4.0)
        await store.start()
        lost = asyncio.Event()
        store.on_session_lost(lost.set)
        await store.create("/brokers-like", b"me", ephemeral=True)
        session_id, password = store._client.client_id
        await asyncio.get_running_loop().run_in_executor(None, expire_session, hosts, session_id, password)
        await asyncio.wait_for(lost.wait(), 20)
        # kazoo reconnects with a fresh session; the old session's ephemeral node is gone.
        for _ in range(100):
            try:
                assert await store.get("/brokers-like") is None
                break
            except StoreUnavailable:
                await asyncio.sleep(0.1)
        else:
            pytest.fail("the store did not reconnect after session expiry")
        await store.close()

    run(scenario())


def test_writes_continue_after_the_ensemble_leader_is_killed(zookeeper_ensemble, run):
    async def scenario():
        store = ZooKeeperStore(zookeeper_ensemble.connect + "/failover", session_timeout_s=10.0)
        await store.start()
        await store.create("/doc", b"before")
        await asyncio.get_running_loop().run_in_executor(None, zookeeper_ensemble.kill_leader)
        deadline = time.monotonic() + 30
        written = False
        while not written and time.monotonic() < deadline:
            try:
                await store.set_if_version("/doc", b"after", 0)
                written = True
            except BadVersion:
                written = True  # an earlier attempt landed but its answer was lost
            except StoreUnavailable:
                await asyncio.sleep(0.2)
        assert written
        assert await store.get("/doc") == Node(b"after", 1)
        await store.close()

    run(scenario())
