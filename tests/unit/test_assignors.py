"""Examples for the server-side assignors (`groupctl.coordinator.consumer.assignors`).

Most are Apache Kafka's own cases, named after the behaviour and citing the test they come from
(group-coordinator/src/test/java/org/apache/kafka/coordinator/group/assignor/, trunk 2024-10):
- UniformHeterogeneousAssignmentBuilderTest: the heterogeneous builder follows Apache Kafka's
  algorithm and numbers members in member id order like that test does, so its expected
  assignments are Apache Kafka's, partition for partition.
- OptimizedUniformAssignmentBuilderTest (homogeneous): Apache Kafka hands out free partitions in
  its hash set's order of topic ids; we go in topic id order, so where that order decides, the
  expected assignment here differs from Apache Kafka's (said in the test) and is equally
  balanced and sticky.
- RangeAssignorTest: identical expectations.
Apache Kafka raises PartitionAssignorException for a subscription to an unknown topic id; here
such a topic has nothing to assign.
"""

from __future__ import annotations

from types import MappingProxyType

import pytest

from groupctl.coordinator.consumer.assignors import (
    ASSIGNORS,
    DEFAULT_ASSIGNORS,
    GroupSpec,
    MemberSpec,
    RangeAssignor,
    UniformAssignor,
    choose,
)
from groupctl.coordinator.consumer.assignors.spec import freeze

UNIFORM = UniformAssignor()
RANGE = RangeAssignor()
T1, T2, T3, T4 = "T1", "T2", "T3", "T4"


def member(*topics, assignment=None, instance=None):
    return MemberSpec(frozenset(topics), freeze(assignment or {}), instance_id=instance)


def group(topics, homogeneous=None, **members):
    return GroupSpec(members, topics, homogeneous=homogeneous)


def sizes(result):
    return {m: sum(map(len, a.values())) for m, a in result.items()}


# -- registry -----------------------------------------------------------------------------------

def test_the_registry_lists_uniform_then_range_like_group_consumer_assignors():
    assert list(ASSIGNORS) == ["uniform", "range"] and DEFAULT_ASSIGNORS == ("uniform", "range")
    assert [a.name for a in ASSIGNORS.values()] == ["uniform", "range"]


def test_choose_takes_what_most_members_ask_for_else_the_first_configured():
    assert choose([None, None]) == "uniform"
    assert choose([], ["range", "uniform"]) == "range"
    assert choose(["range", None, "uniform", "range"]) == "range"
    assert choose(["range", "uniform"]) == "uniform"  # a tie: the configured order decides


def test_an_empty_group_gets_an_empty_assignment():
    for assignor in (UNIFORM, RANGE):
        assert assignor.assign(group({T1: 3})) == {}


def test_homogeneous_is_computed_from_the_subscriptions_unless_given():
    assert group({T1: 3}, A=member(T1, T2), B=member(T2, T1)).homogeneous is True
    assert group({T1: 3}, A=member(T1), B=member(T1, T2)).homogeneous is False
    assert group({T1: 3}, homogeneous=False, A=member(T1), B=member(T1)).homogeneous is False
    assert group({T1: 3}, A=member(T1, "gone"), B=member(T2)).subscribed_topics() == {T1}


def test_specs_are_frozen_and_results_read_only():
    spec = group({T1: 3}, A=member(T1, assignment={T1: [0, 1]}))
    with pytest.raises(AttributeError):
        spec.members = {}  # type: ignore[misc]
    assert type(spec.members["A"].assignment[T1]) is frozenset
    result = UNIFORM.assign(spec)
    assert type(result["A"]) is MappingProxyType


# -- uniform, homogeneous (OptimizedUniformAssignmentBuilderTest) -------------------------------

def test_uniform_member_without_subscriptions_gets_nothing():
    """testOneMemberNoTopicSubscription (Apache Kafka returns no entry at all for the member)."""
    assert UNIFORM.assign(group({T1: 3}, A=member())) == {"A": {}}


def test_uniform_subscription_to_an_unknown_topic_assigns_nothing():
    """testOneMemberSubscribedToNonexistentTopic (Apache Kafka raises instead)."""
    assert UNIFORM.assign(group({T1: 3}, A=member(T2))) == {"A": {}}


