"""The `range` assignor: contiguous ranges per topic, co-partitioned (Apache Kafka's server-side
`RangeAssignor`, as rewritten in KAFKA-16944 for 3.9).

For each topic, its subscribers are ordered static members first (by instance id), then the
others (by member id); with P partitions over S subscribers, the first P % S get P // S + 1
partitions and the rest P // S, as consecutive ranges in that order (a subscriber may get none
when S > P). Two topics with the same partition count and the same subscribers are therefore
assigned alike: each member gets the same partition numbers of both (co-partitioning, for joins).
Ordering static members by instance id keeps a static member's ranges when it rejoins with a new
member id.

Like Apache Kafka's since 3.9, it is not sticky: the current assignment is not read (the 3.7
version kept partitions within quota; the rewrite dropped that). Homogeneous and heterogeneous
groups take the same path here; the result is the same as Apache Kafka's two.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Optional

from groupctl.coordinator.consumer.assignors.spec import GroupAssignment, GroupSpec, MemberId, TopicId

NAME = "range"


class RangeAssignor:
    """Contiguous partition ranges per topic; co-partitioned."""

    name = NAME

    def assign(self, spec: GroupSpec) -> GroupAssignment:
        members = spec.members
        counts = spec.topics
        order = sorted(members, key=lambda m: _order_key(m, members[m].instance_id))
        assignments: dict[MemberId, dict[TopicId, frozenset[int]]] = {m: {} for m in order}
        subscribers: dict[TopicId, list[MemberId]] = {}
        for member_id in order:
            for topic in members[member_id].subscribed_topics:
                if topic in counts:
                    subscribers.setdefault(topic, []).append(member_id)
        ranges: dict[tuple[int, ...], list[Optional[frozenset[int]]]] = {}
        for topic in sorted(subscribers):
            ordered = subscribers[topic]
            count = counts[topic]
            shared = ranges.get((count, len(ordered)))  # the same ranges, shared by equal topics
            if shared is None:
                shared = ranges[(count, len(ordered))] = _ranges(count, len(ordered))
            for member_id, partitions in zip(ordered, shared):
                if partitions is not None:
                    assignments[member_id][topic] = partitions
        return {m: MappingProxyType(assignments[m]) for m in sorted(members)}


def _order_key(member_id: MemberId, instance_id: Optional[str]) -> tuple:
    """Static members first, by instance id; then dynamic ones, by member id."""
    return (0, instance_id, member_id) if instance_id is not None else (1, member_id, "")


def _ranges(count: int, subscribers: int) -> list[Optional[frozenset[int]]]:
    """The partitions of the i-th of `subscribers` for a topic of `count` partitions."""
    minimum, extra = divmod(count, subscribers)
    result: list[Optional[frozenset[int]]] = []
    start = 0
    for i in range(subscribers):
        end = start + minimum + (1 if i < extra else 0)
        result.append(frozenset(range(start, end)) if end > start else None)
        start = end
    return result
