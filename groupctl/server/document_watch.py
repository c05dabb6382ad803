"""Follow a set of documents in the metadata store: the children of some parent paths, each read
again on every change and handed to its owner (the mechanism under `server.acl_watch` and
`server.dynamic_configs`, which decode what it reads).

`DocumentWatch(store, parents, on_read, on_failed)`, once started, watches the children of each
parent path (which must exist) and the data of each child; whenever a child is created, changed
or deleted it reads that child and calls `on_read(path, data)` (data None: there is no document).

Invariants:
- Per document, reads are serialized (one reading task per path; a change while it reads marks
  the path to read again) and every change is followed by a read issued after it, so what
  `on_read` gets for a path follows the store's order: a read never reports an older state than
  the one before it. The same state may be reported twice.
- `refresh(path)` returns once a read issued after the call has been reported (or after
  REFRESH_TIMEOUT_S): a node that has just written a document answers only after its own view
  includes the write.
- A read the store fails is passed to `on_failed(path, error)` and retried with the store backoff
  while the watch is open.
- After `close`, `on_read` and `on_failed` are never called again: it cancels every read.
- `on_read` and `on_failed` run on the event loop and do not raise (an owner guards its own
  callbacks).
"""

from __future__ import annotations

import asyncio
from typing import Callable, Iterable, Optional

from groupctl.coordinator.backoff import Backoff
from groupctl.store.base import MetadataStore, StoreError

REFRESH_TIMEOUT_S = 5.0
"""How long `refresh` waits for its read (a store that does not answer: the write stands, the
watch reports it when the store answers)."""

OnRead = Callable[[str, Optional[bytes]], None]
OnFailed = Callable[[str, StoreError], None]


class DocumentWatch:
    def __init__(self, store: MetadataStore, parents: Iterable[str], on_read: OnRead, on_failed: OnFailed) -> None:
        self._store = store
        self._parents = list(parents)
        self._on_read = on_read
        self._on_failed = on_failed
        self._open = False
        self._unsubscribe: list[Callable[[], None]] = []
        self._data_watches: dict[str, Callable[[], None]] = {}  # child path -> unsubscribe
        self._dirty: set[str] = set()  # child paths to read again
        self._reading: dict[str, asyncio.Task] = {}  # child path -> its read loop

    async def start(self) -> None:
        """Watch from now on: every child present is read, then every change."""
        self._open = True
        for parent in self._parents:
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
        REFRESH_TIMEOUT_S; at once when the watch is not open)."""
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
            self._schedule(path)  # the data watch reports nothing for a document this node may not read

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
        while self._open and path in self._dirty:
            self._dirty.discard(path)
            try:
                node = await self._store.get(path)
            except StoreError as exc:
                if not self._open:
                    return
                self._on_failed(path, exc)
                self._dirty.add(path)
                await asyncio.sleep(backoff.failed() / 1000)
                continue
            if self._open:
                self._on_read(path, node.data if node is not None else None)
