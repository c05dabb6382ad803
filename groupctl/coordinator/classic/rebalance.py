"""The rebalance engine: join phase, sync phase, session expiry and member removal; every request
module funnels its state changes through here, as through Kafka's GroupMetadataManager.

- Join phase (PreparingRebalance): completes when every member is parked in JoinGroup and no
  pending member is outstanding, or when the join timer fires (the largest member rebalance
  timeout; from Empty, the initial rebalance delay, re-armed by min(delay, remaining) while new
  members keep arriving, never past the rebalance timeout). Then dynamic members that did not
  rejoin are dropped (static ones are waited for), the generation increments (also when nobody
  is left: the group becomes Empty and its document is written), the protocol is voted, and
  every parked JoinGroup is answered.
- Sync phase: members that have not sent SyncGroup within the rebalance timeout are removed and
  the group rebalances again.
- Sessions: one timer per member, re-armed by its requests. When it fires, a new member (first
  JoinGroup still parked, NEW_MEMBER_JOIN_TIMEOUT_MS) or an unparked member is dropped and the
  group rebalances (or empties); a member parked in JoinGroup or SyncGroup is left to the phases.
- Every entry into PreparingRebalance names a `RebalanceCause`; the first after a settled state
  starts the episode the completing document records (`causes`). Its start, its completion and
  every removal are journal events (`groupctl.coordinator.journal`).

Deliberate differences from Apache Kafka, all about answering every parked request exactly once:
a member removed while parked in SyncGroup gets UNKNOWN_MEMBER_ID (Kafka leaves it unanswered);
a JoinGroup or SyncGroup superseded by a second one from the same member gets
REBALANCE_IN_PROGRESS (Kafka drops it); and a member dropped for GROUP_MAX_SIZE_REACHED lets a
join phase complete at once if everyone else has rejoined (Kafka waits for the timer).
"""

from __future__ import annotations

from typing import Mapping

from groupctl.coordinator.classic import events
from groupctl.coordinator.classic.causes import Reason, RebalanceCause, caused_by
from groupctl.coordinator.classic.config import NEW_MEMBER_JOIN_TIMEOUT_MS
from groupctl.coordinator.classic.context import Core, join_key, session_key, sync_key
from groupctl.coordinator.classic.document import build_document
from groupctl.coordinator.classic.group import ClassicGroup, Member
from groupctl.coordinator.classic.messages import JoinGroupResult, SyncGroupResult
from groupctl.coordinator.classic.replay import apply_record
from groupctl.coordinator.classic.state import GroupState
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.journal import EXPIRED_JOIN, EXPIRED_SYNC
from groupctl.coordinator.records import GroupMetadataRecord
from groupctl.coordinator.results import Result

# --- checkpoints -----------------------------------------------------------------------------


def write_document(
    core: Core, group: ClassicGroup, state: GroupState, now_ms: int, out: Result,
    assignments: Mapping[str, bytes] | None = None,
) -> None:
    """Record the group document for `state` and apply it (the replay path sets the state, the
    assignments and the last rebalance). A document written while a rebalance is in progress
    completes it (a `rebalance_completed` event)."""
    cause, started_at_ms = group.rebalance_cause, group.rebalance_started_at_ms
    completed = None
    if cause is not None and started_at_ms is not None:
        completed = cause.completed(started_at_ms, now_ms)
    doc = build_document(group, node_id=core.node_id, now_ms=now_ms, state=state, assignments=assignments,
                         rebalance=completed)
    record = GroupMetadataRecord(group.group_id, doc)
    out.records.append(record)
    if completed is not None:
        out.events.append(events.rebalance_completed(core, group, doc, cause, started_at_ms, now_ms))
    apply_record(core, record)
    group.rebalance_started_at_ms = None
    group.rebalance_cause = None


# --- sessions --------------------------------------------------------------------------------


def arm_session(core: Core, group: ClassicGroup, member: Member) -> None:
    """(Re)start the member's session timer."""
    timeout = NEW_MEMBER_JOIN_TIMEOUT_MS if member.is_new else member.session_timeout_ms
    group_id, member_id = group.group_id, member.member_id
    core.timer.schedule(session_key(group_id, member_id), timeout,
                        lambda at: _expire_session(core, group_id, member_id, at))


def arm_pending_session(core: Core, group: ClassicGroup, member_id: str, timeout_ms: int) -> None:
    """A pending member must rejoin within its session timeout or be forgotten."""
    group_id = group.group_id
    core.timer.schedule(session_key(group_id, member_id), timeout_ms,
                        lambda at: _expire_session(core, group_id, member_id, at))


