"""Reading stored state back as records, in the order the core replays them.

Invariants:
- Replay order: every topic (by name), then per group (by name) its GroupMetadataRecord followed
  by its OffsetCommitRecords sorted by topic and partition, then its PendingOffsetsRecords by
  producer id. A group with offsets but no document
  cannot be stored (a commit creates an Empty document), and its offsets would not be loaded.
- A document that does not decode fails the whole read with CorruptDocument: a partial state
  is never replayed.
- At most LOAD_CONCURRENCY groups, topics or transactional ids are read at once.
- Transactional ids are read on their own (`scan_transactions`), by id: they are the
  transaction coordinator's, which loads them beside the groups of the same partitions.
"""

from __future__ import annotations

import asyncio
from typing import Callable

from groupctl.coordinator.records import (
    GroupMetadataRecord,
    OffsetCommitRecord,
    PendingOffsetsRecord,
    Record,
    TopicRecord,
)
from groupctl.coordinator.transactions.records import TransactionRecord
from groupctl.layout.paths import (
    GROUPS,
    TOPICS,
    TRANSACTIONS,
    decode_name,
    group_path,
    offsets_path,
    pending_offsets_path,
)
from groupctl.layout.pending_offsets import producer_id_of
from groupctl.store.base import MetadataStore, NoNode
from groupctl.store.scopes import Scope, StoredDoc, read_group, read_topic, read_transaction

LOAD_CONCURRENCY = 64


def every_group(group: str) -> bool:
    return True


async def _children_or_empty(store: MetadataStore, path: str) -> list[str]:
    try:
        return await store.children(path)
    except NoNode:
        return []


async def scan(store: MetadataStore, *, topics: bool = True, wanted_group: Callable[[str], bool] = every_group
               ) -> tuple[list[Record], dict[Scope, dict[str, StoredDoc]]]:
    """Read the topics (if `topics`) and the groups `wanted_group` accepts; return replay-ordered
    records and the documents by scope."""
    limit = asyncio.Semaphore(LOAD_CONCURRENCY)

    async def bounded(read, name):
        async with limit:
            return await read(store, name)

    topic_names = sorted(decode_name(c) for c in await _children_or_empty(store, TOPICS)) if topics else []
    groups = sorted(g for g in (decode_name(c) for c in await _children_or_empty(store, GROUPS)) if wanted_group(g))
    topic_docs = await asyncio.gather(*(bounded(read_topic, t) for t in topic_names))
    group_docs = await asyncio.gather(*(bounded(read_group, g) for g in groups))
    scopes: dict[Scope, dict[str, StoredDoc]] = {}
    records: list[Record] = []
    for topic, docs in zip(topic_names, topic_docs):
        scopes[("topic", topic)] = docs
        for doc in docs.values():
            records.append(TopicRecord.of(topic, doc.value))
    for group, docs in zip(groups, group_docs):
        scopes[("group", group)] = docs
        records.extend(_group_records(group, docs))
    return records, scopes


async def scan_transactions(store: MetadataStore, wanted: Callable[[str], bool]
                            ) -> tuple[list[TransactionRecord], dict[Scope, dict[str, StoredDoc]]]:
    """Read the transactional ids `wanted` accepts; return their records (by id) and documents."""
    limit = asyncio.Semaphore(LOAD_CONCURRENCY)

    async def bounded(transactional_id):
        async with limit:
            return await read_transaction(store, transactional_id)

    ids = sorted(i for i in (decode_name(c) for c in await _children_or_empty(store, TRANSACTIONS)) if wanted(i))
    scopes: dict[Scope, dict[str, StoredDoc]] = {}
    records: list[TransactionRecord] = []
    for transactional_id, docs in zip(ids, await asyncio.gather(*(bounded(i) for i in ids))):
        scopes[("transaction", transactional_id)] = docs
        records.extend(TransactionRecord.from_document(doc.value) for doc in docs.values())
    return records, scopes


def _group_records(group: str, docs: dict[str, StoredDoc]) -> list[Record]:
    path = group_path(group)
    if path not in docs:
        return []
    records: list[Record] = [GroupMetadataRecord(group, docs[path].value)]
    prefix = offsets_path(group) + "/"
    for doc_path in sorted(p for p in docs if p.startswith(prefix)):
        topic = decode_name(doc_path[len(prefix):])
        for entry in docs[doc_path].value.entries():
            records.append(OffsetCommitRecord(
                group=group, topic=topic, partition=entry.partition, offset=entry.offset,
                leader_epoch=entry.leader_epoch, metadata=entry.metadata,
                commit_timestamp_ms=entry.commit_timestamp_ms,
            ))
    prefix = pending_offsets_path(group) + "/"
    pending = sorted((producer_id_of(p, p[len(prefix):]), p) for p in docs if p.startswith(prefix))
    for producer_id, doc_path in pending:
        document = docs[doc_path].value
        records.append(PendingOffsetsRecord(group, producer_id, document.producer_epoch, tuple(
            OffsetCommitRecord(group=group, topic=topic, partition=e.partition, offset=e.offset,
                               leader_epoch=e.leader_epoch, metadata=e.metadata,
                               commit_timestamp_ms=e.commit_timestamp_ms)
            for topic, e in document.offsets), document.coordinator_epoch))
    return records


async def load_records(store: MetadataStore) -> list[Record]:
    """Every stored topic, group document and committed offset, in replay order."""
    records, _ = await scan(store)
    return records
