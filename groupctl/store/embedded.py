"""The embedded metadata store: ZooKeeper's data model in one process, durable in a local log.

Used without `--zk`, with `ZooKeeperStore`'s tree, versions and failure modes, so the layers above
behave the same on either. Files: docs/configuration.md, "Stores and durability".

Invariants:
- A write returns only after its log record is fsync'ed (`data_dir=None`: memory only). Writes are
  validated and applied to the in-memory tree at once, in call order, so compare-and-set sees
  every earlier write (a read may see one whose fsync is in flight). After a failed fsync the store
  refuses everything (StoreUnavailable): acknowledging writes on top of a lost one breaks the order.
- Group commit: writes that arrive during an fsync share the next one, on a dedicated I/O thread.
- Log records are frames `length:u32be crc32:u32be` + JSON of each changed node's *resulting*
  state: length and CRC tell a whole record from a torn one (a cut JSON line can still parse), and
  replaying absolute states is idempotent. Recovery loads the snapshot, replays newer records and
  cuts the log at the first torn or corrupt frame (only an unacknowledged tail can be torn); a
  crash between compaction's fsync'ed renames (snapshot, then an empty log) leaves old records
  that recovery skips.
- Ephemeral nodes are never logged and vanish on close, as a session's do; they cannot have children.
- Watch callbacks run on the event loop once the change is durable, once per change, in commit
  order; a children watch gets the children as they are then, only when they differ from its last.
"""

from __future__ import annotations

import asyncio
import base64
import fcntl
import json
import logging
import os
import struct
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from groupctl.store.base import (
    BadVersion,
    CheckVersion,
    ChildrenCallback,
    Create,
    Delete,
    Node,
    NodeExists,
    NoNode,
    NotEmpty,
    Op,
    SetData,
    StoreError,
    StoreUnavailable,
    WatchCallback,
)

log = logging.getLogger(__name__)

WAL_NAME = "store.wal"
SNAPSHOT_NAME = "store.snapshot"
LOCK_NAME = "store.lock"
DEFAULT_COMPACT_BYTES = 4 * 1024 * 1024

_HEADER = struct.Struct(">II")


class NoChildrenForEphemerals(StoreError):
    """A create under an ephemeral node (ZooKeeper refuses it too)."""


@dataclass
class _Entry:
    data: bytes
    version: int
    ephemeral: bool


def _parent(path: str) -> str:
    head = path.rsplit("/", 1)[0]
    return head or "/"


def _name(path: str) -> str:
    return path.rsplit("/", 1)[1]


def _depth(path: str) -> int:
    return 0 if path == "/" else path.count("/")


def _check_path(path: str) -> None:
    if path == "/":
        return
    if not path.startswith("/") or path.endswith("/") or "//" in path:
        raise ValueError(f"invalid store path {path!r}")
    if any(part in (".", "..") for part in path.split("/")[1:]):
        raise ValueError(f"invalid store path {path!r}")


def _frame(payload: dict) -> bytes:
    body = json.dumps(payload, separators=(",", ":")).encode()
    return _HEADER.pack(len(body), zlib.crc32(body)) + body


def _read_frames(blob: bytes) -> tuple[list[dict], int]:
    """Decode complete frames; return them and the offset just past the last good one."""
    frames: list[dict] = []
    offset = 0
    while offset + _HEADER.size <= len(blob):
        length, crc = _HEADER.unpack_from(blob, offset)
        start = offset + _HEADER.size
        body = blob[start:start + length]
        if len(body) < length or zlib.crc32(body) != crc:
            break
        frames.append(json.loads(body))
        offset = start + length
    return frames, offset


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class _Disk:
    """The files of one data dir. Its methods block: call them on the I/O thread only."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.wal_path = directory / WAL_NAME
        self.snapshot_path = directory / SNAPSHOT_NAME
        self._lock_fd: Optional[int] = None
        self._wal = None
        self.wal_bytes = 0

    def open(self) -> tuple[Optional[dict], list[dict]]:
        """Lock the dir and read it back: (snapshot payload or None, log payloads in order)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StoreUnavailable(f"{self.directory} is in use by another groupctl process") from None
        self._lock_fd = fd
        try:
            return self._read_back()
        except BaseException:
            self.close()
            raise

    def _read_back(self) -> tuple[Optional[dict], list[dict]]:
        snapshot = None
        if self.snapshot_path.exists():
            frames, end = _read_frames(self.snapshot_path.read_bytes())
            if len(frames) != 1 or end != self.snapshot_path.stat().st_size:
                raise StoreError(f"{self.snapshot_path} is corrupt")
            snapshot = frames[0]
        blob = self.wal_path.read_bytes() if self.wal_path.exists() else b""
        records, good = _read_frames(blob)
        self._wal = open(self.wal_path, "ab")
        if good < len(blob):
            log.warning("%s: discarding a torn tail of %d bytes after %d records",
                        self.wal_path, len(blob) - good, len(records))
            self._wal.truncate(good)
            os.fsync(self._wal.fileno())
        self.wal_bytes = good
        return snapshot, records

    def append(self, data: bytes) -> None:
        self._wal.write(data)
        self._wal.flush()
        os.fsync(self._wal.fileno())
        self.wal_bytes += len(data)

    def compact(self, snapshot: bytes) -> None:
        """Replace the snapshot, then restart the log empty; each step by atomic rename."""
        tmp = self.snapshot_path.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            f.write(snapshot)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.snapshot_path)
        _fsync_dir(self.directory)
        tmp = self.wal_path.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, self.wal_path)
        _fsync_dir(self.directory)
        self._wal.close()
        self._wal = open(self.wal_path, "ab")
        self.wal_bytes = 0

    def close(self) -> None:
        if self._wal is not None:
            self._wal.close()
            self._wal = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None


