"""Rebalance history in the group document: when each rebalance started and completed, and why.

A rebalance starts when the group enters PreparingRebalance from a settled state and completes
with the next document; the document's "rebalance" block names the cause that started it.
"""

import copy

import pytest

from groupctl.coordinator.classic.messages import (
    JoinGroup,
    LeavingMember,
    TriggerRebalance,
    TriggerRebalanceResult,
)
from groupctl.coordinator.errors import ErrorCode
from groupctl.layout.codec import LayoutError
from tests.unit.classic_harness import START_MS, Harness, assignment, document_record, subscription


def sync_all(h: Harness, answers, group: str = "g") -> None:
    """Everyone in `answers` (JoinGroup results of one generation) syncs, the leader last."""
    leader = next(a for a in answers if a.members)
    plan = [(a.member_id, assignment({"t": [i]})) for i, a in enumerate(answers)]
    for a in answers:
        if a is not leader:
            h.sync(group, a.generation_id, a.member_id)
    assert h.reply(h.sync(group, leader.generation_id, leader.member_id, plan)).error is ErrorCode.NONE


def rejoin_all(h: Harness, answers, group: str = "g", **join_args) -> list:
    """Every member of `answers` rejoins with the same metadata; the join phase completes."""
    tokens = [h.join(group, member_id=a.member_id, client_id=f"c{i}", **join_args) for i, a in enumerate(answers)]
    return [h.reply(t) for t in tokens]


def stable_at(h: Harness, join_ms: int, sync_ms: int, count: int = 2) -> list:
    """`count` members join `join_ms` after the harness start and sync `sync_ms` after that."""
    h.advance(join_ms)
    answers = h.joined_members("g", count)
    h.advance(sync_ms)
    sync_all(h, answers)
    return answers


def last_block(h: Harness, group: str = "g") -> dict:
    return h.documents(group)[-1]["rebalance"]


# --- the first rebalance -----------------------------------------------------------------------

def test_a_new_groups_first_rebalance_is_a_join_by_its_first_member_from_first_join_to_stable_document():
    h = Harness()
    a, b = stable_at(h, join_ms=100, sync_ms=250)
    assert h.documents()[-1]["generation"] == 1
    assert last_block(h) == {
        "started_at_ms": START_MS + 100, "completed_at_ms": START_MS + 350, "reason": "join",
        "member_id": a.member_id, "client_id": "c0", "detail": f"member {a.member_id} (client c0) joined",
    }


def test_the_clients_own_join_reason_is_kept_in_the_detail():
    h = Harness()
    token = h.call("join_group", JoinGroup(
        group_id="g", member_id="", group_instance_id=None, session_timeout_ms=10_000,
        rebalance_timeout_ms=30_000, protocol_type="consumer", protocols=(("range", subscription("t")),),
        client_id="app", client_host="/127.0.0.1", require_known_member_id=False, reason="starting up",
    ))
    h.advance(0)
    sync_all(h, [h.reply(token)])
    assert last_block(h)["detail"].endswith("joined; client reason: starting up")


# --- what starts a rebalance ---------------------------------------------------------------------

def test_a_trigger_of_a_stable_group_starts_a_rebalance_that_writes_a_higher_generation_with_reason_trigger():
    h = Harness()
    answers = stable_at(h, join_ms=0, sync_ms=0)
    h.advance(1_000)
    triggered_at = h.now
    result = h.ask("trigger_rebalance", TriggerRebalance("g", reason="new partitions", client_id="groupctl"))
    assert result == TriggerRebalanceResult(ErrorCode.NONE, "Stable", started=True)
    assert h.results[-1].records == []  # nothing is written until the rebalance completes
    h.advance(40)
    sync_all(h, rejoin_all(h, answers))
    doc = h.documents()[-1]
    assert (doc["generation"], doc["state"]) == (2, "Stable")
    assert doc["rebalance"] == {
        "started_at_ms": triggered_at, "completed_at_ms": triggered_at + 40, "reason": "trigger",
        "member_id": None, "client_id": "groupctl", "detail": "new partitions",
    }


def test_a_trigger_by_bare_group_id_still_answers_an_error_code_and_records_a_default_detail():
    h = Harness()
    answers = stable_at(h, join_ms=0, sync_ms=0)
    assert h.ask("trigger_rebalance", "g") is ErrorCode.NONE
    sync_all(h, rejoin_all(h, answers))
    block = last_block(h)
    assert (block["reason"], block["client_id"], block["detail"]) == (
        "trigger", None, "an operator asked for a rebalance")


def test_a_trigger_of_an_empty_group_changes_nothing_and_says_the_group_is_empty():
    h = Harness()
    answers = stable_at(h, join_ms=0, sync_ms=0, count=1)
    h.leave("g", LeavingMember(answers[0].member_id))
    written = len(h.records)
    assert h.ask("trigger_rebalance", TriggerRebalance("g")) == TriggerRebalanceResult(ErrorCode.NONE, "Empty")
    assert len(h.records) == written and h.state() == "Empty"


