"""Watch the stored ACLs (`groupctl.layout.acls`) so a node learns of the ACLs other nodes and
`groupctl acl --zk` write.

`AclWatch(store, on_change)` watches the children of each resource type path
(`/kafka-acl/Topic`, `/kafka-acl-extended/prefixed/Group`, ...; created at start by
`store.acls.ensure_acl_paths`) and the data of each child, and on every change re-reads that
child and calls `on_change(pattern, entries)` with what it holds (no entries: deleted).

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

import asyncio
import logging
from typing import Callable, Optional

from groupctl.coordinator.backoff import Backoff
from groupctl.security.acls import AccessControlEntry, ResourcePattern
from groupctl.security.stored_acls import pattern_of, type_paths
from groupctl.store.acls import read_acls_at
from groupctl.store.base import AccessDenied, MetadataStore, StoreError
from groupctl.store.scopes import CorruptDocument

log = logging.getLogger("groupctl.acls")

OnAclChange = Callable[[ResourcePattern, frozenset[AccessControlEntry]], None]

REFRESH_TIMEOUT_S = 5.0
"""How long `refresh` waits for its read (a store that does not answer: the write stands, the
watch reports it when the store answers)."""


class AclWatch:
    def __init__(self, store: MetadataStore, on_change: OnAclChange) -> None:
        self._store = store
        self._on_change = on_change
        self._open = False
        self._unsubscribe: list[Callable[[], None]] = []
        self._data_watches: dict[str, Callable[[], None]] = {}  # child path -> unsubscribe
        self._dirty: set[str] = set()  # child paths to read again
        self._reading: dict[str, asyncio.Task] = {}  # child path -> its read loop
        self._denied: set[str] = set()  # child paths whose last read ZooKeeper refused

    async def start(self) -> None:
        """Watch from now on (the type paths must exist)."""
        self._open = True
        for parent in type_paths():
            def on_children(children: list[str], parent: str = parent) -> None:
                self._on_children(parent, children)

            self._unsubscribe.append(self._store.watch_children(parent, on_children))

    async def close(self) -> None:
        self._open = False
        for unsubscribe in [*self._unsubscribe, *self._data_watches.values()]:
            unsubscribe()
        self._unsubscribe.clear()
        self._data_watches.clear()
        tasks = list(self._reading.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def refresh(self, path: str) -> None:
        """Read `path` again and report it; return once that read is reported (or after
        REFRESH_TIMEOUT_S)."""
        task = self._schedule(path)
        if task is not None:
            await asyncio.wait([task], timeout=REFRESH_TIMEOUT_S)

    def _on_children(self, parent: str, children: list[str]) -> None:
        if not self._open:
            return
        present = {f"{parent}/{child}" for child in children}
        for path in [p for p in self._data_watches if p.startswith(parent + "/") and p not in present]:
            self._data_watches.pop(path)()
            self._schedule(path)  # reads it gone
        for path in present - self._data_watches.keys():
            self._data_watches[path] = self._store.watch(path, lambda node, path=path: self._schedule(path))
            self._schedule(path)  # the watch reports nothing for a document this node may not read

    def _schedule(self, path: str) -> Optional[asyncio.Task]:
        if not self._open:
            return None
        self._dirty.add(path)
        task = self._reading.get(path)
        if task is None or task.done():
            task = self._reading[path] = asyncio.get_running_loop().create_task(self._read_while_dirty(path))
        return task

    async def _read_while_dirty(self, path: str) -> None:
        backoff = Backoff.store_retries()
        parent, _, child = path.rpartition("/")
        while self._open and path in self._dirty:
            self._dirty.discard(path)
            try:
                stored = await read_acls_at(self._store, path)
            except CorruptDocument as exc:
                log.error("keeping the last ACLs read from %s: %s", path, exc)
                continue
            except AccessDenied as exc:
                if path not in self._denied:
                    self._denied.add(path)
                    log.error("cannot read the ACLs at %s, so the last ones read there stay in force "
                              "(%s); trying again", path, exc)
                self._dirty.add(path)
                await asyncio.sleep(backoff.failed() / 1000)
                continue
            except StoreError as exc:
                log.warning("reading %s failed (%s); trying again", path, exc)
                self._dirty.add(path)
                await asyncio.sleep(backoff.failed() / 1000)
                continue
            self._denied.discard(path)
            if self._open:
                self._report(pattern_of(parent, child), stored.entries)

    def _report(self, pattern: ResourcePattern, entries: frozenset[AccessControlEntry]) -> None:
        try:
            self._on_change(pattern, entries)
        except Exception:  # noqa: BLE001 - one failing callback must not end the watch
            log.exception("ACL change callback failed for %s", pattern)
