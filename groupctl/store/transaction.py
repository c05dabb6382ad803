"""One store transaction: a batch of records and the checks that guard it, written all or nothing.

Invariants:
- The checks go first, then the batch's compare-and-set operations (`batch.Batch.ops`), in one
  `MetadataStore.transaction`: if a check or any version no longer holds, nothing is written.
- The scopes the records touch are read into the cache first when it does not hold them, so
  every version is the one the store held when it was read or last written by this writer.
- On success the cache takes what was written, at the versions the store returned. On any
  failure (BadVersion, a failed check, the store, cancellation) every scope of the batch is
  forgotten, so it is read afresh before its next write (a retry after BadVersion can succeed).
- A batch that changes nothing sends no transaction.
"""

from __future__ import annotations

from groupctl.coordinator.records import Record
from groupctl.store.base import Delete, MetadataStore, Op
from groupctl.store.batch import Batch
from groupctl.store.scopes import Scope, ScopeCache, StoredDoc


async def commit(store: MetadataStore, cache: ScopeCache, node_id: int, records: list[Record], scopes: set[Scope],
                 checks: list[Op]) -> None:
    """Write `records` (whose scopes are `scopes`) guarded by `checks`; raises what the store raised."""
    try:
        await cache.ensure(store, scopes)
        batch = Batch(cache.docs, node_id)
        for record in records:
            batch.apply(record)
        ops = batch.ops()
        if not ops:
            return
        versions = (await store.transaction(checks + ops))[len(checks):]
    except BaseException:
        cache.forget(scopes)
        raise
    for op, version in zip(ops, versions):
        if isinstance(op, Delete):
            cache.docs.pop(op.path, None)
        elif op.path in batch.structural:
            cache.docs[op.path] = StoredDoc(-1, None)
        else:
            cache.docs[op.path] = StoredDoc(version, batch.written(op.path))
    cache.forget(scopes - cache.loaded)  # forgotten while in flight: keep them forgotten
