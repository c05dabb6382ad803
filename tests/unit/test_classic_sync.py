"""SyncGroup and the sync phase: parking, the leader's assignment, deadlines, errors."""

from groupctl.coordinator.classic.messages import LeavingMember, SyncGroupResult

from groupctl.coordinator.offsets.messages import PartitionOffset
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.records import GroupMetadataRecord
from tests.unit.classic_harness import Harness, assignment, subscription


def test_follower_sync_is_parked_until_leader_syncs():
    h = Harness()
    leader, follower = h.joined_members("g", 2)
    parked = h.sync("g", 1, follower.member_id)
    assert not h.answered(parked)
    assert h.state() == "CompletingRebalance"
    h.sync("g", 1, leader.member_id, [(follower.member_id, assignment({"t": [0, 1]}))])
    assert h.reply(parked) == SyncGroupResult(ErrorCode.NONE, "consumer", "range", assignment({"t": [0, 1]}))


def test_leader_sync_makes_the_group_stable_and_answers_everyone_in_the_same_result_as_the_document():
    h = Harness()
    leader, f1, f2 = h.joined_members("g", 3)
    parked = [h.sync("g", 1, f.member_id) for f in (f1, f2)]
    plan = [(m.member_id, assignment({"t": [i]})) for i, m in enumerate((leader, f1, f2))]
    token = h.sync("g", 1, leader.member_id, plan)
    result = h.results[-1]
    assert [type(r) for r in result.records] == [GroupMetadataRecord]
    assert {r.token for r in result.replies} == {token, *parked}
    assert h.reply(token).assignment == assignment({"t": [0]})
    assert h.state() == "Stable"


def test_members_the_leader_did_not_assign_get_empty_bytes():
    h = Harness()
    leader, follower = h.joined_members("g", 2)
    parked = h.sync("g", 1, follower.member_id)
    h.sync("g", 1, leader.member_id, [(leader.member_id, assignment({"t": [0]})), ("stranger", b"zzz")])
    assert h.reply(parked).assignment == b""
    assert [m["member_id"] for m in h.documents()[-1]["members"]] == [leader.member_id, follower.member_id]


def test_sync_in_a_stable_group_returns_the_current_assignment():
    h = Harness()
    _, follower = h.stable_group(count=2)
    answer = h.reply(h.sync("g", 1, follower.member_id))
    assert answer == SyncGroupResult(ErrorCode.NONE, "consumer", "range", assignment({"t": [1]}))


def test_sync_during_preparing_rebalance_is_rebalance_in_progress():
    h = Harness()
    leader, follower = h.stable_group(count=2)
    h.join(member_id=leader.member_id, client_id="c0")
    assert h.reply(h.sync("g", 1, follower.member_id)).error is ErrorCode.REBALANCE_IN_PROGRESS


def test_sync_with_a_wrong_generation_is_illegal_generation():
    h = Harness()
    leader, _ = h.joined_members("g", 2)
    assert h.reply(h.sync("g", 0, leader.member_id)).error is ErrorCode.ILLEGAL_GENERATION


def test_sync_from_an_unknown_member_is_unknown_member():
    h = Harness()
    h.joined_members("g", 1)
    assert h.reply(h.sync("g", 1, "c-ghost")).error is ErrorCode.UNKNOWN_MEMBER_ID


def test_sync_to_an_unknown_group_is_unknown_member():
    h = Harness()
    assert h.reply(h.sync("nope", 1, "c-ghost")).error is ErrorCode.UNKNOWN_MEMBER_ID


def test_sync_to_an_empty_group_is_unknown_member():
    h = Harness()
    h.commit("g", -1, "", PartitionOffset("t", 0, 5))
    assert h.state() == "Empty"
    assert h.reply(h.sync("g", 0, "c-ghost")).error is ErrorCode.UNKNOWN_MEMBER_ID


def test_sync_v5_with_another_protocol_type_is_inconsistent():
    h = Harness()
    leader, _ = h.joined_members("g", 2)
    token = h.sync("g", 1, leader.member_id, protocol_type="connect", protocol_name="range")
    assert h.reply(token).error is ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_sync_v5_with_another_protocol_name_is_inconsistent():
    h = Harness()
    leader, _ = h.joined_members("g", 2)
    token = h.sync("g", 1, leader.member_id, protocol_type="consumer", protocol_name="roundrobin")
    assert h.reply(token).error is ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_sync_v5_with_matching_protocol_is_accepted():
    h = Harness()
    (leader,) = h.joined_members("g", 1)
    token = h.sync("g", 1, leader.member_id, protocol_type="consumer", protocol_name="range")
    assert h.reply(token).error is ErrorCode.NONE


