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

`transaction`, every offset commit's path, builds kazoo's wire request itself (chroot prefixed) and
queues it with `KazooClient._call`, skipping kazoo's completion thread: one thread hop, not two.
These internals are stable across kazoo 2.x and pinned (kazoo==2.11.0 in pyproject.toml);
tests/store runs them against a real ZooKeeper.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable, Optional

from kazoo.client import KazooClient
from kazoo.exceptions import (
    BadVersionError,
    ConnectionLoss,
    KazooException,
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
from kazoo.security import OPEN_ACL_UNSAFE

from groupctl import defaults
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

_UNAVAILABLE = (ConnectionLoss, SessionExpiredError, SessionMovedError, OperationTimeoutError,
                ZookeeperStoppedError)
_NOT_THE_CAUSE = (RolledBackError, RuntimeInconsistency)


def split_connect(connect: str) -> tuple[str, str]:
    """`"h1:2181,h2:2181/app"` -> (`"h1:2181,h2:2181"`, `"/app"`); no chroot -> `""`."""
    hosts, slash, chroot = connect.partition("/")
    chroot = ("/" + chroot).rstrip("/") if slash else ""
    return hosts, chroot


def _translate(exc: BaseException, what: str) -> BaseException:
    if isinstance(exc, NoNodeError):
        mapped: BaseException = NoNode(what)
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
    store's. Outcomes after the future is done (timed out) are dropped."""

    __slots__ = ("_loop", "_future", "_what")

    def __init__(self, loop: asyncio.AbstractEventLoop, future: asyncio.Future, what: str) -> None:
        self._loop = loop
        self._future = future
        self._what = what

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
            self._future.set_exception(_translate(exception, self._what))


class ZooKeeperStore:
    """A MetadataStore on a ZooKeeper ensemble.

    `session_timeout_s` is the ZooKeeper session timeout and also how long one operation may
    wait for an answer; `connect_timeout_s` bounds `start()`.
    """

    def __init__(self, connect: str, *, session_timeout_s: float = defaults.ZK_SESSION_TIMEOUT_S,
                 connect_timeout_s: float = 10.0) -> None:
        self.connect = connect
        self._hosts, self._chroot = split_connect(connect)
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
                                 lambda: client.ensure_path_async(self._chroot))
            except BaseException:
                await self.close()
                raise
            client.chroot = self._chroot

    async def close(self) -> None:
        """End the session: this store's ephemeral nodes go away."""
        if self._client is None:
            return
        self._open = False
        await self._shutdown_client()

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
            data, stat = await self._call(f"get {path}", lambda: client.get_async(path))
        except NoNode:
            return None
        return Node(data or b"", stat.version)

    async def children(self, path: str) -> list[str]:
        client = self._require()
        return sorted(await self._call(f"children of {path}", lambda: client.get_children_async(path)))

    async def create(self, path: str, data: bytes = b"", *, ephemeral: bool = False,
                     make_parents: bool = False) -> int:
        client = self._require()
        await self._call(f"create {path}", lambda: client.create_async(
            path, data, ephemeral=ephemeral, makepath=make_parents))
        return 0

    async def set_if_version(self, path: str, data: bytes, version: int) -> int:
        client = self._require()
        stat = await self._call(f"set {path} at version {version}",
                                lambda: client.set_async(path, data, version))
        return stat.version

    async def delete_if_version(self, path: str, version: int = -1) -> None:
        client = self._require()
        await self._call(f"delete {path} at version {version}",
                         lambda: client.delete_async(path, version))

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
                request.append(wire.Create(root + op.path, op.data, OPEN_ACL_UNSAFE, 1 if op.ephemeral else 0))
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
                raise _translate(exc, f"transaction op {index} ({type(op).__name__} {op.path})")
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
        active = True

        def deliver(value: Any) -> None:
            if active:
                callback(value)

        def on_change(*args: Any) -> Optional[bool]:
            # On kazoo's callback thread: hand over to the loop; False ends kazoo's watch.
            if not active:
                return False
            try:
                loop.call_soon_threadsafe(deliver, convert(*args))
            except RuntimeError:  # the event loop is closed
                return False
            return None

        def unsubscribe() -> None:
            nonlocal active
            active = False

        # The recipe reads the node synchronously when constructed: not on the event loop.
        client.handler.spawn(recipe, client, path, on_change)
        return unsubscribe

    # -- internals -------------------------------------------------------------------------

    def _require(self) -> KazooClient:
        if not self._open or self._client is None:
            raise StoreUnavailable(f"the ZooKeeper store for {self.connect} is not open")
        return self._client

    async def _call(self, what: str, start: Callable[[], Any]) -> Any:
        """Issue one kazoo async request and await its outcome on the event loop."""
        loop = self._loop
        future = loop.create_future()
        result = _LoopResult(loop, future, what)

        def settle(outcome: Any) -> None:  # kazoo's completion thread
            if outcome.successful():
                result.set(outcome.value)
            else:
                result.set_exception(outcome.exception)

        try:
            start().rawlink(settle)
        except KazooException as exc:
            raise _translate(exc, what) from exc
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
