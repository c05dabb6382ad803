"""One ZooKeeper session for the operator tools: bounded reads and writes, pipelined reads, and a
data watch handed over to the caller's thread.

Invariants:
- One kazoo session per `ZkSession` block, on kazoo's plain threading handler: the tools are
  synchronous. Connecting is bounded by `timeout_s` and so is every request (a window of
  pipelined reads, `get_many`, shares one bound); running out of time is `Unreachable`, never a
  hang. Other ZooKeeper failures are `OpsError`, naming the request. `timeout_s` is the CLI's
  global `--timeout` when given (None: `DEFAULT_TIMEOUT_S`).
- Paths are relative to the connect string's chroot (`host:port[,host:port]/chroot`), as for the
  coordinator's store. A missing chroot reads as missing znodes; only `create`, which makes
  missing parents, would create it.
- `watch` hands kazoo's callback thread over to the caller's thread through a queue; changes in
  quick succession can be seen as one (ZooKeeper watches are one-shot and kazoo's DataWatch
  re-reads the node).
- Credentials (`auth`: what the operator gave with `--zk-auth` / `GROUPCTL_ZK_AUTH`, parsed by
  `groupctl.store.zk_auth`; malformed is BadInput) authenticate the session, and whatever it
  creates is readable and writable by that identity only (`owner_acl`). A NoAuth answer is
  `Refused`, one line naming the path, read or write, and whether credentials were given.
"""

from __future__ import annotations

import base64
import json
import logging
import queue
import threading
import time
from dataclasses import dataclass
from typing import Any, Iterator, Optional

from kazoo.client import KazooClient
from kazoo.exceptions import (
    AuthFailedError,
    BadVersionError,
    ConnectionLoss,
    KazooException,
    NoAuthError,
    NodeExistsError,
    NoNodeError,
    OperationTimeoutError,
    SessionExpiredError,
    ZookeeperStoppedError,
)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.recipe.watchers import DataWatch

from groupctl.errors import BadInput, OpsError, Refused, Unreachable
from groupctl.store.zk_auth import BadZkAuth, ZkAuth, not_permitted, parse_zk_auth
from groupctl.store.zookeeper import kazoo_logger, owner_acl, split_connect

DEFAULT_TIMEOUT_S = 6.0
"""Connect and request bound: 6 s, so that a CLI command against an unreachable ZooKeeper ends
within 10 s with room for interpreter start-up and session teardown on a busy machine."""
GET_WINDOW = 512
"""Reads `ZkSession.get_many` keeps in flight on the session at once."""

# kazoo logs every failed connection attempt; a library must not print them to the operator's
# terminal through logging's last-resort handler. Applications that configure logging see them.
_KAZOO_LOG = kazoo_logger("groupctl.client.zookeeper.kazoo")
_KAZOO_LOG.addHandler(logging.NullHandler())

_WRITES = ("create", "set", "delete")  # the verbs of the writes' `what` ("set /path")
_UNREACHABLE = (ConnectionLoss, SessionExpiredError, OperationTimeoutError, ZookeeperStoppedError,
                KazooTimeoutError)


@dataclass(frozen=True)
class ZnodeStat:
    version: int
    ctime_ms: int
    mtime_ms: int
    data_length: int
    num_children: int
    ephemeral_owner: Optional[int]  # the owning session id of an ephemeral znode

    @classmethod
    def from_kazoo(cls, stat: Any) -> "ZnodeStat":
        return cls(version=stat.version, ctime_ms=stat.ctime, mtime_ms=stat.mtime,
                   data_length=stat.dataLength, num_children=stat.numChildren,
                   ephemeral_owner=stat.ephemeralOwner or None)

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "ctime_ms": self.ctime_ms, "mtime_ms": self.mtime_ms,
                "data_length": self.data_length, "num_children": self.num_children,
                "ephemeral_owner": self.ephemeral_owner}


