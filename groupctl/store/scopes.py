"""What the writer knows is stored: the documents of each group and topic it touched, with their versions.

A scope is the unit read, cached and forgotten as a whole: ("group", g) is `/groups/<g>`, its
`offsets` parent and every `/groups/<g>/offsets/<topic>`, its `pending-offsets` parent and every
`/groups/<g>/pending-offsets/<producer id>`; ("topic", t) is `/brokers/topics/<t>`;
("transaction", id) is `/transactions/<id>`.

Invariants:
- A cached node is exactly what the store held at its cached version (read, or written by this
  writer since), its document decoded (`groupctl.layout`); a structural node (the `offsets`
  and `pending-offsets` parents) has version -1 and no document. A document that does not decode is CorruptDocument.
- Outside a transaction, a scope has cached nodes only while it is loaded, and then all of them:
  a path of a loaded scope that is not cached does not exist in the store (as far as this
  writer knows; a compare-and-set write finds out otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from groupctl.coordinator.records import Record, TopicRecord, TopicTombstone
from groupctl.coordinator.transactions.records import TransactionRecord
from groupctl.layout.codec import LayoutError
from groupctl.layout.any_group import decode_group
from groupctl.layout.offsets import OffsetsDocument
from groupctl.layout.paths import GROUPS, group_path, offsets_path, pending_offsets_path, topic_path, transaction_path
from groupctl.layout.pending_offsets import PendingOffsetsDocument
from groupctl.layout.topics import TopicDocument
from groupctl.layout.transactions import TransactionDocument
from groupctl.store.base import MetadataStore, NoNode, StoreError

Scope = tuple[str, str]
"""("group", name), ("topic", name) or ("transaction", transactional id)."""


class CorruptDocument(StoreError):
    """A stored document that is not what this layout writes."""


@dataclass(frozen=True)
class StoredDoc:
    """A stored node as the writer last saw it; `value` is the decoded document (None for
    structural nodes)."""

    version: int
    value: Any


def scope_of(record: Record) -> Scope:
    if isinstance(record, (TopicRecord, TopicTombstone)):
        return ("topic", record.name)
    if isinstance(record, TransactionRecord):
        return ("transaction", record.transactional_id)
    return ("group", record.group)


def _group_root(path: str) -> str:
    """`/groups/<g>` for a node of group g's scope (names are encoded: no '/' inside)."""
    return "/".join(path.split("/", 3)[:3]) if path.startswith(GROUPS + "/") else ""


def _decoded(decode: Callable[[str, bytes], Any], where: str, data: bytes) -> Any:
    """`decode(where, data)`, a malformed document being CorruptDocument (a store error)."""
    try:
        return decode(where, data)
    except LayoutError as exc:
        raise CorruptDocument(str(exc)) from None


async def read_group(store: MetadataStore, group: str) -> dict[str, StoredDoc]:
    """Everything stored for one group, by path."""
    found: dict[str, StoredDoc] = {}
    path = group_path(group)
    node = await store.get(path)
    if node is None:
        return found
    found[path] = StoredDoc(node.version, _decoded(decode_group, group, node.data))
    await _read_children(store, offsets_path(group), OffsetsDocument.decode, found)
    await _read_children(store, pending_offsets_path(group), PendingOffsetsDocument.decode, found)
    return found


async def _read_children(store: MetadataStore, parent: str, decode: Callable[[str, Optional[bytes]], Any],
                         found: dict[str, StoredDoc]) -> None:
    """The documents under `parent` (structural: deleted at any version), into `found`."""
    try:
        components = await store.children(parent)
    except NoNode:
        return
    found[parent] = StoredDoc(-1, None)
    for component in components:
        doc_path = f"{parent}/{component}"
        node = await store.get(doc_path)
        if node is None:
            continue  # deleted since `children`; a later CAS write will notice anything else
        found[doc_path] = StoredDoc(node.version, _decoded(decode, doc_path, node.data))


async def read_topic(store: MetadataStore, topic: str) -> dict[str, StoredDoc]:
    path = topic_path(topic)
    node = await store.get(path)
    return {} if node is None else {path: StoredDoc(node.version, _decoded(TopicDocument.decode, topic, node.data))}


async def read_transaction(store: MetadataStore, transactional_id: str) -> dict[str, StoredDoc]:
    path = transaction_path(transactional_id)
    node = await store.get(path)
    return {} if node is None else {
        path: StoredDoc(node.version, _decoded(TransactionDocument.decode, transactional_id, node.data))}


_READERS = {"group": read_group, "topic": read_topic, "transaction": read_transaction}


class ScopeCache:
    """The cached nodes by path (`docs`) and the scopes loaded."""

    def __init__(self) -> None:
        self.docs: dict[str, StoredDoc] = {}
        self.loaded: set[Scope] = set()

    def replace(self, scope: Scope, docs: dict[str, StoredDoc]) -> None:
        """`docs` is everything stored in `scope` now."""
        self.forget({scope})
        self.docs.update(docs)
        self.loaded.add(scope)

    async def ensure(self, store: MetadataStore, scopes: Iterable[Scope]) -> None:
        """Read the scopes not loaded yet from the store."""
        for scope in sorted(set(scopes) - self.loaded):
            kind, name = scope
            self.docs.update(await _READERS[kind](store, name))
            self.loaded.add(scope)

    def forget(self, scopes: Iterable[Scope]) -> None:
        """Drop the scopes' nodes: the next write of them reads them afresh. A topic scope is
        its one node; the nodes of group scopes are found in one pass over the cache, however
        many groups are forgotten (a node forgetting its topics one by one at a start must not
        cost the square of their number)."""
        groups = set()
        for scope in scopes:
            self.loaded.discard(scope)
            if scope[0] == "topic":
                self.docs.pop(topic_path(scope[1]), None)
            elif scope[0] == "transaction":
                self.docs.pop(transaction_path(scope[1]), None)
            else:
                groups.add(group_path(scope[1]))
        if groups:
            for path in [p for p in self.docs if _group_root(p) in groups]:
                del self.docs[path]

    def forget_groups(self, belongs: Callable[[str], bool]) -> None:
        """Forget the loaded groups and transactional ids `belongs` accepts (both are placed on
        group partitions by the same hash of their name)."""
        self.forget({scope for scope in self.loaded if scope[0] in ("group", "transaction") and belongs(scope[1])})