def test_a_trigger_of_an_unknown_group_is_group_id_not_found():
    assert Harness().ask("trigger_rebalance", TriggerRebalance("nope")) == TriggerRebalanceResult(
        ErrorCode.GROUP_ID_NOT_FOUND)


def test_a_trigger_during_a_join_phase_keeps_the_rebalance_in_progress_and_its_cause():
    h = Harness()
    a, b = stable_at(h, join_ms=0, sync_ms=0)
    h.leave("g", LeavingMember(b.member_id))
    assert h.ask("trigger_rebalance", TriggerRebalance("g")) == TriggerRebalanceResult(
        ErrorCode.NONE, "PreparingRebalance", started=False)
    (again,) = rejoin_all(h, [a])
    sync_all(h, [again])
    assert (last_block(h)["reason"], last_block(h)["member_id"]) == ("leave", b.member_id)


def test_a_leave_names_the_member_that_left_and_its_client_reason():
    h = Harness()
    a, b = stable_at(h, join_ms=0, sync_ms=0)
    h.leave("g", LeavingMember(b.member_id, reason="shutting down"))
    (again,) = rejoin_all(h, [a])
    sync_all(h, [again])
    block = last_block(h)
    assert (block["reason"], block["member_id"], block["client_id"]) == ("leave", b.member_id, "c1")
    assert block["detail"] == f"member {b.member_id} (client c1) left; client reason: shutting down"


def test_a_batched_leave_names_the_first_member_and_lists_all_of_them():
    h = Harness()
    a, b, c = stable_at(h, join_ms=0, sync_ms=0, count=3)
    h.leave("g", LeavingMember(b.member_id), LeavingMember(c.member_id))
    (again,) = rejoin_all(h, [a])
    sync_all(h, [again])
    block = last_block(h)
    assert (block["member_id"], block["client_id"]) == (b.member_id, "c1")
    assert block["detail"] == f"members {b.member_id} (client c1), {c.member_id} (client c2) left"


def test_the_last_member_leaving_completes_the_rebalance_with_the_empty_document():
    h = Harness()
    (a,) = stable_at(h, join_ms=0, sync_ms=0, count=1)
    h.advance(7)
    h.leave("g", LeavingMember(a.member_id))
    doc = h.documents()[-1]
    assert (doc["state"], doc["generation"]) == ("Empty", 2)
    assert doc["rebalance"]["reason"] == "leave"
    assert doc["rebalance"]["started_at_ms"] == doc["rebalance"]["completed_at_ms"] == h.now


def test_a_session_expiry_names_the_silent_member():
    h = Harness()
    a, b = stable_at(h, join_ms=0, sync_ms=0)
    h.advance(6_000)
    assert h.heartbeat("g", 1, a.member_id) is ErrorCode.NONE
    h.advance(4_000)  # b's session (10 s from the sync) runs out; a's was restarted at 6 s
    expired_at = START_MS + 10_000
    assert h.heartbeat("g", 1, a.member_id) is ErrorCode.REBALANCE_IN_PROGRESS
    (again,) = rejoin_all(h, [a])
    sync_all(h, [again])
    block = last_block(h)
    assert (block["reason"], block["member_id"], block["started_at_ms"]) == ("session expiry", b.member_id, expired_at)
    assert "session timeout (10000 ms)" in block["detail"]


def test_a_member_missing_the_sync_deadline_is_a_sync_timeout_that_keeps_the_first_cause():
    h = Harness()
    answers = h.joined_members("g", 2, rebalance_ms=5_000)
    sync_all(h, answers)
    h.ask("trigger_rebalance", TriggerRebalance("g", reason="operator"))
    first, second = rejoin_all(h, answers, rebalance_ms=5_000)
    leader = first if first.members else second
    follower = second if leader is first else first
    h.sync("g", follower.generation_id, follower.member_id)
    h.advance(5_000)  # the leader never syncs: it is removed, the join phase restarts
    assert h.state() == "PreparingRebalance"
    (again,) = rejoin_all(h, [follower], rebalance_ms=5_000)
    sync_all(h, [again])
    block = last_block(h)
    assert (block["reason"], block["detail"], block["started_at_ms"]) == ("trigger", "operator", START_MS)
    assert h.documents()[-1]["generation"] == 3


def test_a_sync_timeout_from_a_stable_group_names_the_late_member():
    h = Harness()
    a, b = h.joined_members("g", 2, rebalance_ms=5_000)
    leader = a if a.members else b
    follower = b if leader is a else a
    plan = [(leader.member_id, assignment({"t": [0]})), (follower.member_id, assignment({"t": [1]}))]
    h.sync("g", 1, leader.member_id, plan)  # Stable; the follower never syncs
    h.advance(5_000)
    (again,) = rejoin_all(h, [leader])
    sync_all(h, [again])
    block = last_block(h)
    assert (block["reason"], block["member_id"]) == ("sync timeout", follower.member_id)
    assert "no SyncGroup within the rebalance timeout (5000 ms)" in block["detail"]


