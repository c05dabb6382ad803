"""Classic-protocol members inside a consumer group: JoinGroup, SyncGroup, Heartbeat and
LeaveGroup from consumers that have not moved to the consumer protocol yet (online migration,
Apache Kafka 4.0's classicGroup*ToConsumerGroup).

A classic member is a consumer-group member like any other: the coordinator computes its target,
it reconciles towards it, and its member epoch is the generation it is told. What differs is
how it talks:
- JoinGroup is its heartbeat with a subscription: the protocol metadata is a
  `ConsumerProtocolSubscription` whose topics are its subscription and whose owned partitions
  are what it owns (eager members own nothing when they rejoin). It is answered at once, never
  parked, with no leader: every classic member is a follower, and SyncGroup hands it its
  assignment (the partitions it may own at its epoch, in its protocol's assignment version).
- Heartbeat says REBALANCE_IN_PROGRESS when the member should rejoin: the group epoch moved
  past its epoch, it has partitions to revoke, or partitions it waited for were released.
- Its session is its own JoinGroup session timeout; after REBALANCE_IN_PROGRESS it must rejoin
  within its rebalance timeout, and after joining it must sync within it, or it is fenced.
- LeaveGroup removes it (the group epoch moves on, as for any member that leaves).
- A static member restarting with the classic protocol in place of the last consumer-protocol
  member hands the group back to the classic protocol (`ConsumerCore.downgrade`); its JoinGroup
  is answered REBALANCE_IN_PROGRESS and it rejoins the classic group's rebalance.
The checks are Apache Kafka's, in its order; the facade checks the session timeout's bounds.

Deliberate differences from Apache Kafka, all as in a classic group:
- A dynamic member's JoinGroup naming a member id the group neither has nor handed out with
  MEMBER_ID_REQUIRED is UNKNOWN_MEMBER_ID, where Kafka makes it a new member under that id. A
  member fenced while it was silent still believes it owns its partitions; it must learn it lost
  them (and rejoin with no id) before it may join, or it would consume them beside their new
  owner until its SyncGroup.
- A static member naming a member id other than its instance id's holder is FENCED_INSTANCE_ID
  (Kafka replaces the holder): the old process of a restarted instance cannot evict the new one.
- Downgrading on a static member's replacement starts a classic rebalance (Kafka converts the
  group Stable, without one).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Hashable, Optional

from groupctl.coordinator.classic.messages import (
    Heartbeat,
    HeartbeatResult,
    JoinGroup,
    JoinGroupResult,
    LeaveGroup,
    LeaveGroupResult,
    LeftMember,
    SyncGroup,
    SyncGroupResult,
)
from groupctl.coordinator import journal
from groupctl.coordinator.consumer import events
from groupctl.coordinator.consumer.context import ConsumerCore, join_key, pending_key, sync_key
from groupctl.coordinator.consumer.group import ConsumerGroup
from groupctl.coordinator.consumer.heartbeat import apply, arm_session, fence, last_of_its_protocol, persist, remove
from groupctl.coordinator.consumer.member import ClassicMembership, ConsumerMember, MemberState
from groupctl.coordinator.consumer.partitions import Assignment, assignment
from groupctl.coordinator.consumer.reconciliation import MustRejoin
from groupctl.coordinator.consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    encode_assignment,
    parse_subscription_details,
)
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.results import Result


class _Refused(Exception):
    def __init__(self, error: ErrorCode) -> None:
        super().__init__(error.name)
        self.error = error


def join(core: ConsumerCore, token: Hashable, req: JoinGroup, now_ms: int, new_member_id: str) -> Result:
    """Reply: JoinGroupResult; records: the group's document when it changed."""
    out = Result()
    group = core.groups[req.group_id]
    member_id = req.member_id or new_member_id
    limit = core.config.max_size
    if limit is not None and len(group.members) >= limit and member_id not in group.members and (
            req.group_instance_id is None or group.static_member(req.group_instance_id) is None):
        return out.reply(token, JoinGroupResult(ErrorCode.GROUP_MAX_SIZE_REACHED, member_id=member_id))
    subscription = parse_subscription_details(req.protocols[0][1]) if req.protocols else None
    if not _supports(group, req) or subscription is None:
        return out.reply(token, JoinGroupResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id=member_id))
    if not req.member_id and req.require_known_member_id and req.group_instance_id is None:
        _pend(core, group, member_id, req.session_timeout_ms)
        return out.reply(token, JoinGroupResult(ErrorCode.MEMBER_ID_REQUIRED, member_id=member_id))
    if req.member_id and req.group_instance_id is None and req.member_id not in group.members:
        if req.member_id not in group.pending:
            return out.reply(token, JoinGroupResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id=req.member_id))
        group.pending.discard(req.member_id)
        core.timer.cancel(pending_key(group.group_id, req.member_id))
    try:
        member, replaced = _joining(group, req.member_id, member_id, req.group_instance_id)
    except _Refused as refused:
        return out.reply(token, JoinGroupResult(refused.error, member_id=member_id))
    if member.member_id in group.members and member.classic is None:
        return out.reply(token, JoinGroupResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id=member_id))
    updated = replace(
        member, instance_id=req.group_instance_id, rack_id=subscription.rack_id or member.rack_id,
        rebalance_timeout_ms=req.rebalance_timeout_ms, server_assignor=None,
        subscribed_topic_names=tuple(sorted(set(subscription.topics))), subscribed_topic_regex=None,
        client_id=req.client_id, client_host=req.client_host,
        classic=ClassicMembership(req.session_timeout_ms, req.protocols))
    before = events.Before.of(group, member, replaced)
    try:
        reconciled, changed = apply(core, group, member, updated, replaced, _ids(core, subscription.owned), now_ms)
    except MustRejoin:
        return out.reply(token, JoinGroupResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id=member_id))
    if replaced is not None and last_of_its_protocol(group, replaced) and core.config.migration_policy.downgrades:
        downgraded = core.downgrade(group, replaced, now_ms)
        if downgraded is not None:  # now a classic group, rebalancing: the member rejoins it
            return out.extend(downgraded).reply(token, JoinGroupResult(ErrorCode.REBALANCE_IN_PROGRESS,
                                                                       member_id=member_id))
    if changed:
        persist(core, group, now_ms, out)
        out.events.extend(events.applied(core, group, before, reconciled, now_ms))
    core.timer.cancel(join_key(group.group_id, member_id))
    arm_session(core, group.group_id, member_id, req.session_timeout_ms)
    core.timer.schedule(sync_key(group.group_id, member_id), req.rebalance_timeout_ms,
                        lambda now: fence(core, req.group_id, member_id, now, journal.EXPIRED_SYNC))
    return out.reply(token, JoinGroupResult(
        ErrorCode.NONE, generation_id=reconciled.member_epoch, protocol_type=CONSUMER_PROTOCOL_TYPE,
        protocol_name=reconciled.classic.protocol_name, leader="", member_id=member_id))


