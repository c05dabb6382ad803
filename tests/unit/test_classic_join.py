"""JoinGroup and the join phase: admission errors, parking, completion, generations, votes."""

import pytest

from groupctl.coordinator.classic.coordinator import GroupConfig
from groupctl.coordinator.classic.messages import LeavingMember
from groupctl.coordinator.errors import ErrorCode
from tests.unit.classic_harness import FAST, Harness, subscription

SUB = subscription("t")


# --- admission errors ------------------------------------------------------------------------

@pytest.mark.parametrize("session_ms", [5999, 1_800_001])
def test_session_timeout_outside_the_bounds_is_invalid(session_ms):
    h = Harness()
    answer = h.reply(h.join(session_ms=session_ms))
    assert answer.error is ErrorCode.INVALID_SESSION_TIMEOUT
    assert h.state() == "Dead"  # no group was created


@pytest.mark.parametrize("session_ms", [6000, 1_800_000])
def test_session_timeout_at_the_bounds_is_accepted(session_ms):
    h = Harness()
    token = h.join(session_ms=session_ms)
    h.advance(0)
    assert h.reply(token).error is ErrorCode.NONE


def test_configured_session_timeout_bounds_apply():
    h = Harness(GroupConfig(min_session_timeout_ms=100, max_session_timeout_ms=200, initial_rebalance_delay_ms=0))
    assert h.reply(h.join(session_ms=300)).error is ErrorCode.INVALID_SESSION_TIMEOUT
    assert not h.answered(h.join(session_ms=150))


def test_empty_group_id_is_invalid():
    h = Harness()
    assert h.reply(h.join(group="")).error is ErrorCode.INVALID_GROUP_ID


def test_join_with_a_member_id_to_an_unknown_group_is_unknown_member():
    h = Harness()
    answer = h.reply(h.join(member_id="c-ghost"))
    assert (answer.error, answer.member_id) == (ErrorCode.UNKNOWN_MEMBER_ID, "c-ghost")


def test_join_with_an_unknown_member_id_to_an_existing_group_is_unknown_member():
    h = Harness()
    h.stable_group(count=1)
    assert h.reply(h.join(member_id="c-ghost")).error is ErrorCode.UNKNOWN_MEMBER_ID


def test_join_with_a_known_member_id_to_an_empty_group_is_unknown_member():
    h = Harness()
    (only,) = h.stable_group(count=1)
    h.leave("g", LeavingMember(only.member_id))
    assert h.state() == "Empty"
    assert h.reply(h.join(member_id=only.member_id)).error is ErrorCode.UNKNOWN_MEMBER_ID


def test_empty_protocol_type_is_inconsistent():
    h = Harness()
    assert h.reply(h.join(protocol_type="")).error is ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_no_protocols_is_inconsistent():
    h = Harness()
    assert h.reply(h.join(protocols=())).error is ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_a_different_protocol_type_is_inconsistent():
    h = Harness()
    h.stable_group(count=1)
    answer = h.reply(h.join(protocol_type="connect", protocols=(("range", b"x"),)))
    assert answer.error is ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_no_protocol_in_common_with_the_members_is_inconsistent():
    h = Harness()
    h.stable_group(count=1)
    answer = h.reply(h.join(protocols=(("roundrobin", SUB),)))
    assert answer.error is ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert h.state() == "Stable"


def test_a_new_member_beyond_the_max_group_size_is_refused():
    h = Harness(GroupConfig(initial_rebalance_delay_ms=0, max_group_size=2))
    h.stable_group(count=2)
    answer = h.reply(h.join(client_id="third"))
    assert (answer.error, answer.member_id) == (ErrorCode.GROUP_MAX_SIZE_REACHED, "")
    assert h.state() == "Stable"


def test_during_a_join_phase_the_max_group_size_counts_rejoined_members():
    h = Harness(GroupConfig(initial_rebalance_delay_ms=0, max_group_size=1))
    first = h.join(client_id="a")
    second = h.join(client_id="b")
    assert h.reply(second).error is ErrorCode.GROUP_MAX_SIZE_REACHED
    h.advance(0)
    assert h.reply(first).error is ErrorCode.NONE
    assert len(h.reply(first).members) == 1


def test_an_existing_member_rejoining_after_the_group_filled_up_is_removed():
    h = Harness(GroupConfig(initial_rebalance_delay_ms=0, max_group_size=2))
    a, b = h.stable_group(count=2)
    h.ask("trigger_rebalance", "g")
    h.join(member_id=a.member_id, client_id="c0")
    # the size limit drops to what is parked: b cannot come back while a new member took its place
    third = h.join(client_id="c2")
    late = h.reply(h.join(member_id=b.member_id, client_id="c1"))
    assert late.error is ErrorCode.GROUP_MAX_SIZE_REACHED
    assert h.answered(third) and h.reply(third).error is ErrorCode.NONE
    assert {m.member_id for m in h.describe().members} == {a.member_id, h.reply(third).member_id}