def test_a_member_rejoining_with_a_new_subscription_is_a_metadata_change():
    h = Harness()
    a, b = stable_at(h, join_ms=0, sync_ms=0)
    leader, follower = (a, b) if a.members else (b, a)
    t1 = h.join(member_id=follower.member_id, client_id="c1", protocols=(("range", subscription("t", "u")),))
    assert h.state() == "PreparingRebalance"
    assert h.core.group_document("g").to_json()["rebalance"]["reason"] == "join"  # the last completed one
    t2 = h.join(member_id=leader.member_id, client_id="c0")
    sync_all(h, [h.reply(t1), h.reply(t2)])
    block = last_block(h)
    assert (block["reason"], block["member_id"]) == ("metadata change", follower.member_id)


def test_the_leader_rejoining_a_stable_group_is_a_leader_rejoin():
    h = Harness()
    a, b = stable_at(h, join_ms=0, sync_ms=0)
    leader, follower = (a, b) if a.members else (b, a)
    t1 = h.join(member_id=leader.member_id, client_id="c0")
    t2 = h.join(member_id=follower.member_id, client_id="c1")
    sync_all(h, [h.reply(t1), h.reply(t2)])
    block = last_block(h)
    assert (block["reason"], block["member_id"], block["client_id"]) == ("leader rejoin", leader.member_id, "c0")


# --- documents without a rebalance, and replay ---------------------------------------------------

def test_a_static_member_restart_without_a_rebalance_keeps_the_previous_block():
    h = Harness()
    tokens = [h.join(client_id=f"c{i}", instance=f"i-{i}") for i in range(2)]
    h.advance(0)
    sync_all(h, [h.reply(t) for t in tokens])
    before = last_block(h)
    h.advance(500)
    h.join(client_id="c1", instance="i-1")
    doc = h.documents()[-1]
    assert doc["generation"] == 1 and doc["updated_at_ms"] == h.now
    assert doc["rebalance"] == before


def test_each_completed_rebalance_is_recorded_from_its_own_start():
    h = Harness()
    answers = stable_at(h, join_ms=0, sync_ms=0)
    for started in (START_MS + 100, START_MS + 300):
        h.advance(started - h.now)
        h.ask("trigger_rebalance", "g")
        h.advance(50)
        answers = rejoin_all(h, answers)
        sync_all(h, answers)
        block = last_block(h)
        assert (block["started_at_ms"], block["completed_at_ms"]) == (started, started + 50)
    assert [d["generation"] for d in h.documents()] == [1, 2, 3]


def test_the_block_of_the_last_completed_rebalance_is_in_the_current_document_and_survives_replay():
    h = Harness()
    stable_at(h, join_ms=10, sync_ms=20)
    stored = copy.deepcopy(h.documents()[-1])
    assert h.core.group_document("g").to_json()["rebalance"] == stored["rebalance"]
    fresh = Harness(now_ms=h.now + 1_000)
    fresh.core.replay(document_record("g", stored), fresh.now)
    assert fresh.core.group_document("g").to_json()["rebalance"] == stored["rebalance"]


def test_a_document_without_a_rebalance_block_loads_and_later_documents_record_the_next_one():
    h = Harness()
    answers = stable_at(h, join_ms=0, sync_ms=0)
    old = copy.deepcopy(h.documents()[-1])
    del old["rebalance"]
    fresh = Harness(now_ms=h.now + 1_000)
    fresh.core.replay(document_record("g", old), fresh.now)
    assert fresh.core.group_document("g").to_json()["rebalance"] is None
    assert fresh.ask("trigger_rebalance", "g") is ErrorCode.NONE
    sync_all(fresh, rejoin_all(fresh, answers))
    doc = fresh.documents()[-1]
    assert (doc["generation"], doc["rebalance"]["reason"], doc["rebalance"]["started_at_ms"]) == (
        2, "trigger", fresh.now)


def test_a_checkpoint_takes_the_block_from_the_document():
    h = Harness()
    a, b = h.joined_members("g", 2)
    leader = a if a.members else b
    doc = h.core.group_document("g")
    assert doc.rebalance is None  # nothing completed yet
    h.sync("g", 1, leader.member_id, [(a.member_id, assignment({"t": [0]}))])
    assert h.core.group_document("g").to_json()["rebalance"] == last_block(h)


@pytest.mark.parametrize("block", [
    "yesterday",
    {"started_at_ms": "1", "completed_at_ms": 2, "reason": "join"},
    {"started_at_ms": 1, "completed_at_ms": 2},
])
def test_a_malformed_rebalance_block_is_a_layout_error(block):
    h = Harness()
    stable_at(h, join_ms=0, sync_ms=0)
    doc = copy.deepcopy(h.documents()[-1])
    doc["rebalance"] = block
    with pytest.raises(LayoutError, match="^/groups/g: rebalance: "):
        document_record("g", doc)
