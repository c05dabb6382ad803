"""Taking a group partition over (load) and giving it up (unload), and answering for groups this
node does not serve: NOT_COORDINATOR, or COORDINATOR_LOAD_IN_PROGRESS while loading."""

from __future__ import annotations

import copy

from groupctl.coordinator.classic.messages import (

    JoinGroupResult,

    LeaveGroupResult,

    LeavingMember,

    SyncGroupResult,

    TriggerRebalance,

    TriggerRebalanceResult,

)

from groupctl.coordinator.offsets.messages import DeleteOffsets, FetchOffsets, PartitionOffset
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.placement import Placement, group_partition, java_string_hash
from tests.unit.classic_harness import Harness
from tests.unit.test_classic_replay import stored


def take_over(h: Harness) -> Harness:
    """A second core (another node) loading what `h` stored, one second later."""
    fresh = Harness(now_ms=h.now + 1000, node_id=1)
    fresh.absorb(fresh.core.load([copy.deepcopy(r) for r in stored(h)], fresh.now, "node 1 took over"))
    return fresh


def test_group_partition_is_kafkas_abs_hashcode_modulo_the_partition_count():
    assert java_string_hash("") == 0 and java_string_hash("hello") == 99162322
    assert java_string_hash("\U0001f600") == 31 * 0xD83D + 0xDE00  # UTF-16 surrogate pair, as Java hashes it
    assert group_partition("polygenelubricants") == 0  # hashCode is Integer.MIN_VALUE: Utils.abs gives 0
    assert group_partition("orders") == abs(java_string_hash("orders")) % 50
    assert all(0 <= group_partition(f"g{i}", 7) < 7 for i in range(200))


def test_a_loaded_group_with_members_rebalances_and_its_generation_continues():
    h = Harness()
    a, b = h.stable_group(count=2)
    r = take_over(h)
    assert r.state() == "PreparingRebalance"
    assert r.heartbeat("g", 1, a.member_id) is ErrorCode.REBALANCE_IN_PROGRESS
    ta = r.join(member_id=a.member_id, client_id="c0")
    tb = r.join(member_id=b.member_id, client_id="c1")
    assert r.reply(ta).generation_id == r.reply(tb).generation_id == 2
    r.sync("g", 2, r.reply(ta).leader, [(a.member_id, b"x"), (b.member_id, b"y")])
    document = r.documents()[-1]
    assert document["generation"] == 2 and document["coordinator"] == 1
    assert document["rebalance"]["reason"] == "coordinator load"
    assert document["rebalance"]["detail"] == "node 1 took over"


def test_members_that_do_not_come_back_after_a_takeover_are_removed_after_the_rebalance_timeout():
    h = Harness()
    a, b = h.stable_group(count=2, rebalance_ms=30_000)
    r = take_over(h)
    token = r.join(member_id=a.member_id, client_id="c0")
    r.advance(30_000)
    assert r.reply(token).generation_id == 2 and [m.member_id for m in r.reply(token).members] == [a.member_id]


def test_a_loaded_empty_group_keeps_its_offsets_and_does_not_rebalance():
    h = Harness()
    (a,) = h.stable_group(count=1)
    h.commit("g", 1, a.member_id, PartitionOffset("t", 0, 9))
    h.leave("g", LeavingMember(a.member_id))
    r = take_over(h)
    assert r.state() == "Empty" and not r.timer.pending()
    assert r.ask("fetch_offsets", FetchOffsets("g", (("t", 0),))).offsets[0].offset == 9


def test_unload_answers_parked_requests_not_coordinator_and_forgets_the_group():
    h = Harness()
    h.stable_group(count=1)
    newcomer = h.join(member_id="", client_id="c9")  # parked until the first member rejoins
    assert not h.answered(newcomer)
    h.absorb(h.core.unload(lambda group: group == "g"))
    assert h.reply(newcomer) == JoinGroupResult(ErrorCode.NOT_COORDINATOR, member_id=h.reply(newcomer).member_id)
    assert h.core.group_document("g") is None and not h.timer.pending()
    assert not h.results[-1].records  # the store keeps the group for the next coordinator


