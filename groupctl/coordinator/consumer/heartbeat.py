"""ConsumerGroupHeartbeat: joining, staying, reconciling and leaving a consumer group (KIP-848).

One heartbeat, in Apache Kafka's order:
1. Validate the request alone (INVALID_REQUEST, UNSUPPORTED_ASSIGNOR).
2. Find the group (created only by a join, epoch 0) and the member: a new member of a full group
   gets GROUP_MAX_SIZE_REACHED; an unknown member id with an epoch other than 0
   UNKNOWN_MEMBER_ID; an epoch above the member's, or below it unless it is the previous epoch
   with owned partitions within the assignment (its last answer was lost), FENCED_MEMBER_EPOCH.
   Epoch 0 from a known member is a rejoin (KAFKA-19233). A static member's instance id held by
   a live member is UNRELEASED_INSTANCE_ID; one held by a member that left for now (-2), or by a
   classic-protocol member (a static member upgrading its client), passes to the new member id
   with its assignment, without a rebalance.
3. Apply the request's changed fields; a new member, a changed subscription, or subscribed topics
   whose partitions changed bump the group epoch.
4. A group epoch above the assignment epoch computes a new target assignment for everyone.
5. Reconcile this member towards its target (`reconciliation`), (re)start its session timer,
   and its revocation deadline while it has partitions to give up.
Nothing is changed before every check has passed.

The response carries the member's assignment when the request was full or the assignment
changed. Leaving (-1) removes the member and bumps the group epoch; a static member leaving for
now (-2) keeps its partitions at epoch -2 until its session expires or its instance id returns.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Hashable, Optional

from groupctl.coordinator import journal
from groupctl.coordinator.consumer import events, regex, target
from groupctl.coordinator.consumer.context import ConsumerCore, cancel_member_timers, rebalance_key, session_key
from groupctl.coordinator.consumer.document import build_document
from groupctl.coordinator.consumer.group import ConsumerGroup
from groupctl.coordinator.consumer.member import (
    JOIN_EPOCH,
    LEAVE_EPOCH,
    STATIC_LEAVE_EPOCH,
    ConsumerMember,
    MemberState,
)
from groupctl.coordinator.consumer.messages import ConsumerHeartbeat, ConsumerHeartbeatResult
from groupctl.coordinator.consumer.partitions import Assignment, is_subset
from groupctl.coordinator.consumer.reconciliation import MustRejoin, reconcile
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.records import GroupMetadataRecord
from groupctl.layout.consumer_groups import ConsumerGroupDocument
from groupctl.coordinator.results import Result


class Refused(Exception):
    """The heartbeat is answered with `error` and changes nothing."""

    def __init__(self, error: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error = error


def heartbeat(core: ConsumerCore, token: Hashable, req: ConsumerHeartbeat, now_ms: int,
              new_member_id: str) -> Result:
    """`new_member_id` names a new member whose version-0 request left the id to the server."""
    out = Result()
    try:
        check_request(core, req)
        if req.member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
            return out.reply(token, leave(core, req, now_ms, out))
        return out.reply(token, _heartbeat(core, req, now_ms, new_member_id, out))
    except Refused as refused:
        return out.reply(token, ConsumerHeartbeatResult(refused.error, str(refused)))


def check_request(core: ConsumerCore, req: ConsumerHeartbeat) -> None:
    def invalid(problem: str) -> Refused:
        return Refused(ErrorCode.INVALID_REQUEST, problem)

    if not req.group_id.strip():
        raise invalid("GroupId can't be empty.")
    if req.instance_id is not None and not req.instance_id.strip():
        raise invalid("InstanceId can't be empty.")
    if req.rack_id is not None and not req.rack_id.strip():
        raise invalid("RackId can't be empty.")
    if req.member_epoch > 0 or req.member_epoch == LEAVE_EPOCH:
        if not req.member_id.strip():
            raise invalid("MemberId can't be empty.")
    elif req.member_epoch == JOIN_EPOCH:
        if req.member_id_from_client and not req.member_id.strip():
            raise invalid("MemberId can't be empty.")
        if req.rebalance_timeout_ms == -1:
            raise invalid("RebalanceTimeoutMs must be provided in first request.")
        if req.owned is None or req.owned:
            raise invalid("TopicPartitions must be empty when (re-)joining.")
        if req.subscribed_topic_names is None and req.subscribed_topic_regex is None:
            raise invalid("SubscribedTopicNames or SubscribedTopicRegex must be set in first request.")
    elif req.member_epoch == STATIC_LEAVE_EPOCH:
        if not req.member_id.strip():
            raise invalid("MemberId can't be empty.")
        if req.instance_id is None:
            raise invalid("InstanceId can't be null.")
    else:
        raise invalid("MemberEpoch is invalid.")
    if req.subscribed_topic_regex:
        try:
            regex.compiled(req.subscribed_topic_regex)
        except regex.InvalidRegex as exc:
            raise Refused(ErrorCode.INVALID_REGULAR_EXPRESSION, str(exc)) from None
    if req.server_assignor is not None and req.server_assignor not in core.config.assignors:
        raise Refused(ErrorCode.UNSUPPORTED_ASSIGNOR,
                      f"ServerAssignor {req.server_assignor} is not supported. Supported assignors: "
                      f"{', '.join(core.config.assignors)}.")


def _check_epoch(member: ConsumerMember, req: ConsumerHeartbeat) -> None:
    if req.member_epoch == JOIN_EPOCH:
        return  # a rejoin (KAFKA-19233)
    if req.member_epoch > member.member_epoch:
        raise Refused(ErrorCode.FENCED_MEMBER_EPOCH,
                      f"The member epoch {req.member_epoch} is above the coordinator's {member.member_epoch}: "
                      "abandon every partition and rejoin.")
    if req.member_epoch < member.member_epoch and (
            req.member_epoch != member.previous_member_epoch or not is_subset(req.owned, member.assigned)):
        raise Refused(ErrorCode.FENCED_MEMBER_EPOCH,
                      f"The member epoch {req.member_epoch} is below the coordinator's {member.member_epoch}: "
                      "abandon every partition and rejoin.")


def _find_member(group: ConsumerGroup, req: ConsumerHeartbeat,
                 member_id: str) -> tuple[ConsumerMember, Optional[ConsumerMember]]:
    """(the member this heartbeat is from, the static member it replaces, if any)."""
    known = group.members.get(member_id)
    if req.instance_id is None:
        if known is None:
            if req.member_epoch != JOIN_EPOCH:
                raise Refused(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not in group {group.group_id}.")
            return ConsumerMember(member_id), None
        _check_epoch(known, req)
        return known, None
    holder = group.static_member(req.instance_id)
    if req.member_epoch == JOIN_EPOCH:
        if holder is None:
            return known if known is not None else ConsumerMember(member_id), None
        if holder.member_id == member_id:
            return holder, None
        if holder.member_epoch != STATIC_LEAVE_EPOCH and holder.classic is None:
            raise Refused(ErrorCode.UNRELEASED_INSTANCE_ID,
                          f"Static member {holder.member_id} with instance id {req.instance_id} is still in the group.")
        # A classic-protocol holder is replaced at once: a static member upgrading its client.
        return replace(holder, member_id=member_id, member_epoch=JOIN_EPOCH, previous_member_epoch=JOIN_EPOCH,
                       classic=None), holder
    if holder is None:
        raise Refused(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {req.instance_id} is unknown.")
    if holder.member_id != member_id:
        raise Refused(ErrorCode.FENCED_INSTANCE_ID,
                      f"Instance id {req.instance_id} is held by member {holder.member_id}, not {member_id}.")
    _check_epoch(holder, req)
    return holder, None


def _updated(member: ConsumerMember, req: ConsumerHeartbeat) -> ConsumerMember:
    changes: dict = {"client_id": req.client_id, "client_host": req.client_host, "classic": None}
    if req.instance_id is not None:
        changes["instance_id"] = req.instance_id
    if req.rack_id is not None:
        changes["rack_id"] = req.rack_id
    if req.rebalance_timeout_ms != -1:
        changes["rebalance_timeout_ms"] = req.rebalance_timeout_ms
    if req.server_assignor is not None:
        changes["server_assignor"] = req.server_assignor
    if req.subscribed_topic_names is not None:
        changes["subscribed_topic_names"] = tuple(sorted(set(req.subscribed_topic_names)))
    if req.subscribed_topic_regex is not None:
        changes["subscribed_topic_regex"] = req.subscribed_topic_regex or None  # "": no regex
    return replace(member, **changes)


def _steady(core: ConsumerCore, group: ConsumerGroup, req: ConsumerHeartbeat) -> bool:
    """Whether the heartbeat can change nothing: a stable member at the group's settled epoch
    saying nothing new, with the topics unchanged since the group's subscription was computed
    (the common case, answered without the full path's work)."""
    member = group.members.get(req.member_id)
    return (member is not None and req.member_epoch == member.member_epoch == group.assignment_epoch
            == group.group_epoch and member.state is MemberState.STABLE and group.topics_version == core.topics_version
            and req.instance_id == member.instance_id and req.rack_id is None and req.rebalance_timeout_ms == -1
            and req.subscribed_topic_names is None and req.subscribed_topic_regex is None
            and req.server_assignor is None and req.owned is None
            and req.client_id == member.client_id and req.client_host == member.client_host)


def _heartbeat(core: ConsumerCore, req: ConsumerHeartbeat, now_ms: int, new_member_id: str,
               out: Result) -> ConsumerHeartbeatResult:
    group = core.groups.get(req.group_id)
    if group is not None and _steady(core, group, req):
        arm_session(core, group.group_id, req.member_id)
        return ConsumerHeartbeatResult(ErrorCode.NONE, member_id=req.member_id, member_epoch=req.member_epoch,
                                       heartbeat_interval_ms=core.heartbeat_interval_ms(group.group_id))
    if group is None:
        if req.member_epoch != JOIN_EPOCH:
            raise Refused(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {req.group_id} does not exist.")
        group = ConsumerGroup(req.group_id)
    member_id = req.member_id or new_member_id
    limit = core.config.max_size
    if limit is not None and len(group.members) >= limit and member_id not in group.members and (
            req.instance_id is None or group.static_member(req.instance_id) is None):
        raise Refused(ErrorCode.GROUP_MAX_SIZE_REACHED,
                      f"The consumer group has reached its maximum capacity of {limit} members.")
    member, replaced = _find_member(group, req, member_id)
    updated = _updated(member, req)
    before = events.Before.of(group, member, replaced)
    try:
        reconciled, changed = apply(core, group, member, updated, replaced, req.owned, now_ms)
    except MustRejoin as exc:
        raise Refused(ErrorCode.FENCED_MEMBER_EPOCH, str(exc)) from None
    core.groups[group.group_id] = group
    if changed:
        persist(core, group, now_ms, out)
        out.events.extend(events.applied(core, group, before, reconciled, now_ms))
    arm_session(core, group.group_id, member_id)
    assignment = reconciled.assigned if req.full or reconciled.assigned != member.assigned else None
    return ConsumerHeartbeatResult(ErrorCode.NONE, member_id=member_id, member_epoch=reconciled.member_epoch,
                                   heartbeat_interval_ms=core.heartbeat_interval_ms(group.group_id),
                                   assignment=assignment)


def apply(core: ConsumerCore, group: ConsumerGroup, member: ConsumerMember, updated: ConsumerMember,
          replaced: Optional[ConsumerMember], owned: Optional[Assignment],
          now_ms: int) -> tuple[ConsumerMember, bool]:
    """Bump the epoch and recompute the target if due, then reconcile `updated` (`member` with the
    request's changes; `owned`: the partitions the member says it owns, None if it did not say);
    returns it as reconciled, and whether anything stored changed. Raises MustRejoin before
    changing anything. The one place a member's join or change moves the group, for both
    protocols (see `classic_members`)."""
    subscription_changed = (member.member_id not in group.members and replaced is None) or (
        updated.subscribed_topic_names != member.subscribed_topic_names
        or updated.subscribed_topic_regex != member.subscribed_topic_regex)
    leaving = [m for m in (group.members.get(member.member_id), replaced) if m is not None]
    subscribed = target.subscribed_topics(core, *group.subscriptions(leaving, updated))
    bump = subscription_changed or subscribed != group.subscribed
    group_epoch = group.group_epoch + 1 if bump else group.group_epoch
    if group_epoch > group.assignment_epoch:
        members = {**group.members, updated.member_id: updated}
        if replaced is not None:
            del members[replaced.member_id]
        assignor, assignments = target.compute(core, group, members, subscribed)
        member_target = assignments.get(updated.member_id, {})
    else:
        assignor, assignments = group.assignor, None
        member_target = group.target_of(replaced.member_id if replaced is not None else updated.member_id)
    target_epoch = group_epoch if assignments is not None else group.assignment_epoch
    def owner_epoch(topic_id: str, partition: int) -> int:
        if replaced is not None and group.owner(topic_id, partition) == replaced.member_id:
            return -1  # the replaced static member's partitions pass to its successor
        return group.owner_epoch(topic_id, partition)

    reconciled = reconcile(updated, target_epoch, member_target, owner_epoch, owned)
    # Every check passed: change the group.
    if replaced is not None:
        group.remove_member(replaced.member_id)
        cancel_member_timers(core, group.group_id, replaced.member_id)
        group.target[updated.member_id] = member_target
    group.group_epoch = group_epoch
    target.record_subscribed(core, group, subscribed)
    if assignments is not None:
        group.target = dict(assignments)
        group.assignment_epoch = target_epoch
        group.assignor = assignor
    group.put_member(reconciled)
    if reconciled != updated and reconciled.classic is None:  # the deadline runs from entering UNREVOKED_PARTITIONS
        if reconciled.state is MemberState.UNREVOKED_PARTITIONS:
            _arm_revocation_deadline(core, group.group_id, reconciled)
        else:
            core.timer.cancel(rebalance_key(group.group_id, reconciled.member_id))
    return reconciled, bump or assignments is not None or replaced is not None or reconciled != member


def arm_session(core: ConsumerCore, group_id: str, member_id: str, timeout_ms: Optional[int] = None) -> None:
    """(Re)start the member's session: it is fenced if no heartbeat comes within the timeout
    (default: the group's consumer.session.timeout.ms; a classic-protocol member's is its own)."""
    core.timer.schedule(session_key(group_id, member_id), timeout_ms or core.session_timeout_ms(group_id),
                        lambda now: fence(core, group_id, member_id, now, journal.EXPIRED_SESSION))


def _arm_revocation_deadline(core: ConsumerCore, group_id: str, member: ConsumerMember) -> None:
    epoch = member.member_epoch

    def expire(now_ms: int) -> Result:
        group = core.groups.get(group_id)
        current = group.members.get(member.member_id) if group is not None else None
        if current is None or current.member_epoch != epoch:
            return Result()
        return fence(core, group_id, member.member_id, now_ms, journal.EXPIRED_REBALANCE)

    core.timer.schedule(rebalance_key(group_id, member.member_id), member.rebalance_timeout_ms, expire)


def leave(core: ConsumerCore, req: ConsumerHeartbeat, now_ms: int, out: Result) -> ConsumerHeartbeatResult:
    group = core.groups.get(req.group_id)
    if group is None:
        raise Refused(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {req.group_id} does not exist.")
    if req.instance_id is None:
        member = group.members.get(req.member_id)
        if member is None:
            raise Refused(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {req.member_id} is not in group {req.group_id}.")
    else:
        member = group.static_member(req.instance_id)
        if member is None:
            raise Refused(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {req.instance_id} is unknown.")
        if member.member_id != req.member_id:
            raise Refused(ErrorCode.FENCED_INSTANCE_ID,
                          f"Instance id {req.instance_id} is held by member {member.member_id}, not {req.member_id}.")
        if req.member_epoch == STATIC_LEAVE_EPOCH:
            group.put_member(replace(member, member_epoch=STATIC_LEAVE_EPOCH, pending_revocation={}))
            core.timer.cancel(rebalance_key(group.group_id, member.member_id))
            persist(core, group, now_ms, out)
            out.events += events.left_for_now(core, group, group.members[member.member_id], now_ms)
            return ConsumerHeartbeatResult(ErrorCode.NONE, member_id=member.member_id,
                                           member_epoch=STATIC_LEAVE_EPOCH)
    out.extend(remove(core, group, member.member_id, now_ms))
    return ConsumerHeartbeatResult(ErrorCode.NONE, member_id=req.member_id, member_epoch=req.member_epoch)


def fence(core: ConsumerCore, group_id: str, member_id: str, now_ms: int, why: str) -> Result:
    """A timer's verdict: the member is removed, as if it had left; `why` is the journal's reason
    (a journal.EXPIRED_* value)."""
    group = core.groups.get(group_id)
    if group is None or member_id not in group.members:
        return Result()
    return remove(core, group, member_id, now_ms, why)


def remove(core: ConsumerCore, group: ConsumerGroup, member_id: str, now_ms: int,
           reason: str = journal.LEAVE) -> Result:
    """The member goes with its partitions and timers; the group epoch is bumped so the others
    get its partitions (the target is recomputed at the next heartbeat). When the last member
    of the consumer protocol goes and classic-protocol members remain, the migration policy may
    hand the group back to the classic protocol instead (`ConsumerCore.downgrade`). `reason`:
    journal.LEAVE or a journal.EXPIRED_* value, for the journal."""
    leaving = group.members[member_id]
    gone = events.removed(core, group, leaving, now_ms, reason)
    if last_of_its_protocol(group, leaving) and core.config.migration_policy.downgrades:
        downgraded = core.downgrade(group, leaving, now_ms)
        if downgraded is not None:
            downgraded.events.insert(0, gone)
            return downgraded
    group.remove_member(member_id)
    cancel_member_timers(core, group.group_id, member_id)
    target.record_subscribed(core, group, target.subscribed_topics(core, *group.subscriptions()))
    group.group_epoch += 1
    out = persist(core, group, now_ms, Result())
    out.events += (gone, events.epoch_bumped(core, group, now_ms, reason, leaving))
    return out


def last_of_its_protocol(group: ConsumerGroup, member: ConsumerMember) -> bool:
    """Whether `member` (in the group, or just replaced in it) is its only consumer-protocol
    member, and classic-protocol members remain beside it."""
    others = [m for m in group.members.values() if m.member_id != member.member_id]
    return member.classic is None and bool(others) and all(m.classic is not None for m in others)


def persist(core: ConsumerCore, group: ConsumerGroup, now_ms: int, out: Result) -> Result:
    """Add the group's document to `out`'s records, built when the store writes it (deferred: a
    burst of changes meeting in one write builds it once, as the group is then)."""

    group.changed_at_ms = now_ms
    for topic_id in group.subscribed:  # named now: a topic deleted before the write keeps its name
        name = core.topics.name_of(topic_id)
        if name is not None:
            group.topic_names[topic_id] = name

    def build() -> ConsumerGroupDocument:
        document = build_document(group, core.topics, node_id=core.node_id, now_ms=group.changed_at_ms)
        group.topic_names = dict(document.topics)
        return document

    out.records.append(GroupMetadataRecord.deferred(group.group_id, build))
    return out
