"""The simulator's asyncio connection (`groupctl.client.aio`): pipelined requests answered in order
by a real coordinator, and every way a broker can fail it ending each request with ConnectionFailed
(never a hang): silence past the request timeout, an undecodable frame, a wrong correlation id, a
closed socket, a refused connection."""

from __future__ import annotations

import asyncio
import struct
from typing import Callable, Optional

import pytest
from kafka.protocol.metadata import ApiVersionsResponse

from groupctl.client.aio import AsyncConnection
from groupctl.client.kafka import API_VERSIONS, METADATA, ConnectionFailed, Node
from tests.support.coordinator import InProcessCoordinator, node_config


def metadata_build(cls: type, version: int):
    return cls(topics=None, allow_auto_topic_creation=False)


def test_pipelined_requests_to_a_real_coordinator_are_each_answered():
    node = InProcessCoordinator(node_config(topics=(("t", 3),))).start()

    async def scenario() -> list:
        connection = await AsyncConnection.open(Node(0, "127.0.0.1", node.port))
        try:
            version = connection.version_for(METADATA, (1, 12))
            from groupctl.client.kafka import message_classes

            cls = message_classes(METADATA)[0][version]
            futures = [connection.send(METADATA, version, metadata_build(cls, version)) for _ in range(50)]
            return await asyncio.wait_for(asyncio.gather(*futures), 10)
        finally:
            connection.close()

    try:
        answers = asyncio.run(scenario())
    finally:
        node.stop()
    assert len(answers) == 50 and all([t.name for t in a.topics] == ["t"] for a in answers)


CLOSE = b"close"


class FakeBroker:
    """Answers ApiVersions properly, then every later request with `answer(correlation_id)`: bytes
    to send, None to stay silent, or CLOSE to close the connection."""

    def __init__(self, answer: Callable[[int], Optional[bytes]]) -> None:
        self.answer = answer
        self.server: Optional[asyncio.AbstractServer] = None

    async def start(self) -> Node:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return Node(0, "127.0.0.1", self.server.sockets[0].getsockname()[1])

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                (length,) = struct.unpack(">i", await reader.readexactly(4))
                frame = await reader.readexactly(length)
                key, version, correlation_id = struct.unpack(">hhi", frame[:8])
                if key == API_VERSIONS:
                    writer.write(api_versions_answer(correlation_id, version))
                else:
                    answer = self.answer(correlation_id)
                    if answer is CLOSE:
                        return
                    if answer is not None:
                        writer.write(answer)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    def close(self) -> None:
        self.server.close()


def api_versions_answer(correlation_id: int, version: int) -> bytes:
    """ApiVersions at the version asked (its response header is never flexible): this broker serves
    ApiVersions and Metadata v0-1."""
    keys = ApiVersionsResponse.ApiVersion
    response = ApiVersionsResponse(error_code=0, throttle_time_ms=0,
                                   api_keys=[keys(api_key=API_VERSIONS, min_version=0, max_version=4),
                                             keys(api_key=METADATA, min_version=0, max_version=1)])
    return frame(correlation_id, bytes(response.encode(version=version)))


def frame(correlation_id: int, body: bytes) -> bytes:
    return struct.pack(">ii", len(body) + 4, correlation_id) + body


async def one_metadata_request(answer: Callable[[int], Optional[bytes]], request_timeout: float = 5.0):
    broker = FakeBroker(answer)
    node = await broker.start()
    try:
        connection = await AsyncConnection.open(node, request_timeout=request_timeout)
        try:
            return await asyncio.wait_for(connection.call(METADATA, (1, 1), metadata_build), 10), connection
        finally:
            connection.close()
    finally:
        broker.close()


def test_a_silent_broker_fails_the_request_after_the_request_timeout():
    with pytest.raises(ConnectionFailed, match="did not answer within 0.3s"):
        asyncio.run(one_metadata_request(lambda cid: None, request_timeout=0.3))


def test_an_undecodable_response_fails_the_request_and_closes_the_connection():
    async def scenario():
        broker = FakeBroker(lambda cid: frame(cid, b"\x00"))
        node = await broker.start()
        connection = await AsyncConnection.open(node)
        try:
            with pytest.raises(ConnectionFailed, match="undecodable response"):
                await asyncio.wait_for(connection.call(METADATA, (1, 1), metadata_build), 10)
            assert connection.closed
            with pytest.raises(ConnectionFailed):  # a closed connection stays closed: later sends fail at once
                await connection.call(METADATA, (1, 1), metadata_build)
        finally:
            connection.close()
            broker.close()

    asyncio.run(scenario())


def test_a_response_with_another_correlation_id_closes_the_connection():
    with pytest.raises(ConnectionFailed, match="answered correlation id 999"):
        asyncio.run(one_metadata_request(lambda cid: frame(999, bytes(12))))


def test_a_broker_that_closes_the_socket_fails_the_requests_in_flight():
    with pytest.raises(ConnectionFailed, match="lost"):
        asyncio.run(one_metadata_request(lambda cid: CLOSE))


def test_a_refused_connection_names_the_node():
    async def scenario():
        broker = FakeBroker(lambda cid: None)
        node = await broker.start()
        broker.close()
        await asyncio.sleep(0)
        with pytest.raises(ConnectionFailed, match=f"cannot reach 127.0.0.1:{node.port}"):
            await AsyncConnection.open(node)

    asyncio.run(scenario())