# --- member id required -----------------------------------------------------------------------

def test_new_member_requiring_known_id_gets_member_id_required_with_its_new_id():
    h = Harness()
    answer = h.reply(h.join(client_id="app", require_known=True))
    assert (answer.error, answer.member_id) == (ErrorCode.MEMBER_ID_REQUIRED, "app-u1")
    assert h.state() == "Empty"


def test_rejoining_with_the_required_member_id_joins_the_group():
    h = Harness()
    member_id = h.reply(h.join(client_id="app", require_known=True)).member_id
    token = h.join(member_id=member_id, client_id="app", require_known=True)
    h.advance(0)
    answer = h.reply(token)
    assert (answer.error, answer.member_id, answer.leader, answer.generation_id) == (
        ErrorCode.NONE, member_id, member_id, 1)


def test_a_pending_member_is_forgotten_after_its_session_timeout():
    h = Harness()
    member_id = h.reply(h.join(client_id="app", require_known=True, session_ms=6000)).member_id
    h.advance(6000)
    assert h.reply(h.join(member_id=member_id, client_id="app")).error is ErrorCode.UNKNOWN_MEMBER_ID


def test_an_outstanding_pending_member_holds_the_join_phase_until_it_expires():
    h = Harness()
    (a,) = h.stable_group(count=1)
    pending = h.reply(h.join(client_id="new", require_known=True, session_ms=6000)).member_id
    assert pending
    rejoin = h.join(member_id=a.member_id, client_id="c0")  # the leader asks for a rebalance
    h.advance(5999)
    assert not h.answered(rejoin)
    h.advance(1)
    assert h.reply(rejoin).generation_id == 2


# --- the join phase ---------------------------------------------------------------------------

def test_first_join_starts_preparing_rebalance_and_is_parked():
    h = Harness()
    token = h.join()
    assert not h.answered(token)
    assert h.state() == "PreparingRebalance"


def test_join_phase_completes_with_generation_one_and_completing_rebalance():
    h = Harness()
    token = h.join(client_id="app")
    h.advance(0)
    answer = h.reply(token)
    assert (answer.error, answer.generation_id, answer.protocol_type, answer.protocol_name) == (
        ErrorCode.NONE, 1, "consumer", "range")
    assert answer.member_id == "app-u1" and answer.leader == "app-u1"
    assert h.state() == "CompletingRebalance"


def test_only_the_leader_gets_the_members_with_the_chosen_protocols_metadata():
    h = Harness()
    tokens = [h.join(client_id=f"c{i}", protocols=(("range", f"m{i}".encode()), ("rr", b"x"))) for i in range(3)]
    h.advance(0)
    leader, *followers = [h.reply(t) for t in tokens]
    assert [(m.member_id, m.metadata) for m in leader.members] == [
        ("c0-u1", b"m0"), ("c1-u2", b"m1"), ("c2-u3", b"m2")]
    assert all(f.members == () and f.leader == "c0-u1" for f in followers)


def test_join_phase_completes_as_soon_as_every_known_member_rejoined():
    h = Harness()
    a, b = h.stable_group(count=2)
    first = h.join(member_id=a.member_id, client_id="c0")  # leader rejoin: rebalance
    assert h.state() == "PreparingRebalance" and not h.answered(first)
    second = h.join(member_id=b.member_id, client_id="c1")
    assert h.reply(first).generation_id == h.reply(second).generation_id == 2
    assert h.state() == "CompletingRebalance"


def test_members_that_do_not_rejoin_within_the_rebalance_timeout_are_removed():
    h = Harness()
    a, b = h.stable_group(count=2, rebalance_ms=20_000, session_ms=60_000)
    token = h.join(member_id=a.member_id, client_id="c0", rebalance_ms=20_000, session_ms=60_000)
    h.advance(19_999)
    assert not h.answered(token)
    h.advance(1)
    answer = h.reply(token)
    assert answer.generation_id == 2 and [m.member_id for m in answer.members] == [a.member_id]
    assert h.heartbeat("g", 2, b.member_id) is ErrorCode.UNKNOWN_MEMBER_ID


def test_rebalance_timeout_is_the_largest_members():
    h = Harness()
    h.join(client_id="a", rebalance_ms=10_000, session_ms=60_000)
    h.join(client_id="b", rebalance_ms=40_000, session_ms=60_000)
    h.advance(0)
    a, b = "a-u1", "b-u2"
    h.sync("g", 1, a)
    h.sync("g", 1, b)
    token = h.join(member_id=a, client_id="a", rebalance_ms=10_000)
    h.advance(39_999)
    assert not h.answered(token)
    h.advance(1)
    assert h.answered(token)


