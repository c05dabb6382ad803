"""Leaving and coming back: fencing (onLost, then JOINING at epoch 0 with the same member id),
leaving (revoke, then the leave heartbeat), fencing and leaving in the middle of a reconciliation,
a member that stops polling (STALE, onLost, rejoin on the next poll), and FATAL errors."""

from __future__ import annotations

import pytest

from groupctl.coordinator.errors import ErrorCode
from groupctl.member import CallbackKind as K, MemberState as S, partitions
from groupctl.member.errors import GROUP_AUTHORIZATION_FAILED
from tests.unit.member_harness import T1, T2, error, member, ok, run_callbacks, stable


@pytest.mark.parametrize("code", [ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_MEMBER_EPOCH])
def test_a_fenced_member_runs_on_lost_for_everything_then_rejoins_with_epoch_0_and_its_id(code):
    m = stable({T1: [0, 1]}, epoch=7)
    m.tick(5_000)
    out = m.heartbeat_response(5_000, error(code))
    assert out.state is S.FENCED and m.epoch == 0 and out.heartbeat is None and out.next_heartbeat_ms is None
    (lost,) = out.callbacks
    assert (lost.kind, lost.partitions) == (K.LOST, partitions({T1: [0, 1]}))
    rejoined = m.callback_done(5_001, lost.id)
    assert rejoined.transitions == ((S.FENCED, S.JOINING),)
    assert m.owned == {}
    beat = rejoined.heartbeat
    assert (beat.member_id, beat.member_epoch, beat.topic_partitions) == ("m-1", 0, {})
    assert beat.full and beat.subscribed_topic_names == ("t1", "t2")


def test_a_fenced_member_with_nothing_rejoins_at_once():
    m = member()
    m.subscribe(0, ["t1"])
    out = m.heartbeat_response(1, error(ErrorCode.UNKNOWN_MEMBER_ID))
    assert out.transitions == ((S.JOINING, S.FENCED), (S.FENCED, S.JOINING))
    assert out.callbacks == () and out.heartbeat.member_epoch == 0


def test_the_member_id_from_the_coordinator_is_kept_across_a_fence():
    m = member()
    m.subscribe(0, ["t1"])
    run_callbacks(m, m.heartbeat_response(0, ok(1, {T1: [0]}, member_id="server-made")), 0)
    m.heartbeat_response(0, ok(1, member_id="server-made"))
    m.tick(5_000)
    run_callbacks(m, m.heartbeat_response(5_000, error(ErrorCode.FENCED_MEMBER_EPOCH)), 5_001)
    assert m.state is S.JOINING and m.member_id == "server-made"


def test_fencing_during_a_revoke_loses_everything_and_ignores_the_revoke_when_it_completes():
    m = stable({T1: [0, 1]})
    m.tick(5_000)
    (revoke,) = m.heartbeat_response(5_000, ok(2, {T1: [1]})).callbacks
    m.tick(10_000)
    fenced = m.heartbeat_response(10_000, error(ErrorCode.FENCED_MEMBER_EPOCH))
    (lost,) = fenced.callbacks
    assert lost.partitions == partitions({T1: [0, 1]})
    after_revoke = m.callback_done(10_001, revoke.id)  # superseded by the release: no assign follows
    assert after_revoke.callbacks == () and m.owned == partitions({T1: [0, 1]})
    out = m.callback_done(10_002, lost.id)
    assert out.state is S.JOINING and m.owned == {}


def test_fencing_during_an_assign_names_what_the_assign_was_taking_in_the_lost_callback():
    m = stable({T1: [0]})
    m.tick(5_000)
    (assign,) = m.heartbeat_response(5_000, ok(2, {T1: [0, 1]})).callbacks
    m.tick(10_000)
    (lost,) = m.heartbeat_response(10_000, error(ErrorCode.UNKNOWN_MEMBER_ID)).callbacks
    assert lost.partitions == partitions({T1: [0, 1]})
    m.callback_done(10_001, assign.id)
    m.callback_done(10_002, lost.id)
    assert m.owned == {} and m.state is S.JOINING


