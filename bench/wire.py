"""A minimal asyncio Kafka-protocol client for benchmarks: pre-encoded frames, raw sockets.

Benchmarks must measure the server, not a client library, so requests are encoded once with
kafka-python's classes and replayed; responses are read as length-prefixed frames and decoded
only where the bench needs their content (set-up steps).
"""

from __future__ import annotations

import asyncio
import struct

from kafka.protocol.consumer import (
    HeartbeatRequest, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse,
    OffsetCommitRequest, SyncGroupRequest, SyncGroupResponse,
)
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

JOIN_V, SYNC_V, HEARTBEAT_V, COMMIT_V = 5, 3, 3, 8


def frame(request, version: int, correlation_id: int = 1) -> bytes:
    request.with_header(correlation_id=correlation_id, client_id="bench")
    return bytes(request.encode(version=version, header=True, framed=True))


class Conn:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, host: str, port: int) -> "Conn":
        return cls(*await asyncio.open_connection(host, port))

    async def read_frame(self) -> bytes:
        (length,) = struct.unpack(">i", await self.reader.readexactly(4))
        return await self.reader.readexactly(length)

    async def call(self, data: bytes) -> bytes:
        self.writer.write(data)
        return await self.read_frame()

    def close(self) -> None:
        self.writer.close()


async def join_single_member_group(conn: Conn, group: str, topic: str, partitions: int) -> tuple[str, int]:
    """Make `conn` the only member of `group` (JoinGroup twice for MEMBER_ID_REQUIRED, then the
    leader's SyncGroup); returns (member_id, generation)."""
    subscription = bytes(ConsumerProtocolSubscription(version=0, topics=[topic], user_data=None).encode())
    member_id = ""
    for _ in range(3):
        join = JoinGroupRequest[JOIN_V](
            group_id=group, session_timeout_ms=30000, rebalance_timeout_ms=30000, member_id=member_id,
            group_instance_id=None, protocol_type="consumer",
            protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=subscription)],
        )
        response = JoinGroupResponse.decode(await conn.call(frame(join, JOIN_V)), version=JOIN_V, header=True)
        member_id = response.member_id
        if response.error_code == 0:
            break
    else:
        raise RuntimeError(f"join failed: error {response.error_code}")
    assignment = bytes(ConsumerProtocolAssignment(
        version=0, assigned_partitions=[(topic, list(range(partitions)))], user_data=None).encode())
    sync = SyncGroupRequest[SYNC_V](
        group_id=group, generation_id=response.generation_id, member_id=member_id, group_instance_id=None,
        assignments=[SyncGroupRequest.SyncGroupRequestAssignment(member_id=member_id, assignment=assignment)],
    )
    synced = SyncGroupResponse.decode(await conn.call(frame(sync, SYNC_V)), version=SYNC_V, header=True)
    if synced.error_code != 0:
        raise RuntimeError(f"sync failed: error {synced.error_code}")
    return member_id, response.generation_id


def heartbeat_frame(group: str, member_id: str, generation: int) -> bytes:
    return frame(HeartbeatRequest[HEARTBEAT_V](group_id=group, generation_id=generation, member_id=member_id,
                                               group_instance_id=None), HEARTBEAT_V)


def heartbeat_ok(data: bytes) -> bool:
    return HeartbeatResponse.decode(data, version=HEARTBEAT_V, header=True).error_code == 0


def consumer_heartbeat_frame(group: str, member_id: str, epoch: int, *, join: bool = False,
                             topic: str = "") -> bytes:
    """ConsumerGroupHeartbeat v1 (KIP-848): the full join, or the steady heartbeat librdkafka sends
    (everything unchanged: nulls and -1)."""
    from groupctl.protocol.consumer_group import ConsumerGroupHeartbeatRequest

    request = ConsumerGroupHeartbeatRequest[1](
        group_id=group, member_id=member_id, member_epoch=epoch, instance_id=None, rack_id=None,
        rebalance_timeout_ms=300_000 if join else -1, subscribed_topic_names=[topic] if join else None,
        subscribed_topic_regex="" if join else None, server_assignor=None, topic_partitions=[] if join else None)
    return frame(request, 1)


def consumer_heartbeat_epoch(data: bytes) -> int:
    """The member epoch of a ConsumerGroupHeartbeat v1 response (RuntimeError on an error)."""
    from groupctl.protocol.consumer_group import ConsumerGroupHeartbeatResponse

    response = ConsumerGroupHeartbeatResponse.decode(data, version=1, header=True)
    if response.error_code != 0:
        raise RuntimeError(f"consumer heartbeat failed: error {response.error_code}")
    return response.member_epoch


def commit_frame(group: str, member_id: str, generation: int, topic: str, partition: int, offset: int) -> bytes:
    partition_entry = OffsetCommitRequest.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
        partition_index=partition, committed_offset=offset, committed_leader_epoch=-1, committed_metadata="")
    request = OffsetCommitRequest[COMMIT_V](
        group_id=group, generation_id_or_member_epoch=generation, member_id=member_id, group_instance_id=None,
        topics=[OffsetCommitRequest.OffsetCommitRequestTopic(name=topic, partitions=[partition_entry])],
    )
    return frame(request, COMMIT_V)
