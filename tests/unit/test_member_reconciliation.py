"""Reconciliation: revoke first, then assign, then acknowledge; commit before revoking with
auto-commit; a newer target supersedes the one in progress; topic ids without a name wait in the
target; a failed callback leaves the member RECONCILING until the next poll."""

from __future__ import annotations

import pytest

from groupctl.member import CallbackKind as K, MemberState as S, partitions
from tests.unit.member_harness import NAMES, T1, T2, T3, member, ok, run_callbacks, stable


def _new_target(m, assignment, epoch=2, now=5_000):
    m.tick(now)
    return m.heartbeat_response(now, ok(epoch, assignment))


def test_a_new_target_revokes_first_then_assigns_then_acknowledges():
    m = stable({T1: [0, 1]})
    out = _new_target(m, {T1: [1], T2: [0]})
    assert out.state is S.RECONCILING
    (revoke,) = out.callbacks
    assert (revoke.kind, revoke.partitions) == (K.REVOKE, partitions({T1: [0]}))
    assert revoke.names == {T1: "t1"}
    done = m.callback_done(5_001, revoke.id)
    assert m.owned == partitions({T1: [1]})
    (assign,) = done.callbacks
    assert (assign.kind, assign.partitions) == (K.ASSIGN, partitions({T2: [0]}))
    assert done.heartbeat is None and done.state is S.RECONCILING  # nothing acknowledged before the assign
    acked = m.callback_done(5_002, assign.id)
    assert m.owned == partitions({T1: [1], T2: [0]})
    assert acked.transitions == ((S.RECONCILING, S.ACKNOWLEDGING), (S.ACKNOWLEDGING, S.STABLE))
    assert acked.heartbeat.topic_partitions == partitions({T1: [1], T2: [0]})


def test_auto_commit_commits_the_revoked_partitions_before_the_revoke_callback():
    m = stable({T1: [0, 1]})
    (revoke,) = _new_target(m, {T1: [1]}).callbacks
    assert revoke.commit == partitions({T1: [0]})
    m2 = stable({T1: [0, 1]}, auto_commit=False)
    (revoke,) = _new_target(m2, {T1: [1]}).callbacks
    assert revoke.commit == {}


def test_the_assign_callback_runs_even_when_nothing_is_added():
    m = stable({T1: [0, 1]})
    (revoke,) = _new_target(m, {T1: [1]}).callbacks
    (assign,) = m.callback_done(5_001, revoke.id).callbacks
    assert assign.kind is K.ASSIGN and assign.partitions == {}


def test_owned_partitions_change_only_when_the_callbacks_complete():
    m = stable({T1: [0]})
    out = _new_target(m, {T2: [0]})
    assert m.owned == partitions({T1: [0]})
    done = m.callback_done(5_001, out.callbacks[0].id)
    assert m.owned == {}
    m.callback_done(5_002, done.callbacks[0].id)
    assert m.owned == partitions({T2: [0]})


def test_the_same_target_again_changes_nothing():
    m = stable({T1: [0]})
    out = _new_target(m, {T1: [0]})
    assert out.state is S.STABLE and out.callbacks == () and out.transitions == ()


def test_a_newer_target_during_the_revoke_supersedes_it_and_the_member_reconciles_to_the_newest():
    m = stable({T1: [0, 1, 2]})
    (revoke,) = _new_target(m, {T1: [2]}).callbacks  # revoke 0, 1
    m.tick(10_000)
    newer = m.heartbeat_response(10_000, ok(3, {T1: [1, 2], T2: [0]}))  # 1 comes back, T2 arrives
    assert newer.state is S.RECONCILING and newer.callbacks == ()  # the running revoke completes first
    done = m.callback_done(10_001, revoke.id)
    assert m.owned == partitions({T1: [2]})  # what the application really did stands
    (assign,) = done.callbacks  # no assign for the older target: straight to the newest
    assert (assign.kind, assign.partitions) == (K.ASSIGN, partitions({T1: [1], T2: [0]}))
    acked = m.callback_done(10_002, assign.id)
    assert acked.state is S.STABLE and acked.heartbeat.topic_partitions == partitions({T1: [1, 2], T2: [0]})
    assert m.owned == partitions({T1: [1, 2], T2: [0]})
    assert m.acknowledged.partitions == partitions({T1: [1, 2], T2: [0]})


