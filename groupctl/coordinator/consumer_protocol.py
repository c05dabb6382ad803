"""Decoding the consumer protocol's opaque bytes (protocol type "consumer").

Inside JoinGroup a consumer's metadata is a `ConsumerProtocolSubscription`, and inside SyncGroup
its assignment is a `ConsumerProtocolAssignment`; both start with their version as an int16.
kafka-python's classes (`kafka/protocol/consumer/metadata.py`) do the decoding: the version is read
from the bytes, and a version newer than the library knows is read with the newest layout it has
(every version is a prefix-compatible extension of v0, as Kafka itself relies on).

Invariants:
- Decoding never raises: these bytes come from clients, and a malformed subscription must not
  take the coordinator down. `parse_*` answers None for undecodable bytes (callers that must tell
  "unknown" from "nothing", like OffsetDelete's subscription check, use it); `decode_*` answers
  the empty value instead.
- Empty bytes are the empty assignment (what the coordinator hands a member the leader did not
  assign anything), not an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

CONSUMER_PROTOCOL_TYPE = "consumer"


@dataclass(frozen=True)
class Subscription:
    """A decoded `ConsumerProtocolSubscription`: what a classic-protocol member of a consumer
    group (online migration) tells the coordinator in its JoinGroup."""

    version: int
    topics: tuple[str, ...]
    owned: dict[str, list[int]]  # {topic: partitions}; {} before v1, where nothing is said (eager members own nothing)
    rack_id: Optional[str]


def parse_subscription(data: bytes) -> Optional[list[str]]:
    """The subscribed topics, in the member's order, or None when the bytes do not decode."""
    try:
        decoded = ConsumerProtocolSubscription.decode(bytes(data))
        return [str(topic) for topic in decoded.topics or ()]
    except Exception:  # noqa: BLE001 - any malformed input is "undecodable", by design
        return None


def parse_subscription_details(data: bytes) -> Optional[Subscription]:
    """The whole subscription, or None when the bytes do not decode."""
    try:
        decoded = ConsumerProtocolSubscription.decode(bytes(data))
        owned: dict[str, list[int]] = {}
        for entry in getattr(decoded, "owned_partitions", None) or ():
            owned.setdefault(str(entry.topic), []).extend(int(p) for p in entry.partitions or ())
        return Subscription(int(decoded.version), tuple(str(t) for t in decoded.topics or ()), owned,
                            getattr(decoded, "rack_id", None) or None)
    except Exception:  # noqa: BLE001 - any malformed input is "undecodable", by design
        return None


def encode_assignment(partitions: Mapping[str, list[int]], version: int) -> bytes:
    """A `ConsumerProtocolAssignment` of {topic: partitions}, at `version` (capped at the newest
    kafka-python knows: a member reads any version up to the one it subscribed with)."""
    version = max(0, min(version, ConsumerProtocolAssignment.max_version))
    return ConsumerProtocolAssignment(
        version=version, user_data=None,
        assigned_partitions=[ConsumerProtocolAssignment.TopicPartition(topic=topic, partitions=sorted(ps))
                             for topic, ps in sorted(partitions.items())]).encode(version=version)


def parse_assignment(data: bytes) -> Optional[dict[str, list[int]]]:
    """{topic: sorted partitions}, {} for empty bytes, or None when the bytes do not decode."""
    if not data:
        return {}
    try:
        decoded = ConsumerProtocolAssignment.decode(bytes(data))
        assignment: dict[str, list[int]] = {}
        for entry in decoded.assigned_partitions or ():
            assignment.setdefault(str(entry.topic), []).extend(int(p) for p in entry.partitions or ())
        return {topic: sorted(set(partitions)) for topic, partitions in assignment.items()}
    except Exception:  # noqa: BLE001 - any malformed input is "undecodable", by design
        return None


def decode_subscription(data: bytes) -> list[str]:
    """The subscribed topics; [] when the bytes do not decode."""
    return parse_subscription(data) or []


def decode_assignment(data: bytes) -> dict[str, list[int]]:
    """{topic: sorted partitions}; {} when the bytes do not decode."""
    return parse_assignment(data) or {}