def test_uniform_first_assignment_of_two_members_two_topics():
    """testFirstAssignmentTwoMembersTwoTopicsNoMemberRacks. Apache Kafka: A gets T1 0 and T3 0-1
    (its hash order put T3 first); topic id order gives A the whole of T1."""
    result = UNIFORM.assign(group({T1: 3, T3: 2}, A=member(T1, T3), B=member(T1, T3)))
    assert result == {"A": {T1: {0, 1, 2}}, "B": {T3: {0, 1}}}


def test_uniform_more_members_than_partitions_leaves_the_last_member_empty():
    """testFirstAssignmentNumMembersGreaterThanTotalNumPartitions."""
    result = UNIFORM.assign(group({T3: 2}, A=member(T3), B=member(T3), C=member(T3)))
    assert result == {"A": {T3: {0}}, "B": {T3: {1}}, "C": {}}


def test_uniform_large_homogeneous_group_is_valid_and_balanced():
    """testValidityAndBalanceForLargeSampleSet: 99 topics of 3 partitions, 49 members."""
    topics = {f"topic-{i}": 3 for i in range(1, 100)}
    members = {f"member{i}": member(*topics) for i in range(1, 50)}
    result = UNIFORM.assign(GroupSpec(members, topics))
    counts = sizes(result)
    assert max(counts.values()) - min(counts.values()) <= 1
    owned = [(t, p) for a in result.values() for t, ps in a.items() for p in ps]
    assert sorted(owned) == sorted((t, p) for t in topics for p in range(3))


def test_uniform_unbalanced_current_assignment_gives_up_only_the_surplus():
    """testReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment (same result)."""
    result = UNIFORM.assign(group(
        {T1: 3, T2: 3},
        A=member(T1, T2, assignment={T1: [0, 1], T2: [0, 1]}),
        B=member(T1, T2, assignment={T1: [2], T2: [2]})))
    assert result == {"A": {T1: {0, 1}, T2: {0}}, "B": {T1: {2}, T2: {1, 2}}}


def test_uniform_added_partitions_go_to_the_members_below_quota():
    """testReassignmentWhenPartitionsAreAddedForTwoMembersTwoTopics. Both keep all they had;
    Apache Kafka gives A T1-3 and T2-3,4 (hash order), topic id order gives A T1-3,4,5."""
    result = UNIFORM.assign(group(
        {T1: 6, T2: 5},
        A=member(T1, T2, assignment={T1: [0, 2], T2: [0]}),
        B=member(T1, T2, assignment={T1: [1], T2: [1, 2]})))
    assert result == {"A": {T1: {0, 2, 3, 4, 5}, T2: {0}}, "B": {T1: {1}, T2: {1, 2, 3, 4}}}


def test_uniform_member_joining_takes_one_partition_from_each_member_over_quota():
    """testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics (same)."""
    result = UNIFORM.assign(group(
        {T1: 3, T2: 3},
        A=member(T1, T2, assignment={T1: [0, 2], T2: [0]}),
        B=member(T1, T2, assignment={T1: [1], T2: [1, 2]}),
        C=member(T1, T2)))
    assert result == {"A": {T1: {0, 2}}, "B": {T1: {1}, T2: {1}}, "C": {T2: {0, 2}}}


def test_uniform_member_leaving_spreads_its_partitions_over_the_others():
    """testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersTwoTopics.
    Apache Kafka gives A T2-2 and B T1-2 (hash order); topic id order does the reverse."""
    result = UNIFORM.assign(group(
        {T1: 3, T2: 3},
        A=member(T1, T2, assignment={T1: [0], T2: [0]}),
        B=member(T1, T2, assignment={T1: [1], T2: [1]})))
    assert result == {"A": {T1: {0, 2}, T2: {0}}, "B": {T1: {1}, T2: {1, 2}}}


def test_uniform_unsubscribed_topic_is_revoked():
    """testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics."""
    result = UNIFORM.assign(group(
        {T1: 2, T2: 2},
        A=member(T2, assignment={T1: [0], T2: [0]}),
        B=member(T2, assignment={T1: [1], T2: [1]})))
    assert result == {"A": {T2: {0}}, "B": {T2: {1}}}