@dataclass(frozen=True)
class Znode:
    """One znode's data and stat (`zk get`)."""

    path: str
    data: bytes
    stat: ZnodeStat

    @property
    def text(self) -> Optional[str]:
        """The data as UTF-8 text; None when it is not UTF-8."""
        try:
            return self.data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    @property
    def document(self) -> Any:
        """The data parsed as JSON; None when it is not JSON (or is empty)."""
        text = self.text
        if not text:
            return None
        try:
            return json.loads(text)
        except ValueError:
            return None

    def to_json(self) -> dict[str, Any]:
        text = self.text
        return {
            "path": self.path,
            "stat": self.stat.to_json(),
            "encoding": "utf-8" if text is not None else "base64",
            "data": text if text is not None else base64.b64encode(self.data).decode("ascii"),
            "document": self.document,
        }


def normalize_path(path: str) -> str:
    """An operator's path as ZooKeeper takes it: absolute, no trailing slash. BadInput else."""
    if not path.startswith("/"):
        raise BadInput(f"a ZooKeeper path starts with '/': {path!r}")
    if path != "/":
        path = path.rstrip("/")
    if "//" in path or any(part in (".", "..") for part in path.split("/")) or "\0" in path:
        raise BadInput(f"not a valid ZooKeeper path: {path!r}")
    return path


def zk_credentials(auth: Optional[str]) -> Optional[ZkAuth]:
    """The operator's `--zk-auth` value parsed (None or "": no credentials); BadInput else."""
    try:
        return parse_zk_auth(auth) if auth else None
    except BadZkAuth as exc:
        raise BadInput(str(exc)) from None


