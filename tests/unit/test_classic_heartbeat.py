"""Heartbeat, session expiry and LeaveGroup."""

from groupctl.coordinator.classic.messages import LeaveGroupResult, LeavingMember, LeftMember
from groupctl.coordinator.errors import ErrorCode
from tests.unit.classic_harness import Harness


# --- heartbeat answers ------------------------------------------------------------------------

def test_heartbeat_in_a_stable_group_is_none():
    h = Harness()
    a, b = h.stable_group(count=2)
    assert h.heartbeat("g", 1, b.member_id) is ErrorCode.NONE


def test_heartbeat_during_preparing_rebalance_asks_to_rejoin():
    h = Harness()
    a, b = h.stable_group(count=2)
    h.join(member_id=a.member_id, client_id="c0")
    assert h.heartbeat("g", 1, b.member_id) is ErrorCode.REBALANCE_IN_PROGRESS


def test_heartbeat_during_completing_rebalance_is_none_like_kafka():
    h = Harness()
    a, b = h.joined_members("g", 2)
    assert h.heartbeat("g", 1, b.member_id) is ErrorCode.NONE
    assert h.state() == "CompletingRebalance"


def test_heartbeat_with_a_wrong_generation_is_illegal_generation():
    h = Harness()
    a, _ = h.stable_group(count=2)
    assert h.heartbeat("g", 0, a.member_id) is ErrorCode.ILLEGAL_GENERATION
    assert h.heartbeat("g", 2, a.member_id) is ErrorCode.ILLEGAL_GENERATION


def test_heartbeat_from_an_unknown_member_is_unknown_member_even_with_a_wrong_generation():
    h = Harness()
    h.stable_group(count=1)
    assert h.heartbeat("g", 7, "c-ghost") is ErrorCode.UNKNOWN_MEMBER_ID


def test_heartbeat_to_an_unknown_group_is_unknown_member():
    assert Harness().heartbeat("nope", 1, "c-ghost") is ErrorCode.UNKNOWN_MEMBER_ID


def test_heartbeat_to_an_empty_group_is_unknown_member():
    h = Harness()
    (a,) = h.stable_group(count=1)
    h.leave("g", LeavingMember(a.member_id))
    assert h.heartbeat("g", 2, a.member_id) is ErrorCode.UNKNOWN_MEMBER_ID


def test_heartbeat_with_an_empty_group_id_is_invalid():
    assert Harness().heartbeat("", 1, "m") is ErrorCode.INVALID_GROUP_ID


# --- sessions ---------------------------------------------------------------------------------

def test_a_member_that_stops_heartbeating_is_removed_after_its_session_timeout_and_the_group_rebalances():
    h = Harness()
    a, b = h.stable_group(count=2, session_ms=10_000)
    h.advance(9_999)
    assert h.heartbeat("g", 1, a.member_id) is ErrorCode.NONE
    h.advance(1)  # b's session ends
    assert [m.member_id for m in h.describe().members] == [a.member_id]
    assert h.state() == "PreparingRebalance"
    assert h.heartbeat("g", 1, a.member_id) is ErrorCode.REBALANCE_IN_PROGRESS


def test_each_heartbeat_restarts_the_session():
    h = Harness()
    (a,) = h.stable_group(count=1, session_ms=10_000)
    for _ in range(5):
        h.advance(9_000)
        assert h.heartbeat("g", 1, a.member_id) is ErrorCode.NONE
    assert h.state() == "Stable"


def test_the_last_member_expiring_empties_the_group_and_writes_the_empty_document():
    h = Harness()
    (a,) = h.stable_group(count=1, session_ms=10_000)
    h.advance(10_000)
    assert h.state() == "Empty"
    doc = h.documents()[-1]
    assert (doc["state"], doc["generation"], doc["members"]) == ("Empty", 2, [])


def test_a_member_parked_in_join_is_not_expired_by_its_session():
    h = Harness()
    a, b = h.stable_group(count=2, session_ms=6000, rebalance_ms=60_000)
    token = h.join(member_id=a.member_id, client_id="c0", session_ms=6000, rebalance_ms=60_000)
    h.advance(6000)  # b (silent) expires; a is parked and stays
    answer = h.reply(token)
    assert answer.generation_id == 2 and [m.member_id for m in answer.members] == [a.member_id]


