"""The node's topics: names, ids and partition placement, persisted at `/brokers/topics/<topic>`.

Topic changes are records like group changes: `TopicRecord`/`TopicTombstone` are written through
the node's `RecordWriter` before the registry changes, so a restart reloads exactly what was
acknowledged.

Invariants:
- A topic name is 1-249 characters of [a-zA-Z0-9._-], and neither "." nor "..".
- Topic ids are random UUIDs, fixed at creation; `by_id` and `get` always agree.
- Partitions are numbered 0..n-1; each lists its replica node ids, leader first.
"""

from __future__ import annotations

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
        if name in self._by_name:
            raise TopicError(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {name!r} already exists")
        live = sorted(self._node_ids())
        if assignments:
            if sorted(assignments) != list(range(len(assignments))):
                raise TopicError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 "partitions in a manual assignment must be numbered 0..n-1")
            for p, nodes in assignments.items():
                if not nodes or len(set(nodes)) != len(nodes) or any(n not in live for n in nodes):
                    raise TopicError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                     f"partition {p}: replicas {nodes} must be distinct live nodes {live}")
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

    async def create(self, record: TopicRecord) -> TopicRecord:
        await self._write([record])
        self.replay(record)
        return record

    async def ensure(self, topics: Iterable[tuple[str, int]]) -> list[TopicRecord]:
        """Create each (name, partitions) that does not exist yet; existing topics are kept."""
        created = []
        for name, partitions in topics:
            if name not in self._by_name:
                created.append(await self.create(self.plan(name, partitions)))
        return created

    async def delete(self, name: str) -> TopicRecord:
        record = self._by_name.get(name)
        if record is None:
            raise TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r} does not exist")
        tombstone = TopicTombstone(name)
        await self._write([tombstone])
        self.replay(tombstone)
        return record
