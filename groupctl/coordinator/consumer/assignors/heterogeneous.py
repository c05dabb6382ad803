"""The `uniform` assignor for heterogeneous subscriptions (Apache Kafka's
`UniformHeterogeneousAssignmentBuilder`, as reworked in KAFKA-17710 for 4.0).

Members are numbered in member id order. Three steps:

1. Keep: every member keeps what it may of its current target assignment
   (`current.kept_assignments`): partitions of topics it still subscribes to.
2. Hand out the partitions nobody keeps, topic by topic, each partition to the least loaded
   subscriber of its topic (round robin among equally loaded ones, lower index first). Topics
   go in this order: most partitions per subscriber first, then fewer subscribers, then topic id.
3. Balance: topic by topic in the same order (topics with two subscribers or more), move the
   topic's partitions from its most loaded subscribers (each giving its highest-numbered
   partition first) to its least loaded ones until their loads differ by at most one or the most
   loaded have no partition of the topic left to give. Repeat over the topics until one whole
   pass moves nothing, at most 16 passes.

When a topic's subscribers all share one subscription this balances them perfectly; with
overlapping subscriptions it is "as balanced as one move at a time finds": no partition can move
from its owner to another subscriber of its topic with two partitions fewer. Apache Kafka's own
limitation, described in its builder, is kept: such local balance need not be the best one.

Loads are the number of partitions a member holds over all its topics, as in Apache Kafka.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping, Optional, Sequence

from groupctl.coordinator.consumer.assignors.current import kept_assignments
from groupctl.coordinator.consumer.assignors.spec import EMPTY, Assignment, GroupAssignment, GroupSpec, TopicId

MAX_PASSES = 16


def assign(spec: GroupSpec) -> GroupAssignment:
    """The uniform assignment of a group whose members' subscriptions may differ."""
    member_ids = sorted(spec.members)
    counts = spec.topics
    subscriptions = [spec.members[m].subscribed_topics for m in member_ids]
    subscribers: dict[TopicId, list[int]] = {}
    for index, subscribed in enumerate(subscriptions):
        for topic in subscribed:
            if topic in counts:
                subscribers.setdefault(topic, []).append(index)
    if not subscribers:
        return {m: EMPTY for m in member_ids}

    kept, owned = kept_assignments(spec.members, member_ids, counts, subscriptions)
    builder = _Builder(kept, counts, subscribers)
    builder.hand_out(owned)
    builder.balance()
    return {member_id: builder.result(i) for i, member_id in enumerate(member_ids)}


