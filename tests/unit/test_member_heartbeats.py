"""Which heartbeat the member sends and when: full on a join and after any error, partial (only
what changed) otherwise, as Apache Kafka's HeartbeatState; at once when joining, acknowledging,
leaving or after a subscription change, else on the coordinator's interval; one in flight; the
backoff after errors; the coordinator found again after 15/16 or a lost request."""

from __future__ import annotations

from groupctl.coordinator.errors import ErrorCode
from groupctl.member import HeartbeatRequest, MemberState as S, partitions
from tests.unit.member_harness import T1, T2, error, member, ok, run_callbacks, stable


def test_a_subscribing_member_joins_at_once_with_a_full_heartbeat_at_epoch_0():
    m = member(instance_id="i-1", rack_id="rack-a", server_assignor="uniform", rebalance_timeout_ms=60_000)
    out = m.subscribe(0, ["t2", "t1", "t1"])
    assert out.state is S.JOINING and out.transitions == ((S.UNSUBSCRIBED, S.JOINING),)
    assert out.heartbeat == HeartbeatRequest("g", "m-1", 0, instance_id="i-1", rack_id="rack-a",
                                             rebalance_timeout_ms=60_000, subscribed_topic_names=("t1", "t2"),
                                             subscribed_topic_regex="", server_assignor="uniform",
                                             topic_partitions={})
    assert out.heartbeat.full


def test_a_regex_subscription_sends_the_regex_and_an_empty_list_of_names():
    out = member().subscribe(0, regex="^orders-.*")
    assert out.heartbeat.subscribed_topic_names == () and out.heartbeat.subscribed_topic_regex == "^orders-.*"


def test_a_stable_member_sends_only_the_ids_and_epoch_on_the_interval():
    m = stable({T1: [0]}, epoch=3)
    assert m.next_heartbeat_ms(0) == 5_000
    assert m.tick(4_999).heartbeat is None
    out = m.tick(5_000)
    assert out.heartbeat == HeartbeatRequest("g", "m-1", 3)
    assert not out.heartbeat.full
    assert out.next_heartbeat_ms is None  # one in flight: the next waits for the answer


def test_a_static_member_sends_its_instance_id_on_every_heartbeat():
    m = stable({T1: [0]}, instance_id="i-1")
    assert m.tick(5_000).heartbeat == HeartbeatRequest("g", "m-1", 1, instance_id="i-1")


def test_the_heartbeat_interval_comes_from_the_response():
    m = member()
    m.subscribe(0, ["t1"])
    out = m.heartbeat_response(10, ok(1, {T1: [0]}, interval=1_200))
    run_callbacks(m, out, 10)
    m.heartbeat_response(20, ok(1, interval=1_200))
    assert m.heartbeat_interval_ms == 1_200
    assert m.next_heartbeat_ms(20) == 20 + 1_200 - 10  # the timer runs from the acknowledgement sent at 10


def test_the_acknowledgement_carries_the_new_owned_partitions_once():
    m = stable({T1: [0]})
    m.tick(5_000)
    out = m.heartbeat_response(5_000, ok(2, {T1: [0, 1]}))
    ack = run_callbacks(m, out, 5_001)[-1].heartbeat
    assert ack is not None and ack.topic_partitions == partitions({T1: [0, 1]})
    assert ack.subscribed_topic_names is None and ack.rebalance_timeout_ms == -1  # partial
    m.heartbeat_response(5_002, ok(2))
    assert m.tick(10_001).heartbeat.topic_partitions is None


def test_a_subscription_change_sends_a_full_heartbeat_at_once():
    m = stable({T1: [0]})
    out = m.subscribe(100, ["t1", "t3"])
    assert out.heartbeat is not None and out.heartbeat.full
    assert out.heartbeat.subscribed_topic_names == ("t1", "t3")
    assert out.heartbeat.topic_partitions == partitions({T1: [0]}) and out.heartbeat.rebalance_timeout_ms == 300_000


def test_the_same_subscription_again_changes_nothing():
    m = stable({T1: [0]})
    assert m.subscribe(100, ["t2", "t1"]).heartbeat is None


def test_replacing_a_regex_with_names_sends_an_empty_regex_to_remove_it():
    m = member()
    m.subscribe(0, regex="^t.*")
    out = m.heartbeat_response(0, ok(1, {T1: [0]}))
    run_callbacks(m, out, 0)
    m.heartbeat_response(0, ok(1))
    beat = m.subscribe(10, ["t1"]).heartbeat
    assert beat.subscribed_topic_regex == "" and beat.subscribed_topic_names == ("t1",)


def test_after_an_error_the_next_heartbeat_is_full():
    m = stable({T1: [0]})
    m.tick(5_000)
    m.heartbeat_response(5_000, error(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS))
    out = m.tick(5_100)
    assert out.heartbeat is not None and out.heartbeat.full and out.heartbeat.member_epoch == 1
    assert out.heartbeat.topic_partitions == partitions({T1: [0]})