def test_a_leaving_member_revokes_with_a_commit_then_sends_the_leave_and_is_unsubscribed():
    m = stable({T1: [0], T2: [1]})
    out = m.unsubscribe(100)
    assert out.state is S.PREPARE_LEAVING and out.heartbeat is None
    (revoke,) = out.callbacks
    assert revoke.kind is K.REVOKE and revoke.partitions == partitions({T1: [0], T2: [1]})
    assert revoke.commit == revoke.partitions
    done = m.callback_done(101, revoke.id)
    assert done.transitions == ((S.PREPARE_LEAVING, S.LEAVING), (S.LEAVING, S.UNSUBSCRIBED))
    assert done.heartbeat.member_epoch == -1 and m.owned == {} and m.subscription.empty


def test_a_leaving_member_keeps_heartbeating_on_the_interval_while_its_callback_runs():
    m = stable({T1: [0]})
    m.unsubscribe(100)
    assert m.next_heartbeat_ms(100) == 5_000
    assert m.tick(5_000).heartbeat.member_epoch == 1


def test_leaving_during_a_reconciliation_cancels_it_and_releases_what_the_assign_was_taking():
    m = stable({T1: [0]})
    m.tick(5_000)
    (assign,) = m.heartbeat_response(5_000, ok(2, {T1: [0, 1]})).callbacks
    (release,) = m.unsubscribe(5_001).callbacks
    assert release.kind is K.REVOKE and release.partitions == partitions({T1: [0, 1]})
    assert m.callback_done(5_002, assign.id).callbacks == ()  # superseded: no acknowledgement
    done = m.callback_done(5_003, release.id)
    assert done.heartbeat.member_epoch == -1 and done.state is S.UNSUBSCRIBED and m.owned == {}


def test_a_member_without_an_epoch_releases_as_lost_when_it_leaves():
    m = member()
    m.subscribe(0, ["t1"])
    out = m.unsubscribe(1)  # nothing held: straight to the leave
    assert out.callbacks == () and out.state is S.UNSUBSCRIBED


def test_subscribing_again_while_leaving_rejoins_once_the_leave_is_out():
    m = stable({T1: [0]})
    (revoke,) = m.unsubscribe(100).callbacks
    m.subscribe(101, ["t2"])
    done = m.callback_done(102, revoke.id)
    assert done.transitions[-1] == (S.UNSUBSCRIBED, S.JOINING)
    assert done.heartbeat.member_epoch == -1  # the leave first; the join at the next tick
    assert done.wake_at_ms == 102
    join = m.tick(102).heartbeat
    assert (join.member_epoch, join.subscribed_topic_names) == (0, ("t2",))


def test_unsubscribing_while_fenced_does_not_rejoin_after_on_lost():
    m = stable({T1: [0]})
    m.tick(5_000)
    (lost,) = m.heartbeat_response(5_000, error(ErrorCode.FENCED_MEMBER_EPOCH)).callbacks
    assert m.unsubscribe(5_001).state is S.UNSUBSCRIBED
    out = m.callback_done(5_002, lost.id)
    assert out.state is S.UNSUBSCRIBED and out.heartbeat is None and m.owned == {}


def test_fenced_while_preparing_to_leave_sends_no_leave():
    m = stable({T1: [0]})
    m.tick(5_000)
    (revoke,) = m.unsubscribe(5_001).callbacks
    out = m.heartbeat_response(5_002, error(ErrorCode.FENCED_MEMBER_EPOCH))
    assert out.state is S.UNSUBSCRIBED and out.heartbeat is None
    assert m.callback_done(5_003, revoke.id).heartbeat is None and m.owned == {}


