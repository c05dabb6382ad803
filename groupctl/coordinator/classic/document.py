"""The group document (docs/zookeeper-layout.md): building it from a group, and reading members back.

Written when a rebalance completes (Stable), when the group empties (Empty), and when a static
member's restart changes a member id in a Stable group; loaded when a coordinator starts or takes
the group over.

Fields beyond docs/zookeeper-layout.md (group): `rebalance`, the last completed rebalance (when it started
and completed, why; see `causes`), null when the group has not completed one since the field
was introduced (documents without the key are read as null).

Fields beyond docs/zookeeper-layout.md (each member): `group_instance_id`; `metadata_base64` (the member's
protocol metadata for the chosen protocol) and `assignment_base64` (its assignment bytes, exactly
as the leader sent them). The decoded `subscription` / `assignment` / `ownership` are for people
and tools; the bytes are what a coordinator taking the group over needs to answer SyncGroup and
to run the next rebalance (they carry user data, and are opaque for protocol types other than
"consumer", whose decoded fields are [] / {}).

Invariants: member ids are unique; the leader is one of the members (null when there are none);
"state" is "Stable" with members or "Empty" without.
"""

from __future__ import annotations

import base64
from typing import Any, Mapping, Optional

from groupctl.coordinator.classic.group import ClassicGroup, Member
from groupctl.coordinator.classic.state import GroupState
from groupctl.coordinator.consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    decode_assignment,
    decode_subscription,
)

DOCUMENT_VERSION = 1


class InvalidDocument(ValueError):
    """A stored group document that cannot describe a classic group."""


def build_document(
    group: ClassicGroup,
    *,
    node_id: int,
    now_ms: int,
    state: Optional[GroupState] = None,
    assignments: Optional[Mapping[str, bytes]] = None,
    rebalance: Optional[Mapping[str, Any]] = None,
) -> dict[str, Any]:
    """The document of `group` as it will be once `state` (default: its current state),
    `assignments` (default: the members' current ones) and `rebalance` (default: the group's
    last completed rebalance) are applied."""
    consumer = group.protocol_type == CONSUMER_PROTOCOL_TYPE
    last_rebalance = rebalance if rebalance is not None else group.last_rebalance
    members = []
    ownership: dict[str, dict[str, str]] = {}
    for member in group.members.values():
        assignment = member.assignment if assignments is None else assignments.get(member.member_id, b"")
        metadata = member.metadata(group.protocol)
        decoded = decode_assignment(assignment) if consumer else {}
        members.append({
            "member_id": member.member_id,
            "group_instance_id": member.group_instance_id,
            "client_id": member.client_id,
            "client_host": member.client_host,
            "session_timeout_ms": member.session_timeout_ms,
            "rebalance_timeout_ms": member.rebalance_timeout_ms,
            "subscription": decode_subscription(metadata) if consumer else [],
            "assignment": decoded,
            "metadata_base64": base64.b64encode(metadata).decode("ascii"),
            "assignment_base64": base64.b64encode(assignment).decode("ascii"),
        })
        for topic, partitions in decoded.items():
            for partition in partitions:
                ownership.setdefault(topic, {})[str(partition)] = member.member_id
    return {
        "version": DOCUMENT_VERSION,
        "group": group.group_id,
        "protocol_type": group.protocol_type,
        "protocol": group.protocol if members else None,
        "generation": group.generation,
        "state": (state or group.state).value,
        "leader": group.leader if members else None,
        "members": members,
        "ownership": {topic: dict(sorted(owners.items(), key=lambda kv: int(kv[0])))
                      for topic, owners in sorted(ownership.items())},
        "rebalance": dict(last_rebalance) if last_rebalance is not None else None,
        "coordinator": node_id,
        "updated_at_ms": now_ms,
    }


def document_state(doc: Mapping[str, Any]) -> GroupState:
    """The stored state, checked against the members: Stable with members, Empty without."""
    try:
        state = GroupState(doc["state"])
        members = doc["members"]
        if doc.get("version") != DOCUMENT_VERSION or not isinstance(members, list):
            raise InvalidDocument(f"unsupported group document version {doc.get('version')!r}")
    except (KeyError, ValueError, TypeError) as exc:
        raise InvalidDocument(f"malformed group document: {exc}") from exc
    expected = GroupState.STABLE if members else GroupState.EMPTY
    if state is not expected:
        raise InvalidDocument(f"a stored group is Stable with members or Empty without, not {state.value} "
                              f"with {len(members)} members")
    ids = [m["member_id"] for m in members]
    if len(set(ids)) != len(ids):
        raise InvalidDocument(f"duplicate member ids in group document: {ids}")
    if members and doc.get("leader") not in ids:
        raise InvalidDocument(f"leader {doc.get('leader')!r} is not a member")
    if members and not isinstance(doc.get("protocol"), str):
        raise InvalidDocument("a Stable group document names its protocol")
    return state


def document_members(doc: Mapping[str, Any]) -> list[Member]:
    """The members of a stored document, each supporting just the chosen protocol (as Kafka
    loads them): the next rebalance collects fresh protocol lists from the rejoining members."""
    protocol = doc.get("protocol")
    try:
        return [
            Member(
                member_id=m["member_id"],
                group_instance_id=m.get("group_instance_id"),
                client_id=m["client_id"],
                client_host=m["client_host"],
                session_timeout_ms=int(m["session_timeout_ms"]),
                rebalance_timeout_ms=int(m["rebalance_timeout_ms"]),
                protocol_type=doc["protocol_type"],
                protocols=((protocol, base64.b64decode(m["metadata_base64"])),),
                assignment=base64.b64decode(m["assignment_base64"]),
            )
            for m in doc["members"]
        ]
    except (KeyError, ValueError, TypeError) as exc:
        raise InvalidDocument(f"malformed member in group document: {exc}") from exc


def document_assignments(doc: Mapping[str, Any]) -> dict[str, bytes]:
    """member id -> assignment bytes."""
    try:
        return {m["member_id"]: base64.b64decode(m["assignment_base64"]) for m in doc["members"]}
    except (KeyError, ValueError, TypeError) as exc:
        raise InvalidDocument(f"malformed member in group document: {exc}") from exc


def document_rebalance(doc: Mapping[str, Any]) -> Optional[dict[str, Any]]:
    """The document's last completed rebalance (None when it records none)."""
    block = doc.get("rebalance")
    if block is None:
        return None
    if (not isinstance(block, dict) or not isinstance(block.get("started_at_ms"), int)
            or not isinstance(block.get("completed_at_ms"), int) or not isinstance(block.get("reason"), str)):
        raise InvalidDocument(f"malformed rebalance block in group document: {block!r}")
    return dict(block)
