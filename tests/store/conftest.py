"""Fixtures for the store tests: one contract, three stores.

`store_kind` runs a test against EmbeddedStore in memory, EmbeddedStore on a temp dir and
ZooKeeperStore on a real ZooKeeper (own chroot per test). Tests are plain functions that drive
their scenario with `run`, which bounds it in time.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import AsyncIterator, Awaitable, Callable

import pytest

from groupctl.store.base import MetadataStore
from groupctl.store.embedded import EmbeddedStore
from groupctl.store.zookeeper import ZooKeeperStore

SCENARIO_TIMEOUT_S = 60.0


@dataclass
class StoreKind:
    name: str
    make: Callable[[], MetadataStore]
    persistent: bool  # a new instance sees what a closed one wrote
    concurrent: bool  # two instances can be open at once on the same data

    @contextlib.asynccontextmanager
    async def opened(self) -> AsyncIterator[MetadataStore]:
        """A new started instance of this kind of store, closed afterwards."""
        store = self.make()
        await store.start()
        try:
            yield store
        finally:
            await store.close()


ZOOKEEPER = pytest.param("zookeeper", marks=pytest.mark.zookeeper)


def make_store_kind(request, tmp_path) -> StoreKind:
    if request.param == "memory":
        return StoreKind("memory", lambda: EmbeddedStore(None), persistent=False, concurrent=False)
    if request.param == "disk":
        directory = tmp_path / "store"
        return StoreKind("disk", lambda: EmbeddedStore(directory), persistent=True, concurrent=False)
    connect = request.getfixturevalue("zk_connect")
    return StoreKind("zookeeper", lambda: ZooKeeperStore(connect), persistent=True, concurrent=True)


@pytest.fixture(params=["memory", "disk", ZOOKEEPER])
def store_kind(request, tmp_path) -> StoreKind:
    return make_store_kind(request, tmp_path)


@pytest.fixture(params=["disk", ZOOKEEPER])
def persistent_store_kind(request, tmp_path) -> StoreKind:
    """The stores where a new instance sees what a closed one wrote."""
    return make_store_kind(request, tmp_path)


@pytest.fixture(params=[ZOOKEEPER])
def concurrent_store_kind(request, tmp_path) -> StoreKind:
    """The stores two instances can have open at once on the same data."""
    return make_store_kind(request, tmp_path)


@pytest.fixture
def run() -> Callable[[Awaitable], object]:
    """Run one async scenario to completion on a fresh event loop, bounded in time."""

    def runner(scenario: Awaitable) -> object:
        async def bounded():
            return await asyncio.wait_for(scenario, SCENARIO_TIMEOUT_S)

        return asyncio.run(bounded())

    return runner
