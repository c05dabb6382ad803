"""Kafka's ACLs in the metadata store (`groupctl.security.stored_acls`): read one resource
pattern's entries, change them with compare-and-set, read them all, and create the paths a
watch needs.

Invariants:
- Every write is compare-and-set on the document's version (`create` when there is none,
  `delete_if_version` when no entry remains): a change computed from what was read lands only
  on what was read, and is computed again (up to MAX_UPDATE_RETRIES times) when another writer
  came first, as Kafka's AclAuthorizer.updateResourceAcls does.
- A document that does not decode is `CorruptDocument` (never read as "no ACLs"); an entry
  whose names Kafka would read as UNKNOWN is skipped with a warning.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Optional

from groupctl.layout.codec import LayoutError
from groupctl.security.acls import ResourcePattern
from groupctl.security.stored_acls import (
    Entries,
    decode_entries,
    encode_entries,
    pattern_of,
    pattern_path,
    type_paths,
)
from groupctl.store.base import BadVersion, MetadataStore, NodeExists, NoNode, StoreError
from groupctl.store.scopes import CorruptDocument

log = logging.getLogger("groupctl.acls")

MAX_UPDATE_RETRIES = 10


@dataclass(frozen=True)
class StoredAcls:
    entries: Entries
    version: Optional[int]  # None: there is no document


async def read_acls(store: MetadataStore, pattern: ResourcePattern) -> StoredAcls:
    return await read_acls_at(store, pattern_path(pattern))


async def read_acls_at(store: MetadataStore, path: str) -> StoredAcls:
    node = await store.get(path)
    if node is None:
        return StoredAcls(frozenset(), None)
    return StoredAcls(acls_in(path, node.data), node.version)


def acls_in(path: str, data: bytes) -> Entries:
    """The entries of the document stored at `path` (read by a watch); CorruptDocument when it
    does not decode."""
    try:
        entries, skipped = decode_entries(path, data)
    except LayoutError as exc:
        raise CorruptDocument(str(exc)) from None
    for problem in skipped:
        log.warning("%s", problem)
    return entries


async def update_acls(store: MetadataStore, pattern: ResourcePattern,
                      change: Callable[[Entries], Entries]) -> tuple[Entries, Entries]:
    """Replace the pattern's entries with `change(entries)`, compare-and-set; (before, after).
    StoreError when the store refuses, or another writer won MAX_UPDATE_RETRIES times over."""
    path = pattern_path(pattern)
    for _ in range(MAX_UPDATE_RETRIES):
        current = await read_acls_at(store, path)
        wanted = frozenset(change(current.entries))
        try:
            if wanted == current.entries:
                pass
            elif current.version is None:
                await store.create(path, encode_entries(wanted), make_parents=True)
            elif wanted:
                await store.set_if_version(path, encode_entries(wanted), current.version)
            else:
                await store.delete_if_version(path, current.version)
        except (BadVersion, NodeExists, NoNode):
            continue  # another writer came first: compute the change again on what it wrote
        return current.entries, wanted
    raise StoreError(f"{path}: other writers changed it {MAX_UPDATE_RETRIES} times in a row; not updated")


async def ensure_acl_paths(store: MetadataStore) -> None:
    """Create the resource type paths (`/kafka-acl/Topic`, ...) when missing, as Kafka does."""
    for parent in type_paths():
        try:
            await store.create(parent, make_parents=True)
        except NodeExists:
            pass


async def read_all_acls(store: MetadataStore) -> dict[ResourcePattern, Entries]:
    """Every stored pattern with its entries."""
    found: dict[ResourcePattern, Entries] = {}
    for parent in type_paths():
        try:
            children = await store.children(parent)
        except NoNode:
            continue
        for component in children:
            stored = await read_acls_at(store, f"{parent}/{component}")
            if stored.entries:
                found[pattern_of(parent, component)] = stored.entries
    return found
