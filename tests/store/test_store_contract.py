"""The MetadataStore contract, pinned identically for EmbeddedStore (memory, disk) and
ZooKeeperStore (real ZooKeeper)."""

from __future__ import annotations

import asyncio

import pytest

from groupctl.store.base import (
    BadVersion,
    CheckVersion,
    Create,
    Delete,
    Node,
    NodeExists,
    NoNode,
    NotEmpty,
    SetData,
    StoreError,
    StoreUnavailable,
)

EVENT_TIMEOUT_S = 10.0


async def next_event(queue: asyncio.Queue):
    return await asyncio.wait_for(queue.get(), EVENT_TIMEOUT_S)


def test_created_node_reads_back_at_version_zero(store_kind, run):
    async def scenario():
        async with store_kind.opened() as store:
            assert await store.create("/a", b"one") == 0
            assert await store.get("/a") == Node(b"one", 0)
            assert await store.get("/missing") is None

    run(scenario())


def test_create_refuses_an_existing_node_and_a_missing_parent(store_kind, run):
    async def scenario():
        async with store_kind.opened() as store:
            await store.create("/a")
            with pytest.raises(NodeExists):
                await store.create("/a", b"again")
            with pytest.raises(NoNode):
                await store.create("/no/parent")
            assert await store.get("/a") == Node(b"", 0)

    run(scenario())


def test_create_with_make_parents_creates_empty_parents(store_kind, run):
    async def scenario():
        async with store_kind.opened() as store:
            await store.create("/x/y/z", b"leaf", make_parents=True)
            assert await store.get("/x/y") == Node(b"", 0)
            assert await store.get("/x/y/z") == Node(b"leaf", 0)

    run(scenario())


def test_set_if_version_bumps_the_version_and_refuses_a_stale_one(store_kind, run):
    async def scenario():
        async with store_kind.opened() as store:
            await store.create("/a", b"v0")
            assert await store.set_if_version("/a", b"v1", 0) == 1
            with pytest.raises(BadVersion):
                await store.set_if_version("/a", b"stale", 0)
            assert await store.get("/a") == Node(b"v1", 1)
            assert await store.set_if_version("/a", b"any", -1) == 2
            with pytest.raises(NoNode):
                await store.set_if_version("/missing", b"", 0)

    run(scenario())


def test_delete_if_version_checks_version_and_children(store_kind, run):
    async def scenario():
        async with store_kind.opened() as store:
            await store.create("/p")
            await store.create("/p/c")
            with pytest.raises(NotEmpty):
                await store.delete_if_version("/p")
            with pytest.raises(BadVersion):
                await store.delete_if_version("/p/c", 3)
            await store.delete_if_version("/p/c", 0)
            await store.delete_if_version("/p")
            assert await store.get("/p") is None
            with pytest.raises(NoNode):
                await store.delete_if_version("/p")

    run(scenario())


def test_a_recreated_node_starts_again_at_version_zero(store_kind, run):
    async def scenario():
        async with store_kind.opened() as store:
            await store.create("/a")
            await store.set_if_version("/a", b"x", 0)
            await store.delete_if_version("/a", 1)
            assert await store.create("/a", b"new") == 0
            assert await store.get("/a") == Node(b"new", 0)

    run(scenario())


def test_children_are_sorted_names_and_missing_parent_is_no_node(store_kind, run):
    async def scenario():
        async with store_kind.opened() as store:
            await store.create("/p")
            for name in ("b", "a", "c"):
                await store.create(f"/p/{name}")
            await store.create("/p/a/deep")
            assert await store.children("/p") == ["a", "b", "c"]
            assert await store.children("/p/b") == []
            with pytest.raises(NoNode):
                await store.children("/missing")

    run(scenario())


def test_transaction_applies_all_ops_in_order_and_returns_versions(store_kind, run):
    async def scenario():
        async with store_kind.opened() as store:
            await store.create("/s", b"0")
            await store.create("/gone")
            versions = await store.transaction([
                Create("/t", b"parent"),
                Create("/t/child", b"child"),
                SetData("/s", b"1", 0),
                Delete("/gone", 0),
                CheckVersion("/s", 1),
            ])
            assert versions == [0, 0, 1, -1, -1]
            assert await store.get("/t/child") == Node(b"child", 0)
            assert await store.get("/s") == Node(b"1", 1)
            assert await store.get("/gone") is None

    run(scenario())