def test_members_that_do_not_sync_within_the_rebalance_timeout_are_removed_and_the_group_rebalances():
    h = Harness()
    leader, follower = h.joined_members("g", 2, rebalance_ms=20_000, session_ms=60_000)
    parked = h.sync("g", 1, follower.member_id)
    h.advance(19_999)
    assert not h.answered(parked)
    h.advance(1)
    assert h.reply(parked).error is ErrorCode.REBALANCE_IN_PROGRESS
    assert [m.member_id for m in h.describe().members] == [follower.member_id]
    assert h.state() == "PreparingRebalance"
    rejoin = h.join(member_id=follower.member_id, client_id="c1", rebalance_ms=20_000)
    assert h.reply(rejoin).generation_id == 2 and h.reply(rejoin).leader == follower.member_id


def test_a_follower_that_never_syncs_is_removed_even_after_the_group_became_stable():
    h = Harness()
    leader, follower = h.joined_members("g", 2, rebalance_ms=20_000, session_ms=60_000)
    h.sync("g", 1, leader.member_id, [(follower.member_id, assignment({"t": [0]}))])
    assert h.state() == "Stable"
    h.advance(20_000)
    assert [m.member_id for m in h.describe().members] == [leader.member_id]
    assert h.state() == "PreparingRebalance"


def test_the_sync_deadline_is_cancelled_once_everyone_synced():
    h = Harness()
    h.stable_group(count=2, rebalance_ms=20_000, session_ms=60_000)
    assert not any(key[0] == "classic-sync" for key in h.timer.pending())


def test_a_second_sync_from_a_parked_member_supersedes_the_first():
    h = Harness()
    leader, follower = h.joined_members("g", 2)
    first = h.sync("g", 1, follower.member_id)
    second = h.sync("g", 1, follower.member_id)
    assert h.reply(first).error is ErrorCode.REBALANCE_IN_PROGRESS
    h.sync("g", 1, leader.member_id, [(follower.member_id, b"a")])
    assert h.reply(second).assignment == b"a"


def test_a_parked_follower_that_leaves_is_answered_unknown_member():
    h = Harness()
    leader, follower = h.joined_members("g", 2)
    parked = h.sync("g", 1, follower.member_id)
    h.leave("g", LeavingMember(follower.member_id))
    assert h.reply(parked).error is ErrorCode.UNKNOWN_MEMBER_ID
    assert h.state() == "PreparingRebalance"


def test_a_member_parked_in_sync_is_not_expired_by_its_session():
    h = Harness()
    leader, follower = h.joined_members("g", 2, session_ms=6000, rebalance_ms=20_000)
    parked = h.sync("g", 1, follower.member_id)
    h.advance(6000)  # the leader's session expires (it has not heartbeaten), the parked follower's does not
    assert h.reply(parked).error is ErrorCode.REBALANCE_IN_PROGRESS
    assert [m.member_id for m in h.describe().members] == [follower.member_id]


def test_assignment_of_a_non_consumer_protocol_is_opaque():
    h = Harness()
    tokens = [h.join(client_id="w", protocol_type="connect", protocols=(("sessioned", b"\x01opaque"),))]
    h.advance(0)
    (leader,) = [h.reply(t) for t in tokens]
    token = h.sync("g", 1, leader.member_id, [(leader.member_id, b"\xffcustom")])
    assert h.reply(token) == SyncGroupResult(ErrorCode.NONE, "connect", "sessioned", b"\xffcustom")
    doc = h.documents()[-1]
    assert doc["members"][0]["subscription"] == [] and doc["members"][0]["assignment"] == {}
    assert doc["ownership"] == {}


def test_rejoining_member_metadata_is_what_the_leader_sees_next_generation():
    h = Harness()
    leader, follower = h.stable_group(count=2)
    h.join(member_id=follower.member_id, client_id="c1", protocols=(("range", subscription("u")),))
    token = h.join(member_id=leader.member_id, client_id="c0")
    members = dict((m.member_id, m.metadata) for m in h.reply(token).members)
    assert members[follower.member_id] == subscription("u")
