"""The classic group state machine's legality table (Kafka's ClassicGroupState)."""

import itertools

import pytest

from groupctl.coordinator.classic.state import GroupState, IllegalStateTransition

E, P, C, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                 GroupState.STABLE, GroupState.DEAD)

LEGAL = {
    (P, E),
    (S, P), (C, P), (E, P),
    (P, C),
    (C, S),
    *((source, D) for source in GroupState),
}


@pytest.mark.parametrize("source,target", sorted(LEGAL, key=str))
def test_legal_transitions_are_allowed(source, target):
    source.check_transition(target)


@pytest.mark.parametrize(
    "source,target",
    sorted(set(itertools.product(GroupState, GroupState)) - LEGAL, key=str),
)
def test_every_other_transition_raises(source, target):
    with pytest.raises(IllegalStateTransition):
        source.check_transition(target)


def test_state_names_are_kafkas():
    assert [s.value for s in GroupState] == ["Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"]


@pytest.mark.parametrize("state", list(GroupState))
def test_each_state_documents_how_it_answers(state):
    assert state.__doc__ and len(state.__doc__) > 80