def test_a_member_that_does_not_poll_goes_stale_leaves_loses_its_partitions_and_rejoins_on_poll():
    m = stable({T1: [0, 1]})  # subscribed at 0: max.poll.interval.ms 300000
    assert m.poll(100_000).heartbeat is not None  # the interval heartbeat was due
    assert m.heartbeat_response(100_000, ok(1, interval=1_000_000)).wake_at_ms == 400_000
    out = m.tick(400_000)
    assert out.transitions == ((S.STABLE, S.PREPARE_LEAVING), (S.PREPARE_LEAVING, S.LEAVING),
                               (S.LEAVING, S.STALE))
    assert out.heartbeat.member_epoch == -1 and out.heartbeat.subscribed_topic_names is None
    (lost,) = out.callbacks
    assert (lost.kind, lost.partitions) == (K.LOST, partitions({T1: [0, 1]}))
    assert out.next_heartbeat_ms is None and out.wake_at_ms is None
    m.callback_done(400_001, lost.id)
    assert m.state is S.STALE and m.owned == {}
    back = m.poll(500_000)
    assert back.transitions == ((S.STALE, S.JOINING),)
    assert back.heartbeat.full and back.heartbeat.member_epoch == 0  # the leave's answer does not hold it up


def test_a_stale_member_that_polls_before_its_on_lost_completes_rejoins_when_it_does():
    m = stable({T1: [0]})
    (lost,) = m.tick(300_000).callbacks
    assert m.poll(300_001).state is S.STALE
    assert m.callback_done(300_002, lost.id).transitions == ((S.STALE, S.JOINING),)


def test_a_static_member_that_goes_stale_leaves_with_epoch_minus_2():
    m = stable({T1: [0]}, instance_id="i-1")
    assert m.tick(300_000).heartbeat.member_epoch == -2


def test_a_poll_keeps_the_member_in_the_group():
    m = stable({T1: [0]})
    for now in range(0, 1_000_000, 200_000):
        m.poll(now)
        assert m.tick(now).state is S.STABLE
        if m.in_flight:
            m.heartbeat_response(now, ok(1))


def test_going_stale_during_a_reconciliation_releases_what_the_assign_was_taking():
    m = stable({T1: [0]})
    m.tick(5_000)
    (assign,) = m.heartbeat_response(5_000, ok(2, {T1: [0, 1]})).callbacks
    out = m.tick(300_000)
    assert out.state is S.STALE
    (lost,) = out.callbacks
    assert lost.partitions == partitions({T1: [0, 1]})


@pytest.mark.parametrize("code", [ErrorCode.UNRELEASED_INSTANCE_ID, ErrorCode.GROUP_MAX_SIZE_REACHED,
                                  ErrorCode.INVALID_REGULAR_EXPRESSION, ErrorCode.UNSUPPORTED_ASSIGNOR,
                                  GROUP_AUTHORIZATION_FAILED, ErrorCode.INVALID_REQUEST,
                                  ErrorCode.UNSUPPORTED_VERSION, ErrorCode.FENCED_INSTANCE_ID,
                                  ErrorCode.GROUP_ID_NOT_FOUND, 9999])
def test_an_unrecoverable_error_is_fatal_with_the_reason_and_loses_the_partitions(code):
    m = stable({T1: [0]})
    m.tick(5_000)
    out = m.heartbeat_response(5_000, error(code, "said the coordinator"))
    assert out.state is S.FATAL and out.fatal.error == code
    assert "said the coordinator" in out.fatal.reason
    (lost,) = out.callbacks
    assert lost.kind is K.LOST
    m.callback_done(5_001, lost.id)
    assert m.owned == {}


def test_fatal_is_terminal_even_when_the_invalid_regex_is_replaced():
    m = member()
    m.subscribe(0, regex="(")
    m.heartbeat_response(0, error(ErrorCode.INVALID_REGULAR_EXPRESSION))
    for out in (m.subscribe(1, regex="^t.*"), m.subscribe(2, ["t1"]), m.unsubscribe(3), m.poll(4), m.tick(10 ** 9)):
        assert out.state is S.FATAL and out.heartbeat is None and out.callbacks == ()
        assert out.fatal.reason.startswith("INVALID_REGULAR_EXPRESSION")
