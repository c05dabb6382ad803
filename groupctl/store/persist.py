"""The record writer: records become durable in compare-and-set transactions, coalesced (group commit).

Invariants:
- The records of one `write()` call go in one store transaction; calls that arrive while a
  transaction is in flight are coalesced into the next one. If it fails, every caller in it gets
  the exception.
- One transaction is in flight at a time, unless the waiting calls fill a whole one
  (MAX_COALESCED_RECORDS): then up to MAX_IN_FLIGHT go at once. Never two in flight touch the
  same scope, so each is built on the versions the store holds now and its outcome never depends
  on another in flight (a failed one cannot make a later one write over a foreign change); calls
  on one scope are applied in call order (calls on other scopes may be acknowledged earlier).
- A call's `checks` (a cluster node's leadership of the groups' partitions when the records were
  produced; `groupctl.server.election`) go in its transaction, which then fails as a whole once
  another node has taken one of those partitions over, or this node has claimed it again since.

The jobs around it: `batch` (records -> store operations), `scopes` (what is stored, cached per
group and topic), `transaction` (one all-or-nothing write), `loading` (stored state back as
records), `registration` (this node's ephemeral registration). Deliberate difference from Apache
Kafka: offsets and group metadata are documents in the metadata store (docs/zookeeper-layout.md),
not records in the `__consumer_offsets` topic.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Optional

from groupctl.coordinator.records import Record, TopicRecord
from groupctl.coordinator.transactions.records import TransactionRecord
from groupctl.layout.paths import BROKER_IDS, GROUPS, TOPICS, TRANSACTIONS, topic_path
from groupctl.store import transaction
from groupctl.store.base import MetadataStore, NodeExists, Op
from groupctl.store.loading import every_group, scan, scan_transactions
from groupctl.store.scopes import Scope, ScopeCache, scope_of

MAX_COALESCED_RECORDS = 1000
"""Calls beyond the first join a transaction only while it stays under this many records, which
keeps a coalesced ZooKeeper multi well inside its request size limit (jute.maxbuffer, 1 MiB)."""
MAX_IN_FLIGHT = 4
"""Transactions (on disjoint scopes) the writer has in flight at once when the queue holds more
than one transaction's worth. Below that, a second transaction in flight only splits what would
have been one, and each transaction costs CPU in the coordinator, kazoo's I/O thread and
ZooKeeper, so fewer, larger transactions commit more per second (bench/zk_commit_throughput.py;
figures in bench/README.md)."""


def _distinct(checks: Iterable[Op]) -> list[Op]:
    """Each check once, in first-seen order (calls on one partition carry the same checks)."""
    return list(dict.fromkeys(checks))


@dataclass
class _Call:
    """One `write()` waiting for its transaction."""

    records: list[Record]
    scopes: set[Scope]
    checks: list[Op]
    done: asyncio.Future


class RecordWriter:
    """Persists records with compare-and-set transactions, coalescing concurrent calls.

    Use: `await writer.start()`, then `await writer.load()` once to read everything back (it
    also primes the cache), then `await writer.write(records)` from any task.
    """

    def __init__(self, store: MetadataStore, node_id: int) -> None:
        self.store = store
        self.node_id = node_id
        self._cache = ScopeCache()
        self._queue: list[_Call] = []
        self._queued_records = 0  # records of the calls in `_queue`
        self._dispatch_scheduled = False
        self._busy: set[Scope] = set()  # scopes of the transactions in flight
        self._in_flight: set[asyncio.Task] = set()
        # Told (seconds, records) of every transaction that committed: the node's metrics.
        self.on_transaction: Optional[Callable[[float, int], None]] = None

    async def start(self) -> None:
        """Create the layout's parent nodes when missing."""
        for path in (GROUPS, TOPICS, BROKER_IDS, TRANSACTIONS):
            try:
                await self.store.create(path, make_parents=True)
            except NodeExists:
                pass

    async def load(self, *, topics: bool = True, wanted_group: Callable[[str], bool] = every_group) -> list[Record]:
        """Read the topics (if `topics`) and the groups `wanted_group` accepts, with their
        offsets, back from the store (replay order), caching what was read."""
        records, scopes = await scan(self.store, topics=topics, wanted_group=wanted_group)
        for scope, docs in scopes.items():
            self._cache.replace(scope, docs)
        return records

    async def load_transactions(self, wanted: Callable[[str], bool]) -> list[TransactionRecord]:
        """Read the transactional ids `wanted` accepts back from the store (their state, by id),
        caching what was read."""
        records, scopes = await scan_transactions(self.store, wanted)
        for scope, docs in scopes.items():
            self._cache.replace(scope, docs)
        return records

    def forget(self, belongs: Callable[[str], bool]) -> None:
        """Drop the cached documents of the groups and transactional ids `belongs` accepts (their
        partition moved to another node, whose writes this cache would not see); a later write
        re-reads them."""
        self._cache.forget_groups(belongs)

    async def reload_topic(self, name: str) -> Optional[TopicRecord]:
        """Read the topic's stored record afresh (None: absent) and cache it, so that the next
        write of the topic is a compare-and-set against exactly what this returned."""
        scope = ("topic", name)
        self._cache.forget({scope})
        await self._cache.ensure(self.store, {scope})
        doc = self._cache.docs.get(topic_path(name))
        return None if doc is None else TopicRecord.of(name, doc.value)

    def cached_topic(self, name: str) -> Optional[TopicRecord]:
        """The topic's record as this writer last read or wrote it, without reading the store
        (None: not cached): the next write of the topic is a compare-and-set against the
        version it was read or written at."""
        doc = self._cache.docs.get(topic_path(name)) if ("topic", name) in self._cache.loaded else None
        return None if doc is None else TopicRecord.of(name, doc.value)

    async def write(self, records: Iterable[Record], checks: Iterable[Op] = ()) -> None:
        """Return when `records` are durable (all of them, in one transaction with whatever
        other calls were coalesced with them, and with `checks`, which must hold for any of it
        to be written). Cancelling the await does not withdraw them."""
        records = list(records)
        if not records:
            return
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        self._queue.append(_Call(records, {scope_of(r) for r in records}, list(checks), done))
        self._queued_records += len(records)
        if not self._dispatch_scheduled:
            # Dispatch on the next loop iteration: the calls every task woken in this iteration
            # makes (one per request read from a socket) go into one transaction.
            self._dispatch_scheduled = True
            loop.call_soon(self._dispatch)
        await done

    def _dispatch(self) -> None:
        """Start a transaction from the queue when none is in flight, and another one (up to
        MAX_IN_FLIGHT) only when the waiting calls fill a whole transaction. Each takes, in queue
        order, the calls whose scopes are free (neither in flight nor touched by an earlier call
        left waiting), up to MAX_COALESCED_RECORDS records."""
        self._dispatch_scheduled = False
        while self._queue and len(self._in_flight) < MAX_IN_FLIGHT:
            if self._in_flight and self._queued_records < MAX_COALESCED_RECORDS:
                return  # they cannot fill a transaction: no need to look (a queue of many calls)
            taken: list[_Call] = []
            waiting: list[_Call] = []
            held: set[Scope] = set()  # scopes of calls left waiting: later calls on them wait too
            size = 0
            full = False
            for call in self._queue:
                free = call.scopes.isdisjoint(self._busy) and call.scopes.isdisjoint(held)
                if free and (not taken or size + len(call.records) <= MAX_COALESCED_RECORDS):
                    taken.append(call)
                    size += len(call.records)
                else:
                    full = full or free
                    waiting.append(call)
                    held |= call.scopes
            if not taken or (self._in_flight and not full and size < MAX_COALESCED_RECORDS):
                return  # the calls wait for a transaction to finish, coalescing meanwhile
            self._queue = waiting
            self._queued_records -= size
            scopes = set().union(*(call.scopes for call in taken))
            self._busy |= scopes
            task = asyncio.get_running_loop().create_task(self._run(taken, scopes))
            self._in_flight.add(task)

    async def _run(self, calls: list[_Call], scopes: set[Scope]) -> None:
        started = time.perf_counter()
        try:
            await transaction.commit(self.store, self._cache, self.node_id,
                                     [r for call in calls for r in call.records], scopes,
                                     _distinct(check for call in calls for check in call.checks))
        except asyncio.CancelledError:  # the loop is shutting down: nothing more is started
            for call in calls:
                call.done.cancel()
            raise
        except Exception as exc:
            for call in calls:
                if not call.done.done():
                    call.done.set_exception(exc)
        else:
            if self.on_transaction is not None:
                self.on_transaction(time.perf_counter() - started, sum(len(call.records) for call in calls))
            for call in calls:
                if not call.done.done():
                    call.done.set_result(None)
        self._busy -= scopes
        self._in_flight.discard(asyncio.current_task())
        self._dispatch()
