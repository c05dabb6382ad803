"""ConsumerGroupHeartbeat on the consumer-group core, on a manual clock: joining, the epochs,
incremental reassignment without a partition ever having two owners, fencing, leaving, static
members, and every validation error a Kafka 4 client can meet."""

from __future__ import annotations

import pytest

from groupctl.coordinator.consumer.describe import describe
from groupctl.coordinator.consumer.member import MemberState
from groupctl.coordinator.consumer.messages import ConsumerHeartbeat
from groupctl.coordinator.consumer.partitions import assignment, count
from groupctl.coordinator.consumer.target import use_topics
from groupctl.coordinator.consumer.topics import TopicImage, TopicInfo
from groupctl.coordinator.errors import ErrorCode
from tests.unit.consumer_harness import AUDIT, ORDERS, Client, Harness, join


def owners(harness: Harness, group: str = "g") -> dict:
    """(topic id, partition) -> every member that owns it (assigned or pending revocation)."""
    found: dict = {}
    for member in harness.group(group).members.values():
        for block in (member.assigned, member.pending_revocation):
            for topic, partitions in block.items():
                for p in partitions:
                    found.setdefault((topic, p), []).append(member.member_id)
    return found


def settle(*clients: Client, rounds: int = 6) -> None:
    for _ in range(rounds):
        for client in clients:
            client.beat()


def test_the_first_member_joins_at_epoch_1_with_every_partition_of_its_topic():
    harness = Harness()
    answer = Client(harness, "a").join()
    assert (answer.error, answer.member_id, answer.member_epoch) == (ErrorCode.NONE, "a", 1)
    assert answer.assignment == assignment({ORDERS.topic_id: range(6)})
    assert answer.heartbeat_interval_ms == 5_000
    group = harness.group()
    assert (group.group_epoch, group.assignment_epoch, group.assignor) == (1, 1, "uniform")
    assert group.state.value == "Stable"


def test_a_second_member_gets_half_once_the_first_has_revoked_it_and_no_partition_has_two_owners_meanwhile():
    harness = Harness()
    a, b = Client(harness, "a"), Client(harness, "b")
    a.join()
    answer = b.join()
    assert answer.member_epoch == 2 and answer.assignment == {}  # everything is still a's
    assert harness.group().state.value == "Reconciling"
    told = a.beat()  # a still owns all six: it is told to keep three, at its epoch
    assert told.member_epoch == 1 and count(told.assignment) == 3
    assert harness.group().members["a"].state is MemberState.UNREVOKED_PARTITIONS
    assert all(len(holders) == 1 for holders in owners(harness).values())
    assert a.beat().member_epoch == 2  # it revoked: on to epoch 2
    got = b.beat()
    assert count(got.assignment) == 3 and got.member_epoch == 2
    assert harness.group().state.value == "Stable"
    assert set(a.owned[ORDERS.topic_id]).isdisjoint(b.owned[ORDERS.topic_id])


def test_a_member_that_keeps_its_partitions_is_never_told_to_give_them_up():
    harness = Harness()
    a, b, c = Client(harness, "a"), Client(harness, "b"), Client(harness, "c")
    a.join()
    b.join()
    settle(a, b)
    kept = {m: set(client.owned[ORDERS.topic_id]) for m, client in (("a", a), ("b", b))}
    c.join()
    told_a, told_b = a.beat(), b.beat()
    for told, member in ((told_a, "a"), (told_b, "b")):
        assert set(told.assignment[ORDERS.topic_id]) <= kept[member]
        assert len(told.assignment[ORDERS.topic_id]) == 2  # gave one up, kept two
    settle(a, b, c)
    assert sorted(count(client.owned) for client in (a, b, c)) == [2, 2, 2]


def test_an_unchanged_heartbeat_carries_no_assignment_and_a_full_one_does():
    harness = Harness()
    a = Client(harness, "a")
    a.join()
    assert a.beat().assignment is None
    full = harness.send(ConsumerHeartbeat("g", "a", a.epoch, rebalance_timeout_ms=300_000,
                                          subscribed_topic_names=("orders",), owned=assignment(a.owned)))
    assert full.assignment == assignment(a.owned)