def test_unload_forgets_the_groups_offsets_until_a_load_brings_back_what_the_store_kept():
    h = Harness()
    h.commit("s", -1, "", PartitionOffset("t", 0, 5))
    h.commit("other", -1, "", PartitionOffset("t", 0, 7))
    kept = [r for r in stored(h) if r.group == "s"]
    h.absorb(h.core.unload(lambda group: group == "s"))
    assert h.ask("fetch_offsets", FetchOffsets("s", (("t", 0),))).offsets[0].offset == -1
    assert [r.group for r in h.core.delete_topic_offsets(("t",), h.now).records] == ["other"]
    h.absorb(h.core.load(kept, h.now, "back"))
    assert h.ask("fetch_offsets", FetchOffsets("s", (("t", 0),))).offsets[0].offset == 5


def test_unload_answers_a_parked_sync_not_coordinator():
    h = Harness()
    a, b = h.stable_group(count=2)
    ta = h.join(member_id=a.member_id, client_id="c0")
    tb = h.join(member_id=b.member_id, client_id="c1")
    generation = h.reply(ta).generation_id
    follower = b.member_id if h.reply(ta).leader == a.member_id else a.member_id
    parked = h.sync("g", generation, follower)
    assert not h.answered(parked)
    h.absorb(h.core.unload(lambda group: True))
    assert h.reply(parked) == SyncGroupResult(ErrorCode.NOT_COORDINATOR)
    assert h.answered(tb)


def test_requests_for_a_group_this_node_does_not_serve_answer_not_coordinator_without_touching_it():
    h = Harness()
    (a,) = h.stable_group(count=1)
    h.core.placement.serving.discard(h.core.placement.partition_of("g"))
    assert h.heartbeat("g", 1, a.member_id) is ErrorCode.NOT_COORDINATOR
    assert h.reply(h.join(member_id=a.member_id)).error is ErrorCode.NOT_COORDINATOR
    assert h.reply(h.sync("g", 1, a.member_id)) == SyncGroupResult(ErrorCode.NOT_COORDINATOR)
    assert h.leave("g", LeavingMember(a.member_id)) == LeaveGroupResult(ErrorCode.NOT_COORDINATOR)
    assert h.commit("g", 1, a.member_id, PartitionOffset("t", 0, 1), PartitionOffset("t", 1, 1)) == \
        [ErrorCode.NOT_COORDINATOR] * 2
    assert h.ask("fetch_offsets", FetchOffsets("g", None)).error is ErrorCode.NOT_COORDINATOR
    assert h.ask("delete_offsets", DeleteOffsets("g", (("t", 0),))).error is ErrorCode.NOT_COORDINATOR
    assert h.ask("trigger_rebalance", TriggerRebalance("g")) == TriggerRebalanceResult(ErrorCode.NOT_COORDINATOR)
    assert [d.error for d in h.ask("describe_groups", ("g", "g"))] == [ErrorCode.NOT_COORDINATOR] * 2
    assert [d.error for d in h.ask("delete_groups", ("g",))] == [ErrorCode.NOT_COORDINATOR]
    assert not h.records[len(h.records):] and h.core.group_document("g").generation == 1


def test_a_loading_partition_answers_load_in_progress_and_others_are_served_alongside():
    h = Harness()
    h.core.placement = Placement(50, serving={group_partition("other")}, loading={group_partition("g")})
    assert group_partition("g") != group_partition("other")
    assert h.heartbeat("g", 1, "m") is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    described = h.ask("describe_groups", ("g", "other"))
    assert [(d.group_id, d.error) for d in described] == [
        ("g", ErrorCode.COORDINATOR_LOAD_IN_PROGRESS), ("other", ErrorCode.NONE)]
