"""The ZooKeeper metadata store: kazoo on its threading handler, bridged to asyncio.

Invariants:
- Nothing blocks the event loop: operations go out through kazoo's `*_async` API (which only
  queues them) and their outcomes come back with `loop.call_soon_threadsafe`; kazoo's blocking
  parts (a DataWatch's first read, `stop()`) run on threads of their own. Watch and session
  callbacks run on the event loop, never on kazoo's threads.
- Paths are relative to the connect string's chroot, created on start when missing (kazoo only warns).
- Failures are the store's exceptions: NoNode, NodeExists, BadVersion, NotEmpty, and
  StoreUnavailable for connection loss, session expiry, a closed client, or no answer within the
  session timeout (a write's outcome is then unknown: compare-and-set makes a retry safe).
- A failed transaction raises its first failing op's error; the RolledBackError or
  RuntimeInconsistency ZooKeeper reports for the other ops is not the cause and is skipped.
- After a session expiry kazoo reconnects with a new session, but this node's ephemeral nodes
  are gone: `on_session_lost` tells the runtime, which must register again.
- With credentials (`auth`, docs/security.md) every session authenticates with them, and every
  znode this store creates (the chroot, parents made on the way, transaction creates) carries
  `znode_acl`: all rights for that digest identity, nothing for anyone else, or read for anyone
  (`world_readable`) except below `PRIVATE_PATHS`. Without credentials znodes stay open
  (OPEN_ACL_UNSAFE), as before. A NoAuth answer is AccessDenied naming the path, read or write.
- kazoo logs each request it sends at DEBUG, the authentication packet with the password too:
  the loggers handed to kazoo carry `HideCredentials`.

`transaction`, every offset commit's path, builds kazoo's wire request itself (chroot prefixed) and
queues it with `KazooClient._call`, skipping kazoo's completion thread: one thread hop, not two.
These internals are stable across kazoo 2.x and pinned (kazoo==2.11.0 in pyproject.toml);
tests/store runs them against a real ZooKeeper.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any, Callable, Optional

from kazoo.client import KazooClient
from kazoo.exceptions import (
    AuthFailedError,
    BadVersionError,
    ConnectionLoss,
    KazooException,
    NoAuthError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    OperationTimeoutError,
    RolledBackError,
    RuntimeInconsistency,
    SessionExpiredError,
    SessionMovedError,
    ZookeeperStoppedError,
)
from kazoo.protocol import serialization as wire
from kazoo.protocol.states import KazooState
from kazoo.recipe.watchers import ChildrenWatch, DataWatch
from kazoo.security import ACL, ANYONE_ID_UNSAFE, OPEN_ACL_UNSAFE, Permissions, make_digest_acl

from groupctl import defaults
from groupctl.layout.acls import EXTENDED_ROOT, LITERAL_ROOT
from groupctl.layout.paths import GROUPS, USERS
from groupctl.store.base import (
    AccessDenied,
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
from groupctl.store.zk_auth import ZkAuth, not_permitted

log = logging.getLogger(__name__)

_UNAVAILABLE = (ConnectionLoss, SessionExpiredError, SessionMovedError, OperationTimeoutError,
                ZookeeperStoppedError)
_NOT_THE_CAUSE = (RolledBackError, RuntimeInconsistency)

WATCH_RETRY_S = 5.0
"""How often a watch on a znode ZooKeeper will not let this client read (NoAuth) is tried again."""

PRIVATE_PATHS = (USERS,)
"""Never readable by anyone but groupctl's identity, even with `world_readable`: credentials.
(Kafka's sensitive root paths, the same rule as its zookeeper.set.acl.)"""


def owner_acl(auth: ZkAuth) -> ACL:
    """All rights for `auth`'s digest identity: `digest:USER:base64(sha1(USER:PASSWORD))`."""
    return make_digest_acl(auth.user, auth.password, all=True)


def znode_acl(owner: ACL, path: str, *, world_readable: bool = False) -> list[ACL]:
    """The ACL of a znode groupctl creates at `path`: `owner` (`owner_acl`); also read for
    anyone when `world_readable`, unless under `PRIVATE_PATHS`."""
    acl = [owner]
    if world_readable and not any(path == p or path.startswith(p + "/") for p in PRIVATE_PATHS):
        acl.append(ACL(Permissions.READ, ANYONE_ID_UNSAFE))
    return acl


class HideCredentials(logging.Filter):
    """On a logger kazoo writes to: shows its authentication requests without the credential
    (kazoo logs every request it sends at DEBUG, `Auth(..., auth='USER:PASSWORD')` included)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any(isinstance(arg, wire.Auth) for arg in record.args):
            record.args = tuple(f"Auth(scheme={arg.scheme!r}, auth=<hidden>)" if isinstance(arg, wire.Auth) else arg
                                for arg in record.args)
        return True


def kazoo_logger(name: str) -> logging.Logger:
    """The logger `name` for a KazooClient, with `HideCredentials` on it (once)."""
    logger = logging.getLogger(name)
    if not any(isinstance(f, HideCredentials) for f in logger.filters):
        logger.addFilter(HideCredentials())
    return logger


def split_connect(connect: str) -> tuple[str, str]:
    """`"h1:2181,h2:2181/app"` -> (`"h1:2181,h2:2181"`, `"/app"`); no chroot -> `""`."""
    hosts, slash, chroot = connect.partition("/")
    chroot = ("/" + chroot).rstrip("/") if slash else ""
    return hosts, chroot


def _translate(exc: BaseException, what: str, denied: Optional[str] = None) -> BaseException:
    """kazoo's `exc` for request `what` as the store's exception; `denied` is the message for
    a NoAuth answer (which path, read or write, with what credentials)."""
    if isinstance(exc, NoAuthError) and denied is not None:
        mapped: BaseException = AccessDenied(denied)
    elif isinstance(exc, AuthFailedError):
        mapped = StoreError(f"{what}: ZooKeeper refused the credentials given with --zk-auth (AuthFailed)")
    elif isinstance(exc, NoNodeError):
        mapped = NoNode(what)
    elif isinstance(exc, NodeExistsError):
        mapped = NodeExists(what)
    elif isinstance(exc, BadVersionError):
        mapped = BadVersion(what)
    elif isinstance(exc, NotEmptyError):
        mapped = NotEmpty(what)
    elif isinstance(exc, _UNAVAILABLE):
        mapped = StoreUnavailable(f"{what}: {type(exc).__name__}")
    elif isinstance(exc, KazooException):
        mapped = StoreError(f"{what}: {type(exc).__name__} {exc}".rstrip())
    else:
        return exc
    mapped.__cause__ = exc
    return mapped


class _LoopResult:
    """The completing half of kazoo's IAsyncResult (`set`, `set_exception`): called on one of
    kazoo's threads, it settles `future` on the event loop, mapping kazoo's exceptions to the
    store's (`denied`: the message for NoAuth). Outcomes after the future is done (timed out)
    are dropped."""

    __slots__ = ("_loop", "_future", "_what", "_denied")

    def __init__(self, loop: asyncio.AbstractEventLoop, future: asyncio.Future, what: str,
                 denied: Optional[str] = None) -> None:
        self._loop = loop
        self._future = future
        self._what = what
        self._denied = denied

    def set(self, value: Any = None) -> None:
        self._post(value, None)

    def set_exception(self, exception: BaseException) -> None:
        self._post(None, exception)

    def _post(self, value: Any, exception: Optional[BaseException]) -> None:
        try:
            self._loop.call_soon_threadsafe(self._settle, value, exception)
        except RuntimeError:
            pass  # the loop is gone; nobody awaits this any more

    def _settle(self, value: Any, exception: Optional[BaseException]) -> None:
        if self._future.done():
            return
        if exception is None:
            self._future.set_result(value)
        else:
            self._future.set_exception(_translate(exception, self._what, self._denied))


class ZooKeeperStore:
    """A MetadataStore on a ZooKeeper ensemble.

    `session_timeout_s` is the ZooKeeper session timeout and also how long one operation may
    wait for an answer; `connect_timeout_s` bounds `start()`. With `auth`, the session
    authenticates and the znodes it creates carry `znode_acl` (`world_readable`: anyone may read).
    """

    def __init__(self, connect: str, *, auth: Optional[ZkAuth] = None, world_readable: bool = False,
                 session_timeout_s: float = defaults.ZK_SESSION_TIMEOUT_S, connect_timeout_s: float = 10.0) -> None:
        self.connect = connect
        self._hosts, self._chroot = split_connect(connect)
        self._auth = auth
        self._owner = owner_acl(auth) if auth is not None else None
        self._world_readable = world_readable
        self._session_timeout_s = session_timeout_s
        self._connect_timeout_s = connect_timeout_s
        self._client: Optional[KazooClient] = None
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._open = False
        self._closing = False
        self._connected: Optional[asyncio.Future] = None
        self._session_lost: list[Callable[[], None]] = []
        self._connection_listeners: list[Callable[[bool], None]] = []
        self._suspended = False  # the connection dropped and has not come back yet

    async def start(self) -> None:
        """Connect (bounded by `connect_timeout_s`) and make sure the chroot exists."""
        self._loop = asyncio.get_running_loop()
        self._connected = self._loop.create_future()
        # The chroot is applied only once it exists: kazoo prefixes every path with it.
        client = KazooClient(
            hosts=self._hosts,
            timeout=self._session_timeout_s,
            connection_retry=dict(max_tries=-1, delay=0.1, backoff=2, max_delay=1.0),
            auth_data=[(self._auth.scheme, self._auth.credential)] if self._auth else None,
            logger=kazoo_logger("kazoo.client"),
        )
        client.add_listener(self._on_kazoo_state)
        self._client = client
        client.start_async()
        try:
            await asyncio.wait_for(asyncio.shield(self._connected), self._connect_timeout_s)
        except TimeoutError:
            await self._shutdown_client()
            raise StoreUnavailable(
                f"cannot reach ZooKeeper at {self.connect} within {self._connect_timeout_s:g}s"
            ) from None
        self._open = True
        if self._chroot:
            try:
                await self._call(f"create chroot {self._chroot}",
                                 lambda: client.ensure_path_async(self._chroot, self._acl(self._chroot)),
                                 denied=self._denied(self._chroot, write=True))
            except BaseException:
                await self.close()
                raise
            client.chroot = self._chroot
        if self._owner is not None:
            await self._warn_if_open()

    async def _warn_if_open(self) -> None:
        """With credentials: warn for each of `/groups`, `/config/users` and the ACL roots that is
        writable by anyone (a tree from before --zk-auth, or credentials or ACLs written by a tool
        without it). Znodes keep the ACL they were created with; this store changes none."""
        client = self._client
        for path in (GROUPS, USERS, LITERAL_ROOT, EXTENDED_ROOT):
            try:
                acl, _ = await self._call(f"ACL of {path}", lambda path=path: client.get_acls_async(path))
            except StoreError:
                continue  # none yet (a new tree), or not readable with these credentials: later requests say so
            if any(entry.id == ANYONE_ID_UNSAFE and entry.perms & ~Permissions.READ for entry in acl):
                log.warning("%s%s and the znodes under it are writable by anyone (created without ZooKeeper "
                            "authentication): groupctl puts ACLs only on the znodes it creates; close them as "
                            "docs/security.md says (ZooKeeper authentication and ACLs)", self._chroot, path)

    async def close(self) -> None:
        """End the session: this store's ephemeral nodes go away."""
        if self._client is None:
            return
        self._open = False
        await self._shutdown_client()

    @property
    def session_state(self) -> str:
        """The ZooKeeper session's state as kazoo names it (CONNECTED, SUSPENDED, LOST), or
        CLOSED before the start and after `close` (the node's metrics report it)."""
        return str(self._client.state) if self._client is not None else "CLOSED"

    def on_session_lost(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback()` on the event loop whenever ZooKeeper expires this session (not on
        `close()`); returns an unsubscribe function."""
        self._session_lost.append(callback)

        def unsubscribe() -> None:
            if callback in self._session_lost:
                self._session_lost.remove(callback)

        return unsubscribe

    def on_connection_change(self, callback: Callable[[bool], None]) -> Callable[[], None]:
        """Call `callback(False)` on the event loop when the connection to ZooKeeper drops (the
        session may be expiring meanwhile), and `callback(True)` when it is back (same session,
        or a new one after a loss, which `on_session_lost` reports first); returns an
        unsubscribe function."""
        self._connection_listeners.append(callback)

        def unsubscribe() -> None:
            if callback in self._connection_listeners:
                self._connection_listeners.remove(callback)

        return unsubscribe

    async def get(self, path: str) -> Optional[Node]:
        client = self._require()
        try:
            data, stat = await self._call(f"get {path}", lambda: client.get_async(path),
                                          denied=self._denied(path, write=False))
        except NoNode:
            return None
        return Node(data or b"", stat.version)

    async def children(self, path: str) -> list[str]:
        client = self._require()
        return sorted(await self._call(f"children of {path}", lambda: client.get_children_async(path),
                                       denied=self._denied(path, write=False)))

    async def create(self, path: str, data: bytes = b"", *, ephemeral: bool = False,
                     make_parents: bool = False) -> int:
        client = self._require()
        await self._call(f"create {path}", lambda: client.create_async(
            path, data, acl=self._acl(path), ephemeral=ephemeral, makepath=make_parents),
            denied=self._denied(path, write=True))
        return 0

    async def set_if_version(self, path: str, data: bytes, version: int) -> int:
        client = self._require()
        stat = await self._call(f"set {path} at version {version}",
                                lambda: client.set_async(path, data, version),
                                denied=self._denied(path, write=True))
        return stat.version

    async def delete_if_version(self, path: str, version: int = -1) -> None:
        client = self._require()
        await self._call(f"delete {path} at version {version}",
                         lambda: client.delete_async(path, version),
                         denied=self._denied(path, write=True))

    async def transaction(self, ops: list[Op]) -> list[int]:
        client = self._require()
        if not ops:
            return []
        root = client.chroot  # "" until the chroot exists; paths are absolute and normalized
        request = []
        for op in ops:
            kind = type(op)
            if kind is SetData:
                request.append(wire.SetData(root + op.path, op.data, op.version))
            elif kind is Create:
                request.append(wire.Create(root + op.path, op.data, self._acl(op.path), 1 if op.ephemeral else 0))
            elif kind is Delete:
                request.append(wire.Delete(root + op.path, op.version))
            elif kind is CheckVersion:
                request.append(wire.CheckVersion(root + op.path, op.version))
            else:
                raise TypeError(f"not a store op: {op!r}")
        what = f"transaction of {len(ops)} ops"
        future = self._loop.create_future()
        client._call(wire.Transaction(request), _LoopResult(self._loop, future, what))
        results = await self._answer(what, future)
        failures = [(i, r) for i, r in enumerate(results) if isinstance(r, BaseException)]
        for index, exc in failures:
            if not isinstance(exc, _NOT_THE_CAUSE):
                op = ops[index]
                raise _translate(exc, f"transaction op {index} ({type(op).__name__} {op.path})",
                                 self._denied(op.path, write=type(op) is not CheckVersion))
        if failures:
            raise StoreError(f"transaction rolled back without a cause: {results!r}")
        versions = []
        for op, result in zip(ops, results):
            if type(op) is SetData:
                versions.append(result.version)
            elif type(op) is Create:
                versions.append(0)
            else:
                versions.append(-1)
        return versions

    def watch(self, path: str, callback: WatchCallback) -> Callable[[], None]:
        """kazoo DataWatch semantics: the current state first, then the state after each change
        ZooKeeper notifies (changes in quick succession may be seen as one); survives
        reconnections. After unsubscribing, nothing more is delivered."""
        return self._bridge_watch(
            DataWatch, path, callback,
            lambda data, stat, event=None: Node(data or b"", stat.version) if stat is not None else None)

    def watch_children(self, path: str, callback: ChildrenCallback) -> Callable[[], None]:
        """kazoo ChildrenWatch semantics: the current children first, then the children after
        each change ZooKeeper notifies; survives reconnections; ends when `path` is missing or
        deleted. After unsubscribing, nothing more is delivered."""
        return self._bridge_watch(ChildrenWatch, path, callback, lambda children: sorted(children))

    def _bridge_watch(self, recipe: Any, path: str, callback: Callable[[Any], None],
                      convert: Callable[..., Any]) -> Callable[[], None]:
        """Run a kazoo watch recipe and deliver `convert(*its arguments)` to `callback` on the
        event loop; returns the unsubscribe function."""
        client = self._require()
        loop = self._loop
        unsubscribed = threading.Event()

        def deliver(value: Any) -> None:
            if not unsubscribed.is_set():
                callback(value)

        def on_change(*args: Any) -> Optional[bool]:
            # On kazoo's callback thread: hand over to the loop; False ends kazoo's watch.
            if unsubscribed.is_set():
                return False
            try:
                loop.call_soon_threadsafe(deliver, convert(*args))
            except RuntimeError:  # the event loop is closed
                return False
            return None

        def establish() -> None:
            # The recipe reads the node when constructed (so: not on the event loop). A read
            # ZooKeeper refuses (NoAuth) leaves no watch: try again until its ACL lets us read.
            while not unsubscribed.is_set():
                try:
                    recipe(client, path, on_change)
                    return
                except NoAuthError:
                    unsubscribed.wait(WATCH_RETRY_S)

        client.handler.spawn(establish)
        return unsubscribed.set

    # -- internals -------------------------------------------------------------------------

    def _acl(self, path: str) -> list[ACL]:
        """The ACL a znode this store creates at `path` gets."""
        if self._owner is None:
            return OPEN_ACL_UNSAFE
        return znode_acl(self._owner, path, world_readable=self._world_readable)

    def _denied(self, path: str, *, write: bool) -> str:
        return not_permitted(path, write=write, auth=self._auth)

    def _require(self) -> KazooClient:
        if not self._open or self._client is None:
            raise StoreUnavailable(f"the ZooKeeper store for {self.connect} is not open")
        return self._client

    async def _call(self, what: str, start: Callable[[], Any], *, denied: Optional[str] = None) -> Any:
        """Issue one kazoo async request and await its outcome on the event loop (`denied`:
        the message should ZooKeeper answer NoAuth)."""
        loop = self._loop
        future = loop.create_future()
        result = _LoopResult(loop, future, what, denied)

        def settle(outcome: Any) -> None:  # kazoo's completion thread
            if outcome.successful():
                result.set(outcome.value)
            else:
                result.set_exception(outcome.exception)

        try:
            start().rawlink(settle)
        except KazooException as exc:
            raise _translate(exc, what, denied) from exc
        return await self._answer(what, future)

    async def _answer(self, what: str, future: asyncio.Future) -> Any:
        """`future`'s outcome, or StoreUnavailable after the session timeout."""
        timeout = self._loop.call_later(self._session_timeout_s, self._expire, what, future)
        try:
            return await future
        finally:
            timeout.cancel()

    def _expire(self, what: str, future: asyncio.Future) -> None:
        if not future.done():
            future.set_exception(StoreUnavailable(
                f"{what}: no answer from ZooKeeper at {self.connect} within {self._session_timeout_s:g}s"))

    def _on_kazoo_state(self, state: str) -> None:
        """kazoo's state listener (its thread): forward to the loop, never block."""
        try:
            self._loop.call_soon_threadsafe(self._state_changed, state)
        except RuntimeError:
            pass

    def _state_changed(self, state: str) -> None:
        if state == KazooState.CONNECTED and not self._connected.done():
            self._connected.set_result(None)
        if self._open and not self._closing and state in (KazooState.SUSPENDED, KazooState.CONNECTED):
            connected = state == KazooState.CONNECTED
            if connected == self._suspended:  # a change: suspended, or connected again
                self._suspended = not connected
                for listener in list(self._connection_listeners):
                    listener(connected)
        if state == KazooState.LOST and self._open and not self._closing:
            log.warning("ZooKeeper session at %s lost; ephemeral nodes are gone", self.connect)
            for callback in list(self._session_lost):
                callback()

    async def _shutdown_client(self) -> None:
        client, self._client = self._client, None
        self._closing = True

        def stop() -> None:
            client.stop()
            client.close()

        await self._loop.run_in_executor(None, stop)