def test_uniform_extra_partitions_stay_with_the_members_holding_them():
    """Not in Apache Kafka's tests: 7 partitions over 3 members, C holds the extra one. Apache
    Kafka's builder gives the extra to the first member it iterates and would move one of C's."""
    spec = group({T1: 7},
                 A=member(T1, assignment={T1: [0, 1]}),
                 B=member(T1, assignment={T1: [2, 3]}),
                 C=member(T1, assignment={T1: [4, 5, 6]}))
    result = UNIFORM.assign(spec)
    assert result == {"A": {T1: {0, 1}}, "B": {T1: {2, 3}}, "C": {T1: {4, 5, 6}}}
    assert all(result[m] is spec.members[m].assignment for m in "ABC")  # unchanged: not copied


def test_uniform_stale_current_assignments_are_dropped():
    """Partitions of deleted topics, beyond a topic's count, or held twice (the first member id
    keeps it) are not kept."""
    result = UNIFORM.assign(group(
        {T1: 4},
        A=member(T1, assignment={T1: [0, 1], "gone": [0]}),
        B=member(T1, assignment={T1: [1, 7]})))
    assert result == {"A": {T1: {0, 1}}, "B": {T1: {2, 3}}}


def test_uniform_topic_with_no_partitions_assigns_nothing():
    assert UNIFORM.assign(group({T1: 0}, A=member(T1), B=member(T1))) == {"A": {}, "B": {}}


# -- uniform, heterogeneous (UniformHeterogeneousAssignmentBuilderTest) -------------------------

def test_heterogeneous_members_without_subscriptions_get_nothing():
    """testTwoMembersNoTopicSubscription."""
    result = UNIFORM.assign(group({T1: 3}, homogeneous=False, A=member(), B=member()))
    assert result == {"A": {}, "B": {}}


def test_heterogeneous_subscriptions_to_unknown_topics_assign_nothing():
    """testTwoMembersSubscribedToNonexistentTopics (Apache Kafka raises instead)."""
    assert UNIFORM.assign(group({T1: 3}, A=member(T3), B=member(T2))) == {"A": {}, "B": {}}


def test_heterogeneous_first_assignment_balances_over_the_shared_topic():
    """testFirstAssignmentTwoMembersTwoTopics."""
    result = UNIFORM.assign(group({T1: 3, T3: 6}, A=member(T1, T3), B=member(T3)))
    assert result == {"A": {T1: {0, 1, 2}, T3: {4}}, "B": {T3: {0, 1, 2, 3, 5}}}


def test_heterogeneous_more_members_than_partitions():
    """testFirstAssignmentNumMembersGreaterThanTotalNumPartitions."""
    result = UNIFORM.assign(group({T3: 1, T1: 2}, A=member(T3), B=member(T3), C=member(T1)))
    assert result == {"A": {T3: {0}}, "B": {}, "C": {T1: {0, 1}}}


def test_heterogeneous_unbalanced_current_assignment_is_rebalanced():
    """testReassignmentForTwoMembersThreeTopicsGivenUnbalancedPrevAssignment."""
    result = UNIFORM.assign(group(
        {T1: 6, T2: 4, T3: 4},
        A=member(T1, assignment={T1: [0, 1, 2]}),
        B=member(T1, T2, assignment={T1: [3], T2: [0]}),
        C=member(T1, T2, T3, assignment={T1: [4, 5], T2: [1, 2, 3], T3: [0, 1, 2, 3]})))
    assert result == {"A": {T1: {0, 1, 2, 5}}, "B": {T1: {3}, T2: {0, 1, 2, 3}}, "C": {T1: {4}, T3: {0, 1, 2, 3}}}


def test_heterogeneous_added_partitions_go_to_their_subscribers():
    """testReassignmentWhenPartitionsAreAddedForTwoMembers."""
    result = UNIFORM.assign(group(
        {T1: 6, T2: 5, T3: 3, T4: 3},
        A=member(T1, T3, assignment={T1: [0, 1, 2, 3], T3: [0, 1]}),
        B=member(T1, T2, T3, T4, assignment={T2: [0, 1, 2], T4: [0, 1, 2]})))
    assert result == {"A": {T1: {0, 1, 2, 3, 4, 5}, T3: {0, 1, 2}}, "B": {T2: {0, 1, 2, 3, 4}, T4: {0, 1, 2}}}