def test_a_new_leader_is_chosen_when_the_leader_does_not_rejoin():
    h = Harness()
    a, b = h.stable_group(count=2)
    token = h.join(member_id=b.member_id, client_id="c1", protocols=(("range", subscription("t", "u")),))
    h.advance(30_000)
    answer = h.reply(token)
    assert answer.leader == b.member_id and [m.member_id for m in answer.members] == [b.member_id]


def test_generation_increments_on_every_completed_join_even_with_the_same_members():
    h = Harness()
    (a,) = h.stable_group(count=1)
    generations = []
    for _ in range(3):
        token = h.join(member_id=a.member_id, client_id="c0")
        generations.append(h.reply(token).generation_id)
        h.sync("g", generations[-1], a.member_id)
    assert generations == [2, 3, 4]


def test_protocol_vote_picks_the_protocol_most_members_prefer_among_those_all_support():
    h = Harness()
    prefs = [(("rr", b""), ("range", b"")), (("range", b""), ("rr", b"")), (("rr", b""), ("range", b"")),
             (("sticky", b""), ("range", b""), ("rr", b""))]
    tokens = [h.join(client_id=f"c{i}", protocols=p) for i, p in enumerate(prefs)]
    h.advance(0)
    # sticky is not supported by all; rr gets 2 votes (c0, c2), range 1 (c1), c3 votes rr (its best candidate)
    assert {h.reply(t).protocol_name for t in tokens} == {"rr"}


def test_protocol_vote_ties_go_to_the_earliest_members_choice():
    h = Harness()
    tokens = [h.join(client_id="a", protocols=(("range", b""), ("rr", b""))),
              h.join(client_id="b", protocols=(("rr", b""), ("range", b"")))]
    h.advance(0)
    assert h.reply(tokens[0]).protocol_name == "range"


def test_a_group_whose_members_all_left_becomes_empty_with_the_next_generation():
    h = Harness()
    a, b = h.stable_group(count=2)
    h.leave("g", LeavingMember(a.member_id), LeavingMember(b.member_id))
    assert h.state() == "Empty"
    doc = h.documents()[-1]
    assert (doc["state"], doc["generation"], doc["members"], doc["leader"], doc["protocol"]) == (
        "Empty", 2, [], None, None)
    assert doc["protocol_type"] == "consumer"


def test_a_join_that_expires_the_last_parked_member_empties_the_group():
    h = Harness(GroupConfig(initial_rebalance_delay_ms=400_000))
    token = h.join(client_id="a", rebalance_ms=400_000)
    h.advance(300_000)  # a new member's JoinGroup may stay parked 5 minutes at most
    assert h.reply(token).error is ErrorCode.UNKNOWN_MEMBER_ID
    h.advance(100_000)
    assert h.state() == "Empty"
    assert h.documents()[-1]["generation"] == 1


# --- initial rebalance delay --------------------------------------------------------------------

def test_initial_rebalance_waits_the_delay_from_empty():
    h = Harness(GroupConfig(initial_rebalance_delay_ms=3000))
    token = h.join(rebalance_ms=60_000)
    h.advance(2999)
    assert not h.answered(token)
    h.advance(1)
    assert h.reply(token).generation_id == 1


def test_initial_rebalance_delay_is_rearmed_while_members_keep_arriving():
    h = Harness(GroupConfig(initial_rebalance_delay_ms=3000))
    first = h.join(client_id="a", rebalance_ms=60_000)
    h.advance(2000)
    second = h.join(client_id="b", rebalance_ms=60_000)
    h.advance(1000)  # the first delay passes; a member arrived meanwhile: wait another delay
    assert not h.answered(first)
    h.advance(2999)
    assert not h.answered(first)
    h.advance(1)
    assert h.reply(first).generation_id == h.reply(second).generation_id == 1
    assert len(h.reply(first).members) == 2


def test_initial_rebalance_delay_is_capped_by_the_rebalance_timeout():
    h = Harness(GroupConfig(initial_rebalance_delay_ms=3000))
    first = h.join(client_id="m0", rebalance_ms=7000)
    for i in range(1, 10):
        h.advance(1000)
        h.join(client_id=f"m{i}", rebalance_ms=7000)
        if h.answered(first):
            break
    # delays: 3000 (remaining 4000), 3000 (remaining 1000), then 1000: done at 7000
    assert h.answered(first)
    assert h.now - 1_000_000 == 7000


def test_initial_delay_does_not_apply_to_rebalances_of_a_stable_group():
    h = Harness(GroupConfig(initial_rebalance_delay_ms=3000))
    first = h.join(client_id="a")
    h.advance(3000)
    a = h.reply(first)
    h.sync("g", 1, a.member_id)
    assert h.reply(h.join(member_id=a.member_id, client_id="a")).generation_id == 2


