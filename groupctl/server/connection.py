"""One client connection: read frames, dispatch them one at a time, write responses in order.

Like a Kafka broker's muted channel, a connection has at most one request in its handler at a
time, so responses leave in request order and a parked JoinGroup holds only its own connection.
Frames are read ahead into the socket buffer, so pipelined clients still keep the loop busy.
Responses are queued and handed to the transport together when the task yields to the event
loop, so a burst of pipelined requests answered without waiting costs one send() rather than
one per response (per-response sends were the largest cost in bench/coordinator_throughput.py).

Invariants:
- A frame error (bad length, truncated/undecodable body, unknown API key, unsupported version)
  is logged and closes this connection only. ApiVersions at an unsupported version is the one
  exception: it gets a v0 body with UNSUPPORTED_VERSION so the client retries lower.
- A request whose store write failed (`CoordinatorUnavailable`) closes this connection, and so
  does an unexpected handler exception (logged with its traceback); clients reconnect and retry.
- Queued responses are written before the connection closes, whatever closes it.
- At most the transport's high-water mark of responses waits in the queue (more is written at
  once), and the task reads no further request while the transport is above that mark, so a
  slow reader holds back only its own connection.
"""

from __future__ import annotations

import asyncio
import logging
from functools import cache
from typing import Any

from groupctl.protocol import framing
from groupctl.protocol.registry import REGISTRY
from groupctl.protocol.schemas import response_class
from groupctl.server.context import RequestContext
from groupctl.server.runtime import CoordinatorUnavailable, Node

log = logging.getLogger("groupctl.connection")

UNSUPPORTED_VERSION = 35


def _unsupported_api_versions(correlation_id: int) -> bytes:
    """ApiVersions v0 body with error 35 and our supported range for ApiVersions itself, as
    brokers answer a client that asked with a newer version than they serve."""
    spec = REGISTRY[framing.API_VERSIONS_KEY]
    cls = response_class(framing.API_VERSIONS_KEY)[0]
    response = cls(
        error_code=UNSUPPORTED_VERSION,
        api_keys=[cls.ApiVersion(api_key=spec.key, min_version=spec.min_version, max_version=spec.max_version)],
    )
    return framing.encode_response(response, correlation_id)


@cache
def _response_class(key: int, version: int) -> type:
    """kafka-python's versioned response class, looked up once per (api, version): its
    metaclass lookup is measurable at heartbeat rates."""
    return response_class(key)[version]


class Connection:
    def __init__(self, node: Node, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.node = node
        self.reader = reader
        self.writer = writer
        peer = writer.get_extra_info("peername") or ("unknown", 0)
        self.peer = f"{peer[0]}:{peer[1]}"
        self.client_host = f"/{peer[0]}"
        self.busy = False  # a request is being handled (shutdown waits for it)
        # Cached: asyncio.get_running_loop() makes a getpid() syscall on every call (CPython 3.11).
        self._loop = asyncio.get_running_loop()
        self._transport = writer.transport
        self._high_water = self._transport.get_write_buffer_limits()[1]
        self._queued: list[bytes] = []  # responses not yet handed to the transport, in order
        self._queued_bytes = 0
        self._flush_scheduled = False

    async def serve(self) -> None:
        try:
            while not self.node.stopping:  # at shutdown, read no further request
                frame = await self._read_frame()
                if frame is None:
                    return
                self.busy = True
                try:
                    out = await self._handle(frame)
                finally:
                    self.busy = False
                if out:
                    self._queue(out)
                    if self._queued_bytes > self._high_water:
                        self._flush()
                    # drain() only waits when the transport is over its high-water mark, and
                    # raises once the peer is gone; skip the coroutine in the common case.
                    transport = self._transport
                    if transport.get_write_buffer_size() > self._high_water or transport.is_closing():
                        await self.writer.drain()
        except framing.FrameError as exc:
            log.warning("closing connection from %s: %s", self.peer, exc)
        except CoordinatorUnavailable as exc:
            log.warning("closing connection from %s: coordinator unavailable: %s", self.peer, exc)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("closing connection from %s after an unexpected error", self.peer)
        finally:
            self._flush()
            self.writer.close()

    def _queue(self, data: bytes) -> None:
        """Queue a response; `_flush` runs as soon as this task yields to the event loop."""
        self._queued.append(data)
        self._queued_bytes += len(data)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self._loop.call_soon(self._flush_soon)

    def _flush_soon(self) -> None:
        self._flush_scheduled = False
        self._flush()

    def _flush(self) -> None:
        """Hand every queued response to the transport, in order, as one write."""
        if self._queued:
            data = self._queued[0] if len(self._queued) == 1 else b"".join(self._queued)
            self._queued.clear()
            self._queued_bytes = 0
            self.writer.write(data)

    async def _read_frame(self) -> bytes | None:
        try:
            prefix = await self.reader.readexactly(4)
        except asyncio.IncompleteReadError as exc:
            if exc.partial:
                raise framing.FrameError("connection closed inside a length prefix") from exc
            return None
        (length,) = framing.LENGTH.unpack(prefix)
        framing.check_length(length, self.node.config.max_frame_bytes)
        try:
            return await self.reader.readexactly(length)
        except asyncio.IncompleteReadError as exc:
            raise framing.FrameError(
                f"connection closed after {len(exc.partial)} of {length} frame bytes"
            ) from exc

    async def _handle(self, frame: bytes) -> bytes | None:
        try:
            request = framing.decode_request(frame, REGISTRY)
        except framing.UnsupportedVersion as exc:
            if exc.spec.key == framing.API_VERSIONS_KEY:
                return _unsupported_api_versions(exc.correlation_id)
            raise
        ctx = RequestContext(
            node=self.node,
            api_key=request.spec.key,
            version=request.version,
            correlation_id=request.correlation_id,
            client_id=request.client_id,
            client_host=self.client_host,
            response_class=_response_class(request.spec.key, request.version),
        )
        faults = self.node.faults
        faults.notify(ctx.api_key, ctx, request.body)
        rule = faults.take(ctx.api_key)
        if rule is not None and rule.action == "replace":
            response: Any = rule.make_response(ctx, request.body)
        else:
            response = await request.spec.handler(ctx, request.body)
            if rule is not None and rule.action == "drop":
                return None
            if rule is not None and rule.action == "delay":
                await asyncio.sleep(rule.delay_s)
        if response is None:
            return None
        return framing.encode_response(response, request.correlation_id)
