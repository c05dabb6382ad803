"""Static membership (group.instance.id): id takeover, fencing, no rebalance on restart."""

from groupctl.coordinator.classic.context import join_key
from groupctl.coordinator.classic.messages import LeavingMember, LeftMember

from groupctl.coordinator.offsets.messages import PartitionOffset
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.records import GroupMetadataRecord
from tests.unit.classic_harness import Harness, assignment, subscription


def static_group(h: Harness, count: int = 2, **join_args):
    tokens = [h.join(client_id=f"c{i}", instance=f"i-{i}", **join_args) for i in range(count)]
    h.advance(0)
    answers = [h.reply(t) for t in tokens]
    plan = [(a.member_id, assignment({"t": [i]})) for i, a in enumerate(answers)]
    for i, a in enumerate(answers):
        h.sync("g", a.generation_id, a.member_id, plan if i == 0 else (), instance=f"i-{i}")
    assert h.state() == "Stable"
    return answers


def test_static_member_restart_in_a_stable_group_takes_a_new_id_without_a_rebalance():
    h = Harness()
    a, b = static_group(h)
    answer = h.reply(h.join(client_id="c1", instance="i-1"))
    assert answer.error is ErrorCode.NONE and answer.member_id != b.member_id
    assert (answer.generation_id, answer.leader, answer.members, answer.skip_assignment) == (1, a.member_id, (), False)
    assert h.state() == "Stable"
    sync = h.reply(h.sync("g", 1, answer.member_id, instance="i-1"))
    assert sync.assignment == assignment({"t": [1]})


def test_static_member_restart_rewrites_the_document_with_the_new_id_in_the_same_result():
    h = Harness()
    a, b = static_group(h)
    token = h.join(client_id="c1", instance="i-1")
    result = h.results[-1]
    (record,) = result.records
    assert isinstance(record, GroupMetadataRecord)
    new_id = h.reply(token).member_id
    assert [m.member_id for m in record.document.members] == [a.member_id, new_id]
    assert record.document.members[1].group_instance_id == "i-1"
    assert record.document.generation == 1 and record.document.ownership["t"]["1"] == new_id


def test_the_old_id_of_a_restarted_static_member_is_fenced():
    h = Harness()
    a, b = static_group(h)
    h.join(client_id="c1", instance="i-1")
    assert h.heartbeat("g", 1, b.member_id, instance="i-1") is ErrorCode.FENCED_INSTANCE_ID
    assert h.reply(h.sync("g", 1, b.member_id, instance="i-1")).error is ErrorCode.FENCED_INSTANCE_ID
    assert h.commit("g", 1, b.member_id, PartitionOffset("t", 1, 9), instance="i-1") == [ErrorCode.FENCED_INSTANCE_ID]


def test_static_leader_restart_gets_the_members_and_skip_assignment():
    h = Harness()
    a, b = static_group(h)
    answer = h.reply(h.join(client_id="c0", instance="i-0"))
    assert answer.leader == answer.member_id and answer.skip_assignment
    assert [m.member_id for m in answer.members] == [answer.member_id, b.member_id]
    assert h.state() == "Stable"


def test_static_member_restart_with_a_protocol_that_changes_the_choice_rebalances():
    h = Harness()
    tokens = [h.join(client_id=f"c{i}", instance=f"i-{i}", protocols=(("range", b""), ("rr", b"")))
              for i in range(2)]
    h.advance(0)
    a, b = [h.reply(t) for t in tokens]
    h.sync("g", 1, b.member_id)
    h.sync("g", 1, a.member_id)
    token = h.join(client_id="c1", instance="i-1", protocols=(("rr", b""),))
    assert not h.answered(token)
    assert h.state() == "PreparingRebalance"


def test_static_member_restart_fences_the_old_ids_parked_join():
    h = Harness()
    a, b = static_group(h)
    old = h.join(member_id=b.member_id, client_id="c1", instance="i-1",
                 protocols=(("range", subscription("t", "u")),))
    assert h.state() == "PreparingRebalance"
    new = h.join(client_id="c1", instance="i-1")
    assert h.reply(old).error is ErrorCode.FENCED_INSTANCE_ID
    h.join(member_id=a.member_id, client_id="c0", instance="i-0")
    assert h.reply(new).generation_id == 2


def test_static_member_restart_during_completing_rebalance_fences_the_parked_sync_and_rebalances():
    h = Harness()
    tokens = [h.join(client_id=f"c{i}", instance=f"i-{i}") for i in range(2)]
    h.advance(0)
    a, b = [h.reply(t) for t in tokens]
    parked = h.sync("g", 1, b.member_id, instance="i-1")
    new = h.join(client_id="c1", instance="i-1")
    assert h.reply(parked).error is ErrorCode.FENCED_INSTANCE_ID
    assert h.state() == "PreparingRebalance" and not h.answered(new)


def test_static_members_that_do_not_rejoin_stay_in_the_group():
    h = Harness()
    a, b = static_group(h, session_ms=60_000, rebalance_ms=20_000)
    token = h.join(member_id=a.member_id, client_id="c0", instance="i-0", session_ms=60_000, rebalance_ms=20_000)
    h.advance(20_000)
    answer = h.reply(token)
    assert answer.generation_id == 2
    assert [m.member_id for m in answer.members] == [a.member_id, b.member_id]


def test_static_member_is_removed_on_session_timeout():
    h = Harness()
    a, b = static_group(h, session_ms=10_000)
    h.advance(9_000)
    h.heartbeat("g", 1, a.member_id, instance="i-0")
    h.advance(1_000)
    assert [m.member_id for m in h.describe().members] == [a.member_id]


def test_static_member_is_removed_by_instance_id_alone():
    h = Harness()
    a, b = static_group(h)
    answer = h.leave("g", LeavingMember("", "i-1"))
    assert answer.members == (LeftMember("", "i-1", ErrorCode.NONE),)
    assert [m.member_id for m in h.describe().members] == [a.member_id]


def test_leave_by_an_unknown_instance_id_is_unknown_member():
    h = Harness()
    static_group(h)
    assert h.leave("g", LeavingMember("", "i-9")).members[0].error is ErrorCode.UNKNOWN_MEMBER_ID


def test_heartbeat_with_an_unknown_instance_id_is_unknown_member():
    h = Harness()
    a, _ = static_group(h)
    assert h.heartbeat("g", 1, a.member_id, instance="i-9") is ErrorCode.UNKNOWN_MEMBER_ID


def test_join_with_a_known_instance_but_someone_elses_member_id_is_fenced():
    h = Harness()
    a, b = static_group(h)
    assert h.reply(h.join(member_id=a.member_id, client_id="c1", instance="i-1")).error is ErrorCode.FENCED_INSTANCE_ID


def test_static_members_none_of_which_rejoins_are_waited_for_at_least_a_session_whatever_their_rebalance_timeout():
    # A rebalance timeout of 0 or less (Kafka does not refuse one) must not make the join phase,
    # waiting for static members that do not rejoin, fire again at once, forever.
    h = Harness()
    static_group(h, session_ms=60_000, rebalance_ms=20_000)
    for i in range(2):  # each restarts with a new id and a rebalance timeout of -1: still Stable
        h.join(client_id=f"c{i}", instance=f"i-{i}", session_ms=60_000, rebalance_ms=-1)
    assert h.state() == "Stable"
    h.call("trigger_rebalance", "g")
    h.advance(0)  # the join deadline passes at once: nobody rejoined, the static members stay
    assert h.state() == "PreparingRebalance"
    assert h.timer.pending()[join_key("g")] == h.now + h.core._core.config.min_session_timeout_ms
