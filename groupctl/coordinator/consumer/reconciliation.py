"""One member's step towards its target assignment (KIP-848's reconciliation), pure.

Called on each of the member's heartbeats (and when the target changes) with what the member
reports owning. The rules, as Apache Kafka's CurrentAssignmentBuilder:
- Kept = assigned ∩ target; pending revocation = assigned − target; to assign = target − kept −
  partitions any member still owns at some epoch (they are assigned once released).
- While the member still reports owning a partition pending revocation (or does not say what it
  owns) it stays at its epoch in UNREVOKED_PARTITIONS and is told only the kept partitions.
- Once it has revoked them it moves to the target epoch with kept + whatever is free:
  UNRELEASED_PARTITIONS while some of its target is still owned elsewhere, else STABLE.
- A member in a state this groupctl does not know is fenced unless it reports owning nothing.

Invariant: a partition is never added to a member while another member owns it (`owner_epoch`
is -1 only for free partitions), so no partition has two owners at any epoch.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Optional

from groupctl.coordinator.consumer.member import ConsumerMember, MemberState
from groupctl.coordinator.consumer.partitions import Assignment, assignment, difference, intersection, overlaps, union

OwnerEpoch = Callable[[str, int], int]
"""(topic id, partition) -> the epoch its current owner holds it at, or -1 when it is free."""


class MustRejoin(Exception):
    """The member cannot be reconciled: it must give up every partition and join again
    (FENCED_MEMBER_EPOCH)."""


def reconcile(member: ConsumerMember, target_epoch: int, target: Assignment, owner_epoch: OwnerEpoch,
              owned: Optional[Assignment]) -> ConsumerMember:
    """The member after this step; `owned` is what its heartbeat reports owning (None: not said)."""
    state = member.state
    if state is MemberState.STABLE:
        if member.member_epoch == target_epoch:
            return member
        return _next(member, member.member_epoch, target_epoch, target, owner_epoch, owned)
    if state is MemberState.UNREVOKED_PARTITIONS:
        if overlaps(owned, member.pending_revocation):
            return member
        return _next(member, member.member_epoch + 1, target_epoch, target, owner_epoch, owned)
    if state is MemberState.UNRELEASED_PARTITIONS:
        return _next(member, member.member_epoch, target_epoch, target, owner_epoch, owned)
    if owned is None or owned:
        raise MustRejoin(f"member {member.member_id} is in a state this coordinator does not know")
    return _next(member, target_epoch, target_epoch, target, owner_epoch, owned)


def _next(member: ConsumerMember, epoch: int, target_epoch: int, target: Assignment, owner_epoch: OwnerEpoch,
          owned: Optional[Assignment]) -> ConsumerMember:
    kept = intersection(member.assigned, target)
    revoking = difference(member.assigned, kept)
    wanted = difference(target, kept)
    free = assignment({t: {p for p in ps if owner_epoch(t, p) == -1} for t, ps in wanted.items()})
    unreleased = free != wanted
    if revoking and overlaps(owned, revoking):
        return _moved(member, epoch, MemberState.UNREVOKED_PARTITIONS, kept, revoking)
    state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    return _moved(member, target_epoch, state, union(kept, free), {})


def _moved(member: ConsumerMember, epoch: int, state: MemberState, assigned: Assignment,
           pending_revocation: Assignment) -> ConsumerMember:
    return replace(member.at_epoch(epoch), state=state, assigned=assigned, pending_revocation=pending_revocation)
