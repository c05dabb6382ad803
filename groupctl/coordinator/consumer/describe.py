"""ConsumerGroupDescribe: a consumer group as Kafka 4 admin clients and kafka-consumer-groups.sh
show it (state, epochs, assignor, and per member its current and target assignment).

An unknown group, or a group of another type, is GROUP_ID_NOT_FOUND: Apache Kafka's admin
clients then fall back to DescribeGroups, which describes classic groups. A member's assignment
is what it may still own (assigned and pending revocation), as Apache Kafka reports it; topics are
named from the current topics, else from the group's last document.
"""

from __future__ import annotations

from groupctl.coordinator.consumer.context import ConsumerCore
from groupctl.coordinator.consumer.group import ConsumerGroup
from groupctl.coordinator.consumer.messages import DescribedConsumerGroup, DescribedMember, DescribedTopic
from groupctl.coordinator.consumer.partitions import Assignment, union
from groupctl.coordinator.errors import ErrorCode


def describe(core: ConsumerCore, group_ids: tuple[str, ...]) -> tuple[DescribedConsumerGroup, ...]:
    return tuple(_described(core, group_id) for group_id in group_ids)


def _described(core: ConsumerCore, group_id: str) -> DescribedConsumerGroup:
    group = core.groups.get(group_id)
    if group is None:
        return DescribedConsumerGroup(group_id, ErrorCode.GROUP_ID_NOT_FOUND,
                                      f"Group {group_id} is not a consumer group.")

    def topics(partitions: Assignment) -> tuple[DescribedTopic, ...]:
        return tuple(DescribedTopic(topic_id, _name(core, group, topic_id), tuple(sorted(ps)))
                     for topic_id, ps in sorted(partitions.items()))

    members = tuple(
        DescribedMember(m.member_id, m.instance_id, m.rack_id, m.member_epoch, m.client_id, m.client_host,
                        m.subscribed_topic_names, m.subscribed_topic_regex,
                        topics(union(m.assigned, m.pending_revocation)), topics(group.target_of(m.member_id)),
                        m.classic is not None)
        for m in sorted(group.members.values(), key=lambda m: m.member_id))
    return DescribedConsumerGroup(group_id, ErrorCode.NONE, None, group.state.value, group.group_epoch,
                                  group.assignment_epoch, group.assignor or core.config.assignors[0], members)


def _name(core: ConsumerCore, group: ConsumerGroup, topic_id: str) -> str:
    return core.topics.name_of(topic_id) or group.topic_names.get(topic_id, "")