def test_heterogeneous_member_joining_while_partitions_are_added():
    """testReassignmentWhenOneMemberAddedAndPartitionsAddedTwoMembersTwoTopics."""
    result = UNIFORM.assign(group(
        {T1: 6, T2: 7},
        A=member(T1, assignment={T1: [0, 2], T2: [0]}),
        B=member(T1, T2, assignment={T1: [1], T2: [1, 2]}),
        C=member(T1, T2)))
    assert result == {"A": {T1: {0, 2, 3, 4, 5}}, "B": {T1: {1}, T2: {1, 2, 6}}, "C": {T2: {0, 3, 4, 5}}}


def test_heterogeneous_member_leaving_frees_its_partitions():
    """testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersThreeTopics."""
    result = UNIFORM.assign(group(
        {T1: 3, T2: 8, T3: 3},
        A=member(T1, T3, assignment={T1: [0, 1, 2], T3: [0, 1]}),
        B=member(T2, assignment={T2: [3, 4, 5, 6]})))
    assert result == {"A": {T1: {0, 1, 2}, T3: {0, 1, 2}}, "B": {T2: set(range(8))}}


def test_heterogeneous_unsubscribed_topic_is_revoked():
    """testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics."""
    result = UNIFORM.assign(group(
        {T1: 3, T2: 5},
        A=member(T1, assignment={T1: [0, 2], T2: [1, 3]}),
        B=member(T1, T2, assignment={T1: [1], T2: [0, 2, 4]})))
    assert result == {"A": {T1: {0, 1, 2}}, "B": {T2: {0, 1, 2, 3, 4}}}


def test_heterogeneous_balancing_stops_when_a_topic_runs_out_of_partitions():
    """testReassignmentWhenTopicPartitionsRunOutAndMembersHaveNoPartitions (forced down the
    heterogeneous path, as there)."""
    result = UNIFORM.assign(group(
        {T1: 2, T2: 2, T3: 2}, homogeneous=False,
        A=member(T1, T2, T3, assignment={T1: [0, 1], T2: [0, 1], T3: [0, 1]}),
        B=member(T1, T2, T3)))
    assert result == {"A": {T2: {0}, T3: {0, 1}}, "B": {T1: {0, 1}, T2: {1}}}


def test_heterogeneous_member_without_subscriptions_beside_one_with():
    """testFirstAssignmentWithTwoMembersIncludingOneWithoutSubscriptions."""
    result = UNIFORM.assign(group({T1: 3}, A=member(T1), B=member()))
    assert result == {"A": {T1: {0, 1, 2}}, "B": {}}


# -- range (RangeAssignorTest) ------------------------------------------------------------------

def test_range_member_without_subscriptions_gets_nothing():
    """testOneMemberNoTopic."""
    assert RANGE.assign(group({T1: 3}, A=member())) == {"A": {}}


def test_range_subscription_to_an_unknown_topic_assigns_nothing():
    """testOneMemberSubscribedToNonExistentTopic (Apache Kafka raises instead)."""
    assert RANGE.assign(group({T1: 3}, A=member(T2))) == {"A": {}}


def test_range_same_subscriptions_are_co_partitioned():
    """testFirstAssignmentTwoMembersTwoTopicsSameSubscriptions."""
    result = RANGE.assign(group({T1: 3, T3: 2}, A=member(T1, T3), B=member(T1, T3)))
    assert result == {"A": {T1: {0, 1}, T3: {0}}, "B": {T1: {2}, T3: {1}}}


def test_range_different_subscriptions_range_each_topic_over_its_subscribers():
    """testFirstAssignmentThreeMembersThreeTopicsDifferentSubscriptions."""
    result = RANGE.assign(group({T1: 3, T2: 3, T3: 2}, A=member(T1, T2), B=member(T3), C=member(T2, T3)))
    assert result == {"A": {T1: {0, 1, 2}, T2: {0, 1}}, "B": {T3: {0}}, "C": {T2: {2}, T3: {1}}}


def test_range_more_members_than_partitions():
    """testFirstAssignmentNumMembersGreaterThanNumPartitions."""
    result = RANGE.assign(group({T1: 3, T3: 2}, A=member(T1, T3), B=member(T1, T3), C=member(T1, T3)))
    assert result == {"A": {T1: {0}, T3: {0}}, "B": {T1: {1}, T3: {1}}, "C": {T1: {2}}}


