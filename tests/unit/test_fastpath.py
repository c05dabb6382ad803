"""The hand-written Heartbeat codec is kafka-python's codec, only faster.

Properties, at every Heartbeat version (0-4), against kafka-python's own classes:
- a request kafka-python encodes (random field values, client ids, unknown tagged fields in the
  v2 header and the v4 body, trailing bytes) decodes to what kafka-python decodes;
- a response encodes to kafka-python's bytes exactly;
- every truncation of a request is a `FrameError` (the connection closes);
- on arbitrary corruption, the fast codec never accepts what kafka-python rejects, and whatever
  it accepts kafka-python reads the same way.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupResponse,
)
from kafka.protocol.schemas.fields.codecs.types import UnsignedVarInt32

from groupctl.protocol import fastpath, framing
from groupctl.protocol.registry import ApiSpec
from tests.support.corruption import corrupt

VERSIONS = st.integers(0, 4)
INT32 = st.integers(-(2**31), 2**31 - 1)
INT16 = st.integers(-(2**15), 2**15 - 1)
TEXT = st.text(max_size=40)  # hypothesis's text never holds surrogates: always valid UTF-8
NULLABLE_TEXT = st.none() | TEXT
UNKNOWN_TAGS = st.lists(st.tuples(st.integers(0, 2**31 - 1), st.binary(max_size=150)), max_size=10)
PROPERTY = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


async def _unused_handler(ctx, request):  # decoding never reaches a handler
    raise AssertionError("not called")


HEARTBEAT_ONLY = {12: ApiSpec(12, 0, 4, _unused_handler, HeartbeatRequest)}


@st.composite
def heartbeat_frames(draw, versions=VERSIONS):
    """(version, frame) of a Heartbeat request as kafka-python encodes it, plus whatever a
    peer may legally add: unknown tagged fields (v4) and bytes after the last field."""
    version = draw(versions)
    request = HeartbeatRequest[version](
        group_id=draw(NULLABLE_TEXT),
        generation_id=draw(INT32),
        member_id=draw(NULLABLE_TEXT),
        group_instance_id=draw(NULLABLE_TEXT) if version >= 3 else None,
    )
    client_id = draw(NULLABLE_TEXT)
    request.with_header(correlation_id=draw(INT32), client_id=client_id)
    frame = bytes(request.encode(version=version, header=True))
    if version >= 4:
        # kafka-python writes empty tag sections (one 0x00 byte) after the header's client id
        # and at the very end; put unknown tags in both.
        header_tags_at = 8 + 2 + (len(client_id.encode()) if client_id is not None else 0)
        assert frame[header_tags_at] == 0 and frame[-1] == 0
        frame = (frame[:header_tags_at] + tag_section(draw(UNKNOWN_TAGS))
                 + frame[header_tags_at + 1:-1] + tag_section(draw(UNKNOWN_TAGS)))
    return version, frame


def tag_section(tags: list[tuple[int, bytes]]) -> bytes:
    out = [UnsignedVarInt32.encode(len(tags))]
    for tag, value in sorted(tags):
        out += [UnsignedVarInt32.encode(tag), UnsignedVarInt32.encode(len(value)), value]
    return b"".join(out)


def kafka_python_view(frame: bytes, version: int) -> tuple:
    decoded = HeartbeatRequest.decode(frame, version=version, header=True)
    return (decoded.header.client_id, decoded.group_id, decoded.generation_id, decoded.member_id,
            decoded.group_instance_id)


DECODE_ERRORS = (IndexError, struct.error, ValueError, TypeError, OverflowError)


def kafka_python_reading(frame: bytes, version: int) -> tuple | Exception:
    """kafka-python's view plus the unknown tags it kept, or the exception it raised."""
    try:
        decoded = HeartbeatRequest.decode(frame, version=version, header=True)
    except DECODE_ERRORS as exc:
        return exc
    return (*kafka_python_view(frame, version), decoded.header.unknown_tags, decoded.unknown_tags)


def fast_view(frame: bytes, version: int) -> tuple:
    client_id, body = fastpath.decode_heartbeat_request(frame, version)
    return (client_id, *body)


def kafka_python_response(version: int, correlation_id: int, throttle_time_ms: int, error_code: int) -> bytes:
    response = HeartbeatResponse[version](throttle_time_ms=throttle_time_ms, error_code=error_code)
    response.with_header(correlation_id=correlation_id)
    return bytes(response.encode(header=True, framed=True))


# --- requests ------------------------------------------------------------------------------------

@PROPERTY
@given(heartbeat_frames(), st.binary(max_size=8))
def test_a_request_decodes_to_exactly_what_kafka_python_decodes(version_frame, trailing):
    version, frame = version_frame
    frame += trailing
    assert fast_view(frame, version) == kafka_python_view(frame, version)


