"""Kafka request framing: length prefix, request header, body decode, response encode.

Invariants:
- Every failure to turn bytes into a request is a `FrameError` saying what was wrong; the
  connection that sent it is closed and no other connection is affected. kafka-python raises bare
  IndexError/struct.error on truncated input and ValueError on unknown versions: all of them
  become `FrameError` here.
- A length prefix is validated before any body byte is read: negative, zero or above the
  configured maximum closes the connection without buffering the body.
- Decoding never trusts the header's api key or version: the registry decides what is served.
- A decoded body that breaks its schema (a null in a non-nullable field, an over-long string:
  `validation`) is a `FrameError` too, as Apache Kafka closes the connection for it: no handler
  ever sees a None the schema does not allow.
- Heartbeat and OffsetCommit v8/v9 are decoded and encoded by the hand-written codecs in
  `fastpath` (same results as kafka-python, proven by tests/unit/test_fastpath*.py); every other
  message, and any version `fastpath` does not know, goes through kafka-python's classes.
- Encoded responses are copies: kafka-python reuses its encode buffer. That buffer (one per
  thread) grows to the largest message encoded and, left alone, keeps that size for good (kafka-
  python says as much): one large response (a Metadata of every topic, a Fetch of max_bytes, a
  describe of 500 duplicated group ids) would hold its size, rounded up to a power of two, for
  the node's life. A buffer over MAX_KEPT_ENCODE_BUFFER is dropped after use.
- An error message the server wrote around a client's name (which may itself be 32767 bytes)
  is cut to Kafka's string limit when it would not fit (`validation.shorten_error_messages`),
  rather than failing the response.
"""

from __future__ import annotations

import struct
from typing import Any, NamedTuple, Optional

from kafka.protocol.schemas.fields.codecs import EncodeBufferPool

from groupctl.protocol import fastpath, schemas, validation
from groupctl.protocol.registry import ApiSpec

LENGTH = struct.Struct(">i")
MAX_KEPT_ENCODE_BUFFER = 1 << 20
HEADER_PREFIX = struct.Struct(">hhi")  # api_key, api_version, correlation_id
CLIENT_ID_LENGTH = struct.Struct(">h")  # then the client id's bytes (-1: null)

API_VERSIONS_KEY = 18


class FrameError(Exception):
    """The bytes are not a request this server will decode; close the connection."""


class NotEnabled(FrameError):
    """A request for an API key, or a version of it, this node does not serve. Kafka closes the
    connection without an answer and logs it at ERROR (`SocketServer.parseRequestHeader`:
    "Received request api key K with version V which is not enabled"); so does the node, naming
    the API when kafka-python knows it and the client id the header carries."""

    def __init__(self, api_key: int, version: int, correlation_id: int, client_id: Optional[str]) -> None:
        try:
            name = f" ({schemas.request_class(api_key).name.removesuffix('Request')})"
        except KeyError:  # a key kafka-python has no schema for
            name = ""
        message = f"Received request api key {api_key}{name} with version {version} which is not enabled"
        super().__init__(message)
        self.api_key = api_key
        self.version = version
        self.correlation_id = correlation_id
        self.client_id = client_id


class UnsupportedVersion(NotEnabled):
    """A registered API at a version the registry does not serve."""

    def __init__(self, spec: ApiSpec, version: int, correlation_id: int, client_id: Optional[str]) -> None:
        super().__init__(spec.key, version, correlation_id, client_id)
        self.args = (f"{self.args[0]} (serving v{spec.min_version}-v{spec.max_version})",)
        self.spec = spec


def check_length(length: int, max_frame_bytes: int) -> None:
    if length <= 0:
        raise FrameError(f"invalid frame length {length}")
    if length > max_frame_bytes:
        raise FrameError(f"frame of {length} bytes exceeds the maximum of {max_frame_bytes}")


class DecodedRequest(NamedTuple):  # a tuple: built for every request, and cheaper than a dataclass
    spec: ApiSpec
    version: int
    correlation_id: int
    client_id: str
    body: Any  # kafka-python's request object, or the `fastpath` body with the same field names


def peek_header(frame: bytes) -> tuple[int, int, int]:
    """(api_key, api_version, correlation_id) from the fixed start of every request header."""
    if len(frame) < HEADER_PREFIX.size:
        raise FrameError(f"frame of {len(frame)} bytes is shorter than a request header")
    return HEADER_PREFIX.unpack_from(frame)


def header_client_id(frame: bytes) -> Optional[str]:
    """The client id of a request header (every header version starts with it after the fixed
    prefix; a null one is "", as Kafka reads it), or None when the frame holds no readable one."""
    start = HEADER_PREFIX.size
    if len(frame) < start + CLIENT_ID_LENGTH.size:
        return None
    (length,) = CLIENT_ID_LENGTH.unpack_from(frame, start)
    if length == -1:
        return ""
    end = start + CLIENT_ID_LENGTH.size + length
    if length < 0 or end > len(frame):
        return None
    return frame[start + CLIENT_ID_LENGTH.size:end].decode("utf-8", errors="replace")


def decode_request(frame: bytes, registry: dict[int, ApiSpec]) -> DecodedRequest:
    api_key, version, correlation_id = peek_header(frame)
    spec = registry.get(api_key)
    if spec is None:
        raise NotEnabled(api_key, version, correlation_id, header_client_id(frame))
    if not spec.supports(version):
        raise UnsupportedVersion(spec, version, correlation_id, header_client_id(frame))
    fast_decode = fastpath.request_decoder(api_key, version)
    try:
        if fast_decode is not None:
            client_id, body = fast_decode(frame, version)
        else:
            body = spec.request_class.decode(frame, version=version, header=True)
            client_id = body.header.client_id
    except (IndexError, struct.error, ValueError, UnicodeDecodeError, TypeError, OverflowError) as exc:
        raise FrameError(f"undecodable {spec.name} v{version} request: {exc}") from exc
    problem = validation.checker(spec.request_class, version)(body)
    if problem:
        raise FrameError(f"invalid {spec.name} v{version} request: {problem}")
    return DecodedRequest(spec, version, correlation_id, client_id or "", body)


def encode_response(response: Any, correlation_id: int) -> bytes:
    """The framed response bytes (a copy: kafka-python reuses its encode buffer)."""
    fast = fastpath.encode_response(response, correlation_id)
    if fast is not None:
        return fast
    response.with_header(correlation_id=correlation_id)
    try:
        return _encoded(response)
    except struct.error:  # a string past the int16 length of classic strings: shorten, once
        if not validation.shorten_error_messages(response):
            raise
        return _encoded(response)


def _encoded(message: Any) -> bytes:
    try:
        return bytes(message.encode(header=True, framed=True))
    finally:
        pooled = getattr(EncodeBufferPool._local, "buf", None)
        if pooled is not None and len(pooled.buf) > MAX_KEPT_ENCODE_BUFFER:
            EncodeBufferPool._local.buf = None  # the next encode starts a small one
