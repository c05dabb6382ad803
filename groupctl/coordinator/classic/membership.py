"""JoinGroup: admitting new, pending, existing and static members.

Checks, in Kafka's order: group id, session timeout bounds (INVALID_SESSION_TIMEOUT), the group
(an unknown group with a member id: UNKNOWN_MEMBER_ID; without: a new Empty group), group size
(GROUP_MAX_SIZE_REACHED), protocol type and a protocol every member supports
(INCONSISTENT_GROUP_PROTOCOL), then the member's identity (UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID).

- A new dynamic member gets an id `<client-id>-<uuid>`; with `require_known_member_id` (v4+) it is
  answered MEMBER_ID_REQUIRED with that id and stays pending until it rejoins with it or its
  session timeout passes.
- A new static member is admitted at once; if its instance is known it takes over the old member
  id (whose parked requests get FENCED_INSTANCE_ID). In a Stable group whose protocol stays the
  same there is no rebalance: the document is rewritten with the new id and the member gets the
  current generation (the leader with `skip_assignment`, v9+).
- An existing member: in Stable, the leader or a changed protocol list starts a rebalance, a
  follower with the same protocols gets the current generation back; in CompletingRebalance the
  same protocols get the current generation, changed ones rebalance; in PreparingRebalance the
  JoinGroup is parked.
- `member_joined` is journaled on admission (a pending member's when it comes back with its id).

Deliberate differences from Apache Kafka: a new group is kept only if its first member is
admitted (Kafka keeps it even after INCONSISTENT_GROUP_PROTOCOL); static members' ids are
`<client-id>-<uuid>` like everyone's (Kafka prefixes them with the group instance id).
"""

from __future__ import annotations

from typing import Hashable

from groupctl.coordinator.classic import events, rebalance
from groupctl.coordinator.classic.causes import Reason, RebalanceCause, caused_by
from groupctl.coordinator.classic.context import Core, session_key
from groupctl.coordinator.classic.group import ClassicGroup, Member, Parked
from groupctl.coordinator.classic.messages import JoinGroup, JoinGroupResult, SyncGroupResult
from groupctl.coordinator.classic.state import GroupState
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.results import Result


def join_group(core: Core, token: Hashable, req: JoinGroup, now_ms: int) -> Result:
    out = Result()
    if not req.group_id:
        return out.reply(token, JoinGroupResult(error=ErrorCode.INVALID_GROUP_ID, member_id=req.member_id))
    if not core.config.min_session_timeout_ms <= req.session_timeout_ms <= core.config.max_session_timeout_ms:
        return out.reply(token, JoinGroupResult(error=ErrorCode.INVALID_SESSION_TIMEOUT, member_id=req.member_id))
    group = core.groups.get(req.group_id)
    if group is None:
        if req.member_id:
            return out.reply(token, JoinGroupResult(error=ErrorCode.UNKNOWN_MEMBER_ID, member_id=req.member_id))
        group = ClassicGroup(req.group_id)  # registered once the member is admitted

    if not _accepts_joining_member(core, group, req.member_id):
        existing = group.members.get(req.member_id)
        if existing is not None:
            cause = caused_by(Reason.GROUP_MAX_SIZE,
                              f"was removed: the group is over its maximum size ({core.config.max_group_size})",
                              existing)
            rebalance.remove_member_and_rebalance(core, group, existing, now_ms, out, cause)
        elif req.member_id in group.pending_join:
            group.remove(req.member_id)
            core.timer.cancel(session_key(group.group_id, req.member_id))
            rebalance.maybe_complete_join_phase(core, group, now_ms, out)
        return out.reply(token, JoinGroupResult(error=ErrorCode.GROUP_MAX_SIZE_REACHED))
    if not group.supports_protocols(req.protocol_type, {name for name, _ in req.protocols}):
        return out.reply(token, JoinGroupResult(error=ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id=req.member_id))
    core.groups.setdefault(req.group_id, group)
    if not req.member_id:
        _join_new_member(core, group, token, req, now_ms, out)
    else:
        _join_known_member(core, group, token, req, now_ms, out)
    return out


