"""Hand-written KIP-848 consumer group documents (`groupctl.layout.consumer_groups`) for the tools'
tests: group "readers" on topic "events" (4 partitions), a member per `consumer_member`, the
ownership map derived from what each member owns (assigned and revoking), as the coordinator
writes it."""

from __future__ import annotations

from typing import Sequence

from groupctl.layout.consumer_groups import ConsumerGroupDocument, ConsumerMemberDocument

EVENTS_ID = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"


def consumer_member(member_id: str, assigned: Sequence[int], target: Sequence[int], *, epoch: int,
                    revoking: Sequence[int] = ()) -> ConsumerMemberDocument:
    """Member `member_id` (client id: the part before the first "-") owning `assigned` of
    "events", giving up `revoking`, with `target` as its target."""
    return ConsumerMemberDocument(
        member_id=member_id, instance_id=None, rack_id=None, client_id=member_id.split("-")[0],
        client_host="/127.0.0.1", rebalance_timeout_ms=300_000, subscribed_topic_names=["events"],
        subscribed_topic_regex=None, server_assignor=None, member_epoch=epoch, previous_member_epoch=epoch - 1,
        member_state="stable" if list(assigned) == list(target) and not revoking else "unrevoked_partitions",
        assigned={EVENTS_ID: list(assigned)} if assigned else {},
        pending_revocation={EVENTS_ID: list(revoking)} if revoking else {},
        target={EVENTS_ID: list(target)} if target else {})


def consumer_document(group_epoch: int, state: str, *members: ConsumerMemberDocument,
                      group: str = "readers") -> ConsumerGroupDocument:
    ownership: dict[str, dict[str, str]] = {}
    for m in members:
        for p in [*m.assigned.get(EVENTS_ID, []), *m.pending_revocation.get(EVENTS_ID, [])]:
            ownership.setdefault("events", {})[str(p)] = m.member_id
    return ConsumerGroupDocument(
        group=group, group_epoch=group_epoch, assignment_epoch=group_epoch, assignor="uniform", state=state,
        topics={EVENTS_ID: "events"}, subscribed={EVENTS_ID: 4}, members=members, ownership=ownership,
        coordinator=0, updated_at_ms=1_000 + group_epoch)
