"""Online migration between the group types: a live classic group becomes a consumer group when a
consumer-protocol member joins it, and a consumer group whose last consumer-protocol member
leaves becomes classic again (Apache Kafka 4.0, `group.consumer.migration.policy`). Pure
conversions; the facade (`groupctl.coordinator.coordinator`) decides when, under the policy.

Upgrade (`consumer_group_from`), Apache Kafka's ConsumerGroup.fromClassicGroup: the group epoch
and the target epoch are the classic generation; every classic member becomes a STABLE member
at that epoch whose assignment and target are the partitions its last SyncGroup gave it, and
keeps talking the classic protocol (`consumer.classic_members`). Its subscription is the one
in its metadata for the group's protocol. A partition two members claim goes to the first (a
classic leader may assign anything; a consumer group never has two owners).

Downgrade (`classic_group_from`), Apache Kafka's ClassicGroup.fromConsumerGroup: a Stable
classic group at generation = the group epoch, its members the remaining (classic-protocol)
members with their JoinGroup protocols, each holding its target assignment in its protocol's
assignment version; the caller then starts a rebalance so a leader assigns as classic groups do.
"""

from __future__ import annotations

from groupctl.coordinator.classic.group import ClassicGroup, Member
from groupctl.coordinator.classic.state import GroupState
from groupctl.coordinator.consumer.group import ConsumerGroup
from groupctl.coordinator.consumer.member import ClassicMembership, ConsumerMember, MemberState
from groupctl.coordinator.consumer.partitions import assignment
from groupctl.coordinator.consumer.topics import TopicImage
from groupctl.coordinator.consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    decode_assignment,
    encode_assignment,
    parse_subscription_details,
)


def consumer_group_from(classic: ClassicGroup, topics: TopicImage) -> ConsumerGroup:
    group = ConsumerGroup(classic.group_id)
    group.group_epoch = group.assignment_epoch = classic.generation
    group.topics_version = -1  # the subscribed topics are computed at the next heartbeat
    for member in classic.members.values():
        metadata = member.metadata(classic.protocol) if classic.protocol else member.protocols[0][1]
        subscription = parse_subscription_details(metadata)
        owned = {}
        for name, partitions in decode_assignment(member.assignment).items():
            info = topics.by_name.get(name)
            if info is not None:
                owned[info.topic_id] = {p for p in partitions if group.owner(info.topic_id, p) is None}
        assigned = assignment(owned)
        group.put_member(ConsumerMember(
            member.member_id, member_epoch=classic.generation, previous_member_epoch=classic.generation,
            state=MemberState.STABLE, instance_id=member.group_instance_id,
            rack_id=subscription.rack_id if subscription else None, rebalance_timeout_ms=member.rebalance_timeout_ms,
            client_id=member.client_id, client_host=member.client_host,
            subscribed_topic_names=tuple(sorted(set(subscription.topics))) if subscription else (),
            assigned=assigned, classic=ClassicMembership(member.session_timeout_ms, member.protocols)))
        group.target[member.member_id] = assigned
        for topic_id in assigned:
            group.topic_names[topic_id] = topics.by_id[topic_id].name
    return group


def classic_group_from(group: ConsumerGroup, topics: TopicImage, leaving_member_id: str) -> ClassicGroup:
    classic = ClassicGroup(group.group_id, state=GroupState.STABLE, generation=group.group_epoch,
                           protocol_type=CONSUMER_PROTOCOL_TYPE)
    staying = [m for m in group.members.values() if m.member_id != leaving_member_id]
    for member in staying:
        assert member.classic is not None, member.member_id
        classic.add(Member(
            member_id=member.member_id, group_instance_id=member.instance_id, client_id=member.client_id,
            client_host=member.client_host, session_timeout_ms=member.classic.session_timeout_ms,
            rebalance_timeout_ms=member.rebalance_timeout_ms, protocol_type=CONSUMER_PROTOCOL_TYPE,
            protocols=member.classic.protocols))
    classic.protocol = classic.select_protocol()
    classic.subscribed_topics = classic.compute_subscribed_topics()
    for member in classic.members.values():
        subscription = parse_subscription_details(member.metadata(classic.protocol))
        target = {topics.name_of(topic_id) or group.topic_names.get(topic_id, topic_id): sorted(partitions)
                  for topic_id, partitions in group.target_of(member.member_id).items()}
        member.assignment = encode_assignment(target, subscription.version if subscription else 0)
    return classic
