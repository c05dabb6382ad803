"""The MetadataStore children-watch contract (`watch_children`), pinned identically for
EmbeddedStore (memory, disk) and ZooKeeperStore (real ZooKeeper)."""

from __future__ import annotations

import asyncio

EVENT_TIMEOUT_S = 10.0


class Seen:
    """What a children watch delivered, read in order; unchanged repeats (which ZooKeeper may
    deliver) are skipped."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue = asyncio.Queue()
        self.last = None

    def __call__(self, children: list[str]) -> None:
        self.queue.put_nowait(children)

    async def next_set(self, expected: list[str]) -> None:
        while True:
            children = await asyncio.wait_for(self.queue.get(), EVENT_TIMEOUT_S)
            if children != self.last:
                self.last = children
                assert children == expected
                return


def test_children_watch_reports_the_children_then_each_creation_and_deletion(store_kind, run):
    async def scenario():
        async with store_kind.opened() as store:
            await store.create("/requests/b", make_parents=True)
            seen = Seen()
            store.watch_children("/requests", seen)
            await seen.next_set(["b"])
            await store.create("/requests/a", b"x")
            await seen.next_set(["a", "b"])
            await store.delete_if_version("/requests/b")
            await seen.next_set(["a"])
            await store.delete_if_version("/requests/a")
            await seen.next_set([])

    run(scenario())


def test_children_watch_ignores_grandchildren_and_stops_when_unsubscribed(store_kind, run):
    async def scenario():
        async with store_kind.opened() as store:
            await store.create("/requests", make_parents=True)
            seen = Seen()
            unsubscribe = store.watch_children("/requests", seen)
            await seen.next_set([])
            await store.create("/requests/a")
            await seen.next_set(["a"])
            await store.create("/requests/a/deeper")
            await store.set_if_version("/requests/a", b"data", 0)
            unsubscribe()
            await store.create("/requests/z")
            # A second watch proves the change was notified; the first one must stay quiet
            # (apart from unchanged repeats of ["a"], which ZooKeeper may deliver).
            marker = Seen()
            store.watch_children("/requests", marker)
            await marker.next_set(["a", "z"])
            await store.create("/requests/zz")
            await marker.next_set(["a", "z", "zz"])
            while not seen.queue.empty():
                assert seen.queue.get_nowait() == ["a"]

    run(scenario())