def test_members_get_a_fresh_session_when_the_join_phase_completes():
    h = Harness()
    a, b = h.stable_group(count=2, session_ms=6000, rebalance_ms=60_000)
    h.join(member_id=a.member_id, client_id="c0", session_ms=6000, rebalance_ms=60_000)
    h.advance(5000)
    assert h.heartbeat("g", 1, b.member_id) is ErrorCode.REBALANCE_IN_PROGRESS
    h.join(member_id=b.member_id, client_id="c1", session_ms=6000, rebalance_ms=60_000)
    h.advance(5999)
    assert len(h.describe().members) == 2
    h.advance(1)
    assert len(h.describe().members) == 0


# --- LeaveGroup -------------------------------------------------------------------------------

def test_single_member_leave_removes_it_and_the_group_rebalances():
    h = Harness()
    a, b = h.stable_group(count=2)
    answer = h.leave("g", LeavingMember(b.member_id))
    assert answer == LeaveGroupResult(ErrorCode.NONE, (LeftMember(b.member_id, None, ErrorCode.NONE),))
    assert h.state() == "PreparingRebalance"
    assert h.reply(h.join(member_id=a.member_id, client_id="c0")).generation_id == 2


def test_leave_of_an_unknown_member_is_answered_per_member():
    h = Harness()
    h.stable_group(count=1)
    answer = h.leave("g", LeavingMember("c-ghost"))
    assert answer.error is ErrorCode.NONE
    assert answer.members == (LeftMember("c-ghost", None, ErrorCode.UNKNOWN_MEMBER_ID),)
    assert h.state() == "Stable"


def test_leave_from_an_unknown_group_is_a_group_wide_unknown_member():
    assert Harness().leave("nope", LeavingMember("m")).error is ErrorCode.UNKNOWN_MEMBER_ID


def test_batch_leave_answers_each_member_and_rebalances_once():
    h = Harness()
    a, b, c = h.stable_group(count=3)
    answer = h.leave("g", LeavingMember(b.member_id), LeavingMember("c-ghost"), LeavingMember(c.member_id))
    assert [m.error for m in answer.members] == [ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.NONE]
    assert [m.member_id for m in h.describe().members] == [a.member_id]


def test_leaving_leader_hands_leadership_to_the_earliest_remaining_member():
    h = Harness()
    a, b, c = h.stable_group(count=3)
    h.leave("g", LeavingMember(a.member_id))
    tokens = [h.join(member_id=m.member_id, client_id=f"c{i}") for i, m in ((1, b), (2, c))]
    assert {h.reply(t).leader for t in tokens} == {b.member_id}


def test_a_member_parked_in_join_that_leaves_is_answered_unknown_member():
    h = Harness()
    a, b = h.stable_group(count=2)
    token = h.join(member_id=a.member_id, client_id="c0")
    h.leave("g", LeavingMember(a.member_id))
    assert h.reply(token).error is ErrorCode.UNKNOWN_MEMBER_ID


def test_leave_completes_the_join_phase_when_everyone_else_rejoined():
    h = Harness()
    a, b = h.stable_group(count=2)
    token = h.join(member_id=a.member_id, client_id="c0")
    h.leave("g", LeavingMember(b.member_id))
    assert h.reply(token).generation_id == 2


def test_a_pending_member_may_leave():
    h = Harness()
    pending = h.reply(h.join(client_id="p", require_known=True)).member_id
    answer = h.leave("g", LeavingMember(pending))
    assert answer.members == (LeftMember(pending, None, ErrorCode.NONE),)
    assert h.reply(h.join(member_id=pending, client_id="p")).error is ErrorCode.UNKNOWN_MEMBER_ID


def test_leave_with_a_known_member_id_but_another_instance_is_fenced():
    h = Harness()
    (a,) = h.stable_group(count=1, instance="i-1")
    answer = h.leave("g", LeavingMember("c-other", "i-1"))
    assert answer.members[0].error is ErrorCode.FENCED_INSTANCE_ID


def test_leave_with_an_empty_group_id_is_invalid():
    assert Harness().leave("", LeavingMember("m")).error is ErrorCode.INVALID_GROUP_ID
