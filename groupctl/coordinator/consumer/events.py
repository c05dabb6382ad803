"""The consumer core's journal events (KIP-848), built from its groups and members.

Thin adapters over `groupctl.coordinator.journal`, as `classic.events` is for classic groups.
Each transition has one owner, which emits its events in the operation's `Result`:
- A member's join or change goes through `heartbeat.apply` (for both protocols): its caller
  takes `Before.of` the group before `apply` and, when `apply` changed something, adds
  `applied(...)`: member_joined (a new member id; a static member's successor names the one it
  replaces), group_epoch_bumped (join, subscription change, topic change),
  target_assignment_computed, member_reconciled (the member's epoch, state or partitions
  changed), group_stable (the member was the last to reach the target of the group epoch).
- `heartbeat.remove`: member_left (leave) or member_expired (session expiry, rebalance timeout;
  a classic-protocol member's join or sync timeout), then group_epoch_bumped for the same reason.
- A static member leaving for now (epoch -2): member_left and member_reconciled at epoch -2, no
  new epoch (it keeps its partitions until its session expires or its instance id comes back).
- `admin.trigger`: group_epoch_bumped (trigger). Online migration: `upgraded` / `downgraded`.
The steady heartbeat (`heartbeat._steady`) changes nothing and emits nothing, and a group taken
over resumes as stored without events (replay is not new history).
"""

from __future__ import annotations

from typing import Mapping, NamedTuple, Optional

from groupctl.coordinator import journal
from groupctl.coordinator.consumer.context import ConsumerCore
from groupctl.coordinator.consumer.group import ConsumerGroup, ConsumerGroupState
from groupctl.coordinator.consumer.member import ConsumerMember
from groupctl.coordinator.consumer.partitions import EMPTY, Assignment, count, difference
from groupctl.coordinator.journal import Event


class Before(NamedTuple):
    """What `applied` needs of the group as it was before `apply` changed it."""

    group_epoch: int
    assignment_epoch: int
    target: Mapping[str, Assignment]  # the target dict itself, not a copy (see `target_computed`)
    member: ConsumerMember  # as `apply` was given it (a new member: fresh; a static successor: the holder's copy)
    new: bool
    replaced: Optional[ConsumerMember]
    replaced_target: Assignment

    @classmethod
    def of(cls, group: ConsumerGroup, member: ConsumerMember, replaced: Optional[ConsumerMember]) -> "Before":
        return cls(group.group_epoch, group.assignment_epoch, group.target, member,
                   member.member_id not in group.members, replaced,
                   group.target_of(replaced.member_id) if replaced is not None else EMPTY)


def applied(core: ConsumerCore, group: ConsumerGroup, before: Before, member: ConsumerMember,
            now_ms: int) -> list[Event]:
    """The events of one `apply` that changed the group; `member` is the member as reconciled."""
    events = []
    previous = before.member
    if before.new:
        events.append(journal.member_joined(
            core.node_id, now_ms, group.group_id, member_id=member.member_id, client_id=member.client_id,
            client_host=member.client_host, instance_id=member.instance_id, generation=before.group_epoch,
            replaced_member_id=before.replaced.member_id if before.replaced is not None else None))
    if group.group_epoch > before.group_epoch:
        if before.new and before.replaced is None:
            reason = journal.JOIN
        elif (member.subscribed_topic_names != previous.subscribed_topic_names
              or member.subscribed_topic_regex != previous.subscribed_topic_regex):
            reason = journal.SUBSCRIPTION_CHANGE
        else:
            reason = journal.TOPIC_CHANGE
        events.append(epoch_bumped(core, group, now_ms, reason, member if reason != journal.TOPIC_CHANGE else None))
    if group.assignment_epoch > before.assignment_epoch:
        events.append(target_computed(core, group, before, now_ms))
    if before.new or _reconciliation_moved(previous, member):
        events.append(member_reconciled(core, group, member, now_ms,
                                        full=before.new or member.assigned != previous.assigned))
        if member.reconciled_to(group.assignment_epoch) and group.state is ConsumerGroupState.STABLE:
            events.append(journal.group_stable(core.node_id, now_ms, group.group_id, generation=group.group_epoch,
                                               members=len(group.members)))
    return events


def _reconciliation_moved(previous: ConsumerMember, member: ConsumerMember) -> bool:
    return (previous.member_epoch != member.member_epoch or previous.state is not member.state
            or previous.assigned != member.assigned or previous.pending_revocation != member.pending_revocation)


def epoch_bumped(core: ConsumerCore, group: ConsumerGroup, now_ms: int, reason: str,
                 member: Optional[ConsumerMember] = None) -> Event:
    """The group is at a new epoch (already set) because of `reason`, caused by `member` if any."""
    return journal.group_epoch_bumped(
        core.node_id, now_ms, group.group_id, generation=group.group_epoch, reason=reason,
        member_id=member.member_id if member is not None else None,
        client_id=member.client_id if member is not None else None, members=len(group.members))


