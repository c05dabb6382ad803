"""Heartbeat and LeaveGroup: keeping a session alive, and ending it.

Heartbeat checks, in Kafka's order: group id, the group (unknown: UNKNOWN_MEMBER_ID), identity
(UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID), generation (ILLEGAL_GENERATION). Then by state:
PreparingRebalance -> REBALANCE_IN_PROGRESS (the member should rejoin); CompletingRebalance and
Stable -> NONE (as in Kafka, a member may heartbeat between its JoinGroup answer and its
SyncGroup). A heartbeat that passes the checks restarts the member's session.

LeaveGroup answers each leaving member separately (v3+ batches; the handler reports the single
member's error at the top level for v0-2). A member is named by member id, or by group instance
id alone (member id "") for an administrative removal of a static member; a pending member may
leave too. An unknown group is a group-wide UNKNOWN_MEMBER_ID. If anyone left, a settled group
rebalances (or empties) and an open join phase may complete. Each member that leaves is a
`member_left` journal event (a pending member was never admitted: it leaves no event).
"""

from __future__ import annotations

from typing import Hashable

from groupctl.coordinator.classic import events, rebalance
from groupctl.coordinator.classic.causes import Reason, RebalanceCause, caused_by
from groupctl.coordinator.classic.context import Core, session_key
from groupctl.coordinator.classic.group import Member
from groupctl.coordinator.classic.messages import (
    Heartbeat,
    HeartbeatResult,
    LeaveGroup,
    LeaveGroupResult,
    LeftMember,
)
from groupctl.coordinator.classic.state import GroupState
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.results import Result


def heartbeat(core: Core, token: Hashable, req: Heartbeat, now_ms: int) -> Result:
    out = Result()
    if not req.group_id:
        return out.reply(token, HeartbeatResult(ErrorCode.INVALID_GROUP_ID))
    group = core.groups.get(req.group_id)
    if group is None:
        return out.reply(token, HeartbeatResult(ErrorCode.UNKNOWN_MEMBER_ID))
    error = group.validate_member(req.member_id, req.group_instance_id)
    if error is ErrorCode.NONE and req.generation_id != group.generation:
        error = ErrorCode.ILLEGAL_GENERATION
    if error is not ErrorCode.NONE:
        return out.reply(token, HeartbeatResult(error))
    rebalance.arm_session(core, group, group.members[req.member_id])
    if group.state is GroupState.PREPARING_REBALANCE:
        return out.reply(token, HeartbeatResult(ErrorCode.REBALANCE_IN_PROGRESS))
    return out.reply(token, HeartbeatResult(ErrorCode.NONE))


def leave_group(core: Core, token: Hashable, req: LeaveGroup, now_ms: int) -> Result:
    out = Result()
    if not req.group_id:
        return out.reply(token, LeaveGroupResult(ErrorCode.INVALID_GROUP_ID))
    group = core.groups.get(req.group_id)
    if group is None:
        return out.reply(token, LeaveGroupResult(ErrorCode.UNKNOWN_MEMBER_ID))

    answers: list[LeftMember] = []
    departed: list[Member] = []  # who left: members, and pending members (by id)
    pending: list[str] = []
    for leaving in req.members:
        if not leaving.member_id:
            member_id = group.static_members.get(leaving.group_instance_id) if leaving.group_instance_id else None
            error = ErrorCode.UNKNOWN_MEMBER_ID if member_id is None else ErrorCode.NONE
        elif leaving.member_id in group.pending_join:
            member_id, error = None, ErrorCode.NONE
            pending.append(leaving.member_id)
            group.remove(leaving.member_id)
            core.timer.cancel(session_key(group.group_id, leaving.member_id))
        else:
            member_id = leaving.member_id
            error = group.validate_member(leaving.member_id, leaving.group_instance_id)
        if error is ErrorCode.NONE and member_id is not None:
            member = group.members[member_id]
            departed.append(member)
            out.events.append(events.member_left(core, group, member, now_ms))
            rebalance.drop_member(core, group, member, out)
        answers.append(LeftMember(leaving.member_id, leaving.group_instance_id, error))

    if departed or pending:
        reasons = sorted({m.reason for m in req.members if m.reason})
        what = "left" + (f"; client reason: {'; '.join(reasons)}" if reasons else "")
        cause = (caused_by(Reason.LEAVE, what, *departed) if departed
                 else RebalanceCause(Reason.LEAVE, detail=f"pending members {', '.join(pending)} {what}"))
        rebalance.rebalance_after_removal(core, group, now_ms, out, cause)
    return out.reply(token, LeaveGroupResult(ErrorCode.NONE, tuple(answers)))
