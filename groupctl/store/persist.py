"""Records <-> store paths (docs/zookeeper-layout.md): how hard state is written and read back.

Layout (every name component is `groupctl.layout.paths.encode_name(...)`):
```
/brokers/ids/<node-id>            ephemeral groupctl.layout.brokers.BrokerRegistration
/brokers/topics/<topic>           groupctl.layout.topics.TopicDocument
/groups/<group>                   the group document (GroupMetadataRecord.document)
/groups/<group>/offsets           structural, empty
/groups/<group>/offsets/<topic>   groupctl.layout.offsets.OffsetsDocument
```
One znode per (group, topic) keeps a commit request to one write per topic, and a group's
offsets readable with one `children` plus one `get` per topic; an offsets document keeps each
partition's entry encoded, so a commit re-encodes only the entries it changes.

Invariants:
- Every write is compare-and-set: a path is created when the writer knows it is absent and set
  or deleted at the version the writer last saw. The writer keeps the current documents and
  versions of everything it writes (a "scope" per group and per topic, read from the store on
  first touch), so an offset commit is a read-modify-write without a store read.
- The records of one `write()` call go in one store transaction, and calls that arrive while a
  transaction is in flight are coalesced into the next one (group commit). If that transaction
  fails every caller in it gets the exception, and the scopes it touched are dropped from the
  cache so that they are re-read before the next write (a retry after BadVersion can succeed).
- One transaction is in flight at a time, unless the waiting calls fill a whole transaction
  (MAX_COALESCED_RECORDS): then waiting cannot coalesce more, and up to MAX_IN_FLIGHT go at
  once. Never two in flight touch the same scope: a transaction is built only from calls whose
  scopes no in-flight transaction touches, so its versions are what the store holds now, not
  what an earlier transaction would produce. Its success or failure therefore never depends on
  another in-flight transaction (a failed one cannot make a later one write over a foreign
  change), and calls on one scope are applied in call order. (Calls on other scopes may be
  acknowledged before an earlier call.)
- An offset commit for a group without a document creates an Empty group document (a
  memberless group using simple commits) in the same transaction.
- A call may carry `checks` (a coordinator cluster node's leadership of the groups' partitions,
  taken when the records were produced; see `groupctl.server.election`): the transaction
  carrying the call carries them too, so it fails as a whole once another node has taken one of
  those partitions over, or this node has claimed it again since.
- `load_records` returns records in replay order: all topics, then per group its
  GroupMetadataRecord followed by its OffsetCommitRecords (sorted by topic, partition).

Deliberate difference from Apache Kafka: offsets and group metadata live in ZooKeeper documents
(as in the seed design), not in the `__consumer_offsets` topic.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from groupctl.coordinator.records import (
    GroupMetadataRecord,
    GroupTombstone,
    OffsetCommitRecord,
    OffsetTombstone,
    Record,
    TopicRecord,
    TopicTombstone,
)
from groupctl.layout.brokers import BrokerRegistration
from groupctl.layout.codec import LayoutError
from groupctl.layout.codec import encode as encode_json
from groupctl.layout.offsets import OffsetsDocument
from groupctl.layout.topics import TopicDocument
from groupctl.layout.paths import (
    BROKER_IDS,
    GROUPS,
    TOPICS,
    broker_path,
    decode_name,
    group_path,
    offset_topic_path,
    offsets_path,
    topic_path,
)
from groupctl.store.base import Create, Delete, MetadataStore, NodeExists, NoNode, Op, SetData, StoreError

DOCUMENT_VERSION = 1
MAX_COALESCED_RECORDS = 1000
"""Calls beyond the first join a transaction only while it stays under this many records, which
keeps a coalesced ZooKeeper multi well inside its request size limit (jute.maxbuffer, 1 MiB)."""
MAX_IN_FLIGHT = 4
"""Transactions (on disjoint scopes) the writer has in flight at once when the queue holds more
than one transaction's worth. Below that, a second transaction in flight only splits what would
have been one: measured with bench/zk_commit_throughput.py on the 2-core reference machine, each
transaction costs CPU in the coordinator, kazoo's I/O thread and ZooKeeper, and 16 committing
connections did ~6.6k commits/s with one in flight, ~5.8k with two and ~5.0k with four."""

_LOAD_CONCURRENCY = 64


class CorruptDocument(StoreError):
    """A stored document that is not what this layout writes."""


def decode_document(path: str, data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError as exc:
        raise CorruptDocument(f"{path}: not JSON ({exc})") from None


def empty_group_document(group: str, node_id: int, now_ms: int) -> dict[str, Any]:
    """The document of a group that has committed offsets but never had members."""
    return {
        "version": DOCUMENT_VERSION,
        "group": group,
        "protocol_type": "",
        "protocol": None,
        "generation": 0,
        "state": "Empty",
        "leader": None,
        "members": [],
        "ownership": {},
        "coordinator": node_id,
        "updated_at_ms": now_ms,
    }


async def register_broker(store: MetadataStore, node_id: int, host: str, port: int, now_ms: int) -> None:
    """Create this node's ephemeral `/brokers/ids/<id>`. NodeExists when a live session (another
    process, or this node's previous session not yet expired) still holds it."""
    registration = BrokerRegistration(node_id=node_id, host=host, port=port, started_at_ms=now_ms)
    await store.create(broker_path(node_id), registration.encode(), ephemeral=True, make_parents=True)