def sync(core: ConsumerCore, token: Hashable, req: SyncGroup, now_ms: int) -> Result:
    """Reply: SyncGroupResult with the member's assignment (the leader's assignments, if any
    were sent, are ignored: the coordinator assigns)."""
    out = Result()
    group = core.groups[req.group_id]
    try:
        member = _at_generation(group, req.member_id, req.group_instance_id, req.generation_id)
        if (req.protocol_type is not None and req.protocol_type != CONSUMER_PROTOCOL_TYPE) or (
                req.protocol_name is not None and req.protocol_name != member.classic.protocol_name):
            raise _Refused(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        if group.group_epoch > member.member_epoch and member.state is not MemberState.UNREVOKED_PARTITIONS:
            _expect_rejoin(core, group, member)
            raise _Refused(ErrorCode.REBALANCE_IN_PROGRESS)
    except _Refused as refused:
        return out.reply(token, SyncGroupResult(refused.error))
    core.timer.cancel(sync_key(group.group_id, member.member_id))
    arm_session(core, group.group_id, member.member_id, member.classic.session_timeout_ms)
    return out.reply(token, SyncGroupResult(
        ErrorCode.NONE, protocol_type=req.protocol_type, protocol_name=req.protocol_name,
        assignment=_assignment_bytes(core, group, member)))


def heartbeat(core: ConsumerCore, token: Hashable, req: Heartbeat, now_ms: int) -> Result:
    """Reply: HeartbeatResult, REBALANCE_IN_PROGRESS when the member should rejoin."""
    out = Result()
    group = core.groups[req.group_id]
    try:
        member = _at_generation(group, req.member_id, req.group_instance_id, req.generation_id)
    except _Refused as refused:
        return out.reply(token, HeartbeatResult(refused.error))
    arm_session(core, group.group_id, member.member_id, member.classic.session_timeout_ms)
    if (member.member_epoch < group.group_epoch or member.state is MemberState.UNREVOKED_PARTITIONS
            or (member.state is MemberState.UNRELEASED_PARTITIONS and not _waits_for_others(group, member))):
        _expect_rejoin(core, group, member)
        return out.reply(token, HeartbeatResult(ErrorCode.REBALANCE_IN_PROGRESS))
    return out.reply(token, HeartbeatResult(ErrorCode.NONE))


def leave(core: ConsumerCore, token: Hashable, req: LeaveGroup, now_ms: int) -> Result:
    """Reply: LeaveGroupResult, one answer per leaving member; records: the group's document."""
    out = Result()
    group = core.groups[req.group_id]
    answers = []
    for leaving in req.members:
        try:
            if leaving.group_instance_id is None:
                member = _classic_member(group, leaving.member_id, None)
            else:  # an administrative removal names the instance id alone
                member = _classic_member(group, leaving.member_id or None, leaving.group_instance_id)
        except _Refused as refused:
            answers.append(LeftMember(leaving.member_id, leaving.group_instance_id, refused.error))
            continue
        out.extend(remove(core, group, member.member_id, now_ms, journal.LEAVE))
        answers.append(LeftMember(member.member_id, leaving.group_instance_id, ErrorCode.NONE))
    return out.reply(token, LeaveGroupResult(ErrorCode.NONE, tuple(answers)))


def _supports(group: ConsumerGroup, req: JoinGroup) -> bool:
    """Apache Kafka's supportsClassicProtocols: protocol type "consumer", and a protocol every
    classic member of the group supports."""
    if req.protocol_type != CONSUMER_PROTOCOL_TYPE or not req.protocols:
        return False
    supported = [{name for name, _ in m.classic.protocols} for m in group.members.values()
                 if m.classic is not None and m.member_id != req.member_id]
    return not supported or any(all(name in names for names in supported) for name, _ in req.protocols)


def _joining(group: ConsumerGroup, requested_id: str, member_id: str,
             instance_id: Optional[str]) -> tuple[ConsumerMember, Optional[ConsumerMember]]:
    """(the joining member as the group knows it, the static member it replaces, if any). A
    static member joining with no member id (restarted) replaces its instance id's holder at
    once, whatever the holder's protocol; one naming an id other than the holder's is a zombie
    (FENCED_INSTANCE_ID)."""
    known = group.members.get(member_id)
    holder = group.static_member(instance_id) if instance_id is not None else None
    if holder is None:
        return known if known is not None else ConsumerMember(member_id), None
    if holder.member_id == member_id:
        return holder, None
    if requested_id:
        raise _Refused(ErrorCode.FENCED_INSTANCE_ID)
    return replace(holder, member_id=member_id, member_epoch=0, previous_member_epoch=0), holder


def _pend(core: ConsumerCore, group: ConsumerGroup, member_id: str, session_timeout_ms: int) -> None:
    """Remember a member id handed out with MEMBER_ID_REQUIRED until its session timeout passes."""
    group.pending.add(member_id)
    group_id = group.group_id

    def forget(now_ms: int) -> Result:
        pending = core.groups.get(group_id)
        if pending is not None:
            pending.pending.discard(member_id)
        return Result()

    core.timer.schedule(pending_key(group_id, member_id), session_timeout_ms, forget)


def _classic_member(group: ConsumerGroup, member_id: Optional[str], instance_id: Optional[str]) -> ConsumerMember:
    if instance_id is None:
        member = group.members.get(member_id or "")
    else:
        member = group.static_member(instance_id)
        if member is not None and member_id is not None and member.member_id != member_id:
            raise _Refused(ErrorCode.FENCED_INSTANCE_ID)
    if member is None or member.classic is None:
        raise _Refused(ErrorCode.UNKNOWN_MEMBER_ID)
    return member


def _at_generation(group: ConsumerGroup, member_id: str, instance_id: Optional[str], generation: int) -> ConsumerMember:
    """The classic-protocol member a SyncGroup or Heartbeat comes from, at the generation it names."""
    member = _classic_member(group, member_id, instance_id)
    if generation != member.member_epoch:
        raise _Refused(ErrorCode.ILLEGAL_GENERATION)
    return member


def _expect_rejoin(core: ConsumerCore, group: ConsumerGroup, member: ConsumerMember) -> None:
    """The member was told to rejoin: it is fenced unless it does within its rebalance timeout."""
    key = join_key(group.group_id, member.member_id)
    if not core.timer.is_scheduled(key):
        group_id, member_id = group.group_id, member.member_id
        core.timer.schedule(key, member.rebalance_timeout_ms,
                            lambda now: fence(core, group_id, member_id, now, journal.EXPIRED_JOIN))


def _waits_for_others(group: ConsumerGroup, member: ConsumerMember) -> bool:
    """Whether a partition of the member's target it does not have yet is still owned elsewhere."""
    return any(partition not in member.assigned.get(topic_id, ()) and group.owner_epoch(topic_id, partition) != -1
               for topic_id, partitions in group.target_of(member.member_id).items() for partition in partitions)


def _ids(core: ConsumerCore, by_name: dict[str, list[int]]) -> Assignment:
    """{topic id: partitions} of {topic name: partitions}; topics the coordinator does not know
    are left out (nobody can be assigned them)."""
    return assignment({info.topic_id: partitions for info, partitions in
                       ((core.topics.by_name.get(name), ps) for name, ps in by_name.items()) if info is not None})


def _assignment_bytes(core: ConsumerCore, group: ConsumerGroup, member: ConsumerMember) -> bytes:
    named = {core.topics.name_of(topic_id) or group.topic_names.get(topic_id, topic_id): sorted(partitions)
             for topic_id, partitions in member.assigned.items()}
    subscription = parse_subscription_details(member.classic.protocols[0][1])
    return encode_assignment(named, subscription.version if subscription is not None else 0)