def target_computed(core: ConsumerCore, group: ConsumerGroup, before: Before, now_ms: int) -> Event:
    """The new target against the one before: a static successor is compared with the target of
    the member it replaced (`apply` moves that entry within the old dict before it computes)."""
    inherited = {before.member.member_id: before.replaced_target} if before.replaced is not None else {}
    moved, changed = 0, []
    for member_id, new in group.target.items():
        old = inherited[member_id] if member_id in inherited else before.target.get(member_id, EMPTY)
        if new != old:
            changed.append(member_id)
            moved += count(difference(new, old))
    changed.sort()
    rows = []
    for member_id in changed:
        holder = group.members.get(member_id)
        rows.extend(_rows(core, group, member_id, holder.client_id if holder is not None else "",
                          group.target[member_id]))
    return journal.target_assignment_computed(
        core.node_id, now_ms, group.group_id, generation=group.assignment_epoch, protocol=group.assignor,
        members=len(group.members), moved=moved, member_ids=changed, assignment=rows)


def member_reconciled(core: ConsumerCore, group: ConsumerGroup, member: ConsumerMember, now_ms: int, *,
                      full: bool = True) -> Event:
    """`full`: list its assigned partitions (else they are the same as at its previous event)."""
    return journal.member_reconciled(
        core.node_id, now_ms, group.group_id, member_id=member.member_id, client_id=member.client_id,
        instance_id=member.instance_id, generation=group.group_epoch, member_epoch=member.member_epoch,
        state=member.state.value,
        assignment=_rows(core, group, member.member_id, member.client_id, member.assigned) if full else None,
        revoking=(_rows(core, group, member.member_id, member.client_id, member.pending_revocation)
                  if member.pending_revocation else None))


def member_left(core: ConsumerCore, group: ConsumerGroup, member: ConsumerMember, now_ms: int) -> Event:
    return journal.member_left(core.node_id, now_ms, group.group_id, member_id=member.member_id,
                               client_id=member.client_id, generation=group.group_epoch)


def left_for_now(core: ConsumerCore, group: ConsumerGroup, member: ConsumerMember, now_ms: int) -> list[Event]:
    """A static member left with epoch -2 (`member` as it is now): member_left, and member_reconciled
    at epoch -2 with what it keeps (any partitions pending revocation are released); the group
    epoch stays."""
    return [member_left(core, group, member, now_ms), member_reconciled(core, group, member, now_ms, full=False)]


def removed(core: ConsumerCore, group: ConsumerGroup, member: ConsumerMember, now_ms: int, reason: str) -> Event:
    """The member is going, at the group's current epoch: member_left for journal.LEAVE, else
    member_expired with `reason` (a journal.EXPIRED_* value)."""
    if reason == journal.LEAVE:
        return member_left(core, group, member, now_ms)
    return journal.member_expired(core.node_id, now_ms, group.group_id, member_id=member.member_id,
                                  client_id=member.client_id, generation=group.group_epoch, reason=reason)


def upgraded(core: ConsumerCore, group: ConsumerGroup, now_ms: int, member_id: Optional[str] = None,
             client_id: Optional[str] = None) -> list[Event]:
    """A classic group just became the consumer group `group` (before the consumer-protocol member
    `member_id` that caused it joins): group_migrated, then one member_reconciled per converted
    member with what it owns at its epoch (what `analyze audit` checks ownership against)."""
    return [journal.group_migrated(core.node_id, now_ms, group.group_id, group_type=journal.CONSUMER,
                                   generation=group.group_epoch, member_id=member_id, client_id=client_id,
                                   members=len(group.members)),
            *(member_reconciled(core, group, m, now_ms) for _, m in sorted(group.members.items()))]


def downgraded(core: ConsumerCore, group: ConsumerGroup, leaving: ConsumerMember, now_ms: int) -> Event:
    """The consumer group `group` becomes classic at its group epoch as its last consumer-protocol
    member, `leaving`, goes (after that member's member_left / member_expired)."""
    staying = len(group.members) - (leaving.member_id in group.members)
    return journal.group_migrated(core.node_id, now_ms, group.group_id, group_type=journal.CLASSIC,
                                  generation=group.group_epoch, member_id=leaving.member_id,
                                  client_id=leaving.client_id, members=staying)


def _rows(core: ConsumerCore, group: ConsumerGroup, member_id: str, client_id: str,
          partitions: Assignment) -> list[dict]:
    """`partitions` as assignment rows, by topic name (the id when no name is known), sorted."""
    named = sorted((core.topics.name_of(topic_id) or group.topic_names.get(topic_id) or topic_id, sorted(ps))
                   for topic_id, ps in partitions.items())
    return journal.assignment_rows((member_id, client_id, {name: ps}) for name, ps in named)