@PROPERTY
@given(heartbeat_frames())
def test_framing_serves_heartbeat_through_the_fast_decoder_with_the_same_header(version_frame):
    version, frame = version_frame
    reference = HeartbeatRequest.decode(frame, version=version, header=True)
    if reference.group_id is None or reference.member_id is None:  # non-nullable at every version
        with pytest.raises(framing.FrameError, match="non-nullable"):
            framing.decode_request(frame, HEARTBEAT_ONLY)
        return
    decoded = framing.decode_request(frame, HEARTBEAT_ONLY)
    assert isinstance(decoded.body, fastpath.HeartbeatRequestBody)
    assert (decoded.version, decoded.correlation_id, decoded.client_id) == (
        version, reference.header.correlation_id, reference.header.client_id or "")
    assert decoded.body == (reference.group_id, reference.generation_id, reference.member_id,
                            reference.group_instance_id)


@PROPERTY
@given(heartbeat_frames())
def test_every_truncation_of_a_request_is_a_frame_error(version_frame):
    _, frame = version_frame
    for cut in range(len(frame)):
        with pytest.raises(framing.FrameError):
            framing.decode_request(frame[:cut], HEARTBEAT_ONLY)


@PROPERTY
@given(heartbeat_frames(), st.data())
def test_corruption_is_never_accepted_where_kafka_python_rejects_it(version_frame, data):
    version, frame = version_frame
    corrupted = corrupt(frame, data)
    expected = kafka_python_reading(corrupted, version)
    if isinstance(expected, Exception):
        with pytest.raises(framing.FrameError):
            framing.decode_request(corrupted, HEARTBEAT_ONLY)
        return
    try:
        actual = fast_view(corrupted, version)
    except DECODE_ERRORS as exc:
        # Stricter than kafka-python only where the module docstring says: kafka-python read
        # past the end of the frame (what it returns changes when bytes are appended), or a
        # varint ran longer than 5 bytes.
        reads_past_the_end = kafka_python_reading(corrupted + b"\0", version) != expected
        assert reads_past_the_end or "varint longer than 5 bytes" in str(exc)
        return
    assert actual == expected[:5]


def test_a_member_id_cut_short_by_the_frame_end_closes_the_connection_where_kafka_python_reads_on():
    request = HeartbeatRequest[0](group_id="orders", generation_id=3, member_id="app-1-aaaa")
    request.with_header(correlation_id=1, client_id="app-1")
    cut = bytes(request.encode(version=0, header=True))[:-3]
    assert kafka_python_view(cut, 0)[3] == "app-1-a"
    with pytest.raises(framing.FrameError):
        framing.decode_request(cut, HEARTBEAT_ONLY)


# The group id's length+1 = 2 in six bytes (zero-padded), and a run of continuation bytes.
@pytest.mark.parametrize("length", [b"\x82\x80\x80\x80\x80\x00", b"\xff\xff\xff\xff\xff\xff"])
def test_a_varint_longer_than_five_bytes_is_a_frame_error(length):
    request = HeartbeatRequest[4](group_id="g", generation_id=1, member_id="m", group_instance_id=None)
    request.with_header(correlation_id=1, client_id="c")
    frame = bytes(request.encode(version=4, header=True))
    group_at = 8 + 2 + 1 + 1  # after the header's client id and its empty tag section
    with pytest.raises(framing.FrameError):
        framing.decode_request(frame[:group_at] + length + frame[group_at + 1:], HEARTBEAT_ONLY)


# --- responses -----------------------------------------------------------------------------------

@PROPERTY
@given(VERSIONS, INT32, INT32, INT16)
@example(version=0, correlation_id=7, throttle_time_ms=2**40, error_code=0)  # v0 has no throttle
def test_a_response_encodes_to_kafka_pythons_bytes(version, correlation_id, throttle_time_ms, error_code):
    expected = kafka_python_response(version, correlation_id, throttle_time_ms, error_code)
    fast = fastpath.encode_heartbeat_response(version, correlation_id, throttle_time_ms, error_code)
    assert fast == expected
    response = HeartbeatResponse[version](throttle_time_ms=throttle_time_ms, error_code=error_code)
    assert framing.encode_response(response, correlation_id) == expected


def test_an_out_of_range_error_code_fails_to_encode_as_with_kafka_python():
    with pytest.raises(struct.error):
        kafka_python_response(1, 7, 0, 2**15)
    with pytest.raises(struct.error):
        framing.encode_response(HeartbeatResponse[1](throttle_time_ms=0, error_code=2**15), 7)


# --- what the fast path leaves to kafka-python -------------------------------------------------

def test_only_heartbeat_versions_0_to_4_have_a_fast_decoder():
    assert [v for v in range(8) if fastpath.request_decoder(12, v)] == [0, 1, 2, 3, 4]
    assert all(fastpath.request_decoder(key, 0) is None for key in (8, 11, 13, 14, 18))


def test_other_responses_are_encoded_by_kafka_python():
    response = JoinGroupResponse[5](error_code=79, generation_id=-1, protocol_name="", leader="",
                                    member_id="app-1-x", members=[])
    assert fastpath.encode_response(response, 3) is None
    expected = JoinGroupResponse[5](error_code=79, generation_id=-1, protocol_name="", leader="",
                                    member_id="app-1-x", members=[])
    expected.with_header(correlation_id=3)
    assert framing.encode_response(response, 3) == bytes(expected.encode(header=True, framed=True))
