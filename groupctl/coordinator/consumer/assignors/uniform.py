"""The `uniform` assignor: balance first, then stickiness (Apache Kafka's `UniformAssignor`).

Homogeneous groups (every member subscribes to the same topics) are assigned here, following
Apache Kafka's `UniformHomogeneousAssignmentBuilder`; heterogeneous ones by
`heterogeneous.assign` (its `UniformHeterogeneousAssignmentBuilder`).

Homogeneous: with T partitions over M members, every member ends with T // M partitions and
T % M of them with one more. Each member keeps what it may of its current target assignment
(`current.kept_assignments`) up to its quota, and the partitions nobody keeps fill the members
below their quota. Where Apache Kafka hands the extra partitions to the first members it
iterates, here they go to the members that hold the most (ties: lower member id), so a member
only ever gives up what balance requires: a balanced valid assignment comes back unchanged, and
when a member joins, each existing member loses at most its surplus over the new quota. A member
over its quota keeps its lowest partitions (topic ids in order, then partition numbers); free
partitions are handed out in the same order, to members in member id order.

Cost: per member and per topic, plus set operations in C; the only per-partition Python work is
where a stale input has a partition held twice. Unchanged member assignments are returned as the
input's own objects.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping, Sequence

from groupctl.coordinator.consumer.assignors import heterogeneous
from groupctl.coordinator.consumer.assignors.current import kept_assignments
from groupctl.coordinator.consumer.assignors.spec import EMPTY, Assignment, GroupAssignment, GroupSpec, TopicId

NAME = "uniform"


class UniformAssignor:
    """Balance first, then stickiness; homogeneous and heterogeneous subscriptions."""

    name = NAME

    def assign(self, spec: GroupSpec) -> GroupAssignment:
        if not spec.members:
            return {}
        if spec.homogeneous:
            return assign_homogeneous(spec)
        return heterogeneous.assign(spec)


def assign_homogeneous(spec: GroupSpec) -> GroupAssignment:
    """The uniform assignment of a group whose members all have the same subscription."""
    member_ids = sorted(spec.members)
    members = len(member_ids)
    subscribed = spec.members[member_ids[0]].subscribed_topics
    counts = spec.topics
    topics = sorted(t for t in subscribed if t in counts)
    total = sum(counts[t] for t in topics)
    if total <= 0:
        return {m: EMPTY for m in member_ids}

    kept, owned = kept_assignments(spec.members, member_ids, counts, [subscribed] * members)
    sizes = [sum(map(len, assignment.values())) for assignment in kept]

    minimum, extra = divmod(total, members)
    quotas = [minimum] * members
    for i in sorted(range(members), key=sizes.__getitem__, reverse=True)[:extra]:  # stable: ties by id
        quotas[i] += 1
    for i in range(members):
        if sizes[i] > quotas[i]:
            kept[i] = _trim(kept[i], quotas[i], owned)
            sizes[i] = quotas[i]

    free = _free_partitions(topics, counts, owned)
    result: GroupAssignment = {}
    topic_index, offset = 0, 0
    for i, member_id in enumerate(member_ids):
        assignment = kept[i]
        need = quotas[i] - sizes[i]
        if need:
            assignment = dict(assignment)
            while need:
                topic, partitions = free[topic_index]
                taken = partitions[offset:offset + need]
                held = assignment.get(topic)
                assignment[topic] = frozenset(taken) if held is None else held.union(taken)
                need -= len(taken)
                offset += len(taken)
                if offset == len(partitions):
                    topic_index, offset = topic_index + 1, 0
        result[member_id] = assignment if type(assignment) is MappingProxyType else MappingProxyType(assignment)
    return result


def _trim(assignment: Assignment, quota: int, owned: dict[TopicId, set[int]]) -> Assignment:
    """The lowest `quota` partitions of `assignment` (topic ids in order, then partition
    numbers); the rest are removed from `owned`."""
    trimmed: dict[TopicId, frozenset[int]] = {}
    left = quota
    for topic in sorted(assignment):
        partitions = assignment[topic]
        if len(partitions) <= left:
            trimmed[topic] = partitions
            left -= len(partitions)
            continue
        ordered = sorted(partitions)
        if left:
            trimmed[topic] = frozenset(ordered[:left])
        owned[topic].difference_update(ordered[left:])
        left = 0
    return trimmed


def _free_partitions(
    topics: Sequence[TopicId], counts: Mapping[TopicId, int], owned: dict[TopicId, set[int]],
) -> list[tuple[TopicId, Sequence[int]]]:
    """Per topic (in order) its partitions nobody keeps, ascending; topics with none left out."""
    free: list[tuple[TopicId, Sequence[int]]] = []
    for topic in topics:
        count = counts[topic]
        held = owned.get(topic)
        if not held:
            if count > 0:
                free.append((topic, range(count)))
        elif len(held) < count:
            free.append((topic, sorted(set(range(count)).difference(held))))
    return free