@dataclass(frozen=True)
class _Doc:
    """A stored node as the writer last saw it; `value` is the decoded document (an
    OffsetsDocument for offsets, None for structural nodes)."""

    version: int
    value: Any


# A scope is the unit the cache loads and forgets: ("group", name) or ("topic", name).
_Scope = tuple[str, str]


async def _read_group(store: MetadataStore, group: str) -> dict[str, _Doc]:
    """Everything stored for one group, by path."""
    found: dict[str, _Doc] = {}
    path = group_path(group)
    node = await store.get(path)
    if node is None:
        return found
    found[path] = _Doc(node.version, decode_document(path, node.data))
    try:
        topics = await store.children(offsets_path(group))
    except NoNode:
        return found
    found[offsets_path(group)] = _Doc(-1, None)  # structural; deleted at any version
    for component in topics:
        topic_doc_path = f"{offsets_path(group)}/{component}"
        node = await store.get(topic_doc_path)
        if node is None:
            continue  # deleted since `children`; a later CAS write will notice anything else
        found[topic_doc_path] = _Doc(node.version, _decoded(OffsetsDocument.decode, topic_doc_path, node.data))
    return found


async def _read_topic(store: MetadataStore, topic: str) -> dict[str, _Doc]:
    path = topic_path(topic)
    node = await store.get(path)
    return {} if node is None else {path: _Doc(node.version, _decoded(TopicDocument.decode, topic, node.data))}


def _decoded(decode: Callable[[str, bytes], Any], where: str, data: bytes) -> Any:
    """`decode(where, data)`, a malformed document being CorruptDocument (a store error)."""
    try:
        return decode(where, data)
    except LayoutError as exc:
        raise CorruptDocument(str(exc)) from None


async def _children_or_empty(store: MetadataStore, path: str) -> list[str]:
    try:
        return await store.children(path)
    except NoNode:
        return []


def _every_group(group: str) -> bool:
    return True


async def _scan(store: MetadataStore, *, topics: bool = True, wanted_group: Callable[[str], bool] = _every_group
                ) -> tuple[list[Record], dict[_Scope, dict[str, _Doc]]]:
    """Read the topics (if `topics`) and the groups `wanted_group` accepts; return replay-ordered
    records and the documents by scope."""
    limit = asyncio.Semaphore(_LOAD_CONCURRENCY)

    async def bounded(read, name):
        async with limit:
            return await read(store, name)

    topics = sorted(decode_name(c) for c in await _children_or_empty(store, TOPICS)) if topics else []
    groups = sorted(g for g in (decode_name(c) for c in await _children_or_empty(store, GROUPS)) if wanted_group(g))
    topic_docs = await asyncio.gather(*(bounded(_read_topic, t) for t in topics))
    group_docs = await asyncio.gather(*(bounded(_read_group, g) for g in groups))
    scopes: dict[_Scope, dict[str, _Doc]] = {}
    records: list[Record] = []
    for topic, docs in zip(topics, topic_docs):
        scopes[("topic", topic)] = docs
        for doc in docs.values():
            records.append(_topic_record(topic, doc.value))
    for group, docs in zip(groups, group_docs):
        scopes[("group", group)] = docs
        records.extend(_group_records(group, docs))
    return records, scopes


def _topic_record(name: str, document: TopicDocument) -> TopicRecord:
    return TopicRecord(name=name, topic_id=document.topic_id, replicas=document.replicas)