@pytest.mark.parametrize("request_, problem", [
    (ConsumerHeartbeat("", "m", 0), "GroupId"),
    (ConsumerHeartbeat("g", "", 3), "MemberId"),
    (ConsumerHeartbeat("g", "", -1), "MemberId"),
    (ConsumerHeartbeat("g", "m", 0, instance_id=" ", rebalance_timeout_ms=1, subscribed_topic_names=(), owned={}),
     "InstanceId"),
    (ConsumerHeartbeat("g", "m", 0, rack_id="", rebalance_timeout_ms=1, subscribed_topic_names=(), owned={}),
     "RackId"),
    (ConsumerHeartbeat("g", "m", 0, subscribed_topic_names=("orders",), owned={}), "RebalanceTimeoutMs"),
    (ConsumerHeartbeat("g", "m", 0, rebalance_timeout_ms=1, subscribed_topic_names=("orders",)), "TopicPartitions"),
    (ConsumerHeartbeat("g", "m", 0, rebalance_timeout_ms=1, subscribed_topic_names=("orders",),
                       owned=assignment({ORDERS.topic_id: [0]})), "TopicPartitions"),
    (ConsumerHeartbeat("g", "m", 0, rebalance_timeout_ms=1, owned={}), "SubscribedTopic"),
    (ConsumerHeartbeat("g", "m", -2), "InstanceId"),
    (ConsumerHeartbeat("g", "m", -3), "MemberEpoch"),
    (ConsumerHeartbeat("g", "", 0, rebalance_timeout_ms=1, subscribed_topic_names=(), owned={}), "MemberId"),
])
def test_a_malformed_heartbeat_is_invalid_request_naming_the_field(request_, problem):
    harness = Harness()
    answer = harness.send(request_)
    assert answer.error == ErrorCode.INVALID_REQUEST and problem in answer.error_message
    assert harness.core.groups == {}


def test_a_version_0_join_without_a_member_id_gets_one_made_by_the_coordinator():
    harness = Harness()
    request = ConsumerHeartbeat("g", "", 0, rebalance_timeout_ms=1, subscribed_topic_names=("orders",), owned={},
                                member_id_from_client=False)
    answer = harness.send(request, new_member_id="server-made")
    assert (answer.error, answer.member_id) == (ErrorCode.NONE, "server-made")


def test_an_assignor_the_coordinator_does_not_have_is_unsupported_assignor():
    answer = Harness().send(join("m", assignor="sticky"))
    assert answer.error == ErrorCode.UNSUPPORTED_ASSIGNOR and "uniform, range" in answer.error_message


def test_the_assignor_most_members_ask_for_computes_the_target():
    harness = Harness()
    harness.send(join("a", assignor="range"))
    assert harness.group().assignor == "range"


def test_a_heartbeat_for_an_unknown_group_or_member_is_refused_and_creates_nothing():
    harness = Harness()
    assert harness.send(ConsumerHeartbeat("g", "m", 5)).error == ErrorCode.GROUP_ID_NOT_FOUND
    Client(harness, "a").join()
    assert harness.send(ConsumerHeartbeat("g", "stranger", 1)).error == ErrorCode.UNKNOWN_MEMBER_ID
    assert set(harness.group().members) == {"a"}


def test_an_epoch_above_the_coordinators_or_below_it_is_fenced_but_the_previous_one_with_a_subset_is_not():
    harness = Harness()
    a, b = Client(harness, "a"), Client(harness, "b")
    a.join()
    b.join()
    settle(a, b)  # a: epoch 2, previous 1
    assert harness.send(ConsumerHeartbeat("g", "a", 3)).error == ErrorCode.FENCED_MEMBER_EPOCH
    assert harness.send(ConsumerHeartbeat("g", "a", 0 + 1, owned=assignment(a.owned))).error == ErrorCode.NONE
    bigger = {ORDERS.topic_id: set(range(6))}
    assert harness.send(ConsumerHeartbeat("g", "a", 1, owned=assignment(bigger))).error == ErrorCode.FENCED_MEMBER_EPOCH
    assert harness.send(ConsumerHeartbeat("g", "a", 1)).error == ErrorCode.FENCED_MEMBER_EPOCH  # owned unknown


def test_a_fenced_member_rejoining_with_epoch_0_and_its_id_gets_its_assignment_back():
    harness = Harness()
    a = Client(harness, "a")
    a.join()
    before = dict(a.owned)
    a.owned, a.epoch = {}, 0  # what a client does after FENCED_MEMBER_EPOCH
    answer = a.join()
    assert answer.error == ErrorCode.NONE and answer.member_epoch == 1
    assert answer.assignment == assignment(before)


def test_a_full_group_refuses_a_new_member_but_not_one_of_its_own():
    harness = Harness(max_size=1)
    a = Client(harness, "a")
    a.join()
    assert harness.send(join("b")).error == ErrorCode.GROUP_MAX_SIZE_REACHED
    assert a.beat().error == ErrorCode.NONE


