"""One client connection: read frames, dispatch them one at a time, write responses in order.

Like a Kafka broker's muted channel, a connection has at most one request in its handler at a
time, so responses leave in request order and a parked JoinGroup holds only its own connection.
Frames are read ahead into the socket buffer, so pipelined clients still keep the loop busy.
Responses are queued and handed to the transport together when the task yields to the event
loop, so a burst of pipelined requests answered without waiting costs one send() rather than
one per response (per-response sends were the largest cost in bench/coordinator_throughput.py).

Invariants:
- A frame error (bad length, truncated/undecodable body, unknown API key, unsupported version)
  is logged and closes this connection only, without an answer, as Kafka closes it. An API key or
  version the node does not serve is logged at ERROR with the key, the version, the client id and
  the peer (Kafka's "Closing socket for ... because of error"); ApiVersions at an unsupported
  version is the one exception: it gets a v0 body with UNSUPPORTED_VERSION so the client retries
  lower.
- A request whose store write failed (`CoordinatorUnavailable`) closes this connection, and so
  does an unexpected handler exception (logged with its traceback); clients reconnect and retry.
- Queued responses are written before the connection closes, whatever closes it.
- At most the transport's high-water mark of responses waits in the queue (more is written at
  once), and the task reads no further request while the transport is above that mark, so a
  slow reader holds back only its own connection.
- On a SASL listener nothing but ApiVersions, SaslHandshake and SaslAuthenticate is handled until
  the client has authenticated (`groupctl.server.sasl`): anything else closes the connection, as
  does a failed authentication (after its answer). Until then a frame may hold at most
  PRE_AUTH_MAX_FRAME_BYTES and at most PRE_AUTH_MAX_REQUESTS requests are read, so an
  unauthenticated client can neither make the node allocate much nor create any state.
- Every request is handled as the connection's principal: `User:<name>` once SASL completed, the
  TLS client certificate's subject on an SSL listener, else `User:ANONYMOUS`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from functools import cache
from typing import Any, Optional

from groupctl.protocol import framing
from groupctl.protocol.registry import REGISTRY
from groupctl.protocol.schemas import response_class
from groupctl.server.config import Listener
from groupctl.server.context import RequestContext
from groupctl.server.runtime import CoordinatorUnavailable, Node
from groupctl.server.sasl import IllegalSaslState, SaslAuthenticator
from groupctl.server.tls import certificate_principal

log = logging.getLogger("groupctl.connection")

UNSUPPORTED_VERSION = 35
SASL_HANDSHAKE_KEY = 17
SASL_AUTHENTICATE_KEY = 36
ANONYMOUS = "User:ANONYMOUS"
PRE_AUTH_MAX_FRAME_BYTES = 512 * 1024
"""The largest frame read before authentication (Kafka's sasl.server.max.receive.size)."""
PRE_AUTH_MAX_REQUESTS = 16
"""Requests a connection may send before it has authenticated (SCRAM needs five at most)."""
PRE_AUTH_TIMEOUT_S = 30.0
"""How long a SASL connection may stay unauthenticated after it was accepted."""
FAILED_AUTHENTICATION_DELAY_S = 0.1
"""A failed authentication is answered (and the connection closed) this much later, slowing
password guessing (Kafka's connection.failed.authentication.delay.ms default)."""


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
    def __init__(self, node: Node, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 listener: Optional[Listener] = None) -> None:
        self.node = node
        self.reader = reader
        self.writer = writer
        self.listener = listener or node.config.all_listeners()[0]
        peer = writer.get_extra_info("peername") or ("unknown", 0)
        self.peer = f"{peer[0]}:{peer[1]}"
        self.client_host = f"/{peer[0]}"
        self.principal = certificate_principal(writer.get_extra_info("ssl_object")) or ANONYMOUS
        self._sasl = (SaslAuthenticator(node.config.sasl_enabled_mechanisms, node.credentials_of)
                      if self.listener.sasl else None)
        self._requests_before_auth = 0
        self._close_when_answered = False  # a failed authentication: answer, then close
        self.busy = False  # a request is being handled (shutdown waits for it)
        # Cached: asyncio.get_running_loop() makes a getpid() syscall on every call (CPython 3.11).
        self._loop = asyncio.get_running_loop()
        self._authenticate_by = self._loop.time() + PRE_AUTH_TIMEOUT_S  # SASL listeners only
        self._transport = writer.transport
        self._high_water = self._transport.get_write_buffer_limits()[1]
        self._queued: list[bytes] = []  # responses not yet handed to the transport, in order
        self._queued_bytes = 0
        self._flush_scheduled = False

    async def serve(self) -> None:
        try:
            while not self.node.stopping:  # at shutdown, read no further request
                if self._authenticating:
                    frame = await self._read_before_authentication()
                else:
                    frame = await self._read_frame()
                if frame is None:
                    return
                self.busy = True
                try:
                    out = await self._handle(frame)
                finally:
                    self.busy = False
                if out:
                    if self._close_when_answered:  # Kafka's connection.failed.authentication.delay.ms
                        await asyncio.sleep(FAILED_AUTHENTICATION_DELAY_S)
                    self._queue(out)
                    if self._close_when_answered:
                        return
                    if self._queued_bytes > self._high_water:
                        self._flush()
                    # drain() only waits when the transport is over its high-water mark, and
                    # raises once the peer is gone; skip the coroutine in the common case.
                    transport = self._transport
                    if transport.get_write_buffer_size() > self._high_water or transport.is_closing():
                        await self.writer.drain()
        except framing.NotEnabled as exc:
            log.error("Closing socket for %s (client id %r) because of error: %s", self.peer, exc.client_id, exc)
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

    async def _read_before_authentication(self) -> bytes | None:
        """`_read_frame`, bounded by the time left to authenticate (PRE_AUTH_TIMEOUT_S from accept)."""
        left = self._authenticate_by - self._loop.time()
        try:
            return await asyncio.wait_for(self._read_frame(), max(left, 0.0))
        except TimeoutError:
            raise framing.FrameError(f"not authenticated within {PRE_AUTH_TIMEOUT_S:g}s") from None

    async def _read_frame(self) -> bytes | None:
        try:
            prefix = await self.reader.readexactly(4)
        except asyncio.IncompleteReadError as exc:
            if exc.partial:
                raise framing.FrameError("connection closed inside a length prefix") from exc
            return None
        (length,) = framing.LENGTH.unpack(prefix)
        if self._authenticating:
            self._requests_before_auth += 1
            if self._requests_before_auth > PRE_AUTH_MAX_REQUESTS:
                raise framing.FrameError(f"{PRE_AUTH_MAX_REQUESTS} requests without authenticating")
            framing.check_length(length, PRE_AUTH_MAX_FRAME_BYTES)
        else:
            framing.check_length(length, self.node.config.max_frame_bytes)
        try:
            return await self.reader.readexactly(length)
        except asyncio.IncompleteReadError as exc:
            raise framing.FrameError(
                f"connection closed after {len(exc.partial)} of {length} frame bytes"
            ) from exc

    @property
    def _authenticating(self) -> bool:
        """A SASL listener's connection that has not authenticated yet."""
        return self._sasl is not None and not self._sasl.complete

    async def _handle(self, frame: bytes) -> bytes | None:
        try:
            request = framing.decode_request(frame, REGISTRY)
        except framing.UnsupportedVersion as exc:
            if exc.spec.key == framing.API_VERSIONS_KEY:
                return _unsupported_api_versions(exc.correlation_id)
            raise
        if self._authenticating and request.spec.key != framing.API_VERSIONS_KEY:
            answer = await self._authenticate(request)
            return framing.encode_response(answer, request.correlation_id)
        ctx = RequestContext(
            node=self.node,
            api_key=request.spec.key,
            version=request.version,
            correlation_id=request.correlation_id,
            client_id=request.client_id,
            client_host=self.client_host,
            response_class=_response_class(request.spec.key, request.version),
            principal=self.principal,
            listener=self.listener.name,
            authorizer=self.node.authorizer,
        )
        faults = self.node.faults
        faults.notify(ctx.api_key, ctx, request.body)
        rule = faults.take(ctx.api_key)
        if rule is not None and rule.action == "replace":
            response: Any = rule.make_response(ctx, request.body)
        else:
            metrics = self.node.metrics
            started = time.perf_counter() if metrics is not None else 0.0
            response = await request.spec.handler(ctx, request.body)
            if metrics is not None:
                metrics.request(ctx.api_key, time.perf_counter() - started)
            if rule is not None and rule.action == "drop":
                return None
            if rule is not None and rule.action == "delay":
                await asyncio.sleep(rule.delay_s)
        if response is None:
            return None
        return framing.encode_response(response, request.correlation_id)

    async def _authenticate(self, request: framing.DecodedRequest) -> Any:
        """Answer a SASL step of this unauthenticated connection (FrameError: anything else)."""
        sasl = self._sasl
        assert sasl is not None
        respond = _response_class(request.spec.key, request.version)
        try:
            if request.spec.key == SASL_HANDSHAKE_KEY:
                error = sasl.handshake(request.body.mechanism)
                if error:
                    log.info("closing connection from %s: SASL mechanism %r is not enabled", self.peer,
                             request.body.mechanism)
                    self._close_when_answered = True
                return respond(error_code=error, mechanisms=list(sasl.enabled))
            if request.spec.key == SASL_AUTHENTICATE_KEY:
                step = await sasl.authenticate(request.body.auth_bytes or b"")
                if step.error:
                    log.info("failed authentication with %s (%s)", self.peer, step.message)
                    self._close_when_answered = True
                elif sasl.complete:
                    self.principal = sasl.principal
                    log.debug("%s authenticated as %s with %s", self.peer, self.principal, sasl.mechanism)
                return respond(error_code=step.error, error_message=step.message, auth_bytes=step.auth_bytes,
                               session_lifetime_ms=0)
        except IllegalSaslState as exc:
            raise framing.FrameError(f"SASL authentication: {exc}") from None
        raise framing.FrameError(f"{request.spec.name} before SASL authentication")
