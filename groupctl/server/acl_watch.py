"""Watch the stored ACLs (`groupctl.layout.acls`) so a node learns of the ACLs other nodes and
`groupctl acl --zk` write.

`AclWatch(store, on_change)` watches the children of each resource type path
(`/kafka-acl/Topic`, `/kafka-acl-extended/prefixed/Group`, ...; created at start by
`store.acls.ensure_acl_paths`) and the data of each child with a `server.document_watch`, and
on every change re-reads that child and calls `on_change(pattern, entries)` with what it holds
(no entries: deleted).

Invariants:
- Per document, reads are serialized and each change is followed by a read issued after it, so
  what is reported follows the store's order (a read never reports an older state than the one
  before it). `refresh(path)` returns once a read issued after the call has been reported: a
  node that has just written a document answers only after its own authorizer sees the write.
- A read the store fails is retried with the store backoff while the watch is open; a document
  that does not decode is logged and its last good entries stay reported. A read ZooKeeper
  refuses (NoAuth: the document was written under credentials whose znode ACL leaves this node
  out) is an error in the log, once per document until it is read again, and retried: the last
  entries read stay in force, as Kafka's authorizer keeps its cache when a read fails (so a new
  Deny this node cannot read is not enforced by it: give the nodes and the tools that write ACLs
  the same `--zk-auth`, or `--zk-world-readable`).
- After `close`, `on_change` is never called again.

Deliberate difference from Apache Kafka: its brokers learn of ACL changes from sequential
change-notification znodes (`/kafka-acl-changes`, `/kafka-acl-extended-changes`), which
groupctl neither writes nor reads: it watches the ACL documents themselves.
"""

from __future__ import annotations

import logging
from typing import Callable

from groupctl.security.acls import AccessControlEntry, ResourcePattern
from groupctl.security.stored_acls import pattern_of, type_paths
from groupctl.server.document_watch import DocumentWatch
from groupctl.store.acls import acls_in
from groupctl.store.base import AccessDenied, MetadataStore, StoreError
from groupctl.store.scopes import CorruptDocument

log = logging.getLogger("groupctl.acls")

OnAclChange = Callable[[ResourcePattern, frozenset[AccessControlEntry]], None]


class AclWatch:
    def __init__(self, store: MetadataStore, on_change: OnAclChange) -> None:
        self._on_change = on_change
        self._watch = DocumentWatch(store, type_paths(), self._on_read, self._on_failed)
        self._denied: set[str] = set()  # child paths whose last read ZooKeeper refused

    async def start(self) -> None:
        """Watch from now on (the type paths must exist)."""
        await self._watch.start()

    async def close(self) -> None:
        await self._watch.close()

    async def refresh(self, path: str) -> None:
        """Read `path` again and report it; return once that read is reported (or after
        `document_watch.REFRESH_TIMEOUT_S`)."""
        await self._watch.refresh(path)

    def _on_read(self, path: str, data: bytes | None) -> None:
        self._denied.discard(path)
        try:
            entries = acls_in(path, data) if data is not None else frozenset()
        except CorruptDocument as exc:
            log.error("keeping the last ACLs read from %s: %s", path, exc)
            return
        parent, _, child = path.rpartition("/")
        pattern = pattern_of(parent, child)
        try:
            self._on_change(pattern, entries)
        except Exception:  # noqa: BLE001 - one failing callback must not end the watch
            log.exception("ACL change callback failed for %s", pattern)

    def _on_failed(self, path: str, exc: StoreError) -> None:
        if not isinstance(exc, AccessDenied):
            log.warning("reading %s failed (%s); trying again", path, exc)
        elif path not in self._denied:
            self._denied.add(path)
            log.error("cannot read the ACLs at %s, so the last ones read there stay in force "
                      "(%s); trying again", path, exc)
