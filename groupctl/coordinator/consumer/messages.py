"""The consumer group core's requests and responses, independent of wire versions.

The handler converts ConsumerGroupHeartbeat/Describe (any version) to and from these; topic ids
are uuid strings. None in a heartbeat field means "unchanged since the last heartbeat", as on the
wire (-1 for the rebalance timeout).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from groupctl.coordinator.consumer.partitions import Assignment
from groupctl.coordinator.errors import ErrorCode


@dataclass(frozen=True)
class ConsumerHeartbeat:
    group_id: str
    member_id: str
    member_epoch: int
    instance_id: Optional[str] = None
    rack_id: Optional[str] = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: Optional[tuple[str, ...]] = None
    subscribed_topic_regex: Optional[str] = None
    server_assignor: Optional[str] = None
    owned: Optional[Assignment] = None  # TopicPartitions: what the member owns now
    client_id: str = ""
    client_host: str = ""
    member_id_from_client: bool = True  # version 1+: the client makes the member id (KIP-1082)

    @property
    def full(self) -> bool:
        """Whether the request carries everything (a join, or a rejoin after an error): then the
        response carries the whole assignment."""
        return self.member_epoch == 0 or (self.rebalance_timeout_ms != -1 and self.subscribed_topic_names is not None
                                          and self.owned is not None)


@dataclass(frozen=True)
class ConsumerHeartbeatResult:
    error: ErrorCode
    error_message: Optional[str] = None
    member_id: Optional[str] = None
    member_epoch: int = -1
    heartbeat_interval_ms: int = 0
    assignment: Optional[Assignment] = None  # None: unchanged since the member last heard it


@dataclass(frozen=True)
class DescribedTopic:
    topic_id: str
    name: str  # "" when the topic no longer exists
    partitions: tuple[int, ...]


@dataclass(frozen=True)
class DescribedMember:
    member_id: str
    instance_id: Optional[str]
    rack_id: Optional[str]
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: Optional[str]
    assignment: tuple[DescribedTopic, ...]  # what it owns now (assigned and still revoking)
    target: tuple[DescribedTopic, ...]
    classic_protocol: bool = False  # a classic-protocol member (online migration)


@dataclass(frozen=True)
class DescribedConsumerGroup:
    group_id: str
    error: ErrorCode
    error_message: Optional[str] = None
    state: str = ""
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor: str = ""
    members: tuple[DescribedMember, ...] = ()
