"""A member of a consumer group (KIP-848) as the coordinator knows it.

Invariants:
- `assigned` and `pending_revocation` are disjoint; together they are what the member may still
  own, at `member_epoch` (the group's partition epochs are built from them).
- `pending_revocation` is non-empty only in UNREVOKED_PARTITIONS.
- A member that reached the target assignment epoch with nothing left to revoke or wait for is
  STABLE (`reconciled_to`).
- Subscribed topic names are kept sorted, so an unchanged subscription compares equal.
- `classic` is set exactly for a member that speaks the classic protocol (JoinGroup, SyncGroup,
  Heartbeat, LeaveGroup) inside a consumer group: online migration, see `classic_members`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Optional

from groupctl.coordinator.consumer.partitions import Assignment

JOIN_EPOCH = 0
LEAVE_EPOCH = -1
STATIC_LEAVE_EPOCH = -2  # a static member that left for now: it keeps its partitions while its session runs


class MemberState(Enum):
    """Where a member is in reconciling towards its target assignment."""

    STABLE = "stable"
    UNREVOKED_PARTITIONS = "unrevoked_partitions"  # must give partitions up before its epoch moves on
    UNRELEASED_PARTITIONS = "unreleased_partitions"  # at the target epoch, waiting for others to release
    UNKNOWN = "unknown"  # a state a newer groupctl wrote: fence the member, reconcile from scratch


@dataclass(frozen=True)
class ClassicMembership:
    """What a classic-protocol member said in its last JoinGroup (Apache Kafka's
    ClassicMemberMetadata): its session timeout and its protocols, (name, metadata) in its
    preference order; the first is the one it is answered with."""

    session_timeout_ms: int
    protocols: tuple[tuple[str, bytes], ...]

    @property
    def protocol_name(self) -> str:
        return self.protocols[0][0]


@dataclass(frozen=True)
class ConsumerMember:
    member_id: str
    member_epoch: int = JOIN_EPOCH
    previous_member_epoch: int = JOIN_EPOCH
    state: MemberState = MemberState.STABLE
    instance_id: Optional[str] = None
    rack_id: Optional[str] = None
    rebalance_timeout_ms: int = -1
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: Optional[str] = None
    server_assignor: Optional[str] = None
    assigned: Assignment = field(default_factory=dict)
    pending_revocation: Assignment = field(default_factory=dict)
    classic: Optional[ClassicMembership] = None

    def reconciled_to(self, target_epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == target_epoch

    def at_epoch(self, epoch: int) -> "ConsumerMember":
        """The member moved to `epoch` (its current epoch becomes the previous one)."""
        return replace(self, member_epoch=epoch, previous_member_epoch=self.member_epoch)

    def subscribes(self) -> bool:
        return bool(self.subscribed_topic_names) or bool(self.subscribed_topic_regex)
