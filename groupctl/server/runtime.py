"""The node runtime: the single place where results are applied.

One `Node` owns the group coordinator core, the topic registry, the partition logs and the
metadata store. Requests and timers reach the core only through `call_groups`/`apply`, which

1. run the core operation synchronously on the event loop (the core is never re-entered
   concurrently: there are no locks because there is no second thread in it),
2. persist the result's records through the `RecordWriter` (in call order; concurrent writes
   are coalesced into one store transaction), and only then
3. deliver the result's replies to the parked or waiting requests (a result without records is
   delivered at once, and the request that produced it gets its reply without a future).

So a reply is never sent for state that is not durable: an acknowledged commit survives kill -9.

Deliberate difference from Apache Kafka: when a store write fails the waiting requests get
`CoordinatorUnavailable` and their connections are closed (clients reconnect and retry), where
Kafka would answer COORDINATOR_NOT_AVAILABLE/NOT_COORDINATOR in-band.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from pathlib import Path
from typing import Any, Callable, Hashable, Optional

from groupctl.coordinator.classic.coordinator import GroupCoordinator
from groupctl.coordinator.records import Record, TopicRecord, TopicTombstone
from groupctl.coordinator.results import Reply, Result
from groupctl.log import LogManager
from groupctl.server.config import NodeConfig
from groupctl.server.faults import FaultInjector
from groupctl.server.timers import AsyncioTimer
from groupctl.server.topics import TopicRegistry
from groupctl.store.base import MetadataStore, NodeExists, StoreError
from groupctl.store.connect import open_store
from groupctl.store.persist import RecordWriter, register_broker

log = logging.getLogger("groupctl.node")


_UNANSWERED: Any = object()  # marks "no reply to this token in the result"


class CoordinatorUnavailable(Exception):
    """The store did not accept the records of a result; its replies cannot be sent."""


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


class Node:
    """Everything a running coordinator node is, minus the sockets (see `server.py`)."""

    def __init__(self, config: NodeConfig, *, now_ms: Callable[[], int] = wall_clock_ms) -> None:
        self.config = config
        self.now_ms = now_ms
        self.faults = FaultInjector()
        self.store: MetadataStore = open_store(zk=config.zk, data_dir=config.data_dir,
                                               session_timeout_s=config.zk_session_timeout_s)
        self.writer = RecordWriter(self.store, config.node_id)
        self.logs = LogManager(config.data_dir / "log" if config.data_dir else None)
        self.topics = TopicRegistry(self.writer.write, lambda: [config.node_id])
        self.timer = AsyncioTimer(now_ms, self.apply)
        self.core = GroupCoordinator(timer=self.timer, config=config.groups, node_id=config.node_id)
        self.bound_port: Optional[int] = None
        self._waiting: dict[Hashable, asyncio.Future] = {}
        self._tokens = itertools.count()

    # -- lifecycle ---------------------------------------------------------------------------

    async def load(self) -> None:
        """Open the store and replay what it holds: topics, then groups and their offsets."""
        await self.store.start()
        await self.writer.start()
        records = await self.writer.load()
        now = self.now_ms()
        groups = 0
        for record in records:
            if isinstance(record, (TopicRecord, TopicTombstone)):
                self.topics.replay(record)
            else:
                self.core.replay(record, now)
                groups += 1
        log.info("loaded %d topic(s) and %d group record(s) from the store", len(self.topics.all()), groups)
        await self.topics.ensure(self.config.topics)

    async def register(self, host: str, port: int) -> None:
        """Register `/brokers/ids/<id>`. After a crash the previous process's ephemeral node
        lives until its ZooKeeper session expires; like a Kafka broker, wait that out (bounded by
        twice the session timeout) rather than take over a node another live process may own."""
        self.bound_port = port
        deadline = asyncio.get_running_loop().time() + 2 * self.config.zk_session_timeout_s + 2
        while True:
            try:
                await register_broker(self.store, self.config.node_id, host, port, self.now_ms())
                return
            except NodeExists:
                if asyncio.get_running_loop().time() >= deadline:
                    raise
                log.info("node id %d is still registered by an earlier session; waiting for it to expire",
                         self.config.node_id)
                await asyncio.sleep(0.5)

    async def close(self) -> None:
        self.timer.close()
        self.logs.close()
        await self.store.close()

    def advertised(self) -> tuple[str, int]:
        return self.config.advertised(self.bound_port or self.config.port)

    # -- applying results -----------------------------------------------------------------------

    async def call_groups(self, op: Callable[[GroupCoordinator, Hashable, int], Result]) -> Any:
        token = next(self._tokens)
        result = op(self.core, token, self.now_ms())
        if not result.records:
            # Nothing to persist, so every reply can go out now, and a request the core answers
            # at once (Heartbeat, most requests) skips the future and its bookkeeping.
            own = self._deliver(result.replies, token)
            if own is not _UNANSWERED:
                return own
        future = asyncio.get_running_loop().create_future()
        self._waiting[token] = future
        if result.records:
            await self.apply(result)
        return await future

    async def apply(self, result: Result) -> None:
        """Persist the result's records, then deliver its replies."""
        if result.records:
            try:
                await self.writer.write(list(result.records))
            except StoreError as exc:
                log.error("store rejected %d record(s): %s", len(result.records), exc)
                for reply in result.replies:
                    future = self._waiting.pop(reply.token, None)
                    if future is not None and not future.done():
                        future.set_exception(CoordinatorUnavailable(str(exc)))
                return
        self._deliver(result.replies)

    def _deliver(self, replies: list[Reply], own_token: Hashable = _UNANSWERED) -> Any:
        """Complete the waiting requests' futures; return the reply addressed to `own_token`
        (a request still on the caller's stack, with no future), or `_UNANSWERED`."""
        own = _UNANSWERED
        for reply in replies:
            if reply.token == own_token:
                own = reply.response
                continue
            future = self._waiting.pop(reply.token, None)
            if future is not None and not future.done():
                future.set_result(reply.response)
        return own

    async def write(self, records: list[Record]) -> None:
        await self.writer.write(records)

    async def delete_topic(self, name: str) -> TopicRecord:
        """Delete a topic, its partition logs and every group's committed offsets for it."""
        record = await self.topics.delete(name)
        self.logs.delete_topic(name)
        await self.apply(self.core.delete_topic_offsets((name,), self.now_ms()))
        return record