class ZkSession:
    """One ZooKeeper session: `with ZkSession(connect, auth=...) as session: ...`.

    Every request waits at most `timeout_s` (None: DEFAULT_TIMEOUT_S); a session that cannot
    connect within `timeout_s` raises Unreachable from `__enter__`. `auth` is the operator's `--zk-auth` value (None: no
    credentials); a malformed one is BadInput here, before anything connects.
    """

    def __init__(self, connect: str, *, auth: Optional[str] = None, timeout_s: Optional[float] = None) -> None:
        self.connect = connect
        self.timeout_s = DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s
        self._hosts, self.chroot = split_connect(connect)
        self.auth = zk_credentials(auth)
        self.client: Optional[KazooClient] = None

    def __enter__(self) -> "ZkSession":
        if not self._hosts.strip():
            raise BadInput("no ZooKeeper connect string given (use --zk HOST:PORT[/CHROOT] or GROUPCTL_ZK)")
        try:
            client = KazooClient(
                hosts=self._hosts,
                timeout=self.timeout_s,
                connection_retry=dict(max_tries=-1, delay=0.1, backoff=2, max_delay=1.0),
                logger=_KAZOO_LOG,
                auth_data=[(self.auth.scheme, self.auth.credential)] if self.auth else None,
                default_acl=[owner_acl(self.auth)] if self.auth else None,
            )
        except ValueError as exc:
            raise BadInput(f"not a ZooKeeper connect string: {self.connect!r} ({exc})") from None
        try:
            client.start(timeout=self.timeout_s)
        except KazooTimeoutError:
            _stop(client)
            raise Unreachable(f"cannot reach ZooKeeper at {self.connect} within {self.timeout_s:g}s") from None
        client.chroot = self.chroot
        self.client = client
        return self

    def __exit__(self, *exc_info: Any) -> None:
        client, self.client = self.client, None
        if client is not None:
            _stop(client)

    def _call(self, what: str, start: Any) -> Any:
        return self._wait(what, start(), time.monotonic() + self.timeout_s)

    def get(self, path: str) -> Optional[Znode]:
        """The znode at `path`, None when there is none."""
        try:
            data, stat = self._call(f"get {path}", lambda: self.client.get_async(path))
        except NoNodeError:
            return None
        return Znode(path, data or b"", ZnodeStat.from_kazoo(stat))

    def children(self, path: str) -> Optional[list[str]]:
        """The sorted children of `path`, None when there is no such znode."""
        try:
            return sorted(self._call(f"children of {path}", lambda: self.client.get_children_async(path)))
        except NoNodeError:
            return None

    def exists(self, path: str) -> bool:
        return self._call(f"exists {path}", lambda: self.client.exists_async(path)) is not None

    def create(self, path: str, data: bytes) -> bool:
        """Create `path` (and missing parents); False when it already exists."""
        try:
            self._call(f"create {path}", lambda: self.client.create_async(path, data, makepath=True))
        except NodeExistsError:
            return False
        return True

    def set(self, path: str, data: bytes) -> None:
        self._call(f"set {path}", lambda: self.client.set_async(path, data))

    def set_if_version(self, path: str, data: bytes, version: int) -> bool:
        """Write `path` only while it is at `version` (compare-and-set); False when another
        writer changed or deleted it first."""
        try:
            self._call(f"set {path}", lambda: self.client.set_async(path, data, version))
        except (BadVersionError, NoNodeError):
            return False
        return True

    def delete_if_version(self, path: str, version: int) -> bool:
        """Delete `path` only while it is at `version`; False when another writer came first."""
        try:
            self._call(f"delete {path}", lambda: self.client.delete_async(path, version))
        except (BadVersionError, NoNodeError):
            return False
        return True

    def watch(self, path: str, *, deadline: Optional[float] = None) -> Iterator[Optional[bytes]]:
        """The data of `path` now (None while there is no such znode), then again after each
        change, until `time.monotonic()` passes `deadline` (None: never). Changes in quick
        succession may arrive as one. Refused at once when the ACLs keep this session from
        reading `path`, or its parent: a znode still missing there would be unreadable when it
        appears (ZooKeeper answers NoNode, not NoAuth, for a missing znode)."""
        if path != "/":
            self.get(path.rsplit("/", 1)[0] or "/")
        changes: "queue.Queue[Optional[bytes]]" = queue.Queue()
        watching = threading.Event()
        watching.set()

        def on_change(data: Optional[bytes], stat: Any) -> Optional[bool]:
            # kazoo's callback thread: hand over, never block; False ends kazoo's watch.
            if not watching.is_set():
                return False
            changes.put(data if stat is not None else None)
            return None

        try:
            try:
                DataWatch(self.client, path, on_change)  # reads `path` now, on this thread
            except NoAuthError:
                raise Refused(not_permitted(path, write=False, auth=self.auth)) from None
            while True:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return
                try:
                    data = changes.get(timeout=remaining)
                except queue.Empty:
                    return
                yield data
        finally:
            watching.clear()

    def get_many(self, paths: list[str]) -> list[Optional[Znode]]:
        """The znodes at `paths` (None where there is none), in order: `GET_WINDOW` reads in
        flight at once, each window answered within `timeout_s` (one round trip's latency
        per window instead of per znode)."""
        found: list[Optional[Znode]] = []
        for start in range(0, len(paths), GET_WINDOW):
            window = paths[start:start + GET_WINDOW]
            pending = [(path, self.client.get_async(path)) for path in window]
            deadline = time.monotonic() + self.timeout_s
            for path, result in pending:
                try:
                    data, stat = self._wait(f"get {path}", result, deadline)
                except NoNodeError:
                    found.append(None)
                    continue
                found.append(Znode(path, data or b"", ZnodeStat.from_kazoo(stat)))
        return found

    def _wait(self, what: str, result: Any, deadline: float) -> Any:
        """`result`'s value by `deadline`. `what` is "<verb> <path>" ("get /groups/g"): a NoAuth
        answer is Refused naming that path, as not writable for `_WRITES`, else not readable;
        other failures are OpsError or Unreachable."""
        try:
            return result.get(timeout=max(deadline - time.monotonic(), 0.001))
        except (NoNodeError, NodeExistsError, BadVersionError):
            raise
        except NoAuthError:
            verb, _, path = what.partition(" /")
            raise Refused(not_permitted("/" + path, write=verb in _WRITES, auth=self.auth)) from None
        except AuthFailedError:
            raise Refused(f"ZooKeeper at {self.connect} refused the credentials given with --zk-auth") from None
        except _UNREACHABLE as exc:
            raise Unreachable(f"ZooKeeper at {self.connect}: {what}: {type(exc).__name__}") from None
        except KazooException as exc:
            raise OpsError(f"ZooKeeper at {self.connect}: {what}: {type(exc).__name__} {exc}".rstrip()) from None


def _stop(client: KazooClient) -> None:
    client.stop()
    client.close()


