"""Properties of the server-side assignors on random groups (hypothesis).

Groups have 1-7 members, homogeneous or heterogeneous subscriptions (including topic ids the
describer does not know), topics of 0-12 partitions, and current assignments that may be stale:
deleted topics, partitions beyond a topic's count, topics the member no longer subscribes to,
partitions held by two members.

- validity (both): every member is in the result; every subscribed partition is assigned exactly
  once, to a member subscribed to its topic; nothing else is assigned; no empty sets.
- uniform, balance: homogeneous, loads differ by at most one; heterogeneous, no partition could
  move from its owner to another subscriber of its topic holding two fewer (Apache Kafka's
  heterogeneous balance), which also puts members with the same subscription within one.
- uniform, stickiness: a balanced valid current assignment comes back unchanged; the result is a
  fixed point; when a member joins a homogeneous group, existing members only lose, each at most
  its surplus over the new minimum, and the newcomer gets exactly what they lose; when one
  leaves, the others keep all they had.
- determinism (both): the same group, members given in another order, gives the same result.
- range: contiguous ranges balanced per topic, static members first; co-partitioning: two topics
  with the same partition count and the same subscribers give every member the same partitions.
- the heterogeneous builder's level-at-a-time hand-out equals Apache Kafka's one-by-one one.
"""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupctl.coordinator.consumer.assignors import GroupSpec, MemberSpec, RangeAssignor, UniformAssignor, heterogeneous

UNIFORM = UniformAssignor()
RANGE = RangeAssignor()
TOPICS = ["T0", "T1", "T2", "T3", "T4"]
NAMES = [*TOPICS, "gone"]  # "gone", and any of TOPICS not drawn, is unknown to the describer
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

stale_assignments = st.dictionaries(
    st.sampled_from(NAMES), st.frozensets(st.integers(-1, 14), min_size=1, max_size=6), max_size=3)


@st.composite
def groups(draw, homogeneous=None, stale=True):
    counts = draw(st.dictionaries(st.sampled_from(TOPICS), st.integers(0, 12), min_size=1))
    member_ids = draw(st.lists(st.text("abcdef", min_size=1, max_size=3), min_size=1, max_size=7, unique=True))
    same = draw(st.booleans()) if homogeneous is None else homogeneous
    shared = draw(st.frozensets(st.sampled_from(NAMES), min_size=1))
    members = {}
    for m in member_ids:
        subscribed = shared if same else draw(st.frozensets(st.sampled_from(NAMES)))
        assignment = draw(stale_assignments) if stale else {}
        instance = f"instance-{m}" if draw(st.booleans()) else None
        members[m] = MemberSpec(subscribed, assignment, instance_id=instance)
    return GroupSpec(members, counts)


def subscribed_partitions(spec):
    return {(t, p) for m in spec.members.values() for t in m.subscribed_topics if t in spec.topics
            for p in range(spec.topics[t])}


def loads(result):
    return {m: sum(map(len, a.values())) for m, a in result.items()}


def check_valid(spec, result):
    assert set(result) == set(spec.members)
    owned = []
    for member_id, assignment in result.items():
        subscribed = spec.members[member_id].subscribed_topics
        for topic, partitions in assignment.items():
            assert type(partitions) is frozenset and partitions, (member_id, topic)
            assert topic in subscribed and topic in spec.topics, (member_id, topic)
            assert all(0 <= p < spec.topics[topic] for p in partitions), (member_id, topic, partitions)
            owned.extend((topic, p) for p in partitions)
    assert len(owned) == len(set(owned)), "a partition is assigned twice"
    assert set(owned) == subscribed_partitions(spec)


def check_locally_balanced(spec, result):
    size = loads(result)
    for owner, assignment in result.items():
        for topic in assignment:
            for other, member in spec.members.items():
                if topic in member.subscribed_topics:
                    assert size[owner] - size[other] <= 1, (owner, other, topic, size)


def with_current(spec, assignment, **extra):
    members = {m: MemberSpec(s.subscribed_topics, assignment.get(m, {}), s.rack, s.instance_id)
               for m, s in spec.members.items()}
    members.update(extra)
    return GroupSpec(members, spec.topics)


def reordered(spec):
    return GroupSpec(dict(reversed(list(spec.members.items()))), dict(reversed(list(spec.topics.items()))))


# -- both -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("assignor", [UNIFORM, RANGE], ids=["uniform", "range"])
@SETTINGS
@given(spec=groups())
def test_every_subscribed_partition_is_assigned_once_to_a_subscriber_deterministically(assignor, spec):
    result = assignor.assign(spec)
    check_valid(spec, result)
    assert assignor.assign(reordered(spec)) == result


# -- uniform --------------------------------------------------------------------------------------

@SETTINGS
@given(groups(homogeneous=True))
def test_uniform_homogeneous_loads_differ_by_at_most_one(spec):
    result = UNIFORM.assign(spec)
    check_valid(spec, result)
    assert max(loads(result).values()) - min(loads(result).values()) <= 1