# --- existing members -------------------------------------------------------------------------

def test_follower_rejoining_a_stable_group_with_the_same_metadata_gets_the_current_generation():
    h = Harness()
    a, b = h.stable_group(count=2)
    answer = h.reply(h.join(member_id=b.member_id, client_id="c1"))
    assert (answer.error, answer.generation_id, answer.leader, answer.members) == (
        ErrorCode.NONE, 1, a.member_id, ())
    assert h.state() == "Stable"


def test_follower_rejoining_with_changed_metadata_starts_a_rebalance():
    h = Harness()
    a, b = h.stable_group(count=2)
    token = h.join(member_id=b.member_id, client_id="c1", protocols=(("range", subscription("t", "u")),))
    assert not h.answered(token)
    assert h.state() == "PreparingRebalance"
    assert h.heartbeat("g", 1, a.member_id) is ErrorCode.REBALANCE_IN_PROGRESS


def test_leader_rejoining_a_stable_group_starts_a_rebalance():
    h = Harness()
    a, _ = h.stable_group(count=2)
    assert not h.answered(h.join(member_id=a.member_id, client_id="c0"))
    assert h.state() == "PreparingRebalance"


def test_rejoin_during_completing_rebalance_with_the_same_metadata_repeats_the_answer():
    h = Harness()
    a, b = h.joined_members("g", 2)
    again = h.reply(h.join(member_id=a.member_id, client_id="c0"))
    assert again == a
    assert h.state() == "CompletingRebalance"


def test_rejoin_during_completing_rebalance_with_new_metadata_rebalances_and_fails_parked_syncs():
    h = Harness()
    a, b = h.joined_members("g", 2)
    parked = h.sync("g", 1, b.member_id)
    token = h.join(member_id=a.member_id, client_id="c0", protocols=(("range", subscription("u")),))
    assert h.reply(parked).error is ErrorCode.REBALANCE_IN_PROGRESS
    assert h.state() == "PreparingRebalance" and not h.answered(token)


def test_a_second_join_from_a_parked_member_supersedes_the_first():
    h = Harness()
    a, b = h.stable_group(count=2)
    first = h.join(member_id=a.member_id, client_id="c0")
    second = h.join(member_id=a.member_id, client_id="c0")
    assert h.reply(first).error is ErrorCode.REBALANCE_IN_PROGRESS
    h.join(member_id=b.member_id, client_id="c1")
    assert h.reply(second).generation_id == 2


def test_a_new_members_parked_join_is_dropped_after_the_new_member_timeout():
    h = Harness()
    a, _ = h.stable_group(count=2, rebalance_ms=600_000, session_ms=1_800_000)
    newcomer = h.join(client_id="late", rebalance_ms=600_000)
    h.advance(299_999)
    assert not h.answered(newcomer)
    h.advance(1)
    answer = h.reply(newcomer)
    assert (answer.error, answer.member_id) == (ErrorCode.UNKNOWN_MEMBER_ID, "")


def test_fast_config_used_by_tests_has_no_initial_delay():
    assert FAST.initial_rebalance_delay_ms == 0


def test_a_rejected_first_join_leaves_no_group_behind():
    h = Harness()
    h.join(protocols=())
    assert h.ask("list_groups", (frozenset(), frozenset())) == ()


def test_a_pending_member_turned_away_by_the_max_group_size_is_forgotten():
    h = Harness(GroupConfig(initial_rebalance_delay_ms=0, max_group_size=1))
    (a,) = h.stable_group(count=1)
    pending = h.reply(h.join(client_id="p", require_known=True)).member_id
    assert h.reply(h.join(member_id=pending, client_id="p")).error is ErrorCode.GROUP_MAX_SIZE_REACHED
    assert h.reply(h.join(member_id=pending, client_id="p")).error is ErrorCode.GROUP_MAX_SIZE_REACHED
    assert not any(key[2] == pending for key in h.timer.pending() if key[0] == "classic-session")
    assert h.state() == "Stable"


def test_default_member_ids_are_the_client_id_and_a_uuid():
    import re

    from groupctl.coordinator.classic.coordinator import GroupCoordinator
    from groupctl.coordinator.classic.messages import JoinGroup
    from groupctl.coordinator.timers import ManualTimer

    timer = ManualTimer()
    core = GroupCoordinator(timer=timer)
    result = core.join_group("t", JoinGroup("g", "", None, 10_000, 10_000, "consumer", (("range", SUB),),
                                            "app-1", "/127.0.0.1", True), 0)
    (reply,) = result.replies
    assert re.fullmatch(r"app-1-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", reply.response.member_id)


def test_the_default_initial_rebalance_delay_is_three_seconds():
    h = Harness(GroupConfig())
    token = h.join()
    h.advance(2999)
    assert not h.answered(token)
    h.advance(1)
    assert h.answered(token)
