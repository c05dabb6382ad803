"""Hand-written codecs for the hot paths: Heartbeat (API 12) at every version, OffsetCommit
(API 8) at v8-v9, the flexible versions real clients send (kafka-python 3.0.12 sends v8,
librdkafka v9), and ConsumerGroupHeartbeat (API 68, KIP-848) v0-1 requests and the responses
that carry no assignment (the steady case).

Why: every member heartbeats every few seconds and every consumer commits, and kafka-python's
generic decode and encode were the largest cost per heartbeat and per commit in profiles of
bench/coordinator_throughput.py and bench/zk_commit_throughput.py. Both messages are simple, so
direct codecs are cheap to get exactly right; tests/unit/test_fastpath*.py prove them against
kafka-python's classes with hypothesis. Every other message and version uses kafka-python.

Contract:
- For every well-formed frame the decoder returns what kafka-python's
  `Request.decode(frame, version=v, header=True)` does: the header's client id and the body's
  fields under kafka-python's names; a negative (classic) or zero (compact) string length, and a
  zero compact array length, mean None, even where the schema says non-nullable (`framing` then
  refuses the request, as it does kafka-python's, by the schema: `validation`); strict UTF-8;
  trailing bytes ignored.
- Tagged fields (header v2, Heartbeat v4, OffsetCommit v8+ at every level) are skipped by their
  declared sizes, as a broker skips tags it does not know.
- Malformed input raises ValueError, IndexError, struct.error or UnicodeDecodeError, which
  `framing.decode_request` turns into a `FrameError`. Unlike kafka-python (which returns a
  shortened last string), a frame ending before its last declared byte is malformed; like Apache
  Kafka, varints longer than 5 bytes are rejected.
- Encoded responses are byte-for-byte kafka-python's `encode(header=True, framed=True)`.
- Versions not known here: `request_decoder` returns None and `encode_response` declines.
"""

from __future__ import annotations

import struct
import uuid
from typing import Any, Callable, NamedTuple, Optional

from kafka.protocol.consumer.group import HeartbeatResponse, OffsetCommitResponse

from groupctl.protocol.consumer_group import HEARTBEAT_KEY as CONSUMER_HEARTBEAT_KEY
from groupctl.protocol.consumer_group import ConsumerGroupHeartbeatResponse

HEARTBEAT_KEY = 12
HEARTBEAT_VERSIONS = range(0, 5)
FLEXIBLE_FROM = 4  # Heartbeat v4+ is flexible: compact strings, tagged fields, header v2

OFFSET_COMMIT_KEY = 8
OFFSET_COMMIT_VERSIONS = range(8, 10)  # flexible, topics by name (v10 names them by topic id)

_REQUEST_HEADER_END = 8  # api_key int16, api_version int16, correlation_id int32
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")

# Framed responses: size, correlation_id [, header tags], [throttle_time_ms,] error_code [, body tags]
_RESPONSE_V0 = struct.Struct(">iih")
_RESPONSE_V1_3 = struct.Struct(">iiih")
_RESPONSE_FLEXIBLE = struct.Struct(">iiBihB")


class HeartbeatRequestBody(NamedTuple):
    """The body of a Heartbeat request, with kafka-python's attribute names so a handler reads
    it exactly as it reads a decoded `HeartbeatRequest`."""

    group_id: Optional[str]
    generation_id: int
    member_id: Optional[str]
    group_instance_id: Optional[str]


Decoder = Callable[[bytes, int], tuple[Optional[str], Any]]
"""`decode(frame, version) -> (client_id, body)`; `frame` is the whole request after the length
prefix, header included."""


# -- primitives (each returns (value, position after it)) ------------------------------------

def _string(frame: bytes, pos: int) -> tuple[Optional[str], int]:
    (length,) = _INT16.unpack_from(frame, pos)
    pos += 2
    if length < 0:
        return None, pos
    end = pos + length
    if end > len(frame):
        raise ValueError("frame ends inside a string")
    return str(frame[pos:end], "utf-8"), end


def _uvarint(frame: bytes, pos: int) -> tuple[int, int]:
    byte = frame[pos]
    if byte < 0x80:  # nearly every varint in a heartbeat is one byte
        return byte, pos + 1
    value, shift = byte & 0x7F, 7
    while True:
        pos += 1
        byte = frame[pos]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos + 1
        shift += 7
        if shift > 28:
            raise ValueError("varint longer than 5 bytes")


