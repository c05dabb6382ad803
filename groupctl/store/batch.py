"""A batch of records folded over the cached documents into compare-and-set store operations.

Where each record goes (`groupctl.layout`): a GroupMetadataRecord replaces `/groups/<g>`; an
OffsetCommitRecord rewrites one partition's entry of `/groups/<g>/offsets/<topic>`; a
PendingOffsetsRecord replaces `/groups/<g>/pending-offsets/<producer id>` and its
PendingOffsetsTombstone deletes it; a GroupTombstone deletes the group with all its offsets; TopicRecord and TopicTombstone write and
delete `/brokers/topics/<t>`; a TransactionRecord replaces `/transactions/<id>`. One znode per (group, topic) keeps a commit request to one write
per topic, and a group's offsets readable with one `children` plus one `get` per topic.

Invariants:
- `ops()` turns the cached state into the final one: every existing node is set or deleted at
  its cached version, every node the cache does not hold is created; deletes go deepest first,
  then creates and sets shallowest first, so parents exist before children and outlive them.
- An offset commit for a group without a document creates an Empty group document (a
  memberless group using simple commits) and the `offsets` parent in the same batch.
- An offsets document keeps its partitions' entries encoded, so a commit re-encodes only what
  it changes (`groupctl.layout.offsets`).
"""

from __future__ import annotations

from typing import Any, Optional

from groupctl.coordinator.records import (
    GroupMetadataRecord,
    GroupTombstone,
    OffsetCommitRecord,
    OffsetTombstone,
    PendingOffsetsRecord,
    PendingOffsetsTombstone,
    Record,
    TopicRecord,
    TopicTombstone,
    TransactionRecord,
)
from groupctl.layout.groups import GroupDocument
from groupctl.layout.offsets import OffsetEntry, OffsetsDocument
from groupctl.layout.paths import (
    group_path,
    offset_topic_path,
    offsets_path,
    pending_offsets_path,
    pending_producer_path,
    topic_path,
    transaction_path,
)
from groupctl.layout.pending_offsets import PendingOffsetsDocument
from groupctl.store.base import Create, Delete, Op, SetData
from groupctl.store.scopes import StoredDoc


def empty_group_document(group: str, node_id: int, now_ms: int) -> GroupDocument:
    """The document of a group that has committed offsets but never had members (written
    without a "rebalance" key, as before that key existed)."""
    return GroupDocument(group=group, protocol_type="", protocol=None, generation=0, state="Empty", leader=None,
                         members=(), ownership={}, coordinator=node_id, updated_at_ms=now_ms, rebalance_key=False)


_NO_OFFSETS = OffsetsDocument({})


def _depth(path: str) -> int:
    return path.count("/")


class _DocumentOf:
    """A group record's document, read only when the batch encodes it: of a group's records in one
    batch only the last is encoded, so a deferred record that another replaced is never built."""

    __slots__ = ("record",)

    def __init__(self, record: GroupMetadataRecord) -> None:
        self.record = record

    def encode(self) -> bytes:
        return self.record.document.encode()


class Batch:
    """The documents a batch of records leads to, folded over the cached ones."""

    def __init__(self, cache: dict[str, StoredDoc], node_id: int) -> None:
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

    def written(self, path: str) -> Any:
        """The document the batch wrote at `path` (after `ops`), decoded as the cache keeps it."""
        value = self.final[path]
        return value.record.document if isinstance(value, _DocumentOf) else value

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
            self.put(group_path(record.group), _DocumentOf(record))
        elif isinstance(record, OffsetCommitRecord):
            self._commit_offset(record)
        elif isinstance(record, OffsetTombstone):
            self._delete_offset(record)
        elif isinstance(record, PendingOffsetsRecord):
            self._put_pending(record)
        elif isinstance(record, PendingOffsetsTombstone):
            if self.exists(pending_producer_path(record.group, record.producer_id)):
                self.remove(pending_producer_path(record.group, record.producer_id))
        elif isinstance(record, GroupTombstone):
            self._delete_group(record.group)
        elif isinstance(record, TopicRecord):
            self.put(topic_path(record.name), record.document())
        elif isinstance(record, TopicTombstone):
            if self.exists(topic_path(record.name)):
                self.remove(topic_path(record.name))
        elif isinstance(record, TransactionRecord):
            self.put(transaction_path(record.transactional_id), record.to_document())
        else:
            raise TypeError(f"not a record: {record!r}")

    def _ensure_group(self, group: str, now_ms: int) -> None:
        if not self.exists(group_path(group)):
            self.put(group_path(group), empty_group_document(group, self._node_id, now_ms))

    def _put_pending(self, record: PendingOffsetsRecord) -> None:
        self._ensure_group(record.group, max((o.commit_timestamp_ms for o in record.offsets), default=0))
        if not self.exists(pending_offsets_path(record.group)):
            self.put_structural(pending_offsets_path(record.group))
        self.put(pending_producer_path(record.group, record.producer_id), PendingOffsetsDocument(
            record.producer_epoch,
            tuple((o.topic, OffsetEntry(o.partition, o.offset, o.leader_epoch, o.metadata, o.commit_timestamp_ms))
                  for o in record.offsets), record.coordinator_epoch))

    def _commit_offset(self, record: OffsetCommitRecord) -> None:
        self._ensure_group(record.group, record.commit_timestamp_ms)
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
            data = b"" if path in self.structural else value.encode()
            if path in self._cache:
                if path not in self.structural:
                    writes.append(SetData(path, data, self._cache[path].version))
            else:
                writes.append(Create(path, data))
        return deletes + writes
