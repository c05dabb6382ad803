"""The simulated members' way to their group's coordinator: FindCoordinator through the bootstrap
servers, then a pool of connections to the coordinator that the members share.

Members are spread over the pool by slot (`slot % size`). Consumer-protocol heartbeats are answered
at once, so many members can share a connection (the broker answers a connection's requests one at
a time, in order); a classic JoinGroup waits for the whole rebalance, so each classic member has a
slot of its own, as each real consumer has its own coordinator connection.

Invariants:
- `send` always returns a future that ends: with the response, or with ConnectionFailed (the
  coordinator is unknown and cannot be found, or the connection failed). A caller that gets
  ConnectionFailed calls `rediscover(seen)`, passing the `epoch` it sent at.
- The link's `epoch` counts coordinator discoveries. A rediscovery asked with a `seen` epoch older
  than the current one is already done; otherwise at most one discovery runs at a time and every
  caller waiting for it is told (`when_found`) once it ends.
- Rediscovery (members that lost the coordinator) retries with a doubling backoff (50 ms to 1 s)
  for as long as the link is open; the first discovery (`find`) is bounded in time. A rediscovery
  asked within CALM_S of the last one waits first (doubling, 50 ms to 1 s): a coordinator that
  keeps refusing while FindCoordinator keeps naming it is not asked at the speed of its answers.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Optional

from groupctl.client.aio import DEFAULT_REQUEST_TIMEOUT_S, AsyncConnection
from groupctl.client.kafka import (CLIENT_ID, FIND_COORDINATOR, BootstrapLike, ConnectionFailed,
                                   Node, as_bootstrap, error_name, message_classes, parse_bootstrap)
from groupctl.errors import OpsError, Unreachable

FIRST_BACKOFF_S = 0.05
MAX_BACKOFF_S = 1.0
CALM_S = 5.0  # a rediscovery this long after the last one starts at once; sooner ones back off


class BootstrapUnreachable(Unreachable):
    """No bootstrap server accepted a connection."""


class CoordinatorLink:
    def __init__(self, bootstrap: BootstrapLike, group: str, size: int, *, client_id: str = CLIENT_ID,
                 request_timeout: float = DEFAULT_REQUEST_TIMEOUT_S) -> None:
        self.group = group
        self.size = max(1, size)
        self.client_id = client_id
        self.request_timeout = request_timeout
        self.epoch = 0
        self.coordinator: Optional[Node] = None
        self.last_error = ""
        target = as_bootstrap(bootstrap)
        self.bootstrap = target.servers
        self._security = target.security
        self._tls = target.security.ssl_context() if target.security.tls else None
        self._addresses = parse_bootstrap(target.servers)
        self._bootstrap: Optional[AsyncConnection] = None
        self._pool: list[Optional[AsyncConnection]] = [None] * self.size
        self._opening: dict[int, tuple[int, asyncio.Future]] = {}  # slot -> (link epoch, connection being opened)
        self._finding: Optional[asyncio.Task] = None
        self._waiting: list[Callable[[], None]] = []
        self._closed = False
        self._found_at = -CALM_S  # when the last (re)discovery ended
        self._pause = FIRST_BACKOFF_S  # the wait before a rediscovery that follows the last one closely

    # -- discovery -------------------------------------------------------------------------

    async def find(self, timeout_s: float) -> Node:
        """Find the coordinator the first time, as the one-shot commands do: a bootstrap that cannot
        be reached fails at once; a cluster without a coordinator for the group yet is asked again
        (with backoff) for at most `timeout_s`. Unreachable names the last failure."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        backoff = FIRST_BACKOFF_S
        while True:
            try:
                self.coordinator = await asyncio.wait_for(self._ask_bootstrap(), max(0.001, deadline - loop.time()))
                self.epoch += 1
                self._found_at = loop.time()
                return self.coordinator
            except BootstrapUnreachable:
                raise
            except asyncio.TimeoutError:
                raise Unreachable(f"no coordinator for group '{self.group}' within {timeout_s:g}s: "
                                  f"{self.last_error or 'no answer'}") from None
            except OpsError as exc:
                failure = self.last_error = exc.message
            if loop.time() + backoff >= deadline:
                raise Unreachable(f"{failure} (for {timeout_s:g}s)")
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_S)

    def rediscover(self, seen: int) -> None:
        """A request sent at link epoch `seen` failed for want of the coordinator: find it again,
        unless that was done since."""
        if self._closed or seen < self.epoch or self._finding is not None:
            return
        self.coordinator = None
        for slot, connection in enumerate(self._pool):
            if connection is not None:
                connection.close("the coordinator is being looked up again")
                self._pool[slot] = None
        self._start_finding()

    def when_found(self, callback: Callable[[], None]) -> None:
        """Call `callback` (soon) once the coordinator is known."""
        if self.coordinator is not None and self._finding is None:
            asyncio.get_running_loop().call_soon(callback)
        else:
            self._waiting.append(callback)

    def _start_finding(self) -> None:
        if self._finding is None and not self._closed:
            self._finding = asyncio.get_running_loop().create_task(self._find_until_found())

    async def _find_until_found(self) -> None:
        loop = asyncio.get_running_loop()
        # A coordinator that keeps answering NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE while
        # FindCoordinator names it again would otherwise be asked at the speed of its answers.
        calm = loop.time() - self._found_at >= CALM_S
        self._pause = FIRST_BACKOFF_S if calm else min(self._pause * 2, MAX_BACKOFF_S)
        if not calm:
            await asyncio.sleep(self._pause)
        backoff = FIRST_BACKOFF_S
        try:
            while not self._closed:
                try:
                    self.coordinator = await self._ask_bootstrap()
                    self.epoch += 1
                    self._found_at = loop.time()
                    return
                except OpsError as exc:
                    self.last_error = exc.message
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
        finally:
            self._finding = None
            waiting, self._waiting = self._waiting, []
            for callback in waiting:
                loop.call_soon(callback)  # each on its own: one that raises drops nobody else

    async def _ask_bootstrap(self) -> Node:
        connection = await self.bootstrap_connection()

        def build(cls: type, version: int) -> Any:
            if version >= 4:
                return cls(key_type=0, coordinator_keys=[self.group])
            return cls(key=self.group, key_type=0)

        try:
            response = await connection.call(FIND_COORDINATOR, (0, 4), build)
        except ConnectionFailed:
            self._bootstrap = None
            raise
        answer = response.coordinators[0] if response.version >= 4 else response
        if answer.error_code != 0:  # retried whatever it is: the cluster may still be starting
            raise Unreachable(f"no coordinator for group '{self.group}': {error_name(answer.error_code)}")
        return Node(answer.node_id, answer.host, answer.port)

    async def bootstrap_connection(self) -> AsyncConnection:
        """A connection to a bootstrap server (for Metadata and FindCoordinator)."""
        if self._bootstrap is not None and not self._bootstrap.closed:
            return self._bootstrap
        reason = "no address"
        for host, port in self._addresses:
            try:
                self._bootstrap = await self._connect(Node(-1, host, port))
                return self._bootstrap
            except ConnectionFailed as exc:
                reason = exc.message
        raise BootstrapUnreachable(f"cannot reach bootstrap {self.bootstrap}: {reason}")

    # -- requests --------------------------------------------------------------------------

    def send(self, slot: int, key: int, versions: tuple[int, int], build: Callable[[type, int], Any]) -> asyncio.Future:
        """Send a request to the coordinator on `slot`'s connection (opened on demand)."""
        index = slot % self.size
        connection = self._pool[index]
        if connection is not None and not connection.closed:
            return self._send_on(connection, key, versions, build)
        return asyncio.ensure_future(self._send_after_open(index, key, versions, build))

    def _send_on(self, connection: AsyncConnection, key: int, versions: tuple[int, int], build: Callable) -> asyncio.Future:
        version = connection.version_for(key, versions)
        return connection.send(key, version, build(message_classes(key)[0][version], version))

    async def _send_after_open(self, index: int, key: int, versions: tuple[int, int], build: Callable) -> Any:
        connection = await self._open(index)
        return await self._send_on(connection, key, versions, build)

    async def _open(self, index: int) -> AsyncConnection:
        """The connection of slot `index`, opened once however many wait for it (each waits through
        a shield: one waiter cancelled, by a bounded check, cancels nobody else's). A connection to a
        coordinator that was replaced while it opened is closed instead of kept."""
        entry = self._opening.get(index)
        if entry is None or entry[0] != self.epoch:  # none, or one to a coordinator replaced since
            if self.coordinator is None or self._closed:
                raise ConnectionFailed(f"no coordinator known for group '{self.group}'", None)
            entry = self._opening[index] = (self.epoch, asyncio.ensure_future(self._open_at(index, self.epoch)))
        return await asyncio.shield(entry[1])

    async def _connect(self, node: Node) -> AsyncConnection:
        return await AsyncConnection.open(node, client_id=self.client_id, request_timeout=self.request_timeout,
                                          security=self._security, tls=self._tls)

    async def _open_at(self, index: int, epoch: int) -> AsyncConnection:
        try:
            connection = await self._connect(self.coordinator)
        finally:
            if self._opening.get(index, (None,))[0] == epoch:
                del self._opening[index]
        if epoch != self.epoch or self._closed:
            connection.close()
            raise ConnectionFailed(f"the coordinator of group '{self.group}' changed while connecting", None)
        self._pool[index] = connection
        return connection

    def close(self) -> None:
        self._closed = True
        if self._finding is not None:
            self._finding.cancel()
        for _, opening in self._opening.values():
            opening.cancel()
        for connection in [*self._pool, self._bootstrap]:
            if connection is not None:
                connection.close()
        self._pool = [None] * self.size