def _group_records(group: str, docs: dict[str, _Doc]) -> list[Record]:
    path = group_path(group)
    if path not in docs:
        return []
    document = docs[path].value
    if not isinstance(document, dict) or document.get("group") != group:
        raise CorruptDocument(f"{path}: not the document of group {group!r}")
    records: list[Record] = [GroupMetadataRecord(group, document)]
    prefix = offsets_path(group) + "/"
    for doc_path in sorted(p for p in docs if p.startswith(prefix)):
        topic = decode_name(doc_path[len(prefix):])
        partitions = docs[doc_path].value.partitions
        for partition in sorted(partitions, key=int):
            entry = partitions[partition]
            records.append(OffsetCommitRecord(
                group=group, topic=topic, partition=int(partition), offset=entry["offset"],
                leader_epoch=entry["leader_epoch"], metadata=entry["metadata"],
                commit_timestamp_ms=entry["commit_timestamp_ms"],
            ))
    return records


async def load_records(store: MetadataStore) -> list[Record]:
    """Every stored topic, group document and committed offset, in replay order."""
    records, _ = await _scan(store)
    return records


def _scope_of(record: Record) -> _Scope:
    if isinstance(record, (TopicRecord, TopicTombstone)):
        return ("topic", record.name)
    return ("group", record.group)


_NO_OFFSETS = OffsetsDocument({})


def _depth(path: str) -> int:
    return path.count("/")


class _Batch:
    """The documents a batch of records leads to, folded over the cached ones."""

    def __init__(self, cache: dict[str, _Doc], node_id: int) -> None:
        self._cache = cache
        self._node_id = node_id
        self.final: dict[str, Optional[Any]] = {}  # path -> new value; None: absent or structural
        self.structural: set[str] = set()  # paths in `final` that exist without a document

    def exists(self, path: str) -> bool:
        if path in self.final:
            return self.final[path] is not None or path in self.structural
        return path in self._cache

    def value(self, path: str) -> Any:
        if path in self.final:
            return self.final[path]
        doc = self._cache.get(path)
        return doc.value if doc is not None else None

    def put(self, path: str, value: Any) -> None:
        self.final[path] = value

    def put_structural(self, path: str) -> None:
        self.final[path] = None
        self.structural.add(path)

    def remove(self, path: str) -> None:
        self.final[path] = None
        self.structural.discard(path)

    def apply(self, record: Record) -> None:
        if isinstance(record, GroupMetadataRecord):
            self.put(group_path(record.group), record.document)
        elif isinstance(record, OffsetCommitRecord):
            self._commit_offset(record)
        elif isinstance(record, OffsetTombstone):
            self._delete_offset(record)
        elif isinstance(record, GroupTombstone):
            self._delete_group(record.group)
        elif isinstance(record, TopicRecord):
            self.put(topic_path(record.name), TopicDocument(record.topic_id, record.replicas))
        elif isinstance(record, TopicTombstone):
            if self.exists(topic_path(record.name)):
                self.remove(topic_path(record.name))
        else:
            raise TypeError(f"not a record: {record!r}")

    def _commit_offset(self, record: OffsetCommitRecord) -> None:
        if not self.exists(group_path(record.group)):
            self.put(group_path(record.group),
                     empty_group_document(record.group, self._node_id, record.commit_timestamp_ms))
        if not self.exists(offsets_path(record.group)):
            self.put_structural(offsets_path(record.group))
        path = offset_topic_path(record.group, record.topic)
        current = self.value(path) or _NO_OFFSETS
        self.put(path, current.with_commit(record.partition, record.offset, record.leader_epoch, record.metadata,
                                          record.commit_timestamp_ms))

    def _delete_offset(self, record: OffsetTombstone) -> None:
        path = offset_topic_path(record.group, record.topic)
        current = self.value(path)
        if current is None or str(record.partition) not in current.partitions:
            return
        remaining = current.without(str(record.partition))
        if remaining.partitions:
            self.put(path, remaining)
        else:
            self.remove(path)

    def _delete_group(self, group: str) -> None:
        root = group_path(group)
        known = set(p for p in self._cache if p == root or p.startswith(root + "/"))
        known |= set(p for p in self.final if p == root or p.startswith(root + "/"))
        for path in known:
            if self.exists(path):
                self.remove(path)

    def ops(self) -> list[Op]:
        """Store operations turning the cached state into the final one: deletes deepest
        first, then creates and sets shallowest first."""
        deletes: list[Op] = []
        writes: list[Op] = []
        for path in sorted(self.final, key=_depth, reverse=True):
            if not self.exists(path) and path in self._cache:
                deletes.append(Delete(path, self._cache[path].version))
        for path in sorted(self.final, key=_depth):
            if not self.exists(path):
                continue
            value = self.final[path]
            if path in self.structural:
                data = b""
            elif isinstance(value, (OffsetsDocument, TopicDocument)):
                data = value.encode()
            else:
                data = encode_json(value)
            if path in self._cache:
                if path not in self.structural:
                    writes.append(SetData(path, data, self._cache[path].version))
            else:
                writes.append(Create(path, data))
        return deletes + writes


