"""A topic change rebalances the Stable and CompletingRebalance groups subscribed to it."""

from groupctl.coordinator.classic.context import Core
from groupctl.coordinator.classic.topic_changes import topics_changed
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.results import Result
from tests.unit.classic_harness import Harness, assignment, subscription


def core_of(h: Harness) -> Core:
    """The harness drives the facade; topic changes are called on the core underneath."""
    return h.core._core


def change(h: Harness, *topics: str, detail: str = "topic t grew to 4 partitions") -> Result:
    return h.absorb(topics_changed(core_of(h), frozenset(topics), h.now, detail))


def settle(h: Harness, answers, group: str = "g") -> None:
    """Every member of `answers` rejoins with the same metadata and syncs, the leader last."""
    tokens = [h.join(group, member_id=a.member_id, client_id=f"c{i}") for i, a in enumerate(answers)]
    again = [h.reply(t) for t in tokens]
    leader = next(a for a in again if a.members)
    plan = [(a.member_id, assignment({"t": [i]})) for i, a in enumerate(again)]
    for a in again:
        if a is not leader:
            h.sync(group, a.generation_id, a.member_id)
    assert h.reply(h.sync(group, leader.generation_id, leader.member_id, plan)).error is ErrorCode.NONE


def test_a_subscribed_stable_group_rebalances_and_its_next_document_says_topic_change():
    h = Harness()
    answers = h.stable_group("g", count=2)
    h.advance(500)
    changed_at = h.now
    result = change(h, "t")
    assert (result.replies, result.records) == ([], [])  # nothing is written until the rebalance completes
    assert h.state() == "PreparingRebalance"
    h.advance(30)
    settle(h, answers)
    doc = h.documents()[-1]
    assert (doc["generation"], doc["state"]) == (2, "Stable")
    assert doc["rebalance"] == {
        "started_at_ms": changed_at, "completed_at_ms": changed_at + 30, "reason": "topic change",
        "member_id": None, "client_id": None, "detail": "topic t grew to 4 partitions",
    }


def test_a_change_of_any_one_of_the_topics_is_enough():
    h = Harness()
    h.stable_group("g", count=1)
    change(h, "other", "t")
    assert h.state() == "PreparingRebalance"


def test_a_group_not_subscribed_to_the_changed_topics_is_untouched():
    h = Harness()
    h.stable_group("g", count=1, protocols=(("range", subscription("elsewhere")),))
    before = (len(h.records), h.timer.pending())
    change(h, "t")
    assert h.state() == "Stable"
    assert (len(h.records), h.timer.pending()) == before


def test_only_the_subscribed_group_of_two_rebalances():
    h = Harness()
    h.stable_group("in", count=1)
    h.stable_group("out", count=1, protocols=(("range", subscription("elsewhere")),))
    change(h, "t")
    assert (h.state("in"), h.state("out")) == ("PreparingRebalance", "Stable")


def test_a_completing_rebalance_group_restarts_its_join_phase_and_fails_the_parked_syncs():
    h = Harness()
    a, b = h.joined_members("g", 2)
    parked = h.sync("g", 1, b.member_id)
    change(h, "t")
    assert h.reply(parked).error is ErrorCode.REBALANCE_IN_PROGRESS
    assert h.state() == "PreparingRebalance"


def test_empty_and_preparing_rebalance_groups_are_untouched():
    h = Harness()
    h.stable_group("emptied", count=1)
    h.ask("trigger_rebalance", "emptied")
    h.advance(30_000)  # a never rejoins: dropped at the rebalance timeout, the group empties
    assert h.state("emptied") == "Empty"
    h.join("preparing", client_id="x", rebalance_ms=60_000)
    h.join("preparing", client_id="y", rebalance_ms=60_000)
    assert h.state("preparing") == "PreparingRebalance"
    before = (len(h.records), h.timer.pending())
    change(h, "t")
    assert (h.state("emptied"), h.state("preparing")) == ("Empty", "PreparingRebalance")
    assert (len(h.records), h.timer.pending()) == before


def test_a_consumer_group_with_undecodable_subscriptions_counts_as_subscribed():
    h = Harness()
    h.stable_group("g", count=1, protocols=(("range", b"\xff\xff not a subscription"),))
    change(h, "t")
    assert h.state() == "PreparingRebalance"
