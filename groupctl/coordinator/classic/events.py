"""The classic core's journal events, built from its groups, members and documents.

Thin adapters over `groupctl.coordinator.journal` (which says when each event is emitted): they
fill in the node id, the group id and the fields the classic core keeps on its objects. The
emission points call them with the state as it is at that moment, so e.g. a member's
`member_expired` carries the generation it was removed from.
"""

from __future__ import annotations

from typing import Optional

from groupctl.coordinator import journal
from groupctl.coordinator.classic.causes import RebalanceCause
from groupctl.coordinator.classic.context import Core
from groupctl.coordinator.classic.group import ClassicGroup, Member
from groupctl.coordinator.journal import Event
from groupctl.layout.groups import GroupDocument


def rebalance_started(core: Core, group: ClassicGroup, cause: RebalanceCause, now_ms: int) -> Event:
    """The episode `cause` starts, leaving the group's current generation."""
    return journal.rebalance_started(
        core.node_id, now_ms, group.group_id, generation=group.generation, reason=cause.reason.value,
        member_id=cause.member_id, client_id=cause.client_id, members=len(group.members))


def rebalance_completed(
    core: Core, group: ClassicGroup, document: GroupDocument, cause: RebalanceCause, started_at_ms: int,
    now_ms: int,
) -> Event:
    """The episode `cause` started, completed by `document` (whose decoded member assignments are
    empty unless the protocol type is "consumer")."""
    members = document.members
    return journal.rebalance_completed(
        core.node_id, now_ms, group.group_id, generation=document.generation, reason=cause.reason.value,
        started_ts=started_at_ms, state=document.state, protocol=document.protocol,
        leader=document.leader, member_ids=[m.member_id for m in members],
        assignment=journal.assignment_rows((m.member_id, m.client_id, m.assignment) for m in members))


def member_joined(core: Core, group: ClassicGroup, member: Member, now_ms: int,
                  replaced_member_id: Optional[str] = None) -> Event:
    return journal.member_joined(
        core.node_id, now_ms, group.group_id, member_id=member.member_id, client_id=member.client_id,
        client_host=member.client_host, instance_id=member.group_instance_id, generation=group.generation,
        replaced_member_id=replaced_member_id)


def member_left(core: Core, group: ClassicGroup, member: Member, now_ms: int) -> Event:
    return journal.member_left(core.node_id, now_ms, group.group_id, member_id=member.member_id,
                               client_id=member.client_id, generation=group.generation)


def member_expired(core: Core, group: ClassicGroup, member: Member, now_ms: int, reason: str) -> Event:
    return journal.member_expired(core.node_id, now_ms, group.group_id, member_id=member.member_id,
                                  client_id=member.client_id, generation=group.generation, reason=reason)