def _compact_string(frame: bytes, pos: int) -> tuple[Optional[str], int]:
    length, pos = _uvarint(frame, pos)
    if length == 0:
        return None, pos
    end = pos + length - 1
    if end > len(frame):
        raise ValueError("frame ends inside a string")
    return str(frame[pos:end], "utf-8"), end


def _skip_tagged_fields(frame: bytes, pos: int) -> int:
    if frame[pos] == 0:  # the usual case: no tags at all
        return pos + 1
    count, pos = _uvarint(frame, pos)
    for _ in range(count):
        _tag, pos = _uvarint(frame, pos)
        size, pos = _uvarint(frame, pos)
        pos += size
        if pos > len(frame):
            raise ValueError("frame ends inside a tagged field")
    return pos


# -- Heartbeat request ---------------------------------------------------------------------------

def decode_heartbeat_request(frame: bytes, version: int) -> tuple[Optional[str], HeartbeatRequestBody]:
    """(client_id, body) of a Heartbeat request at `version` (0-4, already validated)."""
    # Request header v1 (v0-3) or v2 (v4): the client id is a classic nullable string in both.
    client_id, pos = _string(frame, _REQUEST_HEADER_END)
    if version >= FLEXIBLE_FROM:
        pos = _skip_tagged_fields(frame, pos)
        group_id, pos = _compact_string(frame, pos)
        (generation_id,) = _INT32.unpack_from(frame, pos)
        member_id, pos = _compact_string(frame, pos + 4)
        group_instance_id, pos = _compact_string(frame, pos)
        _skip_tagged_fields(frame, pos)
    else:
        group_id, pos = _string(frame, pos)
        (generation_id,) = _INT32.unpack_from(frame, pos)
        member_id, pos = _string(frame, pos + 4)
        group_instance_id = _string(frame, pos)[0] if version >= 3 else None
    return client_id, HeartbeatRequestBody(group_id, generation_id, member_id, group_instance_id)


# -- Heartbeat response ---------------------------------------------------------------------------

def encode_heartbeat_response(
    version: int, correlation_id: int, throttle_time_ms: int, error_code: int
) -> bytes:
    """The framed Heartbeat response (response header v0 before v4, v1 from v4)."""
    if version >= FLEXIBLE_FROM:
        return _RESPONSE_FLEXIBLE.pack(12, correlation_id, 0, throttle_time_ms, error_code, 0)
    if version >= 1:
        return _RESPONSE_V1_3.pack(10, correlation_id, throttle_time_ms, error_code)
    return _RESPONSE_V0.pack(6, correlation_id, error_code)


# -- OffsetCommit request (v8-v9) ----------------------------------------------------------------

class OffsetCommitPartition(NamedTuple):
    """One partition of an OffsetCommit request, with kafka-python's attribute names."""

    partition_index: int
    committed_offset: int
    committed_leader_epoch: int
    committed_metadata: Optional[str]


class OffsetCommitTopic(NamedTuple):
    """One topic of an OffsetCommit request, with kafka-python's attribute names."""

    name: Optional[str]
    partitions: Optional[list[OffsetCommitPartition]]

    topic_id = None  # what kafka-python's topic answers before v10, where topics have ids


class OffsetCommitRequestBody(NamedTuple):
    """The body of an OffsetCommit v8/v9 request, with kafka-python's attribute names so a
    handler reads it exactly as it reads a decoded `OffsetCommitRequest`."""

    group_id: Optional[str]
    generation_id_or_member_epoch: int
    member_id: Optional[str]
    group_instance_id: Optional[str]
    topics: Optional[list[OffsetCommitTopic]]


_PARTITION_FIXED = struct.Struct(">iqi")  # partition_index, committed_offset, committed_leader_epoch


