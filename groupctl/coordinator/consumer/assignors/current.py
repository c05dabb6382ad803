"""The part of the members' current target assignments an assignor may keep.

A partition is kept by a member when its topic is known, the member subscribes to it, the
partition number is below the topic's count, and no member earlier in `member_ids` order keeps
it too (a partition held twice is a stale input: the first holder keeps it). Everything else is
dropped and becomes free for reassignment.

The work is per member and per topic, with per-partition work only in C (min, max, set union)
except where a partition really is held twice: a member whose assignment is entirely valid is
returned as its own input object.
"""

from __future__ import annotations

from typing import AbstractSet, Mapping, Sequence

from groupctl.coordinator.consumer.assignors.spec import Assignment, MemberId, MemberSpec, TopicId


def kept_assignments(
    members: Mapping[MemberId, MemberSpec],
    member_ids: Sequence[MemberId],
    topics: Mapping[TopicId, int],
    subscriptions: Sequence[AbstractSet[TopicId]],
) -> tuple[list[Assignment], dict[TopicId, set[int]]]:
    """Per member (in `member_ids` order, subscribed to `subscriptions[i]`), what it may keep of
    its current assignment, the input mapping itself when nothing is dropped; and per topic the
    partitions kept by anybody."""
    kept: list[Assignment] = []
    holders: dict[TopicId, list[int]] = {}
    for index, member_id in enumerate(member_ids):
        current = members[member_id].assignment
        subscribed = subscriptions[index]
        valid = True
        for topic, partitions in current.items():
            count = topics.get(topic)
            if count is None or topic not in subscribed or min(partitions) < 0 or max(partitions) >= count:
                valid = False
                break
        if not valid:
            current = _valid_part(current, topics, subscribed)
        kept.append(current)
        for topic in current:
            holders.setdefault(topic, []).append(index)
    owned: dict[TopicId, set[int]] = {}
    for topic, indices in holders.items():
        sets = [kept[i][topic] for i in indices]
        union = set().union(*sets)
        if len(union) != sum(map(len, sets)):
            _first_holder_keeps(kept, indices, topic)
        owned[topic] = union
    return kept, owned


def _valid_part(current: Assignment, topics: Mapping[TopicId, int], subscribed: AbstractSet[TopicId]) -> Assignment:
    valid: dict[TopicId, frozenset[int]] = {}
    for topic, partitions in current.items():
        count = topics.get(topic)
        if count is None or topic not in subscribed:
            continue
        if min(partitions) < 0 or max(partitions) >= count:
            partitions = frozenset(p for p in partitions if 0 <= p < count)
        if partitions:
            valid[topic] = partitions
    return valid


def _first_holder_keeps(kept: list[Assignment], indices: list[int], topic: TopicId) -> None:
    """Drop from later holders (in member order) the partitions of `topic` an earlier one holds."""
    seen: set[int] = set()
    for i in indices:
        partitions = kept[i][topic]
        mine = partitions - seen
        seen.update(partitions)
        if len(mine) != len(partitions):
            assignment = dict(kept[i])
            if mine:
                assignment[topic] = mine
            else:
                del assignment[topic]
            kept[i] = assignment
