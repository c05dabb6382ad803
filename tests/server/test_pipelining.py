"""Pipelined requests on one connection: answered in order, flushed as soon as the connection
waits, delivered even when a later frame closes the connection; and the runtime answers a
request that writes no records within the call, so a burst of them is answered in one go."""

from __future__ import annotations

import socket
import struct
import time

import pytest
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
)
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from groupctl.coordinator.classic.coordinator import GroupConfig
from groupctl.coordinator.classic.messages import Heartbeat, HeartbeatResult
from groupctl.coordinator.errors import ErrorCode
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.wire import read_frame

JOIN_DELAY_MS = 3000


@pytest.fixture
def delayed_join_coordinator():
    """A coordinator that parks a group's first JoinGroup for JOIN_DELAY_MS."""
    config = node_config(groups=GroupConfig(initial_rebalance_delay_ms=JOIN_DELAY_MS))
    node = InProcessCoordinator(config).start()
    yield node
    node.stop()


def framed(request, version: int, correlation_id: int) -> bytes:
    request.with_header(correlation_id=correlation_id, client_id="pipeline-test")
    return bytes(request.encode(version=version, header=True, framed=True))


def heartbeat(version: int, correlation_id: int, group_id: str = "no-such-group") -> bytes:
    return framed(HeartbeatRequest[version](group_id=group_id, generation_id=1, member_id="m-1",
                                            group_instance_id=None), version, correlation_id)


def connect(coordinator) -> socket.socket:
    return socket.create_connection(("127.0.0.1", coordinator.port), timeout=10)


def test_a_burst_of_heartbeats_at_every_version_is_answered_in_order(coordinator):
    versions = [v for _ in range(4) for v in range(5)]
    burst = b"".join(heartbeat(v, cid) for cid, v in enumerate(versions))
    burst += framed(ApiVersionsRequest[3](client_software_name="t", client_software_version="1"), 3, 99)
    with connect(coordinator) as sock:
        sock.sendall(burst)
        for cid, version in enumerate(versions):
            response = HeartbeatResponse.decode(read_frame(sock), version=version, header=True)
            assert (response.header.correlation_id, response.error_code) == (cid, ErrorCode.UNKNOWN_MEMBER_ID)
        api_versions = ApiVersionsResponse.decode(read_frame(sock), version=3, header=True)
        assert (api_versions.header.correlation_id, api_versions.error_code) == (99, 0)


def test_answers_before_a_malformed_frame_are_delivered_before_the_connection_closes(coordinator):
    truncated_body = heartbeat(0, 50)[:-2]
    bad = struct.pack(">i", len(truncated_body) - 4) + truncated_body[4:]
    with connect(coordinator) as sock:
        sock.sendall(b"".join(heartbeat(4, cid) for cid in range(10)) + bad + heartbeat(4, 51))
        for cid in range(10):
            response = HeartbeatResponse.decode(read_frame(sock), version=4, header=True)
            assert response.header.correlation_id == cid
        assert sock.recv(1) == b""  # closed: nothing for the malformed frame or after it


def test_an_answer_is_not_held_back_by_a_parked_request_behind_it(delayed_join_coordinator):
    join_v = 5

    def join(member_id: str, correlation_id: int) -> bytes:
        return framed(JoinGroupRequest[join_v](
            group_id="parked", session_timeout_ms=30000, rebalance_timeout_ms=30000, member_id=member_id,
            group_instance_id=None, protocol_type="consumer",
            protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"")],
        ), join_v, correlation_id)

    with connect(delayed_join_coordinator) as sock:
        sock.sendall(join("", 1))
        member_id = JoinGroupResponse.decode(read_frame(sock), version=join_v, header=True).member_id
        # The heartbeat is answered at once; the join behind it parks for JOIN_DELAY_MS.
        sent = time.monotonic()
        sock.sendall(heartbeat(4, 2) + join(member_id, 3))
        sock.settimeout(JOIN_DELAY_MS / 2000)
        assert HeartbeatResponse.decode(read_frame(sock), version=4, header=True).header.correlation_id == 2
        assert time.monotonic() - sent < JOIN_DELAY_MS / 2000
        sock.settimeout(JOIN_DELAY_MS / 1000 + 10)
        joined = JoinGroupResponse.decode(read_frame(sock), version=join_v, header=True)
        assert (joined.header.correlation_id, joined.error_code) == (3, 0)


def test_a_request_that_writes_no_records_is_answered_without_waiting_on_the_loop(coordinator):
    async def first_step_of_call_groups():
        beat = Heartbeat("no-such-group", 1, "m-1", None)
        call = coordinator.node.call_groups(lambda core, token, now: core.heartbeat(token, beat, now))
        try:
            call.send(None)
        except StopIteration as finished:
            return finished.value
        call.close()
        return "waited on the event loop"

    assert coordinator.call(first_step_of_call_groups()) == HeartbeatResult(ErrorCode.UNKNOWN_MEMBER_ID)
