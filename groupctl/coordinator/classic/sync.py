"""SyncGroup: the leader hands out the assignment; everyone receives theirs.

Checks, in Kafka's order: group id, the group (unknown: UNKNOWN_MEMBER_ID), the member's identity
(UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID), the generation (ILLEGAL_GENERATION), and with v5+ the
protocol type and name (INCONSISTENT_GROUP_PROTOCOL when given and different).

- PreparingRebalance: REBALANCE_IN_PROGRESS.
- CompletingRebalance: the SyncGroup is parked. The leader's completes the sync phase: its
  assignment (members it left out get empty bytes, ids that are not members are ignored) goes
  into the Stable group document, and the same `Result` answers the leader and every parked
  follower (the runtime persists the document before it delivers the answers).
- Stable: the member's current assignment at once.
"""

from __future__ import annotations

from typing import Hashable, Optional

from groupctl.coordinator.classic import rebalance
from groupctl.coordinator.classic.context import Core
from groupctl.coordinator.classic.group import Parked
from groupctl.coordinator.classic.messages import SyncGroup, SyncGroupResult
from groupctl.coordinator.classic.state import GroupState
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.results import Result


def _inconsistent(requested: Optional[str], current: Optional[str]) -> bool:
    return requested is not None and current is not None and requested != current


def sync_group(core: Core, token: Hashable, req: SyncGroup, now_ms: int) -> Result:
    out = Result()
    if not req.group_id:
        return out.reply(token, SyncGroupResult(error=ErrorCode.INVALID_GROUP_ID))
    group = core.groups.get(req.group_id)
    if group is None:
        return out.reply(token, SyncGroupResult(error=ErrorCode.UNKNOWN_MEMBER_ID))
    error = group.validate_member(req.member_id, req.group_instance_id)
    if error is ErrorCode.NONE and req.generation_id != group.generation:
        error = ErrorCode.ILLEGAL_GENERATION
    if error is ErrorCode.NONE and (_inconsistent(req.protocol_type, group.protocol_type)
                                    or _inconsistent(req.protocol_name, group.protocol)):
        error = ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    if error is not ErrorCode.NONE:
        return out.reply(token, SyncGroupResult(error=error))

    member = group.members[req.member_id]
    if group.state is GroupState.PREPARING_REBALANCE:
        return out.reply(token, SyncGroupResult(error=ErrorCode.REBALANCE_IN_PROGRESS))
    if group.state is GroupState.STABLE:
        rebalance.mark_synced(core, group, member.member_id)
        rebalance.arm_session(core, group, member)
        return out.reply(token, SyncGroupResult(
            error=ErrorCode.NONE, protocol_type=group.protocol_type, protocol_name=group.protocol,
            assignment=member.assignment,
        ))
    if group.state is not GroupState.COMPLETING_REBALANCE:
        raise AssertionError(f"member {member.member_id} of group {group.group_id} in state {group.state.value}")

    member.answer_sync(out, SyncGroupResult(error=ErrorCode.REBALANCE_IN_PROGRESS))  # superseded
    member.awaiting_sync = Parked(token)
    rebalance.mark_synced(core, group, member.member_id)
    if member.member_id == group.leader:
        given = dict(req.assignments)
        assignments = {member_id: given.get(member_id, b"") for member_id in group.members}
        rebalance.write_document(core, group, GroupState.STABLE, now_ms, out, assignments=assignments)
        rebalance.propagate_assignment(core, group, ErrorCode.NONE, out)
    return out