def decode_offset_commit_request(
    frame: bytes, version: int
) -> tuple[Optional[str], OffsetCommitRequestBody]:
    """(client_id, body) of an OffsetCommit request at `version` (8 or 9: the same layout; v9
    only allows a KIP-848 member epoch in the generation field)."""
    client_id, pos = _string(frame, _REQUEST_HEADER_END)  # request header v2
    pos = _skip_tagged_fields(frame, pos)
    group_id, pos = _compact_string(frame, pos)
    (generation,) = _INT32.unpack_from(frame, pos)
    member_id, pos = _compact_string(frame, pos + 4)
    group_instance_id, pos = _compact_string(frame, pos)
    count, pos = _uvarint(frame, pos)
    topics: Optional[list[OffsetCommitTopic]] = None
    if count:
        topics = []
        for _ in range(count - 1):
            name, pos = _compact_string(frame, pos)
            count, pos = _uvarint(frame, pos)
            partitions: Optional[list[OffsetCommitPartition]] = None
            if count:
                partitions = []
                for _ in range(count - 1):
                    index, offset, epoch = _PARTITION_FIXED.unpack_from(frame, pos)
                    metadata, pos = _compact_string(frame, pos + 16)
                    pos = _skip_tagged_fields(frame, pos)
                    partitions.append(OffsetCommitPartition(index, offset, epoch, metadata))
            pos = _skip_tagged_fields(frame, pos)
            topics.append(OffsetCommitTopic(name, partitions))
    _skip_tagged_fields(frame, pos)
    return client_id, OffsetCommitRequestBody(group_id, generation, member_id, group_instance_id, topics)


# -- OffsetCommit response (v8-v9) --------------------------------------------------------------

_ONE_BYTE_UVARINTS = [bytes((n,)) for n in range(0x80)]
_RESPONSE_HEAD_FLEXIBLE = struct.Struct(">iiBi")  # size, correlation_id, header tags, throttle_time_ms
_PARTITION_ANSWER = struct.Struct(">ihB")  # partition_index, error_code, no tags


def _encode_uvarint(value: int) -> bytes:
    if value < 0x80:
        return _ONE_BYTE_UVARINTS[value]
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_offset_commit_response(response: OffsetCommitResponse, correlation_id: int) -> bytes:
    """The framed OffsetCommit v8/v9 response (response header v1): the same bytes as
    kafka-python's encoder, read from the same object."""
    parts: list[bytes] = [b""]  # the head, once the size is known
    topics = response.topics
    if topics is None:
        parts.append(b"\0")
    else:
        parts.append(_encode_uvarint(len(topics) + 1))
        pack_partition = _PARTITION_ANSWER.pack
        for topic in topics:
            name = topic.name
            if name is None:
                parts.append(b"\0")
            else:
                encoded = name.encode("utf-8")
                parts += (_encode_uvarint(len(encoded) + 1), encoded)
            partitions = topic.partitions
            if partitions is None:
                parts.append(b"\0")
            else:
                parts.append(_encode_uvarint(len(partitions) + 1))
                parts += [pack_partition(p.partition_index, p.error_code, 0) for p in partitions]
            parts.append(b"\0")  # the topic's tags
    parts.append(b"\0")  # the body's tags
    size = sum(map(len, parts)) + _RESPONSE_HEAD_FLEXIBLE.size - 4
    parts[0] = _RESPONSE_HEAD_FLEXIBLE.pack(size, correlation_id, 0, response.throttle_time_ms)
    return b"".join(parts)


# -- ConsumerGroupHeartbeat (v0-1, flexible from v0) -------------------------------------------

CONSUMER_HEARTBEAT_VERSIONS = range(0, 2)
_UUID = struct.Struct(">16s")
_CONSUMER_HEARTBEAT_TAIL = struct.Struct(">iibB")  # member_epoch, interval, assignment null (-1), body tags


class TopicPartitionsBody(NamedTuple):
    topic_id: Optional[uuid.UUID]  # None: the zero uuid, as kafka-python decodes it
    partitions: Optional[list[int]]


class ConsumerGroupHeartbeatRequestBody(NamedTuple):
    group_id: Optional[str]
    member_id: Optional[str]
    member_epoch: int
    instance_id: Optional[str]
    rack_id: Optional[str]
    rebalance_timeout_ms: int
    subscribed_topic_names: Optional[list[Optional[str]]]
    subscribed_topic_regex: Optional[str]
    server_assignor: Optional[str]
    topic_partitions: Optional[list[TopicPartitionsBody]]


def _compact_length(frame: bytes, pos: int) -> tuple[Optional[int], int]:
    """A compact array's length (None: the null array)."""
    length, pos = _uvarint(frame, pos)
    return (length - 1 if length else None), pos