def test_a_failing_transaction_changes_nothing_and_names_the_failing_op(store_kind, run):
    async def scenario():
        async with store_kind.opened() as store:
            await store.create("/s", b"0")
            await store.set_if_version("/s", b"1", 0)
            with pytest.raises(BadVersion, match="op 1"):
                await store.transaction([
                    Create("/new", b"x"),
                    SetData("/s", b"stale", 0),
                    Create("/other", b"y"),
                ])
            assert await store.get("/new") is None
            assert await store.get("/other") is None
            assert await store.get("/s") == Node(b"1", 1)
            with pytest.raises(NodeExists):
                await store.transaction([Create("/fresh"), Create("/s")])
            with pytest.raises(NoNode):
                await store.transaction([Delete("/fresh")])
            with pytest.raises(NotEmpty):
                await store.transaction([Create("/q"), Create("/q/r"), Delete("/q")])
            assert await store.get("/fresh") is None
            assert await store.get("/q") is None

    run(scenario())


def test_watch_reports_current_state_then_each_change_until_unsubscribed(store_kind, run):
    async def scenario():
        async with store_kind.opened() as store:
            seen: asyncio.Queue = asyncio.Queue()
            unsubscribe = store.watch("/w", seen.put_nowait)
            assert await next_event(seen) is None
            await store.create("/w", b"a")
            assert await next_event(seen) == Node(b"a", 0)
            await store.set_if_version("/w", b"b", 0)
            assert await next_event(seen) == Node(b"b", 1)
            await store.delete_if_version("/w", 1)
            assert await next_event(seen) is None
            unsubscribe()
            await store.create("/w", b"after")
            # A second watch proves the change was notified; the first one must stay quiet.
            marker: asyncio.Queue = asyncio.Queue()
            store.watch("/w", marker.put_nowait)
            assert await next_event(marker) == Node(b"after", 0)
            await store.set_if_version("/w", b"again", 0)
            assert await next_event(marker) == Node(b"again", 1)
            assert seen.empty()

    run(scenario())


def test_ephemeral_node_vanishes_when_its_owner_closes(store_kind, run):
    async def scenario():
        owner = store_kind.make()
        await owner.start()
        await owner.create("/live", b"here", ephemeral=True)
        assert await owner.get("/live") == Node(b"here", 0)
        observer = store_kind.make() if store_kind.concurrent else owner
        if observer is not owner:
            await observer.start()
        seen: asyncio.Queue = asyncio.Queue()
        observer.watch("/live", seen.put_nowait)
        assert await next_event(seen) == Node(b"here", 0)
        await owner.close()
        assert await next_event(seen) is None
        if observer is not owner:
            assert await observer.get("/live") is None
            await observer.close()
        if store_kind.persistent:
            async with store_kind.opened() as reopened:
                assert await reopened.get("/live") is None

    run(scenario())


def test_an_ephemeral_node_cannot_have_children(store_kind, run):
    async def scenario():
        async with store_kind.opened() as store:
            await store.create("/e", ephemeral=True)
            with pytest.raises(StoreError):
                await store.create("/e/child")
            assert await store.children("/e") == []

    run(scenario())


def test_persistent_writes_survive_reopening(persistent_store_kind, run):
    store_kind = persistent_store_kind

    async def scenario():
        async with store_kind.opened() as store:
            await store.create("/keep/a", b"1", make_parents=True)
            await store.set_if_version("/keep/a", b"2", 0)
            await store.transaction([Create("/keep/b", b"b"), Delete("/keep/a", 1), Create("/keep/a", b"3")])
        async with store_kind.opened() as store:
            assert await store.children("/keep") == ["a", "b"]
            assert await store.get("/keep/a") == Node(b"3", 0)
            assert await store.get("/keep/b") == Node(b"b", 0)

    run(scenario())


def test_a_closed_store_is_unavailable(store_kind, run):
    async def scenario():
        store = store_kind.make()
        await store.start()
        await store.close()
        with pytest.raises(StoreUnavailable):
            await store.get("/")
        with pytest.raises(StoreUnavailable):
            await store.create("/x")

    run(scenario())