def test_a_newer_target_during_the_assign_revokes_what_that_assign_took():
    m = stable({T1: [0]})
    (assign,) = _new_target(m, {T1: [0, 1]}).callbacks
    m.tick(10_000)
    m.heartbeat_response(10_000, ok(3, {T1: [0]}))  # 1 is taken back before the assign completed
    done = m.callback_done(10_001, assign.id)
    (revoke,) = done.callbacks
    assert (revoke.kind, revoke.partitions) == (K.REVOKE, partitions({T1: [1]}))
    (assign2,) = m.callback_done(10_002, revoke.id).callbacks
    m.callback_done(10_003, assign2.id)
    assert m.owned == partitions({T1: [0]}) and m.state is S.STABLE


def test_topic_ids_without_a_name_wait_while_the_rest_is_reconciled_and_acknowledged():
    m = stable({T1: [0]})
    out = _new_target(m, {T1: [0], T3: [0, 1]})
    assert out.unresolved_topic_ids == {T3}
    assert out.transitions == ((S.STABLE, S.RECONCILING), (S.RECONCILING, S.ACKNOWLEDGING),
                               (S.ACKNOWLEDGING, S.RECONCILING))  # the resolved part is acknowledged at once
    assert out.heartbeat is not None and out.callbacks == ()
    m.heartbeat_response(5_001, ok(2))
    assert m.state is S.RECONCILING
    assert m.tick(10_001).heartbeat.topic_partitions is None  # no new acknowledgement while waiting
    m.heartbeat_response(10_001, ok(2))
    learned = m.topic_names_learned(10_002, {T3: "t3"})
    (assign,) = learned.callbacks
    assert assign.partitions == partitions({T3: [0, 1]}) and assign.names == {T3: "t3"}
    acked = m.callback_done(10_003, assign.id)
    assert acked.heartbeat.topic_partitions == partitions({T1: [0], T3: [0, 1]})
    assert acked.unresolved_topic_ids == frozenset()


def test_a_joining_member_whose_whole_assignment_is_unknown_acknowledges_nothing_and_waits():
    m = member(names={})
    m.subscribe(0, regex="^t.*")
    out = m.heartbeat_response(0, ok(1, {T1: [0]}))
    (assign,) = out.callbacks
    assert assign.partitions == {}
    acked = m.callback_done(1, assign.id)
    assert acked.heartbeat.topic_partitions == {} and acked.state is S.RECONCILING
    assert acked.unresolved_topic_ids == {T1}
    m.heartbeat_response(2, ok(1))
    (assign,) = m.topic_names_learned(3, NAMES).callbacks
    assert assign.partitions == partitions({T1: [0]})


@pytest.mark.parametrize("failing", [K.REVOKE, K.ASSIGN])
def test_a_failed_callback_leaves_the_member_reconciling_without_acknowledging_until_the_next_poll(failing):
    m = stable({T1: [0]})
    out = _new_target(m, {T2: [0]})
    if failing is K.ASSIGN:
        out = m.callback_done(5_001, out.callbacks[0].id)
    owned = dict(m.owned)
    failed = m.callback_done(5_002, out.callbacks[0].id, ok=False)
    assert failed.state is S.RECONCILING and failed.callbacks == () and failed.heartbeat is None
    assert m.owned == owned
    again = m.poll(5_003)
    (callback,) = again.callbacks
    assert callback.kind is failing
    run_callbacks(m, again, 5_004)
    assert m.owned == partitions({T2: [0]})


def test_an_unknown_callback_id_is_a_driver_bug():
    m = stable({T1: [0]})
    with pytest.raises(KeyError):
        m.callback_done(0, 999)
