"""The member's legality table: Apache Kafka's MemberState (plus STALE -> UNSUBSCRIBED), every
transition outside it raises, and every transition in it is made by the machine in some scenario
(except the few Apache Kafka lists but never makes, named below)."""

from __future__ import annotations

import itertools

import pytest

from groupctl.coordinator.errors import ErrorCode
from groupctl.member import IllegalTransition, MemberState as S
from groupctl.member.states import LEGAL_TRANSITIONS, check_transition, is_legal
from tests.unit.member_harness import T1, T2, error, ok, recording, run_callbacks

AK_PREVIOUS_VALID_STATES = {
    S.STABLE: {S.JOINING, S.ACKNOWLEDGING, S.RECONCILING},
    S.RECONCILING: {S.STABLE, S.JOINING, S.ACKNOWLEDGING, S.RECONCILING},
    S.ACKNOWLEDGING: {S.RECONCILING},
    S.FATAL: {S.JOINING, S.STABLE, S.RECONCILING, S.ACKNOWLEDGING, S.PREPARE_LEAVING, S.LEAVING, S.UNSUBSCRIBED},
    S.FENCED: {S.JOINING, S.STABLE, S.RECONCILING, S.ACKNOWLEDGING, S.PREPARE_LEAVING, S.LEAVING},
    S.JOINING: {S.FENCED, S.UNSUBSCRIBED, S.STALE},
    S.PREPARE_LEAVING: {S.JOINING, S.STABLE, S.RECONCILING, S.ACKNOWLEDGING, S.UNSUBSCRIBED},
    S.LEAVING: {S.PREPARE_LEAVING},
    S.UNSUBSCRIBED: {S.PREPARE_LEAVING, S.LEAVING, S.FENCED},
    S.STALE: {S.LEAVING},
}

# In the table (as in AK) but never made: a joining member's first target always differs from its
# empty acknowledged assignment; a target equal to the reconciled one never reaches a RECONCILING
# member; LEAVING lasts no longer than the input that entered it; fencing while leaving ends the
# leave (AK) instead of fencing; unsubscribing when UNSUBSCRIBED does nothing.
NEVER_MADE = {
    (S.JOINING, S.STABLE), (S.RECONCILING, S.STABLE), (S.RECONCILING, S.RECONCILING),
    (S.LEAVING, S.FATAL), (S.LEAVING, S.FENCED), (S.PREPARE_LEAVING, S.FENCED),
    (S.UNSUBSCRIBED, S.PREPARE_LEAVING), (S.PREPARE_LEAVING, S.UNSUBSCRIBED),
}


def test_the_legality_table_is_apache_kafkas_plus_stale_to_unsubscribed():
    ak = {(before, after) for after, befores in AK_PREVIOUS_VALID_STATES.items() for before in befores}
    assert LEGAL_TRANSITIONS == ak | {(S.STALE, S.UNSUBSCRIBED)}


@pytest.mark.parametrize("before, after", [
    pair for pair in itertools.product(S, S) if pair not in LEGAL_TRANSITIONS and pair[0] is not pair[1]],
    ids=lambda s: s.name)
def test_a_transition_outside_the_table_raises(before, after):
    assert not is_legal(before, after)
    with pytest.raises(IllegalTransition):
        check_transition(before, after)


@pytest.mark.parametrize("state", list(S), ids=lambda s: s.name)
def test_staying_in_a_state_is_not_a_transition(state):
    check_transition(state, state)


def test_the_machine_raises_rather_than_make_an_illegal_move():
    m = recording()
    with pytest.raises(IllegalTransition):
        m._to(S.STABLE)  # UNSUBSCRIBED -> STABLE
    assert m.state is S.UNSUBSCRIBED


# -- one scenario per transition the machine makes ---------------------------------------------------

def _joined(m, assignment=None, epoch=1):
    m.subscribe(0, ["t1", "t2"])
    out = m.heartbeat_response(0, ok(epoch, assignment if assignment is not None else {T1: [0]}))
    run_callbacks(m, out, 0)
    m.heartbeat_response(0, ok(epoch))
    return m


def _acknowledging_with_a_heartbeat_in_flight(m):
    _joined(m)
    m.tick(5_000)  # a heartbeat on the interval goes out
    out = m.heartbeat_response(5_000, ok(2, {T1: [0, 1]}))
    m.tick(5_001)
    m.tick(10_000)  # another interval heartbeat in flight while the callback runs
    run_callbacks(m, out, 10_001)
    assert m.state is S.ACKNOWLEDGING and m.in_flight == 1
    return m


def s_unsubscribed_joining(m):
    m.subscribe(0, ["t1"])


def s_joining_reconciling_acknowledging_stable(m):
    _joined(m)


def s_stable_reconciling(m):
    _joined(m)
    m.tick(5_000)
    m.heartbeat_response(5_000, ok(2, {T1: [0, 1]}))


def s_acknowledging_reconciling(m):
    _acknowledging_with_a_heartbeat_in_flight(m)
    m.heartbeat_response(10_002, ok(3, {T1: [0, 1, 2]}))


