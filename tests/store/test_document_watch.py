"""DocumentWatch (`groupctl.server.document_watch`), the mechanism under the ACL and dynamic config
watches: each child of the watched parents is read again after every change, per document in the
store's order; `refresh` returns once its read is reported; failed reads are retried; nothing is
reported after `close`. On the embedded stores and on a real ZooKeeper."""

from __future__ import annotations

import asyncio

from groupctl.server.document_watch import DocumentWatch
from groupctl.store.base import StoreUnavailable

EVENT_TIMEOUT_S = 10.0
A, B = "/docs/a", "/docs/b"


class Reads:
    """What a DocumentWatch reported, in order, with bounded waits."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, bytes | None]] = []
        self.failures: list[tuple[str, Exception]] = []
        self._changed = asyncio.Event()

    def on_read(self, path: str, data: bytes | None) -> None:
        self.seen.append((path, data))
        self._changed.set()

    def on_failed(self, path: str, exc: Exception) -> None:
        self.failures.append((path, exc))

    def of(self, path: str) -> list[bytes | None]:
        return [data for p, data in self.seen if p == path]

    async def until_last(self, path: str, data: bytes | None) -> None:
        async def settled() -> None:
            while not self.of(path) or self.of(path)[-1] != data:
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(settled(), EVENT_TIMEOUT_S)


class SlowReads:
    """The real store, whose reads of one path can be held after they have read (so what they
    return is older than what the store holds once they are let go), or fail a number of times."""

    def __init__(self, store, path: str) -> None:
        self._store = store
        self._path = path
        self.held = asyncio.Event()
        self.held.set()
        self.failures_left = 0
        self.reading = asyncio.Event()  # a read of the path has read and is held
        self.in_flight = 0
        self.most_in_flight = 0

    def __getattr__(self, name):
        return getattr(self._store, name)

    async def get(self, path: str):
        if path != self._path:
            return await self._store.get(path)
        if self.failures_left:
            self.failures_left -= 1
            raise StoreUnavailable("connection lost (injected)")
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            node = await self._store.get(path)
            if not self.held.is_set():
                self.reading.set()
            await self.held.wait()
            await asyncio.sleep(0)  # a read over the network lets others run before it answers
            return node
        finally:
            self.in_flight -= 1


async def write(store, path: str, data: bytes) -> None:
    node = await store.get(path)
    if node is None:
        await store.create(path, data, make_parents=True)
    else:
        await store.set_if_version(path, data, node.version)


async def started(store, reads: Reads, parents=("/docs",)) -> DocumentWatch:
    watch = DocumentWatch(store, parents, reads.on_read, reads.on_failed)
    await watch.start()
    return watch


async def holding_a_read(real, reads: Reads) -> tuple[SlowReads, DocumentWatch]:
    """A watch that has reported A = "0", and whose read of A = "1" is held (store, watch)."""
    await write(real, A, b"0")
    store = SlowReads(real, A)
    watch = await started(store, reads)
    await reads.until_last(A, b"0")
    store.held.clear()
    await write(real, A, b"1")
    await asyncio.wait_for(store.reading.wait(), EVENT_TIMEOUT_S)
    return store, watch


def test_each_child_present_is_read_then_each_creation_change_and_deletion(store_kind, run):
    async def scenario():
        async with store_kind.opened() as store:
            await write(store, A, b"a0")
            await store.create("/other", make_parents=True)
            reads = Reads()
            watch = await started(store, reads, parents=("/docs", "/other"))
            await reads.until_last(A, b"a0")
            await write(store, B, b"b0")
            await reads.until_last(B, b"b0")
            await write(store, A, b"a1")
            await reads.until_last(A, b"a1")
            await store.delete_if_version(B)
            await reads.until_last(B, None)
            await write(store, "/other/c", b"c0")
            await reads.until_last("/other/c", b"c0")
            await watch.close()

    run(scenario())


def test_refresh_returns_once_a_read_issued_after_it_is_reported(store_kind, run):
    async def scenario():
        async with store_kind.opened() as store:
            await store.create("/docs", make_parents=True)
            reads = Reads()
            watch = await started(store, reads)
            for n in range(5):
                await write(store, A, b"%d" % n)
                await watch.refresh(A)
                assert reads.of(A)[-1] == b"%d" % n
            await store.delete_if_version(A)
            await watch.refresh(A)
            assert reads.of(A)[-1] is None
            await watch.close()

    run(scenario())


def test_reads_of_a_document_are_serialized_and_a_change_during_a_read_is_read_again(store_kind, run):
    async def scenario():
        async with store_kind.opened() as real:
            reads = Reads()
            store, watch = await holding_a_read(real, reads)
            refreshed = asyncio.ensure_future(watch.refresh(A))
            for n in range(2, 6):  # changes while the read of "1" is held
                await write(real, A, b"%d" % n)
            assert store.in_flight == 1
            store.held.set()
            await refreshed
            await reads.until_last(A, b"5")
            assert store.most_in_flight == 1
            assert reads.of(A) == sorted(reads.of(A))  # never an older state after a newer one
            await watch.close()

    run(scenario())


def test_a_failed_read_is_passed_on_and_retried_until_it_is_reported(store_kind, run):
    async def scenario():
        async with store_kind.opened() as real:
            await real.create("/docs", make_parents=True)
            store = SlowReads(real, A)
            store.failures_left = 2
            reads = Reads()
            watch = await started(store, reads)
            await write(real, A, b"x")
            await reads.until_last(A, b"x")
            assert [(path, type(exc)) for path, exc in reads.failures] == [(A, StoreUnavailable)] * 2
            await watch.close()

    run(scenario())


def test_nothing_is_reported_after_close_not_even_a_read_under_way(store_kind, run):
    async def scenario():
        async with store_kind.opened() as real:
            reads = Reads()
            store, watch = await holding_a_read(real, reads)
            await watch.close()
            store.held.set()
            await write(real, A, b"2")
            await write(real, B, b"b")
            await watch.refresh(A)  # returns at once: the watch is closed
            other = Reads()
            witness = await started(real, other)  # sees the writes, so they have been delivered
            await other.until_last(A, b"2")
            await other.until_last(B, b"b")
            assert reads.seen == [(A, b"0")]
            await witness.close()

    run(scenario())