class _Overlay:
    """A transaction's view: the committed tree plus this transaction's changes so far."""

    def __init__(self, nodes: dict[str, _Entry], children: dict[str, set[str]]) -> None:
        self._nodes = nodes
        self._children = children
        self.changed: dict[str, Optional[_Entry]] = {}

    def get(self, path: str) -> Optional[_Entry]:
        if path in self.changed:
            return self.changed[path]
        return self._nodes.get(path)

    def has_children(self, path: str) -> bool:
        kids = set(self._children.get(path, ()))
        for changed, entry in self.changed.items():
            if changed != "/" and _parent(changed) == path:
                if entry is None:
                    kids.discard(_name(changed))
                else:
                    kids.add(_name(changed))
        return bool(kids)

    def create(self, path: str, data: bytes, ephemeral: bool, make_parents: bool, what: str) -> int:
        _check_path(path)
        if path == "/" or self.get(path) is not None:
            raise NodeExists(f"{what}: {path} exists")
        parent = _parent(path)
        parent_entry = self.get(parent)
        if parent_entry is None:
            if not make_parents:
                raise NoNode(f"{what}: parent {parent} of {path} does not exist")
            self.create(parent, b"", False, True, what)
        elif parent_entry.ephemeral:
            raise NoChildrenForEphemerals(f"{what}: parent {parent} of {path} is ephemeral")
        self.changed[path] = _Entry(data, 0, ephemeral)
        return 0

    def set(self, path: str, data: bytes, version: int, what: str) -> int:
        entry = self._existing(path, version, what)
        self.changed[path] = _Entry(data, entry.version + 1, entry.ephemeral)
        return entry.version + 1

    def delete(self, path: str, version: int, what: str) -> None:
        if path == "/":
            raise StoreError(f"{what}: the root cannot be deleted")
        self._existing(path, version, what)
        if self.has_children(path):
            raise NotEmpty(f"{what}: {path} has children")
        self.changed[path] = None

    def check(self, path: str, version: int, what: str) -> None:
        self._existing(path, version, what)

    def _existing(self, path: str, version: int, what: str) -> _Entry:
        entry = self.get(path)
        if entry is None:
            raise NoNode(f"{what}: {path} does not exist")
        if version != -1 and entry.version != version:
            raise BadVersion(f"{what}: {path} is at version {entry.version}, not {version}")
        return entry


@dataclass
class _ChildrenWatch:
    callback: ChildrenCallback
    last: Optional[list[str]] = None  # the children last delivered


