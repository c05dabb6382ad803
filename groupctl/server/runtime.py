"""The node runtime: the single place where results are applied.

One `Node` owns the group coordinator core, the topic registry, the partition logs and the
metadata store. Requests and timers reach the core only through `call_groups`/`submit`, which

1. run the core operation synchronously on the event loop (the core is never re-entered
   concurrently: there are no locks because there is no second thread in it),
2. start persisting the result's records at once, in core-operation order (each write is a task
   created right after the operation that produced it, and tasks start in creation order; the
   `RecordWriter` coalesces concurrent writes into one store transaction), and
3. deliver the result's replies only when its records *and every earlier result's records* are
   durable: a reply never shows state that is not in the store (an acknowledged commit survives
   kill -9; an OffsetFetch never sees a commit that might still fail).

When no write is pending, a result without records is answered at once, and the request that
produced it gets its reply without a future (the heartbeat fast path).

When a store write fails, the node recovers: every waiting request fails with
`CoordinatorUnavailable` (its connection is closed; clients reconnect and retry), the core is
rebuilt from what the store holds, and requests arriving meanwhile wait for the reload. So the
core never keeps serving state the store did not accept. Deliberate difference from Apache
Kafka, which answers COORDINATOR_NOT_AVAILABLE/NOT_COORDINATOR in-band.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from typing import Any, Callable, Hashable, Optional

from groupctl.coordinator.classic.coordinator import GroupCoordinator
from groupctl.coordinator.classic.messages import TriggerRebalance, TriggerRebalanceResult
from groupctl.coordinator.records import TopicRecord, TopicTombstone
from groupctl.coordinator.results import Reply, Result
from groupctl.log import LogManager
from groupctl.server.config import NodeConfig
from groupctl.server.faults import FaultInjector
from groupctl.server.group_documents import GroupDocuments
from groupctl.server.rebalance_requests import RebalanceRequests
from groupctl.server.timers import AsyncioTimer
from groupctl.server.topics import TopicRegistry
from groupctl.store.base import MetadataStore, NodeExists, StoreUnavailable
from groupctl.store.connect import open_store
from groupctl.store.persist import RecordWriter, register_broker

log = logging.getLogger("groupctl.node")


_UNANSWERED: Any = object()  # marks "no reply to this token in the result"


class CoordinatorUnavailable(Exception):
    """The store did not accept the records of a result; its replies cannot be sent."""


def _log_failure(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("background task failed: %s", task.exception())


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
        self.documents = GroupDocuments(self.store)
        self.rebalance_requests = RebalanceRequests(self.store, self.trigger_rebalance)
        self.timer = AsyncioTimer(now_ms, self.submit)
        self.core = self._new_core()
        self.bound_port: Optional[int] = None
        self._waiting: dict[Hashable, asyncio.Future] = {}
        self._tokens = itertools.count()
        self._last_write: Optional[asyncio.Task] = None  # the newest result still being persisted
        self._ready = asyncio.Event()  # clear while the core is being (re)loaded from the store
        self._recovering: Optional[asyncio.Task] = None
        self.stopping = False  # set by the server at shutdown: connections read no new request

    def _new_core(self) -> GroupCoordinator:
        return GroupCoordinator(timer=self.timer, config=self.config.groups, node_id=self.config.node_id)

    # -- lifecycle ---------------------------------------------------------------------------

    async def load(self) -> None:
        """Open the store and replay what it holds: topics, then groups and their offsets."""
        await self.store.start()
        await self.writer.start()
        await self._replay_store(topics=True)
        self._ready.set()
        await self.topics.ensure(self.config.topics)
        await self.rebalance_requests.start()
        on_session_lost = getattr(self.store, "on_session_lost", None)
        if on_session_lost is not None:
            on_session_lost(self._register_again)

    def _register_again(self) -> None:
        """ZooKeeper expired our session, taking `/brokers/ids/<id>` with it: register anew.
        (Stepping down as coordinator on session loss belongs to the coordinator cluster.)"""
        if self.bound_port is None or self.stopping:
            return
        log.warning("ZooKeeper session expired; registering node %d again", self.config.node_id)
        task = asyncio.get_running_loop().create_task(self._register_when_reconnected())
        task.add_done_callback(_log_failure)

    async def _register_when_reconnected(self) -> None:
        delay = 0.1
        while not self.stopping:
            try:
                await self.register(*self.advertised())
                return
            except StoreUnavailable:  # kazoo is still establishing the new session
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)

    async def _replay_store(self, *, topics: bool) -> None:
        records = await self.writer.load()
        now = self.now_ms()
        groups = 0
        for record in records:
            if isinstance(record, (TopicRecord, TopicTombstone)):
                if topics:
                    self.topics.replay(record)
            else:
                self.core.replay(record, now)
                groups += 1
        log.info("loaded %d topic(s) and %d group record(s) from the store", len(self.topics.all()), groups)

    async def register(self, host: str, port: int) -> None:
        """Register `/brokers/ids/<id>`. After a crash the previous process's ephemeral node
        lives until its ZooKeeper session expires; like a Kafka broker, wait that out (bounded by
        twice the session timeout) rather than take over a node another live process may own."""
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

    def fail_waiting(self, reason: str) -> None:
        """Fail every parked or waiting request (shutdown, recovery): their connections close
        and the clients retry, as after a broker restart."""
        waiting, self._waiting = self._waiting, {}
        for future in waiting.values():
            if not future.done():
                future.set_exception(CoordinatorUnavailable(reason))

    async def quiesce(self, timeout_s: float = 10.0) -> None:
        """For shutdown: let every pending write finish and its replies go out, then fail the
        requests still parked in the core (they wait for other members, not for us)."""
        self.documents.release()  # long-polling GroupctlDescribeGroup requests answer now
        if self._last_write is not None:
            await asyncio.wait([self._last_write], timeout=timeout_s)
        self.fail_waiting("the coordinator is shutting down")

    async def close(self) -> None:
        await self.rebalance_requests.close()
        await self.quiesce()
        self.timer.close()
        self.logs.close()
        await self.store.close()

    def advertised(self) -> tuple[str, int]:
        return self.config.advertised(self.bound_port or self.config.port)

    # -- applying results -----------------------------------------------------------------------

    async def call_groups(self, op: Callable[[GroupCoordinator, Hashable, int], Result]) -> Any:
        if not self._ready.is_set():
            await self._ready.wait()
        token = next(self._tokens)
        result = op(self.core, token, self.now_ms())
        if not result.records and self._idle():
            # Nothing to persist and nothing earlier pending: every reply can go out now, and a
            # request the core answers at once (Heartbeat, most requests) skips the future.
            own = self._deliver(result.replies, token)
            if own is not _UNANSWERED:
                return own
            result = Result()
        future = asyncio.get_running_loop().create_future()
        self._waiting[token] = future
        self.submit(result)
        return await future

    def submit(self, result: Result) -> None:
        """Persist `result` (starting now, in operation order), then deliver its replies once it
        and every earlier result are durable. Synchronous, so timers keep operation order too."""
        if not result.records and self._idle():
            self._deliver(result.replies)
            return
        previous = self._last_write
        self._last_write = asyncio.get_running_loop().create_task(self._persist(result, previous))

    def _idle(self) -> bool:
        return self._last_write is None or self._last_write.done()

    async def _persist(self, result: Result, previous: Optional[asyncio.Task]) -> None:
        try:
            if result.records:
                await self.writer.write(list(result.records))
            if previous is not None and not previous.done():
                await asyncio.wait([previous])  # writes complete in order; replies follow them
        except Exception as exc:  # noqa: BLE001 - any failure leaves the core ahead of the store
            log.error("store did not accept %d record(s): %s", len(result.records), exc)
            self._fail(result.replies, exc)
            self._start_recovery()
            return
        self.documents.changed(result.records)
        if self._recovering is not None:
            self._fail(result.replies, CoordinatorUnavailable("the coordinator is reloading"))
            return
        self._deliver(result.replies)

    def _fail(self, replies: list[Reply], exc: Exception) -> None:
        for reply in replies:
            future = self._waiting.pop(reply.token, None)
            if future is not None and not future.done():
                future.set_exception(CoordinatorUnavailable(str(exc)))

    def _start_recovery(self) -> None:
        if self._recovering is None:
            self._ready.clear()
            self._recovering = asyncio.get_running_loop().create_task(self._recover())

    async def _recover(self) -> None:
        """Rebuild the core from the store after a failed write (see the module docstring)."""
        try:
            self.fail_waiting("a store write failed; the coordinator is reloading")
            self.timer.close()  # the old core's timers must not produce more results
            while not self._idle():  # let writes already queued finish (or fail) first
                await asyncio.wait([self._last_write])
            self.core = self._new_core()
            delay = 0.1
            while True:
                try:
                    await self._replay_store(topics=False)
                    break
                except Exception as exc:  # noqa: BLE001 - keep trying until the store answers
                    log.warning("reload from the store failed (%s); retrying", exc)
                    self.core = self._new_core()
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 2.0)
        finally:
            self._recovering = None
            self._ready.set()

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

    # -- groupctl's extension APIs ---------------------------------------------------------------

    async def wait_for_document(self, group: str, after_generation: int, timeout_s: float) -> Optional[dict]:
        """The group's stored document once its generation is greater than `after_generation`,
        else (after `timeout_s`) the current one; None when there is none (see GroupDocuments)."""
        return await self.documents.wait(group, after_generation, timeout_s)

    async def trigger_rebalance(self, group: str, reason: Optional[str] = None,
                                client_id: Optional[str] = None) -> TriggerRebalanceResult:
        """Start the group's next rebalance (reason "trigger"), as `rebalance trigger` asks."""
        request = TriggerRebalance(group, reason, client_id)
        return await self.call_groups(lambda core, token, now: core.trigger_rebalance(token, request, now))

    async def delete_topic(self, name: str) -> TopicRecord:
        """Delete a topic, its partition logs and every group's committed offsets for it."""
        record = await self.topics.delete(name)
        self.logs.delete_topic(name)
        self.submit(self.core.delete_topic_offsets((name,), self.now_ms()))
        if self._last_write is not None:
            await asyncio.wait([self._last_write])
        return record
