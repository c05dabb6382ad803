"""An asyncio Kafka connection for many concurrent callers on one event loop: the transport of
`groupctl members simulate`, whose hundreds of members share a handful of connections.

It speaks through the same message classes and version negotiation as the synchronous client
(`groupctl.client.kafka`), but encodes and decodes with kafka-python's compiled codec: a simulator
sends the same few messages thousands of times, where compiling each (message, version) once pays
off (the one-shot commands use the interpreted codec for the opposite reason).

Invariants:
- Requests are pipelined; the broker answers a connection's requests one at a time, in order
  (Kafka's rule, which groupctl's node keeps), so each response answers the oldest request in
  flight. A correlation id that does not match is a broken stream: the connection closes.
- Every request ends: with its response, or with `ConnectionFailed` when the connection closes,
  fails, or leaves the oldest request unanswered for `request_timeout` seconds (the watchdog
  closes it then, as Kafka clients do with request.timeout.ms).
- A closed connection stays closed; callers open a new one.
"""

from __future__ import annotations

import asyncio
import itertools
import ssl
import struct
from collections import deque
from typing import Any, Optional

from groupctl.client.kafka import (API_VERSIONS, CLIENT_ID, ConnectionFailed, Node, api_versions_answer,
                                   build_api_versions, message_classes, negotiated_version)
from groupctl.client.sasl import authenticate_async
from groupctl.client.security import ClientSecurity
from groupctl.errors import AuthenticationFailed

_LENGTH = struct.Struct(">i")
DEFAULT_REQUEST_TIMEOUT_S = 30.0  # request.timeout.ms's default (Apache Kafka consumers)
_SERVED: dict[tuple, dict[int, tuple[int, int]]] = {}
"""Every distinct ApiVersions answer, shared by the connections that got it: a simulator's thousands
of connections to one broker keep one copy (2.5 KiB each otherwise)."""


class _Pending:
    __slots__ = ("correlation_id", "response_class", "version", "future", "sent_at")

    def __init__(self, correlation_id: int, response_class: type, version: int, future: asyncio.Future,
                 sent_at: float) -> None:
        self.correlation_id = correlation_id
        self.response_class = response_class
        self.version = version
        self.future = future
        self.sent_at = sent_at