def s_acknowledging_fenced(m):
    _acknowledging_with_a_heartbeat_in_flight(m)
    m.heartbeat_response(10_002, error(ErrorCode.FENCED_MEMBER_EPOCH))


def s_acknowledging_fatal(m):
    _acknowledging_with_a_heartbeat_in_flight(m)
    m.heartbeat_response(10_002, error(ErrorCode.GROUP_MAX_SIZE_REACHED))


def s_acknowledging_prepare_leaving(m):
    _acknowledging_with_a_heartbeat_in_flight(m)
    m.unsubscribe(10_002)


def s_joining_fenced_joining(m):
    m.subscribe(0, ["t1"])
    m.heartbeat_response(0, error(ErrorCode.UNKNOWN_MEMBER_ID))


def s_joining_fatal(m):
    m.subscribe(0, ["t1"])
    m.heartbeat_response(0, error(ErrorCode.UNSUPPORTED_ASSIGNOR))


def s_joining_prepare_leaving(m):
    m.subscribe(0, ["t1"])
    m.unsubscribe(1)


def s_stable_fenced(m):
    _joined(m)
    m.tick(5_000)
    m.heartbeat_response(5_000, error(ErrorCode.FENCED_MEMBER_EPOCH))


def s_stable_fatal(m):
    _joined(m)
    m.tick(5_000)
    m.heartbeat_response(5_000, error(ErrorCode.INVALID_REQUEST))


def s_stable_prepare_leaving_leaving_unsubscribed(m):
    _joined(m)
    out = m.unsubscribe(1)
    run_callbacks(m, out, 1)


def s_reconciling_fenced(m):
    _joined(m)
    m.tick(5_000)
    m.heartbeat_response(5_000, ok(2, {T2: [0]}))
    m.tick(10_000)
    m.heartbeat_response(10_000, error(ErrorCode.FENCED_MEMBER_EPOCH))


def s_reconciling_fatal(m):
    _joined(m)
    m.tick(5_000)
    m.heartbeat_response(5_000, ok(2, {T2: [0]}))
    m.tick(10_000)
    m.heartbeat_response(10_000, error(ErrorCode.INVALID_REGULAR_EXPRESSION))


def s_reconciling_prepare_leaving(m):
    _joined(m)
    m.tick(5_000)
    m.heartbeat_response(5_000, ok(2, {T2: [0]}))
    m.unsubscribe(5_001)


def s_prepare_leaving_fatal(m):
    _joined(m)
    m.tick(5_000)
    m.unsubscribe(5_001)  # the REVOKE runs; the interval heartbeat is still in flight
    m.heartbeat_response(5_002, error(ErrorCode.UNSUPPORTED_VERSION))


def s_unsubscribed_fatal(m):
    _joined(m, assignment={})
    m.tick(5_000)
    m.unsubscribe(5_001)  # nothing to release: the leave goes out at once
    m.heartbeat_response(5_002, error(ErrorCode.GROUP_MAX_SIZE_REACHED))


def s_fenced_unsubscribed(m):
    _joined(m)
    m.tick(5_000)
    m.heartbeat_response(5_000, error(ErrorCode.FENCED_MEMBER_EPOCH))
    m.unsubscribe(5_001)


def s_leaving_stale_joining(m):
    _joined(m)
    out = m.tick(300_000)
    run_callbacks(m, out, 300_000)
    m.poll(300_001)


def s_stale_unsubscribed(m):
    _joined(m)
    m.tick(300_000)
    m.unsubscribe(300_001)


SCENARIOS = [s_unsubscribed_joining, s_joining_reconciling_acknowledging_stable, s_stable_reconciling,
             s_acknowledging_reconciling, s_acknowledging_fenced, s_acknowledging_fatal,
             s_acknowledging_prepare_leaving, s_joining_fenced_joining, s_joining_fatal, s_joining_prepare_leaving,
             s_stable_fenced, s_stable_fatal, s_stable_prepare_leaving_leaving_unsubscribed, s_reconciling_fenced,
             s_reconciling_fatal, s_reconciling_prepare_leaving, s_prepare_leaving_fatal, s_unsubscribed_fatal,
             s_fenced_unsubscribed, s_leaving_stale_joining, s_stale_unsubscribed]


def test_every_legal_transition_is_made_by_some_scenario_except_the_ones_apache_kafka_never_makes():
    assert NEVER_MADE <= LEGAL_TRANSITIONS
    seen = set()
    for scenario in SCENARIOS:
        m = recording()
        scenario(m)
        seen |= set(m.seen)
    assert seen <= LEGAL_TRANSITIONS
    assert seen == LEGAL_TRANSITIONS - NEVER_MADE, sorted((a.name, b.name) for a, b in
                                                            (LEGAL_TRANSITIONS - NEVER_MADE) ^ seen)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__[2:])
def test_each_scenario_makes_the_transitions_its_name_says(scenario):
    m = recording()
    scenario(m)
    names = scenario.__name__[2:].replace("prepare_leaving", "PREPARE-LEAVING").split("_")
    states = [S[n.upper().replace("-", "_")] for n in names]
    for before, after in zip(states, states[1:]):
        assert (before, after) in m.seen, (before, after, m.seen)