def _expire_session(core: Core, group_id: str, member_id: str, now_ms: int) -> Result:
    out = Result()
    group = core.groups.get(group_id)
    if group is None:
        return out
    if member_id in group.pending_join:
        group.remove(member_id)
        maybe_complete_join_phase(core, group, now_ms, out)
        return out
    member = group.members.get(member_id)
    if member is None:
        return out
    parked = member.awaiting_join is not None or member.awaiting_sync is not None
    if member.is_new or not parked:
        timeout = NEW_MEMBER_JOIN_TIMEOUT_MS if member.is_new else member.session_timeout_ms
        cause = caused_by(Reason.SESSION_EXPIRY, f"sent no heartbeat within its session timeout ({timeout} ms)",
                          member)
        remove_member_and_rebalance(core, group, member, now_ms, out, cause)
    return out


# --- removal ---------------------------------------------------------------------------------


def drop_member(core: Core, group: ClassicGroup, member: Member, out: Result) -> None:
    """Remove a member, answering its parked requests with UNKNOWN_MEMBER_ID (the client rejoins
    if it is still alive). The caller journals why (`member_left` / `member_expired`)."""
    core.timer.cancel(session_key(group.group_id, member.member_id))
    member.answer_join(out, JoinGroupResult(error=ErrorCode.UNKNOWN_MEMBER_ID))
    member.answer_sync(out, SyncGroupResult(error=ErrorCode.UNKNOWN_MEMBER_ID))
    group.remove(member.member_id)


def expire_member(core: Core, group: ClassicGroup, member: Member, now_ms: int, out: Result, reason: str) -> None:
    """The coordinator removes a member (`reason`: a `journal.EXPIRED_*` value)."""
    out.events.append(events.member_expired(core, group, member, now_ms, reason))
    drop_member(core, group, member, out)


def rebalance_after_removal(core: Core, group: ClassicGroup, now_ms: int, out: Result, cause: RebalanceCause) -> None:
    """After members left: a settled group rebalances; an open join phase may now complete."""
    if group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
        maybe_prepare_rebalance_or_complete_join(core, group, now_ms, out, cause)
    elif group.state is GroupState.PREPARING_REBALANCE:
        maybe_complete_join_phase(core, group, now_ms, out)


def remove_member_and_rebalance(
    core: Core, group: ClassicGroup, member: Member, now_ms: int, out: Result, cause: RebalanceCause,
) -> None:
    """The coordinator removes a member for `cause` (session expiry, group max size), whose reason
    is also the removal's."""
    expire_member(core, group, member, now_ms, out, cause.reason.value)
    rebalance_after_removal(core, group, now_ms, out, cause)


# --- join phase ------------------------------------------------------------------------------


def maybe_prepare_rebalance_or_complete_join(
    core: Core, group: ClassicGroup, now_ms: int, out: Result, cause: RebalanceCause,
) -> None:
    if group.can_rebalance():
        prepare_rebalance(core, group, now_ms, out, cause)
    else:
        maybe_complete_join_phase(core, group, now_ms, out)


def prepare_rebalance(core: Core, group: ClassicGroup, now_ms: int, out: Result, cause: RebalanceCause) -> None:
    """Open a join phase. Members parked in SyncGroup are told REBALANCE_IN_PROGRESS. Unless a
    rebalance is already in progress (the join phase restarts from CompletingRebalance), this
    starts one, caused by `cause`."""
    if group.rebalance_cause is None:
        group.rebalance_started_at_ms = now_ms
        group.rebalance_cause = cause
        out.events.append(events.rebalance_started(core, group, cause, now_ms))
    if group.state is GroupState.COMPLETING_REBALANCE:
        reset_and_propagate_error(core, group, ErrorCode.REBALANCE_IN_PROGRESS, out)
    core.timer.cancel(sync_key(group.group_id))
    initial = group.state is GroupState.EMPTY
    group.transition_to(GroupState.PREPARING_REBALANCE)
    if initial:
        group.new_member_added = False
        delay = core.config.initial_rebalance_delay_ms
        _schedule_initial_delay(core, group, delay, max(group.rebalance_timeout_ms() - delay, 0))
    elif group.has_all_members_joined():
        complete_join(core, group, now_ms, out)
    else:
        _schedule_join_deadline(core, group)


def maybe_complete_join_phase(core: Core, group: ClassicGroup, now_ms: int, out: Result) -> None:
    """Complete the join phase if everyone is in, unless the initial delay is still running."""
    if (group.state is GroupState.PREPARING_REBALANCE and group.has_all_members_joined()
            and group.previous_state is not GroupState.EMPTY):
        complete_join(core, group, now_ms, out)


def _schedule_join_deadline(core: Core, group: ClassicGroup, at_least_ms: int = 0) -> None:
    group_id = group.group_id
    core.timer.schedule(join_key(group_id), max(group.rebalance_timeout_ms(), at_least_ms),
                        lambda at: _join_deadline(core, group_id, at))


def _join_deadline(core: Core, group_id: str, now_ms: int) -> Result:
    out = Result()
    group = core.groups.get(group_id)
    if group is not None and group.state is GroupState.PREPARING_REBALANCE:
        complete_join(core, group, now_ms, out)
    return out