def _accepts_joining_member(core: Core, group: ClassicGroup, member_id: str) -> bool:
    """Kafka's group.max.size rule. During a join phase the members already parked count (so the
    last members to rejoin are the ones turned away when the group is too big); otherwise the
    members do."""
    limit = core.config.max_group_size
    if limit is None or group.state is GroupState.EMPTY:
        return True
    member = group.members.get(member_id)
    if group.state is GroupState.PREPARING_REBALANCE:
        return (member is not None and member.awaiting_join is not None) or group.num_awaiting_join() < limit
    return member is not None or len(group.members) < limit


def _join_cause(reason: Reason, what: str, member: Member, req: JoinGroup) -> RebalanceCause:
    """The cause of a rebalance a JoinGroup starts, with the client's own reason (v8+) if any."""
    return caused_by(reason, f"{what}; client reason: {req.reason}" if req.reason else what, member)


def _new_member(req: JoinGroup, member_id: str, token: Hashable) -> Member:
    return Member(
        member_id=member_id, group_instance_id=req.group_instance_id, client_id=req.client_id,
        client_host=req.client_host, session_timeout_ms=req.session_timeout_ms,
        rebalance_timeout_ms=req.rebalance_timeout_ms, protocol_type=req.protocol_type,
        protocols=tuple(req.protocols), awaiting_join=Parked(token), is_new=True,
    )


def _join_new_member(core: Core, group: ClassicGroup, token: Hashable, req: JoinGroup, now_ms: int, out: Result) -> None:
    member_id = f"{req.client_id}-{core.new_uuid()}"
    if req.group_instance_id is not None:
        old_id = group.static_members.get(req.group_instance_id)
        if old_id is None:
            _add_member_and_rebalance(core, group, _new_member(req, member_id, token), req, now_ms, out)
        else:
            _replace_static_member(core, group, token, req, old_id, member_id, now_ms, out)
    elif req.require_known_member_id:
        group.pending_join.add(member_id)
        rebalance.arm_pending_session(core, group, member_id, req.session_timeout_ms)
        out.reply(token, JoinGroupResult(error=ErrorCode.MEMBER_ID_REQUIRED, member_id=member_id))
    else:
        _add_member_and_rebalance(core, group, _new_member(req, member_id, token), req, now_ms, out)


def _add_member_and_rebalance(
    core: Core, group: ClassicGroup, member: Member, req: JoinGroup, now_ms: int, out: Result,
) -> None:
    if group.state is GroupState.PREPARING_REBALANCE and group.previous_state is GroupState.EMPTY:
        group.new_member_added = True  # extends the initial rebalance delay
    group.add(member)
    out.events.append(events.member_joined(core, group, member, now_ms))
    rebalance.arm_session(core, group, member)
    cause = _join_cause(Reason.JOIN, "joined", member, req)
    rebalance.maybe_prepare_rebalance_or_complete_join(core, group, now_ms, out, cause)


def _update_member_and_rebalance(
    core: Core, group: ClassicGroup, member: Member, token: Hashable, req: JoinGroup, now_ms: int, out: Result,
    cause: RebalanceCause,
) -> None:
    """The member's new protocols and timeouts; its JoinGroup is parked for the join phase
    (which `cause` starts unless one is open already)."""
    member.answer_join(out, JoinGroupResult(error=ErrorCode.REBALANCE_IN_PROGRESS, member_id=member.member_id))
    member.protocols = tuple(req.protocols)
    member.rebalance_timeout_ms = req.rebalance_timeout_ms
    member.session_timeout_ms = req.session_timeout_ms
    member.awaiting_join = Parked(token)
    rebalance.arm_session(core, group, member)
    rebalance.maybe_prepare_rebalance_or_complete_join(core, group, now_ms, out, cause)


