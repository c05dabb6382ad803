"""Watch `/brokers/topics` so a node learns of topics other nodes create, grow and delete.

`TopicWatch(store, on_change)` watches the children of `/brokers/topics` (created at start when
missing) and the data of each child, and calls `on_change(name, record)` on the event loop with
the topic's `TopicRecord` after each creation or change, and with None after its deletion. The
first calls after `start` report every topic that exists then; this node's own writes are
reported too (applying one's own record again is a no-op for the registry).

Invariants:
- Per name, the calls follow the store's state: a None only follows a record, and a record is
  reported only when it differs from the last one reported. Changes in quick succession may be
  seen as one (ZooKeeper watches report the state after a change, not every change), so a
  deletion followed at once by a re-creation may arrive as just the new record.
- A document that does not decode as a topic document (`groupctl.layout.topics`), and a child
  whose name is not a legal topic name, is logged and skipped: the last good record stays
  reported. A failing `on_change` is logged and does not end the watch.
- After `close`, `on_change` is never called again.

Deliberate difference from Apache Kafka: brokers learn of topic changes from the controller
(KRaft's metadata log, or UpdateMetadata); groupctl nodes read the shared ZooKeeper layout.
"""

from __future__ import annotations

import logging
from typing import Callable, Optional

from groupctl.coordinator.records import TopicRecord
from groupctl.server.topics import topic_name_error
from groupctl.store.base import MetadataStore, Node, NodeExists
from groupctl.layout.codec import LayoutError
from groupctl.layout.paths import TOPICS, decode_name
from groupctl.layout.topics import TopicDocument

log = logging.getLogger("groupctl.topic_watch")

OnTopicChange = Callable[[str, Optional[TopicRecord]], None]
"""`on_change(name, record)`: the topic's new record, or None when it was deleted."""


class TopicWatch:
    def __init__(self, store: MetadataStore, on_change: OnTopicChange) -> None:
        self._store = store
        self._on_change = on_change
        self._open = False
        self._unsubscribe_children: Optional[Callable[[], None]] = None
        # child znode name -> (the subscription's token, its unsubscribe function)
        self._data_watches: dict[str, tuple[object, Callable[[], None]]] = {}
        self._reported: dict[str, TopicRecord] = {}  # topic name -> the last record reported
        self._skipped: set[str] = set()  # child znode names that are not legal topic names

    async def start(self) -> None:
        """Create `/brokers/topics` when missing and report topics from now on (the existing
        ones first, as they arrive from the store)."""
        try:
            await self._store.create(TOPICS, make_parents=True)
        except NodeExists:
            pass
        self._open = True
        self._unsubscribe_children = self._store.watch_children(TOPICS, self._on_children)

    async def close(self) -> None:
        """Stop watching; nothing is reported after this returns."""
        self._open = False
        if self._unsubscribe_children is not None:
            self._unsubscribe_children()
            self._unsubscribe_children = None
        for _, unsubscribe in self._data_watches.values():
            unsubscribe()
        self._data_watches.clear()

    def _on_children(self, children: list[str]) -> None:
        if not self._open:
            return
        present = set(children)
        self._skipped &= present
        for child in [c for c in self._data_watches if c not in present]:
            _, unsubscribe = self._data_watches.pop(child)
            unsubscribe()
            self._report(decode_name(child), None)
        for child in children:
            if child in self._data_watches or child in self._skipped:
                continue
            name = decode_name(child)
            problem = topic_name_error(name)
            if problem:
                self._skipped.add(child)
                log.warning("skipping %s/%s: %s", TOPICS, child, problem)
                continue
            self._watch_data(child, name)

    def _watch_data(self, child: str, name: str) -> None:
        path = f"{TOPICS}/{child}"
        token = object()

        def on_data(node: Optional[Node]) -> None:
            # Only the live subscription of this child reports (not an ended one, not after close).
            entry = self._data_watches.get(child)
            if self._open and entry is not None and entry[0] is token:
                self._on_data(path, name, node)

        # Stores deliver the current state on a later loop iteration, after this entry is set.
        self._data_watches[child] = (token, self._store.watch(path, on_data))

    def _on_data(self, path: str, name: str, node: Optional[Node]) -> None:
        if node is None:
            self._report(name, None)
            return
        try:
            record = TopicRecord.of(name, TopicDocument.decode(name, node.data))
        except LayoutError as exc:
            log.warning("skipping %s at version %d: %s", path, node.version, exc)
            return
        self._report(name, record)

    def _report(self, name: str, record: Optional[TopicRecord]) -> None:
        if record is None:
            if self._reported.pop(name, None) is None:
                return
        elif self._reported.get(name) == record:
            return
        else:
            self._reported[name] = record
        try:
            self._on_change(name, record)
        except Exception:  # noqa: BLE001 - one failing callback must not end the watch
            log.exception("topic change callback failed for %r", name)