def _schedule_initial_delay(core: Core, group: ClassicGroup, delay_ms: int, remaining_ms: int) -> None:
    group_id = group.group_id
    core.timer.schedule(join_key(group_id), delay_ms,
                        lambda at: _initial_delay_passed(core, group_id, delay_ms, remaining_ms, at))


def _initial_delay_passed(core: Core, group_id: str, delay_ms: int, remaining_ms: int, now_ms: int) -> Result:
    out = Result()
    group = core.groups.get(group_id)
    if group is None or group.state is not GroupState.PREPARING_REBALANCE:
        return out
    if group.new_member_added and remaining_ms != 0:
        group.new_member_added = False
        next_delay = min(core.config.initial_rebalance_delay_ms, remaining_ms)
        _schedule_initial_delay(core, group, next_delay, max(remaining_ms - delay_ms, 0))
    else:
        complete_join(core, group, now_ms, out)
    return out


def complete_join(core: Core, group: ClassicGroup, now_ms: int, out: Result) -> None:
    """End the join phase: drop dynamic members that did not rejoin, start the next generation
    and answer every parked JoinGroup (or write the Empty document if nobody is left)."""
    core.timer.cancel(join_key(group.group_id))
    for member in group.not_yet_rejoined():
        if member.group_instance_id is None:
            expire_member(core, group, member, now_ms, out, EXPIRED_JOIN)
    if group.members and not group.maybe_elect_new_joined_leader():
        # Only static members that did not rejoin are left: wait for them (or their sessions),
        # at least the shortest session allowed: a rebalance timeout of 0 or less, which Kafka
        # does not refuse either, would otherwise end this wait at once, again and again.
        _schedule_join_deadline(core, group, at_least_ms=core.config.min_session_timeout_ms)
        return
    group.generation += 1
    group.pending_sync.clear()
    if not group.members:
        write_document(core, group, GroupState.EMPTY, now_ms, out)
        return
    group.protocol = group.select_protocol()
    group.subscribed_topics = group.compute_subscribed_topics()
    group.transition_to(GroupState.COMPLETING_REBALANCE)
    for member in group.members.values():
        member.answer_join(out, group.join_result(member.member_id))
        member.is_new = False
        arm_session(core, group, member)
        group.pending_sync.add(member.member_id)
    _schedule_sync_deadline(core, group)


# --- sync phase ------------------------------------------------------------------------------


def _schedule_sync_deadline(core: Core, group: ClassicGroup) -> None:
    group_id, generation = group.group_id, group.generation
    core.timer.schedule(sync_key(group_id), group.rebalance_timeout_ms(),
                        lambda at: _sync_deadline(core, group_id, generation, at))


def _sync_deadline(core: Core, group_id: str, generation: int, now_ms: int) -> Result:
    out = Result()
    group = core.groups.get(group_id)
    if (group is None or group.generation != generation or not group.pending_sync
            or group.state not in (GroupState.COMPLETING_REBALANCE, GroupState.STABLE)):
        return out
    late = [group.members[member_id] for member_id in sorted(group.pending_sync)]
    cause = caused_by(Reason.SYNC_TIMEOUT,
                      f"sent no SyncGroup within the rebalance timeout ({group.rebalance_timeout_ms()} ms)", *late)
    for member in late:
        expire_member(core, group, member, now_ms, out, EXPIRED_SYNC)
    prepare_rebalance(core, group, now_ms, out, cause)
    return out


def mark_synced(core: Core, group: ClassicGroup, member_id: str) -> None:
    """The member sent SyncGroup; once everyone has, the sync deadline is moot."""
    group.pending_sync.discard(member_id)
    if not group.pending_sync:
        core.timer.cancel(sync_key(group.group_id))


def propagate_assignment(core: Core, group: ClassicGroup, error: ErrorCode, out: Result) -> None:
    """Answer every parked SyncGroup with the member's assignment (or `error`), and restart the
    sessions of the members answered (their timers may have fired while they were parked)."""
    for member in group.members.values():
        response = SyncGroupResult(error=error, protocol_type=group.protocol_type,
                                   protocol_name=group.protocol, assignment=member.assignment)
        if member.answer_sync(out, response):
            arm_session(core, group, member)


def reset_and_propagate_error(core: Core, group: ClassicGroup, error: ErrorCode, out: Result) -> None:
    if group.state is not GroupState.COMPLETING_REBALANCE:
        raise AssertionError(f"group {group.group_id} resets assignments in state {group.state.value}")
    for member in group.members.values():
        member.assignment = b""
    propagate_assignment(core, group, error, out)


def arm_loaded_group(core: Core, group: ClassicGroup) -> None:
    """Members of a group loaded from the store get fresh sessions from the load time."""
    for member in group.members.values():
        arm_session(core, group, member)
