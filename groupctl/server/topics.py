"""The node's topics: names, ids and partition placement, persisted at `/brokers/topics/<topic>`.

Topic changes are records written through the node's `RecordWriter` before the registry changes,
so a restart reloads exactly what was acknowledged; other nodes' changes arrive through `observe`.

Invariants:
- A topic name is 1-249 characters of [a-zA-Z0-9._-], and neither "." nor "..".
- Topic ids are random UUIDs, fixed at creation; `by_id` and `get` agree on every record (if a
  corrupt store gave two names one id, the newest wins `by_id`).
- Partitions are numbered 0..n-1; each lists its replica node ids, leader first, all with the
  same number of replicas. This node only ever adds partitions.
- A creation writes the topic's config document (`configure`; deleted when empty) after reserving
  the name and before the topic, as Kafka's AdminZkClient.createTopicWithAssignment does: a new
  topic never runs on a document a deleted topic of its name left behind.
- At most one store write per name is in flight: a creation reserves the name before its write
  (meanwhile creating it again is TOPIC_ALREADY_EXISTS and `get_or_create` waits for it);
  additions and deletions of an existing topic take turns, each validated against the topic as
  the previous one left it; a pending deletion makes later ones and additions
  UNKNOWN_TOPIC_OR_PARTITION, while the topic stays visible until its tombstone is durable.
- Leader epochs only rise: a partition starts at 0 (new topics and added partitions) and its
  leader raises it (`raise_leader_epochs`) each time it starts leading; growing a topic keeps
  the existing partitions' epochs.
- A change of an existing topic is planned against the record its compare-and-set write is
  against: read afresh (`reload`), or, when raising leader epochs, the writer's cached record
  if it is the one held here.
- Placement: partition p's replicas are `replication_factor` consecutive live nodes (id order)
  from index (start + p) mod n, so leaders spread round-robin; added partitions continue the
  sequence from the first existing partition whose leader is live (Kafka anchors on partition 0's).

Deliberate differences from Apache Kafka: a new topic's start index derives from its name
(crc32), not at random; replicas are metadata only (nothing is replicated); an addition while a
deletion is pending is UNKNOWN_TOPIC_OR_PARTITION (Kafka's ZooKeeper mode said
INVALID_TOPIC_EXCEPTION "queued for deletion"; KRaft deletes at once).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import uuid
import zlib
from collections import Counter
from typing import Any, AsyncIterator, Awaitable, Callable, Iterable, Mapping, Optional, Sequence

from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.records import Record, TopicRecord, TopicTombstone
from groupctl.store.base import BadVersion, NodeExists, NoNode

LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")
MAX_PARTITIONS = 10_000


async def each_topic(topics: Sequence[Any], action: Callable[[Any], Awaitable[Any]]) -> list[tuple[Any, Any]]:
    """Run `action(topic)` for the topics of a CreateTopics/CreatePartitions request, in order:
    [(topic, its result, or the TopicError it raised)]. A name that appears more than once is
    refused with INVALID_REQUEST without running, as Kafka does (rather than applying either)."""
    counts = Counter(topic.name for topic in topics)
    outcomes = []
    for topic in topics:
        try:
            if counts[topic.name] > 1:
                raise TopicError(ErrorCode.INVALID_REQUEST, f"topic {topic.name!r} appears more than once")
            outcomes.append((topic, await action(topic)))
        except TopicError as exc:
            outcomes.append((topic, exc))
    return outcomes


def topic_name_error(name: Optional[str]) -> Optional[str]:
    """Why `name` is not a legal topic name, or None when it is."""
    if not name:
        return "topic name is empty"
    if name in (".", ".."):
        return f"topic name {name!r} is not allowed"
    if not LEGAL_TOPIC.match(name):
        return f"topic name {name!r} must be 1-249 characters of [a-zA-Z0-9._-]"
    return None


class TopicError(Exception):
    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


def spread(live: Sequence[int], start: int, partitions: range, replication_factor: int) -> dict[int, list[int]]:
    """Round-robin placement over `live` (sorted node ids): partition p gets
    `replication_factor` consecutive nodes from index (start + p) mod n, its leader first."""
    n = len(live)
    return {p: [live[(start + p + r) % n] for r in range(replication_factor)] for p in partitions}


def _check_replicas(p: int, nodes: Sequence[int], live: Sequence[int]) -> None:
    if not nodes or len(set(nodes)) != len(nodes) or any(n not in live for n in nodes):
        raise TopicError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                         f"partition {p}: replicas {list(nodes)} must be distinct live nodes {list(live)}")


class TopicRegistry:
    def __init__(self, write: Callable[[list[Record]], Awaitable[None]], node_ids: Callable[[], list[int]],
                 reload: Optional[Callable[[str], Awaitable[Optional[TopicRecord]]]] = None,
                 configure: Optional[Callable[[str, Mapping[str, str]], Awaitable[None]]] = None,
                 cached: Optional[Callable[[str], Optional[TopicRecord]]] = None) -> None:
        """`write` persists records (the node's RecordWriter); `node_ids` lists the live nodes
        new partitions may be placed on; `reload` (in a cluster) reads a topic's stored record
        afresh so that a change is planned against exactly what its compare-and-set write will
        find (another node may have changed the topic a moment ago); `configure(name, config)`
        stores a new topic's whole config before the topic is written; `cached` returns, without
        a read, the record the writer's next compare-and-set write of a topic is against (None:
        it would read one), which spares `raise_leader_epochs` its read when that record is
        the one this registry holds."""
        self._write = write
        self._configure = configure
        self._node_ids = node_ids
        self._reload = reload
        self._cached = cached
        self._by_name: dict[str, TopicRecord] = {}
        self._by_id: dict[str, TopicRecord] = {}
        # name -> future of the pending creation: its TopicRecord, or None if the write failed.
        self._creating: dict[str, asyncio.Future[Optional[TopicRecord]]] = {}
        self._deleting: set[str] = set()
        # name -> done when the last queued change (partition addition or deletion) of the
        # existing topic has finished its turn.
        self._changing: dict[str, asyncio.Future[None]] = {}

    # --- applying records ----------------------------------------------------------------------

    def replay(self, record: TopicRecord | TopicTombstone) -> None:
        """Apply a durable record: one this node wrote, loaded at start, or seen in the store."""
        self._forget(record.name)
        if isinstance(record, TopicRecord):
            self._by_name[record.name] = record
            self._by_id[record.topic_id] = record

    def observe(self, name: str, record: Optional[TopicRecord]) -> Optional[TopicRecord]:
        """Apply the stored state of topic `name` as a store watch saw it (None: deleted), which
        may be another node's write or an echo of this node's own; return the record it
        replaces (None if the topic was unknown)."""
        if record is not None and record.name != name:
            raise ValueError(f"record of topic {record.name!r} observed as {name!r}")
        previous = self._by_name.get(name)
        self.replay(record if record is not None else TopicTombstone(name))
        return previous

    def _forget(self, name: str) -> None:
        old = self._by_name.pop(name, None)
        if old is not None and self._by_id.get(old.topic_id) is old:
            del self._by_id[old.topic_id]

    # --- reading -----------------------------------------------------------------------------

    def get(self, name: str) -> Optional[TopicRecord]:
        return self._by_name.get(name)

    def by_id(self, topic_id: str) -> Optional[TopicRecord]:
        return self._by_id.get(str(topic_id))

    def all(self) -> list[TopicRecord]:
        return [self._by_name[name] for name in sorted(self._by_name)]

    # --- creation ----------------------------------------------------------------------------

    def plan(self, name: str, partitions: int, replication_factor: int = 1,
             assignments: Optional[dict[int, list[int]]] = None) -> TopicRecord:
        """Validate a creation and return the record it would write (CreateTopics' validate_only
        stops here). Raises TopicError with the Kafka error code."""
        problem = topic_name_error(name)
        if problem:
            raise TopicError(ErrorCode.INVALID_TOPIC_EXCEPTION, problem)
        self._check_free(name)
        live = sorted(self._node_ids())
        if assignments:
            if sorted(assignments) != list(range(len(assignments))):
                raise TopicError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 "partitions in a manual assignment must be numbered 0..n-1")
            for p, nodes in assignments.items():
                _check_replicas(p, nodes, live)
            if len({len(nodes) for nodes in assignments.values()}) != 1:
                raise TopicError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 "every partition in a manual assignment must have as many replicas")
            replicas = {p: list(nodes) for p, nodes in assignments.items()}
        else:
            if not 1 <= partitions <= MAX_PARTITIONS:
                raise TopicError(ErrorCode.INVALID_PARTITIONS,
                                 f"number of partitions must be 1-{MAX_PARTITIONS}, got {partitions}")
            self._check_replication(replication_factor, live)
            start = zlib.crc32(name.encode()) % len(live)
            replicas = spread(live, start, range(partitions), replication_factor)
        return TopicRecord(name=name, topic_id=str(uuid.uuid4()), replicas=replicas)

    @staticmethod
    def _check_replication(replication_factor: int, live: Sequence[int]) -> None:
        if not 1 <= replication_factor <= len(live):
            raise TopicError(ErrorCode.INVALID_REPLICATION_FACTOR,
                             f"replication factor {replication_factor} with {len(live)} live node(s)")

    def _check_free(self, name: str) -> None:
        if name in self._by_name:
            raise TopicError(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {name!r} already exists")
        if name in self._creating:
            raise TopicError(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {name!r} is being created")

    async def create(self, record: TopicRecord, config: Optional[Mapping[str, str]] = None) -> TopicRecord:
        """Store the topic's config (`config`, none by default), then write and apply a planned
        record. The name is reserved before both writes, so of concurrent creations of one name
        exactly one writes and the others get TOPIC_ALREADY_EXISTS; a failed write releases the
        name and raises to its caller."""
        self._check_free(record.name)
        pending: asyncio.Future[Optional[TopicRecord]] = asyncio.get_running_loop().create_future()
        self._creating[record.name] = pending
        try:
            if self._configure is not None:
                await self._configure(record.name, dict(config or {}))
            await self._write([record])
            self.replay(record)
        except NodeExists:  # another node created it first; its record reaches us by the topic watch
            raise TopicError(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {record.name!r} already exists") from None
        finally:
            del self._creating[record.name]
            pending.set_result(self._by_name.get(record.name))
        return record

    async def get_or_create(self, name: str, partitions: int) -> TopicRecord:
        """The topic `name`, created with `partitions` partitions if it does not exist (Metadata
        auto-creation). A creation of `name` already pending is awaited and its record returned;
        if that write failed, this call tries once more itself (and raises what its own write
        raises)."""
        pending = self._creating.get(name)
        if pending is not None:
            record = await pending
            if record is not None:
                return record
        existing = self._by_name.get(name)
        if existing is not None:
            return existing
        pending = self._creating.get(name)
        if pending is not None:  # another waiter started the retry first
            record = await pending
            if record is not None:
                return record
            raise TopicError(ErrorCode.LEADER_NOT_AVAILABLE, f"topic {name!r} could not be created")
        try:
            return await self.create(self.plan(name, partitions))
        except TopicError as exc:
            if exc.code is not ErrorCode.TOPIC_ALREADY_EXISTS:
                raise
            # Created by another node an instant ago: like a Kafka broker whose metadata has not
            # caught up, answer LEADER_NOT_AVAILABLE; the client asks again.
            raise TopicError(ErrorCode.LEADER_NOT_AVAILABLE, f"topic {name!r} is being created") from None

    async def ensure(self, topics: Iterable[tuple[str, int]]) -> list[TopicRecord]:
        """Create each (name, partitions) that does not exist yet; existing topics are kept, and
        so are those another node of the cluster creates at the same moment."""
        created = []
        for name, partitions in topics:
            if name not in self._by_name:
                try:
                    created.append(await self.get_or_create(name, partitions))
                except TopicError as exc:
                    if exc.code is not ErrorCode.LEADER_NOT_AVAILABLE:
                        raise
        return created

    # --- partition additions -----------------------------------------------------------------

    def plan_partitions(self, name: str, count: int,
                        assignments: Optional[Sequence[Sequence[int]]] = None) -> TopicRecord:
        """Validate growing `name` to `count` partitions and return the record that would be
        written (same topic id, existing partitions unchanged). `assignments`, when given, lists
        the replicas of each new partition in order (None: placed round-robin). Raises
        TopicError with CreatePartitions' error codes."""
        current = self._by_name.get(name)
        if current is None or name in self._deleting:
            going = " (it is being deleted)" if current is not None else ""
            raise TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r} does not exist{going}")
        existing = len(current.replicas)
        if count < existing:
            raise TopicError(ErrorCode.INVALID_PARTITIONS,
                             f"topic {name!r} has {existing} partitions, more than the requested {count}; "
                             "partitions can only be added")
        if count == existing:
            raise TopicError(ErrorCode.INVALID_PARTITIONS, f"topic {name!r} already has {existing} partitions")
        if count > MAX_PARTITIONS:
            raise TopicError(ErrorCode.INVALID_PARTITIONS,
                             f"number of partitions must be at most {MAX_PARTITIONS}, got {count}")
        factor = len(current.replicas[0])
        live = sorted(self._node_ids())
        added = range(existing, count)
        if assignments is not None:
            if len(assignments) != len(added):
                raise TopicError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 f"adding {len(added)} partition(s) but {len(assignments)} assignment(s) given")
            for p, nodes in zip(added, assignments):
                _check_replicas(p, nodes, live)
                if len(nodes) != factor:
                    raise TopicError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                     f"partition {p}: {len(nodes)} replica(s), but the topic's partitions "
                                     f"have {factor}")
            new = {p: list(nodes) for p, nodes in zip(added, assignments)}
        else:
            self._check_replication(factor, live)
            new = spread(live, self._continued_start(current, live), added, factor)
        return TopicRecord(name=name, topic_id=current.topic_id, replicas={**current.replicas, **new},
                           leader_epochs=current.leader_epochs)

    @staticmethod
    def _continued_start(current: TopicRecord, live: Sequence[int]) -> int:
        """The start index that reproduces the leader of the first existing partition whose
        leader is live (0 when none is)."""
        for p in sorted(current.replicas):
            leader = current.replicas[p][0]
            if leader in live:
                return (live.index(leader) - p) % len(live)
        return 0

    async def add_partitions(self, name: str, count: int,
                             assignments: Optional[Sequence[Sequence[int]]] = None,
                             validate_only: bool = False) -> TopicRecord:
        """Grow `name` to `count` partitions (CreatePartitions): write and apply the planned
        record (the existing partitions keep their leader epochs, the new ones start at 0), after
        any partition addition or deletion of `name` already queued. With
        `validate_only`, only plan (against the topic as it is now). Raises TopicError, or what
        the write raises (then the topic is unchanged)."""
        if validate_only:
            return self.plan_partitions(name, count, assignments)
        self.plan_partitions(name, count, assignments)  # refuse at once what is wrong now
        async with self._turn(name):
            await self._refresh(name)
            record = self.plan_partitions(name, count, assignments)
            await self._write_change(record)
        return record

    async def _refresh(self, name: str) -> None:
        """Plan the next change of `name` against the store, not a watch that may lag behind."""
        if self._reload is not None:
            stored = await self._reload(name)
            self.replay(stored if stored is not None else TopicTombstone(name))

    async def _write_change(self, record: Record) -> None:
        """Write a change of an existing topic and apply it. Another node's change between our
        read and our compare-and-set write fails it: retriable NOT_CONTROLLER, as Kafka answers
        a request that reached a controller whose view was stale."""
        try:
            await self._write([record])
        except (BadVersion, NoNode):
            raise TopicError(ErrorCode.NOT_CONTROLLER,
                             f"topic {record.name!r} changed concurrently; try again") from None
        self.replay(record)

    # --- leader epochs -----------------------------------------------------------------------

    def led_by(self, node_id: int) -> list[str]:
        """The topics with a partition `node_id` leads (is the first replica of)."""
        return [record.name for record in self.all()
                if any(nodes and nodes[0] == node_id for nodes in record.replicas.values())]

    async def raise_leader_epochs(self, name: str, node_id: int,
                                  local: Mapping[tuple[str, int], int] = {}) -> Optional[TopicRecord]:
        """Raise the leader epoch of each partition of `name` that `node_id` leads to one above
        both the stored epoch and `local[(name, partition)]` (the latest epoch its log on this
        node has led at, if known: the stored one can be behind it when an older node rewrote
        the document without epochs, or ZooKeeper was wiped but not the data dir), in one
        compare-and-set write after any change of `name` already queued, and return the record
        written (None: the topic is gone, or `node_id` leads none of it now). Raises TopicError
        (NOT_CONTROLLER: another node changed the topic meanwhile) or what the write raises.

        The topic is read afresh first unless the writer's cached record (what the write's
        compare-and-set is against) is the one held here: a node raises the epochs of all its
        topics at each start, right after loading them, and one read per topic (each its own
        ZooKeeper request) cost more than the coalesced writes (bench/leader_epoch_start.py).
        A change another node made since fails the write all the same."""
        async with self._turn(name):
            current = self._by_name.get(name)
            if current is None or self._cached is None or self._cached(name) != current:
                await self._refresh(name)
                current = self._by_name.get(name)
            led = [] if current is None else [p for p, nodes in current.replicas.items() if nodes[0] == node_id]
            if not led:
                return None
            raised = {p: max(current.leader_epoch(p), local.get((name, p), -1)) + 1 for p in led}
            record = TopicRecord(name=name, topic_id=current.topic_id, replicas=current.replicas,
                                 leader_epochs={**current.leader_epochs, **raised})
            await self._write_change(record)
        return record

    # --- deletion ----------------------------------------------------------------------------

    async def delete(self, name: str) -> TopicRecord:
        """Write a tombstone for `name` and forget it, after any partition addition of `name`
        already queued. The name is marked before the write, so of concurrent deletions of one
        topic exactly one writes and the others get UNKNOWN_TOPIC_OR_PARTITION; a failed write
        keeps the topic and raises to its caller."""
        if name not in self._by_name or name in self._deleting:
            raise TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r} does not exist")
        self._deleting.add(name)
        try:
            async with self._turn(name):
                await self._refresh(name)
                record = self._by_name.get(name)
                if record is None:  # another node deleted it while this deletion waited
                    raise TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r} does not exist")
                await self._write_change(TopicTombstone(name))
        finally:
            self._deleting.discard(name)
        return record

    @contextlib.asynccontextmanager
    async def _turn(self, name: str) -> AsyncIterator[None]:
        """Wait until the changes of `name` queued before this one have finished, then hold the
        name's only write turn for the body. A change cancelled while waiting passes its place
        on only when its predecessor finishes, so turns never overlap."""
        previous = self._changing.get(name)
        mine: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._changing[name] = mine

        def finish(_: object = None) -> None:
            mine.set_result(None)
            if self._changing.get(name) is mine:
                del self._changing[name]

        try:
            if previous is not None:
                await asyncio.shield(previous)
            yield
        finally:
            if previous is not None and not previous.done():
                previous.add_done_callback(finish)
            else:
                finish()