class AsyncConnection(asyncio.Protocol):
    """One connection to one broker. Open with `AsyncConnection.open`; `send` returns a future."""

    def __init__(self, where: str, client_id: str, request_timeout: float) -> None:
        self.where = where
        self.client_id = client_id
        self.request_timeout = request_timeout
        self.api_versions: dict[int, tuple[int, int]] = {}
        self.closed = False
        self._loop = asyncio.get_running_loop()
        self._transport: Optional[asyncio.Transport] = None
        self._buffer = bytearray()
        self._pending: deque[_Pending] = deque()
        self._ids = itertools.count(1)
        self._watchdog: Optional[asyncio.TimerHandle] = None
        self._closed_reason = "connection closed"

    @classmethod
    async def open(cls, node: Node, *, client_id: str = CLIENT_ID,
                   request_timeout: float = DEFAULT_REQUEST_TIMEOUT_S,
                   security: ClientSecurity = ClientSecurity(), tls: Optional[ssl.SSLContext] = None,
                   ) -> "AsyncConnection":
        """Connect to `node` (over `tls` when given), learn its API versions and authenticate as
        `security` says; ConnectionFailed (naming the node), AuthenticationFailed or Unsupported
        when one of them fails."""
        loop = asyncio.get_running_loop()
        try:
            _, connection = await asyncio.wait_for(
                loop.create_connection(lambda: cls(node.address, client_id, request_timeout), node.host, node.port,
                                       ssl=tls, server_hostname=node.host if tls else None),
                request_timeout)
        except ssl.SSLError as exc:
            raise AuthenticationFailed(f"TLS handshake with {node.address} failed: "
                                       f"{getattr(exc, 'verify_message', None) or exc.reason or exc}") from None
        except (OSError, asyncio.TimeoutError) as exc:
            raise ConnectionFailed(f"cannot reach {node.address}: {exc or 'timed out'}", node) from None
        try:
            await connection._negotiate()
            if security.sasl:
                await authenticate_async(connection.call, security, node.address)
        except BaseException:
            connection.close()
            raise
        return connection

    # -- requests --------------------------------------------------------------------------

    def version_for(self, key: int, versions: tuple[int, int]) -> int:
        return negotiated_version(self.where, self.api_versions, key, versions)

    def send(self, key: int, version: int, request: Any) -> asyncio.Future:
        """Send `request` (an instance of API `key`'s request class at `version`); the future gets
        the decoded response, or ConnectionFailed."""
        future = self._loop.create_future()
        if self.closed:
            future.set_exception(ConnectionFailed(f"{self.where}: {self._closed_reason}", None))
            return future
        correlation_id = next(self._ids)
        request.with_header(correlation_id=correlation_id, client_id=self.client_id)
        self._pending.append(_Pending(correlation_id, message_classes(key)[1], version, future, self._loop.time()))
        self._transport.write(request.encode(version=version, header=True, framed=True))
        if self._watchdog is None:
            self._watchdog = self._loop.call_later(self.request_timeout, self._check_timeouts)
        return future

    async def call(self, key: int, versions: tuple[int, int], build: Any) -> Any:
        """Build (`build(versioned_class, version)`), send and await one request."""
        version = self.version_for(key, versions)
        return await self.send(key, version, build(message_classes(key)[0][version], version))

    def close(self, reason: str = "connection closed") -> None:
        if self.closed:
            return
        self._closed_reason = reason
        self.closed = True
        if self._transport is not None:
            self._transport.close()
        self._fail_pending(reason)

    async def _negotiate(self) -> None:
        version: Optional[int] = message_classes(API_VERSIONS)[0].valid_versions[1]
        while version is not None:
            request = build_api_versions(message_classes(API_VERSIONS)[0][version], version)
            response = await self.send(API_VERSIONS, version, request)
            served, version = api_versions_answer(self.where, response, version)
            self.api_versions = _SERVED.setdefault(tuple(sorted(served.items())), served)  # shared, read-only

    # -- asyncio.Protocol --------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self.closed = True
        self._fail_pending(f"connection to {self.where} lost" + (f": {exc}" if exc else ""))

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        offset = 0
        while len(buffer) - offset >= 4:
            (length,) = _LENGTH.unpack_from(buffer, offset)
            if length < 0:
                self.close(f"{self.where} sent an invalid frame length {length}")
                return
            if len(buffer) - offset - 4 < length:
                break
            frame = bytes(buffer[offset + 4:offset + 4 + length])
            offset += 4 + length
            if not self._answer(frame):
                return
        if offset == len(buffer):
            self._buffer = bytearray()  # drained: let its capacity go (thousands of idle connections)
        else:
            del buffer[:offset]

    def _answer(self, frame: bytes) -> bool:
        if not self._pending:
            self.close(f"{self.where} sent a response nobody asked for")
            return False
        pending = self._pending.popleft()
        try:
            response = pending.response_class.decode(frame, version=pending.version, header=True)
        except Exception as exc:  # kafka-python raises bare IndexError/struct.error/ValueError
            if not pending.future.done():
                pending.future.set_exception(ConnectionFailed(f"undecodable response from {self.where}: {exc}", None))
            self.close("undecodable response")
            return False
        if response.header.correlation_id != pending.correlation_id:
            self._pending.appendleft(pending)
            self.close(f"{self.where} answered correlation id {response.header.correlation_id}, "
                       f"expected {pending.correlation_id}")
            return False
        if not pending.future.done():
            pending.future.set_result(response)
        return True

    def _check_timeouts(self) -> None:
        self._watchdog = None
        if self.closed or not self._pending:
            return
        waited = self._loop.time() - self._pending[0].sent_at
        if waited >= self.request_timeout:
            self.close(f"{self.where} did not answer within {self.request_timeout:g}s")
            return
        self._watchdog = self._loop.call_later(self.request_timeout - waited, self._check_timeouts)

    def _fail_pending(self, reason: str) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        while self._pending:
            future = self._pending.popleft().future
            if not future.done():
                future.set_exception(ConnectionFailed(reason, None))