def decode_consumer_group_heartbeat_request(
        frame: bytes, version: int) -> tuple[Optional[str], ConsumerGroupHeartbeatRequestBody]:
    client_id, pos = _string(frame, _REQUEST_HEADER_END)
    pos = _skip_tagged_fields(frame, pos)
    group_id, pos = _compact_string(frame, pos)
    member_id, pos = _compact_string(frame, pos)
    (member_epoch,) = _INT32.unpack_from(frame, pos)
    instance_id, pos = _compact_string(frame, pos + 4)
    rack_id, pos = _compact_string(frame, pos)
    (rebalance_timeout_ms,) = _INT32.unpack_from(frame, pos)
    count, pos = _compact_length(frame, pos + 4)
    names: Optional[list[Optional[str]]] = None
    if count is not None:
        names = []
        for _ in range(count):
            name, pos = _compact_string(frame, pos)
            names.append(name)
    regex = None
    if version >= 1:
        regex, pos = _compact_string(frame, pos)
    assignor, pos = _compact_string(frame, pos)
    count, pos = _compact_length(frame, pos)
    owned: Optional[list[TopicPartitionsBody]] = None
    if count is not None:
        owned = []
        for _ in range(count):
            (raw,) = _UUID.unpack_from(frame, pos)
            partitions_count, pos = _compact_length(frame, pos + 16)
            partitions = (None if partitions_count is None
                          else list(struct.unpack_from(f">{partitions_count}i", frame, pos)))
            pos = _skip_tagged_fields(frame, pos + 4 * (partitions_count or 0))
            owned.append(TopicPartitionsBody(uuid.UUID(bytes=raw) if any(raw) else None, partitions))
    _skip_tagged_fields(frame, pos)
    return client_id, ConsumerGroupHeartbeatRequestBody(
        group_id, member_id, member_epoch, instance_id, rack_id, rebalance_timeout_ms, names, regex, assignor, owned)


def _encode_compact_string(value: Optional[str]) -> bytes:
    if value is None:
        return b"\0"
    data = value.encode()
    return _encode_uvarint(len(data) + 1) + data


def encode_consumer_group_heartbeat_response(response: Any, correlation_id: int) -> Optional[bytes]:
    """The framed response when it carries no assignment (None otherwise: kafka-python encodes it)."""
    if response.assignment is not None:
        return None
    body = b"".join((
        _INT32.pack(correlation_id), b"\0", _INT32.pack(response.throttle_time_ms), _INT16.pack(response.error_code),
        _encode_compact_string(response.error_message), _encode_compact_string(response.member_id),
        _CONSUMER_HEARTBEAT_TAIL.pack(response.member_epoch, response.heartbeat_interval_ms, -1, 0)))
    return _INT32.pack(len(body)) + body


# -- dispatch ---------------------------------------------------------------------------------

def request_decoder(api_key: int, version: int) -> Optional[Decoder]:
    """The hand-written decoder for this request, or None: use kafka-python's classes."""
    return _DECODERS.get((api_key, version))


_DECODERS: dict[tuple[int, int], Decoder] = {
    **{(HEARTBEAT_KEY, v): decode_heartbeat_request for v in HEARTBEAT_VERSIONS},
    **{(OFFSET_COMMIT_KEY, v): decode_offset_commit_request for v in OFFSET_COMMIT_VERSIONS},
    **{(CONSUMER_HEARTBEAT_KEY, v): decode_consumer_group_heartbeat_request for v in CONSUMER_HEARTBEAT_VERSIONS},
}


def encode_response(response: Any, correlation_id: int) -> Optional[bytes]:
    """The framed bytes of a kafka-python response object if it is one this module encodes
    (a HeartbeatResponse at a known version, an OffsetCommitResponse at v8/v9), else None: use
    kafka-python's encoder."""
    kind = type(response)
    if kind is HeartbeatResponse and response.version in HEARTBEAT_VERSIONS:
        return encode_heartbeat_response(response.version, correlation_id,
                                         response.throttle_time_ms, response.error_code)
    if kind is OffsetCommitResponse and response.version in OFFSET_COMMIT_VERSIONS:
        return encode_offset_commit_response(response, correlation_id)
    if isinstance(response, ConsumerGroupHeartbeatResponse) and response.version in CONSUMER_HEARTBEAT_VERSIONS:
        return encode_consumer_group_heartbeat_response(response, correlation_id)
    return None