def test_range_static_member_keeps_its_ranges_under_a_new_member_id():
    """testStaticMembership."""
    before = RANGE.assign(group({T1: 3}, A=member(T1, instance="instanceA"), B=member(T1, instance="instanceB")))
    after = RANGE.assign(group({T1: 3}, memberA1=member(T1, instance="instanceA"),
                               B=member(T1, instance="instanceB")))
    assert after["memberA1"] == before["A"] and after["B"] == before["B"]


def test_range_static_members_come_before_dynamic_ones():
    """testMixedStaticMembership."""
    before = RANGE.assign(group({T1: 5}, A=member(T1, instance="instanceA"), C=member(T1, instance="instanceC"),
                                B=member(T1)))
    assert before == {"A": {T1: {0, 1}}, "C": {T1: {2, 3}}, "B": {T1: {4}}}
    after = RANGE.assign(group({T1: 5}, memberA1=member(T1, instance="instanceA"),
                               C=member(T1, instance="instanceC"), B=member(T1)))
    assert (after["memberA1"], after["B"], after["C"]) == (before["A"], before["B"], before["C"])


def test_range_member_joining_beyond_the_partition_count_gets_nothing():
    """testReassignmentNumMembersGreaterThanNumPartitionsWhenOneMemberAdded."""
    result = RANGE.assign(group(
        {T1: 2, T2: 2},
        A=member(T1, T2, assignment={T1: [0], T2: [0]}),
        B=member(T1, T2, assignment={T1: [1], T2: [1]}),
        C=member(T1, T2)))
    assert result == {"A": {T1: {0}, T2: {0}}, "B": {T1: {1}, T2: {1}}, "C": {}}


def test_range_added_partition_extends_the_ranges():
    """testReassignmentWhenOnePartitionAddedForTwoMembersTwoTopics."""
    result = RANGE.assign(group(
        {T1: 4, T2: 4},
        A=member(T1, T2, assignment={T1: [0, 1], T2: [0, 1]}),
        B=member(T1, T2, assignment={T1: [2], T2: [2]})))
    assert result == {"A": {T1: {0, 1}, T2: {0, 1}}, "B": {T1: {2, 3}, T2: {2, 3}}}


def test_range_member_joining_recomputes_the_ranges():
    """testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics."""
    result = RANGE.assign(group(
        {T1: 3, T2: 3},
        A=member(T1, T2, assignment={T1: [0, 1], T2: [0, 1]}),
        B=member(T1, T2, assignment={T1: [2], T2: [2]}),
        C=member(T1, T2)))
    assert result == {"A": {T1: {0}, T2: {0}}, "B": {T1: {1}, T2: {1}}, "C": {T1: {2}, T2: {2}}}


def test_range_member_joining_with_a_partition_added():
    """testReassignmentWhenOneMemberAddedAndOnePartitionAfterInitialAssignmentWithTwoMembersTwoTopics."""
    result = RANGE.assign(group(
        {T1: 4, T2: 3},
        A=member(T1, T2, assignment={T1: [0, 1], T2: [0, 1]}),
        B=member(T1, T2, assignment={T1: [2], T2: [2]}),
        C=member(T1)))
    assert result == {"A": {T1: {0, 1}, T2: {0, 1}}, "B": {T1: {2}, T2: {2}}, "C": {T1: {3}}}


def test_range_member_leaving_leaves_everything_to_the_other():
    """testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithTwoMembersTwoTopics."""
    result = RANGE.assign(group({T1: 3, T2: 3}, B=member(T1, T2, assignment={T1: [2], T2: [2]})))
    assert result == {"B": {T1: {0, 1, 2}, T2: {0, 1, 2}}}


def test_range_subscriptions_removed():
    """testReassignmentWhenMultipleSubscriptionsRemovedAfterInitialAssignmentWithThreeMembersTwoTopics."""
    result = RANGE.assign(group(
        {T1: 3, T2: 3, T3: 2},
        A=member(T1, assignment={T1: [0, 1, 2], T2: [0]}),
        B=member(T1, T2, T3, assignment={T2: [1]}),
        C=member(T2, assignment={T2: [2], T3: [0, 1]})))
    assert result == {"A": {T1: {0, 1}}, "B": {T1: {2}, T2: {0, 1}, T3: {0, 1}}, "C": {T2: {2}}}