def test_a_member_that_leaves_bumps_the_epoch_and_its_partitions_go_to_the_others():
    harness = Harness()
    a, b = Client(harness, "a"), Client(harness, "b")
    a.join()
    b.join()
    settle(a, b)
    epoch = harness.group().group_epoch
    answer = b.leave()
    assert (answer.error, answer.member_epoch) == (ErrorCode.NONE, -1)
    assert harness.group().group_epoch == epoch + 1 and set(harness.group().members) == {"a"}
    a.beat()
    assert count(a.owned) == 6


def test_a_member_whose_session_expires_is_fenced_and_its_partitions_reassigned():
    harness = Harness(session_timeout_ms=45_000)
    a, b = Client(harness, "a"), Client(harness, "b")
    a.join()
    b.join()
    settle(a, b)
    for _ in range(10):  # a keeps heartbeating, b is silent
        harness.advance(5_000)
        a.beat()
    assert set(harness.group().members) == {"a"}
    assert count(a.owned) == 6
    assert b.beat().error == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_member_that_does_not_revoke_within_its_rebalance_timeout_is_fenced():
    harness = Harness()
    a, b = Client(harness, "a"), Client(harness, "b")
    a.join()
    b.join()
    harness.send(ConsumerHeartbeat("g", "a", a.epoch, owned=assignment(a.owned)))  # told to revoke three
    assert harness.group().members["a"].state is MemberState.UNREVOKED_PARTITIONS
    for _ in range(59):  # it keeps heartbeating, still owning all six
        harness.advance(5_000)
        harness.send(ConsumerHeartbeat("g", "a", 1, owned=assignment(a.owned)))
        b.beat()
    assert "a" in harness.group().members  # 295 s of its 300 s
    harness.advance(5_000)
    assert "a" not in harness.group().members
    b.beat()
    assert count(b.owned) == 6


def test_a_static_member_that_leaves_for_now_keeps_its_partitions_and_its_successor_takes_them_without_a_rebalance():
    harness = Harness()
    a, b = Client(harness, "a", instance_id="i-a"), Client(harness, "b")
    a.join()
    b.join()
    settle(a, b)
    owned = dict(a.owned)
    epoch = harness.group().group_epoch
    assert a.leave(-2).member_epoch == -2
    assert harness.group().members["a"].member_epoch == -2 and harness.group().group_epoch == epoch
    restarted = Client(harness, "a2", instance_id="i-a")
    answer = restarted.join()
    assert answer.error == ErrorCode.NONE and answer.assignment == assignment(owned)
    assert harness.group().group_epoch == epoch and set(harness.group().members) == {"a2", "b"}


def test_an_instance_id_held_by_a_live_member_is_unreleased_and_a_wrong_member_id_is_fenced():
    harness = Harness()
    Client(harness, "a", instance_id="i-a").join()
    assert harness.send(join("other", instance_id="i-a")).error == ErrorCode.UNRELEASED_INSTANCE_ID
    assert harness.send(ConsumerHeartbeat("g", "other", 1, instance_id="i-a")).error == ErrorCode.FENCED_INSTANCE_ID
    assert harness.send(ConsumerHeartbeat("g", "x", 1, instance_id="i-zz")).error == ErrorCode.UNKNOWN_MEMBER_ID


def test_changing_the_subscription_bumps_the_group_epoch_and_moves_the_member_to_its_new_topics():
    harness = Harness()
    a = Client(harness, "a")
    a.join()
    answer = harness.send(ConsumerHeartbeat("g", "a", a.epoch, subscribed_topic_names=("orders", "audit"),
                                            owned=assignment(a.owned)))
    assert answer.member_epoch == 2 and count(answer.assignment) == 8


def stored(harness: Harness) -> list:
    """The group documents the last operation wrote."""
    return [r.document for r in harness.results[-1].records]


def test_a_change_writes_the_group_document_and_a_heartbeat_that_changes_nothing_writes_nothing():
    harness = Harness()
    a = Client(harness, "a")
    a.join()
    (document,) = stored(harness)
    assert (document.group_epoch, document.members[0].member_id) == (1, "a")
    a.beat()
    assert stored(harness) == []
    Client(harness, "b").join()
    assert stored(harness)[0].group_epoch == 2
    a.leave()
    assert [m.member_id for m in stored(harness)[0].members] == ["b"]


def test_a_member_fenced_by_its_session_timer_is_written_out_of_the_document():
    harness = Harness(session_timeout_ms=45_000)
    Client(harness, "a").join()
    harness.advance(45_000)
    (document,) = [r.document for r in harness.results[-1].records]
    assert (document.members, document.state, document.group_epoch) == ((), "Empty", 2)


