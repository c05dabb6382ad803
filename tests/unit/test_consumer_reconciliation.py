"""A consumer-protocol member's step towards its target assignment: every transition between
STABLE, UNREVOKED_PARTITIONS and UNRELEASED_PARTITIONS (the cases of Apache Kafka's
CurrentAssignmentBuilderTest), and the invariant that nothing owned elsewhere is ever added."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groupctl.coordinator.consumer.member import ConsumerMember, MemberState
from groupctl.coordinator.consumer.partitions import assignment, intersection, union
from groupctl.coordinator.consumer.reconciliation import MustRejoin, reconcile

T1, T2 = "topic-one-id", "topic-two-id"


def member(state=MemberState.STABLE, epoch=10, previous=10, assigned=None, revoking=None) -> ConsumerMember:
    return ConsumerMember("m", member_epoch=epoch, previous_member_epoch=previous, state=state,
                          assigned=assignment(assigned or {}), pending_revocation=assignment(revoking or {}))


def free(topic, partition):
    return -1


def held_at(epoch, topic_id):
    return lambda topic, partition: epoch if topic == topic_id else -1


def test_a_stable_member_at_the_target_epoch_stays_as_it_is():
    m = member(assigned={T1: {1, 2}})
    assert reconcile(m, 10, assignment({T1: {1, 2, 3}}), free, None) is m


def test_a_stable_member_moves_to_a_new_target_epoch_when_nothing_is_revoked():
    m = member(assigned={T1: {1, 2}})
    moved = reconcile(m, 11, assignment({T1: {1, 2}}), free, None)
    assert (moved.state, moved.member_epoch, moved.previous_member_epoch) == (MemberState.STABLE, 11, 10)


def test_a_stable_member_gets_new_free_partitions_with_the_target_epoch():
    m = member(assigned={T1: {1, 2}})
    moved = reconcile(m, 11, assignment({T1: {1, 2, 3}, T2: {4}}), free, None)
    assert (moved.state, moved.member_epoch) == (MemberState.STABLE, 11)
    assert moved.assigned == assignment({T1: {1, 2, 3}, T2: {4}})


def test_a_member_that_still_owns_a_partition_to_revoke_keeps_its_epoch_and_is_told_only_what_it_keeps():
    m = member(assigned={T1: {1, 2, 3}, T2: {4, 5, 6}})
    moved = reconcile(m, 11, assignment({T1: {2, 3}, T2: {5, 6, 7}}), free, assignment({T1: {1, 2, 3}, T2: {4, 5, 6}}))
    assert (moved.state, moved.member_epoch) == (MemberState.UNREVOKED_PARTITIONS, 10)
    assert moved.assigned == assignment({T1: {2, 3}, T2: {5, 6}})
    assert moved.pending_revocation == assignment({T1: {1}, T2: {4}})


def test_a_member_that_does_not_say_what_it_owns_is_assumed_to_still_own_what_it_must_revoke():
    m = member(assigned={T1: {1, 2}})
    assert reconcile(m, 11, assignment({T1: {2}}), free, None).state is MemberState.UNREVOKED_PARTITIONS


def test_a_target_partition_still_owned_elsewhere_is_held_back_and_the_member_waits_for_it():
    m = member(assigned={T1: {1, 2, 3}, T2: {4, 5}})
    moved = reconcile(m, 11, assignment({T1: {1, 2, 3}, T2: {4, 5, 7}}), held_at(10, T2), None)
    assert (moved.state, moved.member_epoch) == (MemberState.UNRELEASED_PARTITIONS, 11)
    assert moved.assigned == assignment({T1: {1, 2, 3}, T2: {4, 5}})


def test_a_member_that_already_dropped_what_it_must_revoke_skips_unrevoked_partitions():
    m = member(assigned={T1: {1, 2, 3}, T2: {4, 5, 6}})
    moved = reconcile(m, 11, assignment({T1: {1, 2, 3}, T2: {4, 5, 7}}), held_at(10, T2), assignment({}))
    assert (moved.state, moved.member_epoch, moved.previous_member_epoch) == (MemberState.UNRELEASED_PARTITIONS, 11, 10)
    assert moved.assigned == assignment({T1: {1, 2, 3}, T2: {4, 5}})
    assert moved.pending_revocation == {}


def test_once_the_revoked_partitions_are_gone_the_member_moves_to_the_target_epoch():
    m = member(MemberState.UNREVOKED_PARTITIONS, assigned={T1: {2, 3}, T2: {5, 6}}, revoking={T1: {1}, T2: {4}})
    moved = reconcile(m, 11, assignment({T1: {2, 3}, T2: {5, 6}}), free, assignment({T1: {2, 3}, T2: {5, 6}}))
    assert (moved.state, moved.member_epoch, moved.previous_member_epoch) == (MemberState.STABLE, 11, 10)
    assert moved.pending_revocation == {}


def test_a_member_still_reporting_a_partition_to_revoke_stays_unrevoked_unchanged():
    m = member(MemberState.UNREVOKED_PARTITIONS, assigned={T1: {2, 3}}, revoking={T1: {1}})
    assert reconcile(m, 11, assignment({T1: {2, 3}}), free, assignment({T1: {1, 2, 3}})) is m
    assert reconcile(m, 11, assignment({T1: {2, 3}}), free, None) is m


def test_a_new_target_while_revoking_moves_the_epoch_by_one_and_asks_for_the_next_revocation():
    m = member(MemberState.UNREVOKED_PARTITIONS, assigned={T1: {2, 3}, T2: {5, 6}}, revoking={T1: {1}, T2: {4}})
    moved = reconcile(m, 12, assignment({T1: {3}, T2: {6}}), free, assignment({T1: {2, 3}, T2: {5, 6}}))
    assert (moved.state, moved.member_epoch, moved.previous_member_epoch) == (MemberState.UNREVOKED_PARTITIONS, 11, 10)
    assert moved.assigned == assignment({T1: {3}, T2: {6}})
    assert moved.pending_revocation == assignment({T1: {2}, T2: {5}})


def test_a_member_that_revoked_but_waits_for_others_goes_to_unreleased_partitions():
    m = member(MemberState.UNREVOKED_PARTITIONS, assigned={T1: {2, 3}}, revoking={T1: {1}})
    moved = reconcile(m, 11, assignment({T1: {2, 3, 4}}), held_at(10, T1), assignment({T1: {2, 3}}))
    assert (moved.state, moved.member_epoch) == (MemberState.UNRELEASED_PARTITIONS, 11)
    assert moved.assigned == assignment({T1: {2, 3}})


def test_an_unreleased_partition_is_assigned_once_free_and_the_member_becomes_stable():
    m = member(MemberState.UNRELEASED_PARTITIONS, epoch=11, assigned={T1: {2, 3}})
    moved = reconcile(m, 11, assignment({T1: {2, 3, 4}}), free, assignment({T1: {2, 3}}))
    assert (moved.state, moved.member_epoch) == (MemberState.STABLE, 11)
    assert moved.assigned == assignment({T1: {2, 3, 4}})


def test_an_unreleased_member_keeps_waiting_while_the_partition_is_still_owned():
    m = member(MemberState.UNRELEASED_PARTITIONS, epoch=11, assigned={T1: {2, 3}})
    moved = reconcile(m, 11, assignment({T1: {2, 3, 4}}), held_at(10, T1), assignment({T1: {2, 3}}))
    assert (moved.state, moved.member_epoch, moved.assigned) == (MemberState.UNRELEASED_PARTITIONS, 11, m.assigned)


def test_an_unreleased_member_given_a_new_target_that_revokes_goes_to_unrevoked_partitions():
    m = member(MemberState.UNRELEASED_PARTITIONS, epoch=11, assigned={T1: {2, 3}})
    moved = reconcile(m, 12, assignment({T1: {3}}), free, assignment({T1: {2, 3}}))
    assert (moved.state, moved.member_epoch) == (MemberState.UNREVOKED_PARTITIONS, 11)
    assert moved.pending_revocation == assignment({T1: {2}})


def test_a_member_in_an_unknown_state_is_fenced_unless_it_owns_nothing():
    m = member(MemberState.UNKNOWN, assigned={T1: {1}})
    with pytest.raises(MustRejoin):
        reconcile(m, 11, assignment({T1: {1}}), free, assignment({T1: {1}}))
    with pytest.raises(MustRejoin):
        reconcile(m, 11, assignment({T1: {1}}), free, None)
    moved = reconcile(m, 11, assignment({T1: {1}}), free, assignment({}))
    assert (moved.state, moved.member_epoch) == (MemberState.STABLE, 11)


partition_sets = st.dictionaries(st.sampled_from([T1, T2]), st.frozensets(st.integers(0, 7), max_size=8), max_size=2)


@settings(max_examples=300, deadline=None)
@given(assigned=partition_sets, target=partition_sets, elsewhere=partition_sets, owned=st.none() | partition_sets,
       state=st.sampled_from([MemberState.STABLE, MemberState.UNRELEASED_PARTITIONS]),
       target_epoch=st.integers(10, 12))
def test_reconciliation_never_adds_a_partition_owned_elsewhere_and_never_assigns_outside_the_target(
        assigned, target, elsewhere, owned, state, target_epoch):
    elsewhere = assignment(elsewhere)
    m = member(state, assigned=assigned)

    def owner_epoch(topic, partition):
        return 9 if partition in elsewhere.get(topic, ()) else -1

    moved = reconcile(m, target_epoch, assignment(target), owner_epoch, None if owned is None else assignment(owned))
    added = {(t, p) for t, ps in moved.assigned.items() for p in ps} - {(t, p) for t, ps in m.assigned.items() for p in ps}
    assert not any(p in elsewhere.get(t, ()) for t, p in added)
    assert intersection(moved.assigned, moved.pending_revocation) == {}
    assert union(moved.assigned, moved.pending_revocation).keys() <= union(m.assigned, assignment(target)).keys()
    if moved.state is MemberState.UNREVOKED_PARTITIONS:
        assert moved.member_epoch <= target_epoch and moved.pending_revocation
    elif moved is not m:  # (a member already at the target epoch is left as it is)
        assert moved.member_epoch == target_epoch
        assert all(ps <= target.get(t, frozenset()) for t, ps in moved.assigned.items())
