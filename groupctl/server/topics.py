"""The node's topics: names, ids and partition placement, persisted at `/brokers/topics/<topic>`.

Topic changes are records like group changes: `TopicRecord`/`TopicTombstone` are written through
the node's `RecordWriter` before the registry changes, so a restart reloads exactly what was
acknowledged.

Creations and deletions await a store write, and requests for the same name run concurrently on
other connections. So a name is reserved synchronously, before the write, and released when the
write ends (whether it succeeded or failed):
- while a creation of a name is pending, `plan`/`create` of that name fail with
  TOPIC_ALREADY_EXISTS and `get_or_create` waits for the pending creation and returns its record;
- while a deletion of a name is pending, `delete` of that name fails with
  UNKNOWN_TOPIC_OR_PARTITION (the topic is already going); the topic stays visible until the
  tombstone is durable.

Invariants:
- A topic name is 1-249 characters of [a-zA-Z0-9._-], and neither "." nor "..".
- Topic ids are random UUIDs, fixed at creation; `by_id` and `get` always agree.
- Partitions are numbered 0..n-1; each lists its replica node ids, leader first, and every
  partition has the same number of replicas.
- At most one store write creates a given name, and at most one deletes it, at any time.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from typing import Awaitable, Callable, Iterable, Optional

from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.records import Record, TopicRecord, TopicTombstone

LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")
MAX_PARTITIONS = 10_000


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


class TopicRegistry:
    def __init__(self, write: Callable[[list[Record]], Awaitable[None]], node_ids: Callable[[], list[int]]) -> None:
        self._write = write
        self._node_ids = node_ids
        self._by_name: dict[str, TopicRecord] = {}
        self._by_id: dict[str, TopicRecord] = {}
        # name -> future of the pending creation: its TopicRecord, or None if the write failed.
        self._creating: dict[str, asyncio.Future[Optional[TopicRecord]]] = {}
        self._deleting: set[str] = set()

    def replay(self, record: TopicRecord | TopicTombstone) -> None:
        if isinstance(record, TopicRecord):
            old = self._by_name.get(record.name)
            if old is not None and old.topic_id != record.topic_id:
                self._by_id.pop(old.topic_id, None)
            self._by_name[record.name] = record
            self._by_id[record.topic_id] = record
        else:
            old = self._by_name.pop(record.name, None)
            if old is not None:
                self._by_id.pop(old.topic_id, None)

    def get(self, name: str) -> Optional[TopicRecord]:
        return self._by_name.get(name)

    def by_id(self, topic_id: str) -> Optional[TopicRecord]:
        return self._by_id.get(str(topic_id))

    def all(self) -> list[TopicRecord]:
        return [self._by_name[name] for name in sorted(self._by_name)]

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
                if not nodes or len(set(nodes)) != len(nodes) or any(n not in live for n in nodes):
                    raise TopicError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                     f"partition {p}: replicas {nodes} must be distinct live nodes {live}")
            if len({len(nodes) for nodes in assignments.values()}) != 1:
                raise TopicError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 "every partition in a manual assignment must have as many replicas")
            replicas = {p: list(nodes) for p, nodes in assignments.items()}
        else:
            if not 1 <= partitions <= MAX_PARTITIONS:
                raise TopicError(ErrorCode.INVALID_PARTITIONS,
                                 f"number of partitions must be 1-{MAX_PARTITIONS}, got {partitions}")
            if not 1 <= replication_factor <= len(live):
                raise TopicError(ErrorCode.INVALID_REPLICATION_FACTOR,
                                 f"replication factor {replication_factor} with {len(live)} live node(s)")
            replicas = {
                p: [live[(p + r) % len(live)] for r in range(replication_factor)]
                for p in range(partitions)
            }
        return TopicRecord(name=name, topic_id=str(uuid.uuid4()), replicas=replicas)

    def _check_free(self, name: str) -> None:
        if name in self._by_name:
            raise TopicError(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {name!r} already exists")
        if name in self._creating:
            raise TopicError(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {name!r} is being created")

    async def create(self, record: TopicRecord) -> TopicRecord:
        """Write and apply a planned record. The name is reserved before the write, so of
        concurrent creations of one name exactly one writes and the others get
        TOPIC_ALREADY_EXISTS; a failed write releases the name and raises to its caller."""
        self._check_free(record.name)
        pending: asyncio.Future[Optional[TopicRecord]] = asyncio.get_running_loop().create_future()
        self._creating[record.name] = pending
        try:
            await self._write([record])
            self.replay(record)
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
        return await self.create(self.plan(name, partitions))

    async def ensure(self, topics: Iterable[tuple[str, int]]) -> list[TopicRecord]:
        """Create each (name, partitions) that does not exist yet; existing topics are kept."""
        created = []
        for name, partitions in topics:
            if name not in self._by_name:
                created.append(await self.get_or_create(name, partitions))
        return created

    async def delete(self, name: str) -> TopicRecord:
        """Write a tombstone for `name` and forget it. The name is reserved before the write, so
        of concurrent deletions of one topic exactly one writes and the others get
        UNKNOWN_TOPIC_OR_PARTITION; a failed write keeps the topic and raises to its caller."""
        record = self._by_name.get(name)
        if record is None or name in self._deleting:
            raise TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r} does not exist")
        tombstone = TopicTombstone(name)
        self._deleting.add(name)
        try:
            await self._write([tombstone])
            self.replay(tombstone)
        finally:
            self._deleting.discard(name)
        return record
