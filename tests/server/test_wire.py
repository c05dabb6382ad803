"""The wire edge: ApiVersions as real brokers answer it, and malformed input that closes one
connection and nothing else."""

from __future__ import annotations

import socket
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import groupctl.server.handlers  # noqa: F401  (registers every API)
from groupctl.protocol.registry import REGISTRY
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse
from tests.support.wire import connect, read_frame, roundtrip


def api_versions(sock, version=3):
    frame = roundtrip(sock, ApiVersionsRequest[version](client_software_name="t", client_software_version="1"), version)
    return ApiVersionsResponse.decode(frame, version=version, header=True)


def is_closed(sock: socket.socket) -> bool:
    sock.settimeout(5)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def test_api_versions_advertises_exactly_the_registry(coordinator):
    with connect(coordinator) as sock:
        response = api_versions(sock)
    assert response.error_code == 0
    advertised = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    assert advertised == {key: (s.min_version, s.max_version) for key, s in REGISTRY.items()}


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_api_versions_is_served_at_every_version(coordinator, version):
    with connect(coordinator) as sock:
        assert api_versions(sock, version).error_code == 0


def test_api_versions_above_the_served_range_gets_error_35_in_a_v0_body(coordinator):
    # A v9 request (newer than anything served): header v2 layout, body unknown to us.
    header = struct.pack(">hhih", 18, 9, 42, 1) + b"x" + b"\x00"
    with connect(coordinator) as sock:
        sock.sendall(struct.pack(">i", len(header)) + header)
        frame = read_frame(sock)
    response = ApiVersionsResponse.decode(frame, version=0, header=True)
    assert response.header.correlation_id == 42
    assert response.error_code == 35
    assert [(k.api_key, k.max_version) for k in response.api_keys] == [(18, REGISTRY[18].max_version)]


def test_a_version_outside_the_registered_range_closes_the_connection(coordinator):
    with connect(coordinator) as sock:
        request = MetadataRequest[1](topics=[])
        request.with_header(correlation_id=1, client_id="t")
        raw = bytearray(request.encode(version=1, header=True, framed=True))
        struct.pack_into(">h", raw, 6, 99)  # claim Metadata v99
        sock.sendall(bytes(raw))
        assert is_closed(sock)


MALFORMED = {
    "negative length": struct.pack(">i", -5),
    "zero length": struct.pack(">i", 0),
    "absurd length": struct.pack(">i", 2**31 - 1),
    "truncated header": struct.pack(">i", 3) + b"\x00\x03\x00",
    "unknown api key": struct.pack(">i", 10) + struct.pack(">hhih", 9999, 0, 1, 0),
    "undecodable body": struct.pack(">i", 12) + struct.pack(">hhih", 3, 1, 1, 0) + b"\xff\xff",
}


@pytest.mark.parametrize("payload", list(MALFORMED.values()), ids=list(MALFORMED))
def test_malformed_frames_close_only_their_connection(coordinator, payload):
    with connect(coordinator) as healthy:
        assert api_versions(healthy).error_code == 0
        with connect(coordinator) as bad:
            bad.sendall(payload)
            assert is_closed(bad)
        assert api_versions(healthy).error_code == 0
    with connect(coordinator) as fresh:
        assert api_versions(fresh).error_code == 0


def test_frame_larger_than_the_configured_maximum_is_refused_before_reading_it(small_frame_coordinator):
    with connect(small_frame_coordinator) as sock:
        sock.sendall(struct.pack(">i", 4096) + b"\x00" * 10)
        assert is_closed(sock)


def test_responses_come_back_in_request_order_when_pipelined(coordinator):
    with connect(coordinator) as sock:
        for cid in range(20):
            request = MetadataRequest[1](topics=[]) if cid % 2 else ApiVersionsRequest[0]()
            request.with_header(correlation_id=cid, client_id="t")
            sock.sendall(bytes(request.encode(header=True, framed=True)))
        for cid in range(20):
            frame = read_frame(sock)
            assert struct.unpack_from(">i", frame)[0] == cid


def test_metadata_lists_this_node_at_its_advertised_address(coordinator):
    with connect(coordinator) as sock:
        frame = roundtrip(sock, MetadataRequest[12](topics=None, allow_auto_topic_creation=False,
                                                     include_topic_authorized_operations=False), 12)
    response = MetadataResponse.decode(frame, version=12, header=True)
    assert [(b.node_id, b.host, b.port) for b in response.brokers] == [(0, "127.0.0.1", coordinator.port)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    api_key=st.sampled_from(sorted(REGISTRY)),
    version=st.integers(min_value=0, max_value=20),
    body=st.binary(max_size=64),
)
def test_random_bodies_for_every_api_never_take_the_server_down(coordinator, api_key, version, body):
    frame = struct.pack(">hhih", api_key, version, 1, 1) + b"x" + body
    with connect(coordinator) as sock:
        sock.sendall(struct.pack(">i", len(frame)) + frame)
        sock.settimeout(5)
        try:
            sock.recv(65536)  # an answer or a close; either is fine
        except (ConnectionResetError, TimeoutError):
            pass
    with connect(coordinator) as healthy:
        assert api_versions(healthy).error_code == 0
