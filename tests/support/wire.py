"""Raw Kafka requests over a socket, for tests that speak the wire protocol directly.

Requests and responses are kafka-python's classes; these helpers only frame and exchange them.
Every socket has a 5 s timeout, so a server that never answers fails the test instead of
hanging it.
"""

from __future__ import annotations

import socket
import struct


def connect(coordinator) -> socket.socket:
    """A connection to the coordinator's bound port on 127.0.0.1."""
    return socket.create_connection(("127.0.0.1", coordinator.port), timeout=5)


def read_frame(sock: socket.socket) -> bytes:
    """One length-prefixed frame, without its length prefix."""
    def exactly(n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed")
            data += chunk
        return data

    (length,) = struct.unpack(">i", exactly(4))
    return exactly(length)


def roundtrip(sock: socket.socket, request, version: int, correlation_id: int = 7) -> bytes:
    """Send `request` at `version` and return the response frame (header included)."""
    request.with_header(correlation_id=correlation_id, client_id="wire-test")
    sock.sendall(bytes(request.encode(version=version, header=True, framed=True)))
    return read_frame(sock)


def exchange(coordinator, request, version: int):
    """Send `request` at `version` on a new connection and return the decoded response."""
    with connect(coordinator) as sock:
        frame = roundtrip(sock, request, version)
    return decode_response(request, frame, version)


def decode_response(request, frame: bytes, version: int):
    """Decode the answer to `request` (sent with `roundtrip`) at `version`."""
    return request.header.get_response_class().decode(frame, version=version, header=True)