def _distinct(checks: Iterable[Op]) -> list[Op]:
    """Each check once, in first-seen order (calls on one partition carry the same checks)."""
    return list(dict.fromkeys(checks))


@dataclass
class _Call:
    """One `write()` waiting for its transaction."""

    records: list[Record]
    scopes: set[_Scope]
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
        self._cache: dict[str, _Doc] = {}
        self._loaded: set[_Scope] = set()
        self._queue: list[_Call] = []
        self._dispatch_scheduled = False
        self._busy: set[_Scope] = set()  # scopes of the transactions in flight
        self._in_flight: set[asyncio.Task] = set()

    async def start(self) -> None:
        """Create the layout's parent nodes when missing."""
        for path in (GROUPS, TOPICS, BROKER_IDS):
            try:
                await self.store.create(path, make_parents=True)
            except NodeExists:
                pass

    async def load(self, *, topics: bool = True, wanted_group: Callable[[str], bool] = _every_group) -> list[Record]:
        """Read the topics (if `topics`) and the groups `wanted_group` accepts, with their
        offsets, back from the store (replay order), caching what was read."""
        records, scopes = await _scan(self.store, topics=topics, wanted_group=wanted_group)
        for scope, docs in scopes.items():
            self._forget({scope})
            self._cache.update(docs)
            self._loaded.add(scope)
        return records

    def forget(self, belongs: Callable[[str], bool]) -> None:
        """Drop the cached documents of the groups `belongs` accepts (their partition moved to
        another node, whose writes this cache would not see); a later write re-reads them."""
        self._forget({scope for scope in self._loaded if scope[0] == "group" and belongs(scope[1])})

    async def reload_topic(self, name: str) -> Optional[TopicRecord]:
        """Read the topic's stored record afresh (None: absent) and cache it, so that the next
        write of the topic is a compare-and-set against exactly what this returned."""
        self._forget({("topic", name)})
        await self._load_scope(("topic", name))
        doc = self._cache.get(topic_path(name))
        return None if doc is None else _topic_record(name, doc.value)

    async def write(self, records: Iterable[Record], checks: Iterable[Op] = ()) -> None:
        """Return when `records` are durable (all of them, in one transaction with whatever
        other calls were coalesced with them, and with `checks`, which must hold for any of it
        to be written). Cancelling the await does not withdraw them."""
        records = list(records)
        if not records:
            return
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        self._queue.append(_Call(records, {_scope_of(r) for r in records}, list(checks), done))
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
            taken: list[_Call] = []
            waiting: list[_Call] = []
            held: set[_Scope] = set()  # scopes of calls left waiting: later calls on them wait too
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
            scopes = set().union(*(call.scopes for call in taken))
            self._busy |= scopes
            task = asyncio.get_running_loop().create_task(self._run(taken, scopes))
            self._in_flight.add(task)

    async def _run(self, calls: list[_Call], scopes: set[_Scope]) -> None:
        try:
            await self._commit([r for call in calls for r in call.records], scopes,
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
            for call in calls:
                if not call.done.done():
                    call.done.set_result(None)
        self._busy -= scopes
        self._in_flight.discard(asyncio.current_task())
        self._dispatch()

    async def _commit(self, records: list[Record], scopes: set[_Scope], checks: list[Op]) -> None:
        try:
            for scope in sorted(scopes - self._loaded):
                await self._load_scope(scope)
            batch = _Batch(self._cache, self.node_id)
            for record in records:
                batch.apply(record)
            ops = batch.ops()
            if not ops:
                return
            versions = (await self.store.transaction(checks + ops))[len(checks):]
        except BaseException:
            self._forget(scopes)
            raise
        for op, version in zip(ops, versions):
            if isinstance(op, Delete):
                self._cache.pop(op.path, None)
            elif op.path in batch.structural:
                self._cache[op.path] = _Doc(-1, None)
            else:
                self._cache[op.path] = _Doc(version, batch.final[op.path])
        self._forget(scopes - self._loaded)  # forgotten while in flight: keep them forgotten

    async def _load_scope(self, scope: _Scope) -> None:
        kind, name = scope
        docs = await (_read_group(self.store, name) if kind == "group" else _read_topic(self.store, name))
        self._cache.update(docs)
        self._loaded.add(scope)

    def _forget(self, scopes: set[_Scope]) -> None:
        for kind, name in scopes:
            self._loaded.discard((kind, name))
            root = group_path(name) if kind == "group" else topic_path(name)
            for path in [p for p in self._cache if p == root or p.startswith(root + "/")]:
                del self._cache[path]