def test_a_regex_subscription_gets_every_topic_whose_whole_name_it_matches():
    harness = Harness(topics=(ORDERS, AUDIT, TopicInfo("orders-eu", "orders-eu-id", 2), TopicInfo("x-orders", "x-id", 1)))
    answer = harness.send(join("a", topics=(), regex="orders.*"))
    assert set(answer.assignment) == {ORDERS.topic_id, "orders-eu-id"}
    answer = harness.send(join("b", topics=("audit",), regex="(^orders)"))
    assert harness.group().members["b"].subscribed_topic_regex == "(^orders)"


def test_a_topic_created_later_that_the_regex_matches_is_assigned_at_the_next_heartbeat():
    harness = Harness()
    a = Client(harness, "a")
    harness.send(join("a", topics=(), regex="orders.*"))
    a.epoch, a.owned = 1, {ORDERS.topic_id: set(range(6))}
    use_topics(harness.core, TopicImage.of([ORDERS, AUDIT, TopicInfo("orders-new", "new-id", 3)]))
    answer = a.beat()
    assert answer.member_epoch == 2 and answer.assignment["new-id"] == frozenset({0, 1, 2})


def test_a_deleted_topic_is_revoked_and_a_grown_one_adds_its_new_partitions():
    harness = Harness()
    a = Client(harness, "a", topics=("orders", "audit"))
    a.join()
    use_topics(harness.core, TopicImage.of([TopicInfo("orders", ORDERS.topic_id, 8)]))
    revoke = a.beat()  # first the deleted topic's partitions go (the epoch waits for that) ...
    assert revoke.assignment == assignment({ORDERS.topic_id: range(6)}) and revoke.member_epoch == 1
    grow = a.beat()  # ... then the new partitions come, at the new epoch
    assert grow.assignment == assignment({ORDERS.topic_id: range(8)}) and grow.member_epoch == 2


def test_a_bad_regex_is_invalid_regular_expression_for_that_member_only():
    harness = Harness()
    a = Client(harness, "a")
    a.join()
    answer = harness.send(join("b", topics=(), regex="orders(("))
    assert answer.error == ErrorCode.INVALID_REGULAR_EXPRESSION and "missing )" in answer.error_message
    assert set(harness.group().members) == {"a"} and a.beat().error == ErrorCode.NONE


def test_describe_shows_epochs_the_assignor_and_each_members_current_and_target_assignment():
    harness = Harness()
    a, b = Client(harness, "a"), Client(harness, "b")
    a.join()
    b.join()
    a.beat()  # a: revoking three, b waiting for them
    (group, unknown) = describe(harness.core, ("g", "nobody"))
    assert (group.state, group.group_epoch, group.assignment_epoch, group.assignor) == ("Reconciling", 2, 2, "uniform")
    described_a, described_b = group.members
    assert described_a.assignment[0].name == "orders" and len(described_a.assignment[0].partitions) == 6
    assert len(described_a.target[0].partitions) == 3 and described_b.assignment == ()
    assert unknown.error == ErrorCode.GROUP_ID_NOT_FOUND


def test_a_heartbeat_that_says_nothing_new_keeps_the_session_and_a_topic_change_still_reaches_it():
    harness = Harness(session_timeout_ms=45_000)
    a = Client(harness, "a")
    a.join()
    for _ in range(12):  # 60 s of heartbeats that carry nothing, as clients send between changes
        harness.advance(5_000)
        answer = harness.send(ConsumerHeartbeat("g", "a", a.epoch))
        assert (answer.error, answer.member_epoch, answer.assignment) == (ErrorCode.NONE, 1, None)
    assert "a" in harness.group().members
    use_topics(harness.core, TopicImage.of([TopicInfo("orders", ORDERS.topic_id, 8)]))
    grown = harness.send(ConsumerHeartbeat("g", "a", a.epoch))
    assert grown.member_epoch == 2 and count(grown.assignment) == 8


def test_a_groups_own_timeouts_reach_its_members_at_their_next_heartbeat_and_other_groups_keep_the_brokers():
    harness = Harness(session_timeout_ms=45_000, heartbeat_interval_ms=5_000)
    a, other = Client(harness, "a"), Client(harness, "o", group="other")
    a.join()
    other.join()
    harness.core.group_timeouts["g"] = (10_000, 1_000)  # the group's stored GROUP configs
    assert a.beat().heartbeat_interval_ms == 1_000  # this heartbeat restarts the session on 10 s
    assert other.beat().heartbeat_interval_ms == 5_000
    harness.advance(10_001)  # both silent
    assert "a" not in harness.group().members
    assert "o" in harness.group("other").members