class EmbeddedStore:
    """A MetadataStore in this process; durable under `data_dir`, memory only when it is None.

    `compact_bytes`: once the log grows past this size it is folded into a new snapshot.
    """

    def __init__(self, data_dir: Optional[Path], *, compact_bytes: int = DEFAULT_COMPACT_BYTES) -> None:
        self._disk = _Disk(Path(data_dir)) if data_dir is not None else None
        self._compact_bytes = compact_bytes
        self._nodes: dict[str, _Entry] = {"/": _Entry(b"", 0, False)}
        self._children: dict[str, set[str]] = {"/": set()}
        self._watches: dict[str, list[WatchCallback]] = {}
        self._children_watches: dict[str, list[_ChildrenWatch]] = {}
        self._lsn = 0
        self._pending: list[tuple[bytes, list[tuple[str, Optional[Node]]], asyncio.Future]] = []
        self._flusher: Optional[asyncio.Task] = None
        self._io: Optional[ThreadPoolExecutor] = None
        self._open = False
        self._failure: Optional[BaseException] = None

    async def start(self) -> None:
        if self._disk is not None:
            self._io = ThreadPoolExecutor(max_workers=1, thread_name_prefix="groupctl-store-io")
            loop = asyncio.get_running_loop()
            try:
                snapshot, records = await loop.run_in_executor(self._io, self._disk.open)
                try:
                    self._recover(snapshot, records)
                except BaseException:
                    await loop.run_in_executor(self._io, self._disk.close)
                    raise
            except BaseException:
                self._io.shutdown(wait=False)
                raise
        self._open = True

    async def close(self) -> None:
        """Wait for pending writes, drop this store's ephemeral nodes, release the files."""
        if not self._open:
            return
        while self._flusher is not None:
            await asyncio.shield(self._flusher)
        ephemeral = [p for p, e in self._nodes.items() if e.ephemeral]
        self._open = False
        changes = []
        for path in sorted(ephemeral, key=_depth, reverse=True):
            self._remove(path)
            changes.append((path, None))
        self._notify(changes)
        if self._disk is not None:
            await asyncio.get_running_loop().run_in_executor(self._io, self._disk.close)
            self._io.shutdown(wait=True)

    async def get(self, path: str) -> Optional[Node]:
        self._check_open()
        entry = self._nodes.get(path)
        return Node(entry.data, entry.version) if entry is not None else None

    async def children(self, path: str) -> list[str]:
        self._check_open()
        if path not in self._nodes:
            raise NoNode(f"{path} does not exist")
        return sorted(self._children[path])

    async def create(self, path: str, data: bytes = b"", *, ephemeral: bool = False,
                     make_parents: bool = False) -> int:
        overlay = self._overlay()
        version = overlay.create(path, data, ephemeral, make_parents, "create")
        await self._commit(overlay)
        return version

    async def set_if_version(self, path: str, data: bytes, version: int) -> int:
        overlay = self._overlay()
        new_version = overlay.set(path, data, version, "set")
        await self._commit(overlay)
        return new_version

    async def delete_if_version(self, path: str, version: int = -1) -> None:
        overlay = self._overlay()
        overlay.delete(path, version, "delete")
        await self._commit(overlay)

    async def transaction(self, ops: list[Op]) -> list[int]:
        overlay = self._overlay()
        results = []
        for index, op in enumerate(ops):
            what = f"transaction op {index} ({type(op).__name__} {op.path})"
            if isinstance(op, Create):
                results.append(overlay.create(op.path, op.data, op.ephemeral, False, what))
            elif isinstance(op, SetData):
                results.append(overlay.set(op.path, op.data, op.version, what))
            elif isinstance(op, Delete):
                overlay.delete(op.path, op.version, what)
                results.append(-1)
            elif isinstance(op, CheckVersion):
                overlay.check(op.path, op.version, what)
                results.append(-1)
            else:
                raise TypeError(f"not a store op: {op!r}")
        await self._commit(overlay)
        return results

    def watch(self, path: str, callback: WatchCallback) -> Callable[[], None]:
        """Deliver the current state on the next loop iteration, then every durable change."""
        self._check_open()
        loop = asyncio.get_running_loop()
        callbacks = self._watches.setdefault(path, [])
        callbacks.append(callback)
        entry = self._nodes.get(path)
        loop.call_soon(self._deliver, path, callback,
                       Node(entry.data, entry.version) if entry is not None else None)

        def unsubscribe() -> None:
            if callback in callbacks:
                callbacks.remove(callback)

        return unsubscribe

    def watch_children(self, path: str, callback: ChildrenCallback) -> Callable[[], None]:
        """Deliver the current children on the next loop iteration, then the children after each
        durable change of the set; ends when `path` is missing or deleted."""
        self._check_open()
        watch = _ChildrenWatch(callback)
        watches = self._children_watches.setdefault(path, [])
        watches.append(watch)
        asyncio.get_running_loop().call_soon(self._deliver_children, path, watch)

        def unsubscribe() -> None:
            if watch in watches:
                watches.remove(watch)

        return unsubscribe

    # -- internals -------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._failure is not None:
            raise StoreUnavailable(f"the store's log failed: {self._failure}") from self._failure
        if not self._open:
            raise StoreUnavailable("the embedded store is not open")

    def _overlay(self) -> _Overlay:
        self._check_open()
        return _Overlay(self._nodes, self._children)

    def _recover(self, snapshot: Optional[dict], records: list[dict]) -> None:
        if snapshot is not None:
            self._lsn = snapshot["lsn"]
            for path, data, version in sorted(snapshot["nodes"], key=lambda n: _depth(n[0])):
                self._put(path, _Entry(base64.b64decode(data), version, False))
        for record in records:
            if record["lsn"] <= self._lsn:
                continue  # already in the snapshot (crash between snapshot and log restart)
            self._lsn = record["lsn"]
            for op in record["ops"]:
                if op[0] == "put":
                    self._put(op[1], _Entry(base64.b64decode(op[2]), op[3], False))
                else:
                    self._remove(op[1])

    def _put(self, path: str, entry: _Entry) -> None:
        if path not in self._nodes:
            parent = _parent(path)
            if parent not in self._children:
                raise StoreError(f"corrupt store: {path} has no parent")
            self._children[parent].add(_name(path))
            self._children[path] = set()
        self._nodes[path] = entry

    def _remove(self, path: str) -> None:
        del self._nodes[path]
        del self._children[path]
        self._children[_parent(path)].discard(_name(path))

    async def _commit(self, overlay: _Overlay) -> None:
        """Apply a validated transaction to the tree now; return once it is durable."""
        removed = [p for p, e in overlay.changed.items() if e is None and p in self._nodes]
        written = [(p, e) for p, e in overlay.changed.items() if e is not None]
        if not removed and not written:
            return
        log_ops: list[list] = []
        changes: list[tuple[str, Optional[Node]]] = []
        for path in sorted(removed, key=_depth, reverse=True):
            if not self._nodes[path].ephemeral:
                log_ops.append(["del", path])
            self._remove(path)
            changes.append((path, None))
        for path, entry in sorted(written, key=lambda pe: _depth(pe[0])):
            if not entry.ephemeral:
                log_ops.append(["put", path, base64.b64encode(entry.data).decode(), entry.version])
            self._put(path, entry)
            changes.append((path, Node(entry.data, entry.version)))
        frame = b""
        if log_ops and self._disk is not None:
            self._lsn += 1
            frame = _frame({"lsn": self._lsn, "ops": log_ops})
        if not frame and not self._pending:
            self._notify(changes)
            return
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        self._pending.append((frame, changes, done))
        if self._flusher is None:
            self._flusher = loop.create_task(self._flush())
        await done

    async def _flush(self) -> None:
        """Write and fsync everything pending, one fsync per round (group commit)."""
        loop = asyncio.get_running_loop()
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                data = b"".join(frame for frame, _, _ in batch)
                try:
                    if data:
                        await loop.run_in_executor(self._io, self._disk.append, data)
                except BaseException as exc:
                    self._failure = exc
                    log.error("embedded store log write failed; refusing further writes", exc_info=exc)
                    for _, _, done in batch + self._pending:
                        if not done.done():
                            done.set_exception(StoreUnavailable(f"the store's log failed: {exc}"))
                    self._pending = []
                    return
                for _, changes, done in batch:
                    self._notify(changes)
                    if not done.done():
                        done.set_result(None)
                if not self._pending and self._disk.wal_bytes > self._compact_bytes:
                    await self._compact(loop)
        finally:
            self._flusher = None

    async def _compact(self, loop: asyncio.AbstractEventLoop) -> None:
        """Fold the log into a snapshot of the tree, which is fully durable at this point."""
        nodes = [[path, base64.b64encode(e.data).decode(), e.version]
                 for path, e in sorted(self._nodes.items()) if path != "/" and not e.ephemeral]
        snapshot = _frame({"lsn": self._lsn, "nodes": nodes})
        try:
            await loop.run_in_executor(self._io, self._disk.compact, snapshot)
        except Exception:
            # The log is intact and still authoritative; try again after a later write.
            log.exception("embedded store compaction failed")

    def _notify(self, changes: list[tuple[str, Optional[Node]]]) -> None:
        if not changes or not (self._watches or self._children_watches):
            return
        loop = asyncio.get_running_loop()
        for path, node in changes:
            for callback in list(self._watches.get(path, ())):
                loop.call_soon(self._deliver, path, callback, node)
            for watched in (_parent(path), path):  # a child came or went; or the node itself
                for watch in list(self._children_watches.get(watched, ())):
                    loop.call_soon(self._deliver_children, watched, watch)

    def _deliver_children(self, path: str, watch: _ChildrenWatch) -> None:
        watches = self._children_watches.get(path, [])
        if watch not in watches:
            return
        if path not in self._nodes:
            watches.remove(watch)  # missing or deleted: the watch ends (as kazoo's does)
            return
        children = sorted(self._children[path])
        if children != watch.last:
            watch.last = children
            watch.callback(children)

    def _deliver(self, path: str, callback: WatchCallback, node: Optional[Node]) -> None:
        if callback in self._watches.get(path, ()):
            callback(node)
