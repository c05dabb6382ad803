"""ListGroups, DescribeGroups, DeleteGroups and the operator-triggered rebalance."""

from groupctl.coordinator.classic.messages import DeletedGroup, LeavingMember, ListedGroup

from groupctl.coordinator.offsets.messages import FetchOffsets, PartitionOffset
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.records import GroupTombstone
from tests.unit.classic_harness import Harness, assignment, subscription


def listing(h: Harness, states=(), types=()):
    return h.ask("list_groups", (frozenset(states), frozenset(types)))


def three_groups(h: Harness) -> None:
    h.stable_group("stable", count=1)
    h.join("preparing", client_id="x")
    h.commit("simple", -1, "", PartitionOffset("t", 0, 1))


def test_list_groups_lists_every_group_with_state_and_type():
    h = Harness()
    three_groups(h)
    assert listing(h) == (
        ListedGroup("preparing", "consumer", "PreparingRebalance", "classic"),
        ListedGroup("simple", "", "Empty", "classic"),
        ListedGroup("stable", "consumer", "Stable", "classic"),
    )


def test_list_groups_filters_by_state_case_insensitively():
    h = Harness()
    three_groups(h)
    assert [g.group_id for g in listing(h, states={"stable", "EMPTY"})] == ["simple", "stable"]


def test_list_groups_filters_by_type():
    h = Harness()
    three_groups(h)
    assert len(listing(h, types={"Classic"})) == 3
    assert listing(h, types={"consumer"}) == ()


def test_describe_an_unknown_group_is_dead_with_no_error():
    (description,) = Harness().ask("describe_groups", ("nope",))
    assert (description.error, description.state, description.members) == (ErrorCode.NONE, "Dead", ())


def test_describe_a_stable_group_shows_members_metadata_assignment_and_generation():
    h = Harness()
    a, b = h.stable_group(count=2)
    d = h.describe()
    assert (d.state, d.protocol_type, d.protocol, d.generation_id) == ("Stable", "consumer", "range", 1)
    assert [(m.member_id, m.client_id, m.client_host, m.metadata, m.assignment) for m in d.members] == [
        (a.member_id, "c0", "/127.0.0.1", subscription("t"), assignment({"t": [0]})),
        (b.member_id, "c1", "/127.0.0.1", subscription("t"), assignment({"t": [1]})),
    ]


def test_describe_a_rebalancing_group_has_no_metadata_or_assignments():
    h = Harness()
    a, b = h.stable_group(count=2)
    h.join(member_id=a.member_id, client_id="c0")
    d = h.describe()
    assert (d.state, d.protocol) == ("PreparingRebalance", "")
    assert all(m.metadata == b"" and m.assignment == b"" for m in d.members)


def test_delete_an_empty_group_writes_a_tombstone_and_forgets_it():
    h = Harness()
    h.commit("simple", -1, "", PartitionOffset("t", 0, 1))
    assert h.ask("delete_groups", ("simple",)) == (DeletedGroup("simple", ErrorCode.NONE),)
    assert h.results[-1].records == [GroupTombstone("simple")]
    assert h.state("simple") == "Dead"


def test_a_deleted_group_loses_its_committed_offsets():
    h = Harness()
    h.commit("simple", -1, "", PartitionOffset("t", 0, 1), PartitionOffset("u", 0, 2))
    h.ask("delete_groups", ("simple",))
    assert [o.offset for o in h.ask("fetch_offsets", FetchOffsets("simple", (("t", 0), ("u", 0)))).offsets] == [-1, -1]
    assert h.core.delete_topic_offsets(("t", "u"), h.now).records == []
    h.commit("simple", -1, "", PartitionOffset("u", 0, 3))  # a new simple group, with only its own offset
    assert [(o.topic, o.offset) for o in h.ask("fetch_offsets", FetchOffsets("simple", None)).offsets] == [("u", 3)]


def test_delete_a_group_with_members_is_non_empty_group():
    h = Harness()
    h.stable_group(count=1)
    assert h.ask("delete_groups", ("g",)) == (DeletedGroup("g", ErrorCode.NON_EMPTY_GROUP),)
    assert h.results[-1].records == []


def test_delete_an_unknown_group_is_group_id_not_found():
    assert Harness().ask("delete_groups", ("nope",)) == (DeletedGroup("nope", ErrorCode.GROUP_ID_NOT_FOUND),)


def test_delete_groups_answers_each_group():
    h = Harness()
    (a,) = h.stable_group(count=1)
    h.leave("g", LeavingMember(a.member_id))
    answers = h.ask("delete_groups", ("g", "g", "nope"))
    assert [d.error for d in answers] == [ErrorCode.NONE, ErrorCode.GROUP_ID_NOT_FOUND, ErrorCode.GROUP_ID_NOT_FOUND]


def test_a_deleted_group_can_be_joined_afresh():
    h = Harness()
    (a,) = h.stable_group(count=1)
    h.leave("g", LeavingMember(a.member_id))
    h.ask("delete_groups", ("g",))
    token = h.join(client_id="new")
    h.advance(0)
    assert h.reply(token).generation_id == 1


def test_deleting_an_empty_group_cancels_its_pending_members_timers():
    h = Harness()
    h.join(client_id="p", require_known=True)
    h.ask("delete_groups", ("g",))
    assert h.timer.pending() == {}


def test_trigger_rebalance_moves_a_stable_group_to_preparing_rebalance():
    h = Harness()
    a, b = h.stable_group(count=2)
    assert h.ask("trigger_rebalance", "g") is ErrorCode.NONE
    assert h.state() == "PreparingRebalance"
    assert h.heartbeat("g", 1, b.member_id) is ErrorCode.REBALANCE_IN_PROGRESS


def test_trigger_rebalance_during_completing_rebalance_fails_the_parked_syncs():
    h = Harness()
    a, b = h.joined_members("g", 2)
    parked = h.sync("g", 1, b.member_id)
    assert h.ask("trigger_rebalance", "g") is ErrorCode.NONE
    assert h.reply(parked).error is ErrorCode.REBALANCE_IN_PROGRESS
    assert h.state() == "PreparingRebalance"


def test_trigger_rebalance_of_an_empty_or_rebalancing_group_changes_nothing():
    h = Harness()
    h.commit("simple", -1, "", PartitionOffset("t", 0, 1))
    h.join("busy", client_id="x")
    assert h.ask("trigger_rebalance", "simple") is ErrorCode.NONE
    assert h.ask("trigger_rebalance", "busy") is ErrorCode.NONE
    assert (h.state("simple"), h.state("busy")) == ("Empty", "PreparingRebalance")


def test_trigger_rebalance_of_an_unknown_group_is_group_id_not_found():
    assert Harness().ask("trigger_rebalance", "nope") is ErrorCode.GROUP_ID_NOT_FOUND
