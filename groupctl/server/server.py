"""The asyncio server: accept connections, run the node, shut down cleanly.

Shutdown (SIGTERM/SIGINT, also while starting, or `stop()`): stop accepting, close idle
connections, read no new request, answer the requests already being handled (bounded by
`drain_timeout_s`), then flush the logs and the store. A parked JoinGroup/SyncGroup does not
hold shutdown up: its client sees the connection close and rejoins elsewhere, as with a broker
restart.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import Callable, Optional

import groupctl.server.handlers  # noqa: F401  (registers every API handler)
from groupctl.security.protocols import TLS_PROTOCOLS
from groupctl.server.config import Listener, NodeConfig
from groupctl.server.connection import Connection
from groupctl.server.election import monotonic_ms
from groupctl.server.runtime import Node
from groupctl.server.tls import server_context

log = logging.getLogger("groupctl.server")


class ListenerFailed(Exception):
    """A listener could not be opened; the message names it and why (the port in use, ...)."""


class CoordinatorServer:
    def __init__(self, config: NodeConfig, *, drain_timeout_s: float = 5.0,
                 clock: Callable[[], int] = monotonic_ms) -> None:
        self.config = config
        self.node = Node(config, clock=clock)
        self.drain_timeout_s = drain_timeout_s
        self._servers: list[asyncio.base_events.Server] = []
        self._connections: dict[asyncio.Task, Connection] = {}
        self._stopped = asyncio.Event()
        self.metrics_port: Optional[int] = None  # where /metrics is served, once started with --metrics-port

    @property
    def port(self) -> int:
        """The first listener's bound port."""
        return self.port_of(self.config.all_listeners()[0].name)

    def port_of(self, listener: str) -> int:
        """The port listener `listener` (SSL, SASL_SSL, ...) is bound to."""
        assert listener in self.node.bound_ports, f"listener {listener} not started"
        return self.node.bound_ports[listener]

    @property
    def bootstrap(self) -> str:
        host, port = self.node.advertised()
        return f"{host}:{port}"

    async def start(self) -> None:
        listeners = self.config.all_listeners()
        contexts = {name: server_context(self.config, client_auth=name == "SSL")
                    for name in TLS_PROTOCOLS if any(listener.name == name for listener in listeners)}
        await self.node.load()
        for listener in listeners:
            try:
                server = await asyncio.start_server(
                    lambda reader, writer, listener=listener: self._accept(reader, writer, listener),
                    listener.host, listener.port, reuse_address=True, ssl=contexts.get(listener.name))
            except OSError as exc:
                for opened in self._servers:  # the ones opened so far: nothing listens half-started
                    opened.close()
                raise ListenerFailed(f"cannot open the {listener.name} listener on {listener.host}:"
                                     f"{listener.port}: {exc.strerror or exc}") from None
            self._servers.append(server)
            self.node.bound_ports[listener.name] = server.sockets[0].getsockname()[1]
        await self.node.join_cluster()
        if self.node.metrics is not None and self.config.metrics_port is not None:
            try:
                self.metrics_port = self.node.metrics.serve(self.config.metrics_host, self.config.metrics_port)
            except OSError as exc:
                for opened in self._servers:
                    opened.close()
                raise ListenerFailed(f"cannot serve metrics on {self.config.metrics_host}:"
                                     f"{self.config.metrics_port}: {exc.strerror or exc}") from None
        for name, host, port in self.node.endpoints():
            listener = next(item for item in listeners if item.name == name)
            log.info("node %d listening for %s on %s:%d (advertised %s:%d)", self.config.node_id, name,
                     listener.host, self.node.bound_ports[name], host, port)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, listener: Listener) -> None:
        connection = Connection(self.node, reader, writer, listener)
        task = asyncio.current_task()
        assert task is not None
        self._connections[task] = connection
        metrics = self.node.metrics
        if metrics is not None:
            metrics.connections.inc()
        try:
            await connection.serve()
        except asyncio.CancelledError:
            pass  # stop() cancelled this connection; nothing is left to answer
        finally:
            self._connections.pop(task, None)
            if metrics is not None:
                metrics.connections.dec()

    async def stop(self) -> None:
        if self._stopped.is_set():
            return
        self._stopped.set()
        for server in self._servers:
            server.close()
        self.node.stopping = True
        # Idle connections are waiting for a request that will not be read: close them now.
        for task, connection in list(self._connections.items()):
            if not connection.busy:
                task.cancel()
        # Requests waiting for a store write get their answers; parked JoinGroup/SyncGroup fail
        # (their clients rejoin elsewhere, as after a broker restart).
        await self.node.quiesce(self.drain_timeout_s)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.drain_timeout_s
        while any(c.busy for c in self._connections.values()) and loop.time() < deadline:
            await asyncio.sleep(0.01)
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await self.node.close()
        if self.node.metrics is not None:
            self.node.metrics.close()
        log.info("node %d stopped", self.config.node_id)

    async def run(self, on_ready: Callable[[], None] = lambda: None) -> None:
        """Start, then serve until SIGTERM/SIGINT (`serve_forever`). The signal handlers are
        installed before the start, so a signal while the node starts (opening its store,
        registering, waiting for the group partitions to settle) abandons the start and stops as
        cleanly as a signal after it: the store session is closed, so a ZooKeeper registration goes
        at once. A start that fails closes the node and raises."""
        loop = asyncio.get_running_loop()
        stop_requested = asyncio.Event()
        _handle_stop_signals(loop, stop_requested.set)
        starting = loop.create_task(self.start())
        waiting = loop.create_task(stop_requested.wait())
        try:
            await asyncio.wait((starting, waiting), return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiting.cancel()
        if not starting.done():
            log.info("node %d: stop requested while starting", self.config.node_id)
            starting.cancel()
            await asyncio.gather(starting, return_exceptions=True)
            _restore_stop_signals(loop)
            await self.stop()
            return
        if starting.exception() is not None:
            _restore_stop_signals(loop)
            await self.node.close()
            if self.node.metrics is not None:
                self.node.metrics.close()
            raise starting.exception()
        await self.serve_forever(on_ready, stop_requested)

    async def serve_forever(self, on_ready: Callable[[], None] = lambda: None,
                            stop_requested: Optional[asyncio.Event] = None) -> None:
        """Run until SIGTERM/SIGINT, then stop cleanly. `on_ready` runs once the signal handlers
        are installed, so a signal sent as soon as the node says it is ready is handled.
        `stop_requested`: the event `run` already set the handlers to (a signal during the start
        is not lost)."""
        loop = asyncio.get_running_loop()
        if stop_requested is None:
            stop_requested = asyncio.Event()
            _handle_stop_signals(loop, stop_requested.set)
        try:
            on_ready()
            await stop_requested.wait()
        finally:
            _restore_stop_signals(loop)  # a second signal while stopping ends the process at once
            await self.stop()


_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _handle_stop_signals(loop: asyncio.AbstractEventLoop, handler: Callable[[], None]) -> None:
    for sig in _STOP_SIGNALS:
        loop.add_signal_handler(sig, handler)


def _restore_stop_signals(loop: asyncio.AbstractEventLoop) -> None:
    for sig in _STOP_SIGNALS:
        loop.remove_signal_handler(sig)
