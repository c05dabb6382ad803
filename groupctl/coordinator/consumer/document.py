"""The consumer group's document (`groupctl.layout.consumer_groups`): built from the group after
every change worth persisting, and read back into a group when a coordinator loads it.

A loaded group is the stored one exactly: epochs, target, every member's epochs, state and
partitions (so after a failover members keep what they own: nothing is revoked or lost).
Topic ids the image no longer knows keep the name the document recorded.
"""

from __future__ import annotations

from groupctl.coordinator.consumer.group import ConsumerGroup
from groupctl.coordinator.consumer.member import ClassicMembership, ConsumerMember, MemberState
from groupctl.coordinator.consumer.partitions import Assignment, assignment
from groupctl.coordinator.consumer.topics import TopicImage
from groupctl.layout.consumer_groups import ClassicMemberDocument, ConsumerGroupDocument, ConsumerMemberDocument


def build_document(group: ConsumerGroup, topics: TopicImage, *, node_id: int, now_ms: int) -> ConsumerGroupDocument:
    """The group's document now; a topic the image no longer has keeps the name its last
    document gave it (`ConsumerGroup.topic_names`).

    Built after every change, so a member's entry is reused while the member (a frozen object,
    replaced on every change) and its target are the same: a join storm of N members rebuilds one
    entry per change, not N (bench/simulate.py's 1,000 members)."""
    cache = group.member_documents
    members = []
    for m in sorted(group.members.values(), key=lambda m: m.member_id):
        target = group.target_of(m.member_id)
        cached = cache.get(m.member_id)
        if cached is None or cached[0] is not m or (cached[1] is not target and cached[1] != target):
            cached = cache[m.member_id] = (m, target, _member_document(m, target))
        members.append(cached[2])
    if len(cache) > len(members):
        group.member_documents = {d.member_id: cache[d.member_id] for d in members}
    names: dict[str, str] = {}
    for m in members:
        for block in (m.assigned, m.pending_revocation, m.target):
            for topic_id in block:
                if topic_id not in names:
                    name = topics.name_of(topic_id) or group.topic_names.get(topic_id)
                    if name is not None:
                        names[topic_id] = name
    ownership: dict[str, dict[str, str]] = {}
    for m in members:
        for block in (m.assigned, m.pending_revocation):
            for topic_id, partitions in block.items():
                owners = ownership.setdefault(names.get(topic_id, topic_id), {})
                for partition in partitions:
                    owners[str(partition)] = m.member_id
    return ConsumerGroupDocument(
        group=group.group_id, group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch,
        assignor=group.assignor, state=group.state.value, topics=names, subscribed=dict(group.subscribed),
        members=tuple(members),
        ownership={t: dict(sorted(o.items(), key=lambda kv: int(kv[0]))) for t, o in sorted(ownership.items())},
        coordinator=node_id, updated_at_ms=now_ms)


def _member_document(m: ConsumerMember, target: Assignment) -> ConsumerMemberDocument:
    def listed(partitions: Assignment) -> dict[str, list[int]]:
        return {topic_id: sorted(ps) for topic_id, ps in partitions.items()}

    return ConsumerMemberDocument(
        member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id, client_id=m.client_id,
        client_host=m.client_host, rebalance_timeout_ms=m.rebalance_timeout_ms,
        subscribed_topic_names=list(m.subscribed_topic_names), subscribed_topic_regex=m.subscribed_topic_regex,
        server_assignor=m.server_assignor, member_epoch=m.member_epoch,
        previous_member_epoch=m.previous_member_epoch, member_state=m.state.value,
        assigned=listed(m.assigned), pending_revocation=listed(m.pending_revocation), target=listed(target),
        classic=ClassicMemberDocument(m.classic.session_timeout_ms, m.classic.protocols) if m.classic else None)


def load_group(document: ConsumerGroupDocument) -> ConsumerGroup:
    """The group the document describes (a member state this groupctl does not know loads as
    UNKNOWN: the member is fenced at its next heartbeat unless it owns nothing)."""
    group = ConsumerGroup(document.group)
    group.group_epoch = document.group_epoch
    group.assignment_epoch = document.assignment_epoch
    group.assignor = document.assignor
    group.topic_names = dict(document.topics)
    group.subscribed = dict(document.subscribed)
    for m in document.members:
        group.put_member(ConsumerMember(
            member_id=m.member_id, member_epoch=m.member_epoch, previous_member_epoch=m.previous_member_epoch,
            state=_state(m.member_state), instance_id=m.instance_id, rack_id=m.rack_id,
            rebalance_timeout_ms=m.rebalance_timeout_ms, client_id=m.client_id, client_host=m.client_host,
            subscribed_topic_names=tuple(sorted(m.subscribed_topic_names)),
            subscribed_topic_regex=m.subscribed_topic_regex, server_assignor=m.server_assignor,
            assigned=assignment(m.assigned), pending_revocation=assignment(m.pending_revocation),
            classic=ClassicMembership(m.classic.session_timeout_ms, m.classic.protocols) if m.classic else None))
        if m.target:
            group.target[m.member_id] = assignment(m.target)
    return group


def _state(value: str) -> MemberState:
    try:
        return MemberState(value)
    except ValueError:
        return MemberState.UNKNOWN