class _Builder:
    """The assignment being built: per member its partitions (copied on first change) and load."""

    def __init__(self, kept: list[Assignment], counts: Mapping[TopicId, int], subscribers: dict[TopicId, list[int]]):
        self.kept = kept
        self.changed: list[Optional[dict[TopicId, set[int]]]] = [None] * len(kept)
        self.sizes = [sum(map(len, assignment.values())) for assignment in kept]
        self.counts = counts
        self.subscribers = subscribers
        self.balancer = _Balancer(self.sizes)

    def topic_order(self, topics) -> list[TopicId]:
        """Most partitions per subscriber first, then fewer subscribers, then topic id."""
        counts, subscribers = self.counts, self.subscribers
        return sorted(topics, key=lambda t: (-(counts[t] / len(subscribers[t])), len(subscribers[t]), t))

    def partitions(self, member: int, topic: TopicId):
        changed = self.changed[member]
        if changed is None:
            return self.kept[member].get(topic)
        return changed.get(topic)

    def _mutable(self, member: int) -> dict[TopicId, set[int]]:
        changed = self.changed[member]
        if changed is None:
            changed = self.changed[member] = {t: set(s) for t, s in self.kept[member].items()}
        return changed

    def add(self, topic: TopicId, partition: int, member: int) -> None:
        mine = self._mutable(member)
        held = mine.get(topic)
        if held is None:
            mine[topic] = {partition}
        else:
            held.add(partition)
        self.sizes[member] += 1

    def remove(self, topic: TopicId, partition: int, member: int) -> None:
        self._mutable(member)[topic].discard(partition)
        self.sizes[member] -= 1

    def hand_out(self, owned: dict[TopicId, set[int]]) -> None:
        """Step 2: every partition nobody keeps goes to a least loaded subscriber of its topic."""
        free: dict[TopicId, Sequence[int]] = {}
        for topic in self.subscribers:
            count = self.counts[topic]
            held = owned.get(topic)
            if not held:
                if count > 0:
                    free[topic] = range(count)
            elif len(held) < count:
                free[topic] = sorted(set(range(count)).difference(held))
        for topic in self.topic_order(free):
            self.hand_out_topic(topic, free[topic])

    def hand_out_topic(self, topic: TopicId, partitions: Sequence[int]) -> None:
        """Give `partitions` (ascending) one by one to the least loaded subscriber of `topic`,
        round robin among equally loaded ones (lower index first), as `_Balancer.least_loaded`
        does; computed a level at a time: between two levels at which members join the round,
        member j of the round gets every round-th partition, one slice."""
        sizes = self.sizes
        order = sorted(self.subscribers[topic], key=sizes.__getitem__)  # stable: ties by index
        level = sizes[order[0]]
        end = 1
        while end < len(order) and sizes[order[end]] == level:
            end += 1
        position, total = 0, len(partitions)
        while position < total:
            rounds = sizes[order[end]] - level if end < len(order) else total  # until the next joins
            full = min(rounds, (total - position) // end)
            if full:
                stop = position + full * end
                for j in range(end):
                    member = order[j]
                    mine = self.changed[member]
                    if mine is None:
                        mine = self._mutable(member)
                    held = mine.get(topic)
                    if held is None:
                        mine[topic] = set(partitions[position + j:stop:end])
                    else:
                        held.update(partitions[position + j:stop:end])
                    sizes[member] += full
                position, level = stop, level + full
            if full < rounds:  # a last, partial round
                for j, partition in enumerate(partitions[position:]):
                    self.add(topic, partition, order[j])
                return
            while end < len(order) and sizes[order[end]] == level:
                end += 1

    def balance(self) -> None:
        """Step 3: passes over the topics with two subscribers or more until one moves nothing."""
        topics = self.topic_order(t for t, members in self.subscribers.items() if len(members) >= 2)
        last_moved = -1
        for _ in range(MAX_PASSES):
            for index, topic in enumerate(topics):
                if index == last_moved:
                    return  # a whole pass since the last move: nothing more to move
                if self.balance_topic(topic) or last_moved == -1:
                    last_moved = index

    def balance_topic(self, topic: TopicId) -> int:
        """Move `topic`'s partitions from its most to its least loaded subscribers; how many moved."""
        balancer = self.balancer
        if balancer.reset(self.subscribers[topic]) <= 1:
            return 0
        givable: dict[int, list[int]] = {}  # per owner, what it held at the start, ascending
        received: set[int] = set()
        moved = 0
        while True:
            while True:
                giver = balancer.most_loaded()
                if giver < 0:
                    return moved
                partitions = givable.get(giver)
                if partitions is None:
                    held = self.partitions(giver, topic)
                    partitions = givable[giver] = sorted(held.difference(received)) if held else []
                if partitions:
                    break
                balancer.exclude_most_loaded()
            partition = partitions.pop()
            taker = balancer.least_loaded()
            if balancer.balanced():
                return moved
            self.remove(topic, partition, giver)
            self.add(topic, partition, taker)
            received.add(partition)
            moved += 1

    def result(self, member: int) -> Assignment:
        changed = self.changed[member]
        if changed is None:
            kept = self.kept[member]
            return kept if type(kept) is MappingProxyType else MappingProxyType(kept)
        return MappingProxyType({t: frozenset(s) for t, s in changed.items() if s})


class _Balancer:
    """Walks a topic's subscribers from both ends of their load order: `least_loaded` hands
    out one partition at a time, round robin over the members at the lowest load level (raising
    the level, and taking in the members at it, after each round); `most_loaded` takes one at a
    time the same way from the highest level down. `balanced` once the two levels differ by at
    most one. Loads are read live from `sizes`, which the caller updates."""

    __slots__ = ("sizes", "order", "low_end", "low_level", "low_next", "high_start", "high_end", "high_level",
                 "high_next")

    def __init__(self, sizes: list[int]):
        self.sizes = sizes
        self.order: list[int] = []

    def reset(self, members: list[int]) -> int:
        """Start over with `members` (ascending indices); returns max load - min load."""
        sizes = self.sizes
        order = self.order = sorted(members, key=sizes.__getitem__)  # stable: ties by index
        lowest, highest = sizes[order[0]], sizes[order[-1]]
        self.low_end, self.low_level, self.low_next = 0, lowest - 1, 0
        self.high_start = self.high_end = len(order)
        self.high_level, self.high_next = highest + 1, len(order) - 1
        return highest - lowest

    def least_loaded(self) -> int:
        """The member to give the next partition to (it counts as given)."""
        if self.low_next >= self.low_end:
            self.low_level += 1
            order, sizes, level, end = self.order, self.sizes, self.low_level, self.low_end
            while end < len(order) and sizes[order[end]] == level:
                end += 1
            self.low_end, self.low_next = end, 0
        member = self.order[self.low_next]
        self.low_next += 1
        return member

    def most_loaded(self) -> int:
        """The member to take the next partition from (it counts as taken), or -1: none left."""
        order, sizes = self.order, self.sizes
        if self.high_next < self.high_start:
            start = self.high_start
            if self.high_end <= start and start > 0:
                self.high_level = sizes[order[start - 1]]  # the range emptied by exclusions
            else:
                self.high_level -= 1
            while start > 0 and sizes[order[start - 1]] == self.high_level:
                start -= 1
            self.high_start, self.high_next = start, self.high_end - 1
        if self.high_next < 0:
            return -1
        member = order[self.high_next]
        self.high_next -= 1
        return member

    def exclude_most_loaded(self) -> None:
        """Leave out the member `most_loaded` just returned: it has nothing to give."""
        order, last, end = self.order, self.high_next + 1, self.high_end - 1
        order[last], order[end] = order[end], order[last]
        self.high_end = end

    def balanced(self) -> bool:
        return self.high_level - self.low_level <= 1