def _join_known_member(core: Core, group: ClassicGroup, token: Hashable, req: JoinGroup, now_ms: int, out: Result) -> None:
    if req.member_id in group.pending_join and req.group_instance_id is None:
        group.pending_join.discard(req.member_id)
        _add_member_and_rebalance(core, group, _new_member(req, req.member_id, token), req, now_ms, out)
        return
    error = group.validate_member(req.member_id, req.group_instance_id)
    if error is not ErrorCode.NONE:
        out.reply(token, JoinGroupResult(error=error, member_id=req.member_id))
        return
    member = group.members[req.member_id]
    unchanged = member.protocols == tuple(req.protocols)
    changed = _join_cause(Reason.METADATA_CHANGE, "rejoined with different protocols or subscription", member, req)
    if group.state is GroupState.PREPARING_REBALANCE:
        _update_member_and_rebalance(core, group, member, token, req, now_ms, out, changed)
    elif group.state is GroupState.COMPLETING_REBALANCE and unchanged:
        # The member missed its JoinGroup answer: give it again.
        rebalance.arm_session(core, group, member)
        out.reply(token, group.join_result(member.member_id))
    elif group.state is GroupState.STABLE and unchanged and member.member_id != group.leader:
        rebalance.arm_session(core, group, member)
        out.reply(token, group.join_result(member.member_id))
    elif group.state in (GroupState.COMPLETING_REBALANCE, GroupState.STABLE):
        # Changed metadata, or the leader asking for a rebalance (e.g. topic metadata changed).
        cause = changed if not unchanged else _join_cause(Reason.LEADER_REJOIN, "rejoined as the leader", member, req)
        _update_member_and_rebalance(core, group, member, token, req, now_ms, out, cause)
    else:
        raise AssertionError(f"member {member.member_id} of group {group.group_id} in state {group.state.value}")


def _replace_static_member(
    core: Core, group: ClassicGroup, token: Hashable, req: JoinGroup, old_id: str, new_id: str, now_ms: int,
    out: Result,
) -> None:
    old = group.members[old_id]
    old.answer_join(out, JoinGroupResult(error=ErrorCode.FENCED_INSTANCE_ID, member_id=old_id))
    old.answer_sync(out, SyncGroupResult(error=ErrorCode.FENCED_INSTANCE_ID))
    core.timer.cancel(session_key(group.group_id, old_id))
    member = group.replace_static(req.group_instance_id, old_id, new_id)
    out.events.append(events.member_joined(core, group, member, now_ms, replaced_member_id=old_id))
    member.protocols = tuple(req.protocols)
    member.rebalance_timeout_ms = req.rebalance_timeout_ms
    member.session_timeout_ms = req.session_timeout_ms
    rebalance.arm_session(core, group, member)

    if group.state is GroupState.STABLE:
        if group.select_protocol() == group.protocol:
            # Same assignment, new id: persist it, no rebalance.
            rebalance.write_document(core, group, GroupState.STABLE, now_ms, out)
            is_leader = new_id == group.leader
            out.reply(token, group.join_result(new_id, skip_assignment=is_leader))
        else:
            member.awaiting_join = Parked(token)
            cause = _join_cause(Reason.STATIC_MEMBER_REJOIN,
                                f"replaced {old_id} (instance {req.group_instance_id}) with different protocols",
                                member, req)
            rebalance.maybe_prepare_rebalance_or_complete_join(core, group, now_ms, out, cause)
    elif group.state is GroupState.COMPLETING_REBALANCE:
        # The leader may already be assigning to the old id: rebalance so the new id gets one.
        member.awaiting_join = Parked(token)
        cause = _join_cause(Reason.STATIC_MEMBER_REJOIN,
                            f"replaced {old_id} (instance {req.group_instance_id}) during the sync phase", member, req)
        rebalance.prepare_rebalance(core, group, now_ms, out, cause)
    elif group.state is GroupState.PREPARING_REBALANCE:
        member.awaiting_join = Parked(token)
        rebalance.maybe_complete_join_phase(core, group, now_ms, out)
    else:
        raise AssertionError(f"static member {req.group_instance_id} known to group {group.group_id} "
                             f"in state {group.state.value}")
