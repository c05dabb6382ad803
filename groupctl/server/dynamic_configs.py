"""The dynamic configs of topics, brokers and groups in the metadata store (`groupctl.layout.configs`):
this node's copy of them, kept current by watching the store, and the one way to change them.

`DynamicConfigs(store, on_change)` reads every document at `start` (before the node listens),
then watches the children of `/config/topics`, `/config/brokers` and `/config/groups` and the data
of each child with a `server.document_watch`, and on every change re-reads that child, updates
`stored` and calls `on_change(resource_type, name)`.

Invariants:
- Per document, reads are serialized and each change is followed by a read issued after it, so
  `stored` follows the store's order. `alter` returns once a read issued after its write is in
  `stored`: a node that has just written a config describes it (and applies it) at once.
- Every change is one compare-and-set write of one resource's document, recomputed from what
  another writer stored when it loses a race (up to MAX_ATTEMPTS times); a document left empty is
  deleted. With the embedded store the documents live in its durable tree in the data dir, as
  topics and ACLs do; with ZooKeeper every node sees every write.
- A document that does not decode is logged and its last good config stays in force; a read the
  store fails is retried with the store backoff while the watch is open.
- After `close`, `on_change` is never called again.

Deliberate difference from Apache Kafka: its brokers learn of config changes from sequential
`/config/changes/config_change_*` notifications, which groupctl neither writes nor reads: it
watches the config documents themselves (as for ACLs, `server.acl_watch`).
"""

from __future__ import annotations

import logging
from typing import Callable, Mapping, Optional

from groupctl.configs.catalog import ResourceType
from groupctl.configs.resolve import StoredConfigs
from groupctl.layout.codec import LayoutError
from groupctl.layout.configs import decode_config, encode_config
from groupctl.layout.paths import CONFIG_BROKERS, CONFIG_GROUPS, CONFIG_TOPICS, config_path, decode_name
from groupctl.server.document_watch import DocumentWatch
from groupctl.store.base import BadVersion, MetadataStore, NodeExists, NoNode, StoreError

log = logging.getLogger("groupctl.configs")

PARENTS = {ResourceType.TOPIC: CONFIG_TOPICS, ResourceType.BROKER: CONFIG_BROKERS, ResourceType.GROUP: CONFIG_GROUPS}
KINDS = {parent: kind for kind, parent in PARENTS.items()}
MAX_ATTEMPTS = 16

OnConfigChange = Callable[[ResourceType, str], None]
Change = Callable[[dict[str, str]], dict[str, str]]


class DynamicConfigs:
    def __init__(self, store: MetadataStore, on_change: OnConfigChange) -> None:
        self._store = store
        self._on_change = on_change
        self._tables: dict[ResourceType, dict[str, dict[str, str]]] = {kind: {} for kind in PARENTS}
        self.stored = StoredConfigs(*(self._tables[k] for k in (ResourceType.TOPIC, ResourceType.BROKER,
                                                                  ResourceType.GROUP)))
        self._watch = DocumentWatch(store, KINDS, self._on_read, self._on_failed)

    async def start(self) -> None:
        """Read every stored config, then watch for changes."""
        for kind, parent in PARENTS.items():
            try:
                await self._store.create(parent, b"", make_parents=True)
            except NodeExists:
                pass
            for child in await self._store.children(parent):
                path = f"{parent}/{child}"
                node = await self._store.get(path)
                self._put(kind, decode_name(child), path, node.data if node is not None else None)
        for kind in PARENTS:
            for name in list(self._tables[kind]):
                self.report(kind, name)
        await self._watch.start()

    async def close(self) -> None:
        await self._watch.close()

    def names(self, kind: ResourceType) -> list[str]:
        """The resources of a type that have a stored config, sorted."""
        return sorted(self._tables[kind])

    async def alter(self, kind: ResourceType, name: str, change: Change, *, replaces: bool = False) -> dict[str, str]:
        """Replace the resource's config with `change(current)` in one compare-and-set write (no
        write when it is unchanged); the config now stored (read back, within
        `document_watch.REFRESH_TIMEOUT_S`). `change` may raise to refuse. A stored document
        that does not decode raises LayoutError, unless the change `replaces` the whole config
        (AlterConfigs, a new topic's), which is then written over it with `change({})`, as
        Kafka's setOrCreateEntityConfigs writes without reading."""
        path = config_path(PARENTS[kind], name)
        for _ in range(MAX_ATTEMPTS):
            node = await self._store.get(path)
            try:
                current, readable = decode_config(path, node.data if node is not None else None), True
            except LayoutError:
                if not replaces:
                    raise
                current, readable = {}, False
            wanted = change(dict(current))
            if wanted == current and readable:
                return current
            try:
                if node is None:
                    await self._store.create(path, encode_config(wanted), make_parents=True)
                elif not wanted:
                    await self._store.delete_if_version(path, node.version)
                else:
                    await self._store.set_if_version(path, encode_config(wanted), node.version)
            except (BadVersion, NodeExists, NoNode):
                continue  # another writer came first: apply the change to what it stored
            log.info("configs of %s %s: %s", kind.name.lower(), name, wanted or "none (defaults)")
            await self._watch.refresh(path)
            return wanted
        raise BadVersion(f"{path}: changed by other writers {MAX_ATTEMPTS} times in a row")

    async def remove(self, kind: ResourceType, name: str) -> None:
        """Delete the resource's config document, if any (a deleted topic's)."""
        path = config_path(PARENTS[kind], name)
        try:
            await self._store.delete_if_version(path, -1)
        except NoNode:
            return
        await self._watch.refresh(path)

    def _on_read(self, path: str, data: Optional[bytes]) -> None:
        parent, _, child = path.rpartition("/")
        kind, name = KINDS[parent], decode_name(child)
        if self._put(kind, name, path, data):
            self.report(kind, name)

    def _on_failed(self, path: str, exc: StoreError) -> None:
        log.warning("reading %s failed (%s); trying again", path, exc)

    def report(self, kind: ResourceType, name: str) -> None:
        """Call `on_change(kind, name)`: after a change, and for a resource that has just appeared
        (a new topic) or every resource once `start` has read them all."""
        try:
            self._on_change(kind, name)
        except Exception:  # noqa: BLE001 - one failing callback must not end the watch
            log.exception("config change callback failed for %s %s", kind.name.lower(), name)

    def _put(self, kind: ResourceType, name: str, path: str, data: Optional[bytes]) -> bool:
        """Keep what `data` holds as the resource's config; whether that changed it."""
        try:
            config: Mapping[str, str] = decode_config(path, data)
        except LayoutError as exc:
            log.error("keeping the last configs read from %s: %s", path, exc)
            return False
        table = self._tables[kind]
        if table.get(name, {}) == config:
            return False
        if config:
            table[name] = dict(config)
        else:
            table.pop(name, None)
        return True
