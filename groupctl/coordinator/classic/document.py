"""The group document (`groupctl.layout.groups`): building it from a group, and reading members back.

Written when a rebalance completes (Stable), when the group empties (Empty), and when a static
member's restart changes a member id in a Stable group; loaded when a coordinator starts or takes
the group over. `rebalance` is the last completed rebalance (see `causes`), None when the group
has not completed one since the field was introduced.

Invariants of a stored group (checked on load, `document_state`): member ids are unique; the
leader is one of the members; "state" is "Stable" with members, naming the protocol, or "Empty"
without.
"""

from __future__ import annotations

from typing import Mapping, Optional

from groupctl.coordinator.classic.group import ClassicGroup, Member
from groupctl.coordinator.classic.state import GroupState
from groupctl.coordinator.consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    decode_assignment,
    decode_subscription,
)
from groupctl.layout.groups import GroupDocument, GroupMember, LastRebalance


class InvalidDocument(ValueError):
    """A stored group document that cannot describe a classic group."""


def build_document(
    group: ClassicGroup,
    *,
    node_id: int,
    now_ms: int,
    state: Optional[GroupState] = None,
    assignments: Optional[Mapping[str, bytes]] = None,
    rebalance: Optional[LastRebalance] = None,
) -> GroupDocument:
    """The document of `group` as it will be once `state` (default: its current state),
    `assignments` (default: the members' current ones) and `rebalance` (default: the group's
    last completed rebalance) are applied."""
    consumer = group.protocol_type == CONSUMER_PROTOCOL_TYPE
    members = []
    ownership: dict[str, dict[str, str]] = {}
    for member in group.members.values():
        assignment = member.assignment if assignments is None else assignments.get(member.member_id, b"")
        metadata = member.metadata(group.protocol)
        decoded = decode_assignment(assignment) if consumer else {}
        members.append(GroupMember(
            member_id=member.member_id,
            group_instance_id=member.group_instance_id,
            client_id=member.client_id,
            client_host=member.client_host,
            session_timeout_ms=member.session_timeout_ms,
            rebalance_timeout_ms=member.rebalance_timeout_ms,
            subscription=decode_subscription(metadata) if consumer else [],
            assignment=decoded,
            metadata_bytes=metadata,
            assignment_bytes=assignment,
        ))
        for topic, partitions in decoded.items():
            for partition in partitions:
                ownership.setdefault(topic, {})[str(partition)] = member.member_id
    return GroupDocument(
        group=group.group_id,
        protocol_type=group.protocol_type,
        protocol=group.protocol if members else None,
        generation=group.generation,
        state=(state or group.state).value,
        leader=group.leader if members else None,
        members=tuple(members),
        ownership={topic: dict(sorted(owners.items(), key=lambda kv: int(kv[0])))
                   for topic, owners in sorted(ownership.items())},
        coordinator=node_id,
        updated_at_ms=now_ms,
        rebalance=rebalance if rebalance is not None else group.last_rebalance,
    )


def document_state(doc: GroupDocument) -> GroupState:
    """The stored state, checked against the members: Stable with members or Empty without."""
    try:
        state = GroupState(doc.state)
    except ValueError:
        raise InvalidDocument(f"unknown group state {doc.state!r} in group document") from None
    expected = GroupState.STABLE if doc.members else GroupState.EMPTY
    if state is not expected:
        raise InvalidDocument(f"a stored group is Stable with members or Empty without, not {state.value} "
                              f"with {len(doc.members)} members")
    ids = [m.member_id for m in doc.members]
    if len(set(ids)) != len(ids):
        raise InvalidDocument(f"duplicate member ids in group document: {ids}")
    if doc.members and doc.leader not in ids:
        raise InvalidDocument(f"leader {doc.leader!r} is not a member")
    if doc.members and doc.protocol is None:
        raise InvalidDocument("a Stable group document names its protocol")
    return state


def document_members(doc: GroupDocument) -> list[Member]:
    """The members of a stored document, each supporting just the chosen protocol (as Kafka
    loads them): the next rebalance collects fresh protocol lists from the rejoining members."""
    return [
        Member(
            member_id=m.member_id,
            group_instance_id=m.group_instance_id,
            client_id=m.client_id,
            client_host=m.client_host,
            session_timeout_ms=m.session_timeout_ms,
            rebalance_timeout_ms=m.rebalance_timeout_ms,
            protocol_type=doc.protocol_type,
            protocols=((doc.protocol, m.metadata_bytes),),
            assignment=m.assignment_bytes,
        )
        for m in doc.members
    ]