@SETTINGS
@given(groups(homogeneous=False))
def test_uniform_heterogeneous_is_balanced_as_far_as_one_move_can_tell(spec):
    result = UNIFORM.assign(spec)
    check_valid(spec, result)
    check_locally_balanced(spec, result)


@SETTINGS
@given(groups(homogeneous=True, stale=False), st.randoms(use_true_random=False))
def test_uniform_balanced_valid_current_assignment_comes_back_unchanged(spec, rng):
    partitions = sorted(subscribed_partitions(spec))
    rng.shuffle(partitions)
    member_ids = list(spec.members)
    rng.shuffle(member_ids)
    minimum, extra = divmod(len(partitions), len(member_ids))
    current, start = {}, 0
    for i, member_id in enumerate(member_ids):
        mine = partitions[start:start + minimum + (i < extra)]
        start += len(mine)
        by_topic = {}
        for topic, partition in mine:
            by_topic.setdefault(topic, set()).add(partition)
        current[member_id] = by_topic
    assert UNIFORM.assign(with_current(spec, current)) == current


@SETTINGS
@given(groups())
def test_uniform_result_is_a_fixed_point(spec):
    first = UNIFORM.assign(spec)
    again = with_current(spec, first)
    second = UNIFORM.assign(again)
    assert second == first
    assert all(second[m] is again.members[m].assignment for m in second)  # unchanged: not copied


@SETTINGS
@given(groups(homogeneous=True))
def test_uniform_member_joining_takes_only_what_must_move(spec):
    before = UNIFORM.assign(spec)
    subscribed = next(iter(spec.members.values())).subscribed_topics
    after = UNIFORM.assign(with_current(spec, before, newcomer=MemberSpec(subscribed)))
    check_valid(with_current(spec, before, newcomer=MemberSpec(subscribed)), after)
    minimum = len(subscribed_partitions(spec)) // (len(spec.members) + 1)
    lost = set()
    for member_id, assignment in before.items():
        kept = {(t, p) for t, ps in after[member_id].items() for p in ps}
        had = {(t, p) for t, ps in assignment.items() for p in ps}
        assert kept <= had, member_id
        assert len(had) - len(kept) <= max(0, len(had) - minimum), member_id
        lost |= had - kept
    assert lost == {(t, p) for t, ps in after["newcomer"].items() for p in ps}


@SETTINGS
@given(groups(homogeneous=True), st.data())
def test_uniform_member_leaving_lets_the_others_keep_everything(spec, data):
    before = UNIFORM.assign(spec)
    leaving = data.draw(st.sampled_from(sorted(spec.members)))
    remaining = {m: s for m, s in with_current(spec, before).members.items() if m != leaving}
    after = UNIFORM.assign(GroupSpec(remaining, spec.topics))
    for member_id in remaining:
        for topic, partitions in before[member_id].items():
            assert partitions <= after[member_id].get(topic, frozenset()), (member_id, topic)


# -- range ----------------------------------------------------------------------------------------

@SETTINGS
@given(groups())
def test_range_gives_contiguous_balanced_ranges_static_members_first(spec):
    result = RANGE.assign(spec)
    order = sorted(spec.members, key=lambda m: (spec.members[m].instance_id is None, spec.members[m].instance_id or m))
    for topic, count in spec.topics.items():
        ranges = [sorted(result[m].get(topic, ())) for m in order if topic in spec.members[m].subscribed_topics]
        if not ranges:
            continue
        assert max(map(len, ranges)) - min(map(len, ranges)) <= 1
        assert [p for r in ranges for p in r] == list(range(count))  # consecutive, in member order


@SETTINGS
@given(groups())
def test_range_co_partitions_topics_with_equal_counts_and_subscribers(spec):
    result = RANGE.assign(spec)

    def subscribers(topic):
        return frozenset(m for m, s in spec.members.items() if topic in s.subscribed_topics)

    for t in spec.topics:
        for u in spec.topics:
            if t < u and spec.topics[t] == spec.topics[u] and subscribers(t) == subscribers(u):
                for member_id in subscribers(t):
                    assert result[member_id].get(t) == result[member_id].get(u), (member_id, t, u)


@SETTINGS
@given(groups(homogeneous=False))
def test_uniform_heterogeneous_hands_out_a_level_at_a_time_as_one_by_one(spec):
    """The heterogeneous builder hands out free partitions in slices, a load level at a time;
    the result is Apache Kafka's one partition at a time to the next least loaded subscriber."""

    class OneByOne(heterogeneous._Builder):
        def hand_out_topic(self, topic, partitions):
            self.balancer.reset(self.subscribers[topic])
            for partition in partitions:
                self.add(topic, partition, self.balancer.least_loaded())

    expected = heterogeneous.assign(spec)
    with mock.patch.object(heterogeneous, "_Builder", OneByOne):
        assert heterogeneous.assign(spec) == expected
