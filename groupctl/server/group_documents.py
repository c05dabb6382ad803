"""Reading a group's stored document, and waiting for the next one.

Serves groupctl's extension API GroupctlDescribeGroup (`group describe` shows the generation,
`rebalance watch` follows rebalances, both with `--bootstrap` alone): the answer is the document
exactly as the store holds it (`groupctl.layout.groups`), never one rebuilt from memory, because during a
rebalance the core is already at a generation whose document is not written yet (a watcher that
saw that generation early would miss its Stable document).

Waiting is event-driven: the runtime calls `changed(records)` once a result's records are
durable, which wakes the waiters of every group with a new document or a tombstone; a woken
waiter re-reads the store. There is no polling.

Invariants:
- A waiter is registered before it reads the store, so a document written between its read and
  its wait still wakes it.
- A stored document that does not decode is a `CorruptDocument` (a store error).
- `wait` returns the first stored document whose generation is greater than `after_generation`;
  None as soon as a document it had seen is deleted; otherwise, when time runs out, the node
  shuts down (`release`) or stops coordinating the group (`moved`), the current document (None
  if there is none).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Callable, Iterable, Optional

from groupctl.coordinator.records import GroupMetadataRecord, GroupTombstone, Record
from groupctl.layout.codec import LayoutError
from groupctl.layout.any_group import AnyGroupDocument, decode_group
from groupctl.layout.paths import group_path
from groupctl.store.base import MetadataStore
from groupctl.store.scopes import CorruptDocument


@dataclass(frozen=True)
class StoredDocument:
    """A group's document as the store holds it: decoded, and its bytes (what GroupctlDescribeGroup answers)."""

    document: AnyGroupDocument
    data: bytes


class GroupDocuments:
    def __init__(self, store: MetadataStore, serves: Callable[[str], bool]) -> None:
        self._store = store
        self._serves = serves  # whether this node coordinates the group (else nothing wakes a wait)
        self._waiters: dict[str, set[asyncio.Future]] = {}
        self._released = False

    async def current(self, group: str) -> Optional[StoredDocument]:
        """The group's stored document, or None when there is none."""
        node = await self._store.get(group_path(group))
        if node is None:
            return None
        try:
            return StoredDocument(decode_group(group, node.data), node.data)
        except LayoutError as exc:
            raise CorruptDocument(str(exc)) from None

    async def wait(self, group: str, after_generation: int, timeout_s: float) -> Optional[StoredDocument]:
        """The group's document once its generation passes `after_generation`, or whatever is
        stored when `timeout_s` runs out (see the module invariants)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(0.0, timeout_s)
        seen = False
        while True:
            changed = loop.create_future()
            waiters = self._waiters.setdefault(group, set())
            waiters.add(changed)
            try:
                document = await self.current(group)
                if document is not None and document.document.generation > after_generation:
                    return document
                if document is None and seen:
                    return None  # deleted while we waited
                seen = seen or document is not None
                remaining = deadline - loop.time()
                if remaining <= 0 or self._released or not self._serves(group):
                    return document
                try:
                    await asyncio.wait_for(changed, remaining)
                except TimeoutError:
                    pass  # read once more and answer with what is stored
            finally:
                waiters.discard(changed)
                if not waiters and self._waiters.get(group) is waiters:
                    del self._waiters[group]

    def waiting(self, group: str) -> int:
        """How many long polls wait on `group` now."""
        return len(self._waiters.get(group, ()))

    def changed(self, records: Iterable[Record]) -> None:
        """`records` are durable: wake whoever waits for the groups they rewrote or deleted."""
        if not self._waiters:
            return
        for record in records:
            if isinstance(record, (GroupMetadataRecord, GroupTombstone)):
                for future in self._waiters.get(record.group, ()):
                    if not future.done():
                        future.set_result(None)

    def moved(self, belongs: Callable[[str], bool]) -> None:
        """This node stopped coordinating the groups `belongs` accepts: their waits answer now
        (the client asks the new coordinator next)."""
        for group, waiters in self._waiters.items():
            if belongs(group):
                for future in waiters:
                    if not future.done():
                        future.set_result(None)

    def release(self) -> None:
        """The node is shutting down: every wait answers now with what is stored."""
        self._released = True
        for waiters in self._waiters.values():
            for future in waiters:
                if not future.done():
                    future.set_result(None)
