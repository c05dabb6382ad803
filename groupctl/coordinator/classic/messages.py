"""The classic group core's requests and responses, independent of wire versions.

Handlers in `groupctl.server.handlers` convert kafka-python's message objects (any version) to
and from these values; the core never sees wire classes. Error fields hold `ErrorCode` values.
Byte fields (protocol metadata, assignments) are opaque to the core. The offset APIs'
values, the same for every group type, are in `groupctl.coordinator.offsets.messages`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from groupctl.coordinator.errors import ErrorCode

# --- JoinGroup -----------------------------------------------------------------------------

@dataclass(frozen=True)
class JoinGroup:
    group_id: str
    member_id: str  # "" for a new member
    group_instance_id: Optional[str]
    session_timeout_ms: int
    rebalance_timeout_ms: int  # v0 clients: equal to session_timeout_ms
    protocol_type: str
    protocols: tuple[tuple[str, bytes], ...]  # (name, metadata) in the member's preference order
    client_id: str
    client_host: str
    require_known_member_id: bool  # JoinGroup v4+: answer MEMBER_ID_REQUIRED to new members
    reason: Optional[str] = None


@dataclass(frozen=True)
class JoinedMember:
    member_id: str
    group_instance_id: Optional[str]
    metadata: bytes  # the member's metadata for the chosen protocol


@dataclass(frozen=True)
class JoinGroupResult:
    error: ErrorCode
    generation_id: int = -1
    protocol_type: Optional[str] = None
    protocol_name: Optional[str] = None
    leader: str = ""
    member_id: str = ""
    members: tuple[JoinedMember, ...] = ()  # non-empty only for the leader
    skip_assignment: bool = False  # v9+: static leader rejoining a stable group


# --- SyncGroup -----------------------------------------------------------------------------

@dataclass(frozen=True)
class SyncGroup:
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: Optional[str]
    protocol_type: Optional[str]  # v5+, else None
    protocol_name: Optional[str]  # v5+, else None
    assignments: tuple[tuple[str, bytes], ...]  # leader only: (member_id, assignment)


@dataclass(frozen=True)
class SyncGroupResult:
    error: ErrorCode
    protocol_type: Optional[str] = None
    protocol_name: Optional[str] = None
    assignment: bytes = b""


# --- Heartbeat / LeaveGroup ----------------------------------------------------------------

@dataclass(frozen=True)
class Heartbeat:
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: Optional[str]


@dataclass(frozen=True)
class HeartbeatResult:
    error: ErrorCode


@dataclass(frozen=True)
class LeavingMember:
    member_id: str  # may be "" for a static member identified by group_instance_id (v3+)
    group_instance_id: Optional[str] = None
    reason: Optional[str] = None


@dataclass(frozen=True)
class LeaveGroup:
    group_id: str
    members: tuple[LeavingMember, ...]  # v0-2: exactly one


@dataclass(frozen=True)
class LeftMember:
    member_id: str
    group_instance_id: Optional[str]
    error: ErrorCode


@dataclass(frozen=True)
class LeaveGroupResult:
    error: ErrorCode  # top-level (group-wide) error
    members: tuple[LeftMember, ...] = ()


# --- Admin ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class ListedGroup:
    group_id: str
    protocol_type: str
    state: str  # "Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"
    group_type: str = "classic"


@dataclass(frozen=True)
class DescribedMember:
    member_id: str
    group_instance_id: Optional[str]
    client_id: str
    client_host: str
    metadata: bytes  # the member's metadata for the group's protocol
    assignment: bytes  # the member's current assignment (b"" when none)


@dataclass(frozen=True)
class GroupDescription:
    group_id: str
    error: ErrorCode
    state: str = "Dead"
    protocol_type: str = ""
    protocol: str = ""  # the chosen protocol (assignor); "" unless Stable/CompletingRebalance
    generation_id: int = -1  # not on the wire (DescribeGroups has no generation): CLI/ops use it
    members: tuple[DescribedMember, ...] = ()
    error_message: Optional[str] = None  # GROUP_ID_NOT_FOUND (v6): why, when not "not found"


@dataclass(frozen=True)
class DeletedGroup:
    group_id: str
    error: ErrorCode


@dataclass(frozen=True)
class TriggerRebalance:
    """An operator's request for the group's next rebalance (`groupctl rebalance trigger`)."""

    group_id: str
    reason: Optional[str] = None  # the operator's words, recorded in the document's "rebalance"
    client_id: Optional[str] = None  # who asked (the requesting client), when known


@dataclass(frozen=True)
class TriggerRebalanceResult:
    error: ErrorCode  # NONE, or GROUP_ID_NOT_FOUND
    state: str = "Dead"  # the group's state when the trigger arrived
    started: bool = False  # True when the trigger (re)started the join phase