def test_coordinator_load_in_progress_is_retried_after_a_doubling_backoff():
    m = member(retry_backoff_ms=100, retry_backoff_max_ms=350)
    m.subscribe(0, ["t1"])
    waits = []
    now = 0
    for _ in range(4):
        out = m.heartbeat_response(now, error(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS))
        assert out.heartbeat is None and out.state is S.JOINING
        waits.append(out.next_heartbeat_ms - now)
        now = out.next_heartbeat_ms
        assert m.tick(now - 1).heartbeat is None
        assert m.tick(now).heartbeat.full
    assert waits == [100, 200, 350, 350]
    m.heartbeat_response(now, ok(1, {T1: [0]}))
    assert m._failures == 0


def test_not_coordinator_asks_to_find_the_coordinator_and_sends_at_once_when_found():
    for code in (ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE):
        m = stable({T1: [0]})
        m.tick(5_000)
        out = m.heartbeat_response(5_000, error(code))
        assert out.find_coordinator and out.heartbeat is None and out.next_heartbeat_ms is None
        assert m.tick(9_000).heartbeat is None
        found = m.coordinator_found(9_000)
        assert not found.find_coordinator
        assert found.heartbeat is not None and found.heartbeat.full


def test_a_lost_request_finds_the_coordinator_again_and_retries_after_the_backoff():
    m = stable({T1: [0]})
    m.tick(5_000)
    out = m.heartbeat_failed(5_500)
    assert out.find_coordinator and out.state is S.STABLE
    out = m.coordinator_found(5_550)
    assert out.heartbeat is None and out.next_heartbeat_ms == 5_600
    assert m.tick(5_600).heartbeat.full


def test_a_request_that_cannot_be_retried_is_fatal():
    m = stable({T1: [0]})
    m.tick(5_000)
    out = m.heartbeat_failed(5_500, retriable=False, message="authentication failed")
    assert out.state is S.FATAL and "authentication failed" in out.fatal.reason


def test_one_heartbeat_at_a_time_even_when_one_is_due_at_once():
    m = member()
    m.subscribe(0, ["t1"])
    assert m.subscribe(1, ["t1", "t2"]).heartbeat is None  # the join is still in flight
    assert m.tick(2).heartbeat is None


def test_an_answer_with_no_request_in_flight_is_a_driver_bug():
    m = member()
    try:
        m.heartbeat_response(0, ok(1))
    except RuntimeError:
        pass
    else:
        raise AssertionError("expected a RuntimeError")


def test_a_member_leaves_with_epoch_minus_1_and_nothing_else():
    m = stable({T1: [0]}, rack_id="r")
    out = m.unsubscribe(10)
    outputs = run_callbacks(m, out, 11)
    assert outputs[-1].heartbeat == HeartbeatRequest("g", "m-1", -1)
    assert outputs[-1].state is S.UNSUBSCRIBED


def test_a_static_member_leaves_with_epoch_minus_2_and_its_instance_id():
    m = stable({T1: [0]}, instance_id="i-1")
    outputs = run_callbacks(m, m.close(10), 11)
    assert outputs[-1].heartbeat == HeartbeatRequest("g", "m-1", -2, instance_id="i-1")


def test_a_static_member_closing_with_leave_group_leaves_with_epoch_minus_1_and_rejoins_static():
    m = stable({T1: [0]}, instance_id="i-1")
    outputs = run_callbacks(m, m.close(10, leave_group=True), 11)
    assert outputs[-1].heartbeat == HeartbeatRequest("g", "m-1", -1, instance_id="i-1")
    m.heartbeat_response(12, error(ErrorCode.UNKNOWN_MEMBER_ID))  # the leave's answer: ignored
    assert m.subscribe(20, [T1]).heartbeat.member_epoch == 0
    run_callbacks(m, m.heartbeat_response(21, ok(2, {T1: [0]})), 22)
    m.heartbeat_response(23, ok(2))
    outputs = run_callbacks(m, m.close(30), 31)
    assert outputs[-1].heartbeat.member_epoch == -2


def test_the_leave_goes_out_even_with_a_heartbeat_in_flight_and_its_answer_is_ignored():
    m = stable({T2: [1]})
    m.tick(5_000)
    outputs = run_callbacks(m, m.unsubscribe(5_001), 5_002)
    assert outputs[-1].heartbeat.member_epoch == -1 and m.in_flight == 2
    m.heartbeat_response(5_003, ok(1, {T1: [0]}))  # the interval heartbeat's answer: not in the group
    out = m.heartbeat_response(5_004, error(ErrorCode.UNKNOWN_MEMBER_ID))  # the leave's: ignored
    assert out.state is S.UNSUBSCRIBED and out.fatal is None and m.in_flight == 0


def test_a_leave_that_cannot_reach_a_coordinator_is_skipped():
    m = stable({T1: [0]})
    m.tick(5_000)
    m.heartbeat_failed(5_001)
    outputs = run_callbacks(m, m.unsubscribe(5_002), 5_003)
    assert outputs[-1].heartbeat is None and outputs[-1].state is S.UNSUBSCRIBED


def test_unsubscribed_and_fatal_members_are_quiet():
    m = member()
    out = m.tick(1_000_000)
    assert (out.heartbeat, out.next_heartbeat_ms, out.wake_at_ms, out.callbacks) == (None, None, None, ())
    m.subscribe(0, ["t1"])
    m.heartbeat_response(0, error(ErrorCode.GROUP_MAX_SIZE_REACHED))
    out = m.tick(1_000_000)
    assert (out.heartbeat, out.next_heartbeat_ms, out.wake_at_ms, out.callbacks) == (None, None, None, ())
