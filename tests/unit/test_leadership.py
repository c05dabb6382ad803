"""The election's rules on a manual clock: who claims a partition and when, hand-backs and their
back-off, stepping down (a leader znode that changed, session loss, an event-loop stall) and the
repair of our own stale leader znode. The ZooKeeper side is in tests/server/test_election.py."""

from __future__ import annotations

from groupctl.coordinator.leadership import Fence, Leader, LeadershipPolicy, Plan, preferred_node, stall_limit_ms

GRACE_MS = 2_000
HANDBACK_MS = 1_000
MAX_HANDBACK_MS = 5_000
TICK_MS = 200
SESSION_MS = 2_000
STALL_MS = 1_000  # half the session timeout
PARTITIONS = 8


def policy(node_id: int = 0, *, live=(0,), now_ms: int = 0, primed: bool = True) -> LeadershipPolicy:
    """A node's policy that has seen `live` and, when `primed`, no leader for any partition."""
    election = LeadershipPolicy(node_id, PARTITIONS, session_timeout_ms=SESSION_MS, handback_delay_ms=HANDBACK_MS,
                                now_ms=now_ms, claim_grace_ms=GRACE_MS, max_handback_delay_ms=MAX_HANDBACK_MS,
                                tick_ms=TICK_MS)
    election.nodes_live(set(live), now_ms)
    if primed:
        for partition in range(PARTITIONS):
            election.leader_seen(partition, None, now_ms)
    return election


def preferred_by(node_id: int, live) -> list[int]:
    return [p for p in range(PARTITIONS) if preferred_node(p, live) == node_id]


def win(election: LeadershipPolicy, partitions, now_ms: int, epoch: int = 1) -> None:
    for partition in partitions:
        election.claimed(partition, Fence(version=epoch, epoch=epoch), now_ms)


def test_the_preferred_node_of_every_partition_is_the_same_on_every_node_and_a_leaving_node_moves_only_its_own():
    live = {0, 1, 2}
    before = {p: preferred_node(p, live) for p in range(200)}
    after = {p: preferred_node(p, live - {2}) for p in range(200)}
    assert {p for p in before if before[p] != after[p]} == {p for p in before if before[p] == 2}
    assert preferred_node(0, set()) is None


def test_nothing_is_claimed_before_every_leader_watch_has_reported():
    election = policy(primed=False)
    for partition in range(PARTITIONS - 1):
        election.leader_seen(partition, None, 0)
    assert election.plan(0) == Plan()
    election.leader_seen(PARTITIONS - 1, None, 0)
    assert election.plan(0).claim == list(range(PARTITIONS))


def test_nothing_is_claimed_while_this_node_is_not_registered():
    election = policy(node_id=0, live=(1,))
    assert election.plan(10_000) == Plan()


def test_a_node_claims_the_unled_partitions_it_prefers_at_once_and_the_others_after_the_grace():
    election = policy(node_id=0, live=(0, 1))
    mine, theirs = preferred_by(0, {0, 1}), preferred_by(1, {0, 1})
    assert mine and theirs
    first = election.plan(0)
    assert first.claim == mine
    assert first.wake_in_ms == GRACE_MS
    win(election, mine, 0)
    assert election.plan(GRACE_MS - 1).claim == []
    assert election.plan(GRACE_MS).claim == theirs


def test_the_grace_counts_from_when_the_partition_lost_its_leader():
    election = policy(node_id=0, live=(0, 1))
    (theirs, *_) = preferred_by(1, {0, 1})
    election.leader_seen(theirs, Leader(1, 3), 0)
    assert theirs not in election.plan(5_000).claim  # led by a live node
    election.leader_seen(theirs, None, 6_000)
    assert election.plan(6_000 + GRACE_MS - 1).wake_in_ms == 1
    assert theirs in election.plan(6_000 + GRACE_MS).claim


def test_a_partition_led_by_a_node_that_is_no_longer_live_is_claimed_like_an_unled_one():
    election = policy(node_id=0, live=(0, 1))
    for partition in range(PARTITIONS):
        election.leader_seen(partition, Leader(1, 1), 0)
    assert election.plan(0).claim == []
    election.nodes_live({0}, 100)
    assert election.plan(100).claim == list(range(PARTITIONS))
    assert election.live_leader(0) is None


def test_a_won_claim_holds_the_fence_that_every_write_of_the_partition_carries():
    election = policy()
    election.claimed(3, Fence(version=7, epoch=4), 0)
    assert election.fence(3) == Fence(7, 4)
    assert election.led() == {3}
    assert election.leaders[3] == Leader(0, 4)
    assert election.live_leader(3) == 0


def test_a_leader_znode_that_names_another_epoch_or_node_takes_the_partition_away():
    election = policy()
    win(election, [1, 2], 0, epoch=5)
    assert election.leader_seen(1, Leader(0, 5), 10) == {}  # our own claim, seen by the watch
    assert election.leader_seen(1, Leader(3, 6), 20) == {1: Fence(5, 5)}
    assert election.leader_seen(2, None, 30) == {2: Fence(5, 5)}
    assert election.led() == set()


def test_a_session_loss_steps_down_from_every_partition_and_forgets_our_leader_znodes():
    election = policy(live=(0, 1))
    win(election, [0, 1], 0)
    election.leader_seen(2, Leader(1, 1), 0)
    assert set(election.session_lost()) == {0, 1}
    assert election.led() == set()
    assert election.leaders == {2: Leader(1, 1)}


def test_an_event_loop_stall_past_the_limit_steps_down_from_every_partition():
    election = policy(now_ms=0)
    win(election, [0, 5], 0)
    assert election.ticked(TICK_MS) == {}
    assert election.ticked(TICK_MS + TICK_MS + STALL_MS) == {}  # late by exactly the limit
    stalled_at = 2 * TICK_MS + STALL_MS + TICK_MS + STALL_MS + 1
    assert set(election.ticked(stalled_at)) == {0, 5}
    assert election.led() == set()


def test_a_stall_with_no_partition_led_gives_nothing_up():
    assert policy().ticked(60_000) == {}


def test_our_own_leader_znode_without_our_fence_is_repaired_only_while_the_election_names_us():
    election = policy(live=(0,))
    election.leader_seen(4, Leader(0, 9), 0)  # a claim whose answer was lost, say
    assert election.plan(0).repair == [4]
    assert election.should_repair(4, Leader(0, 9))
    assert not election.should_repair(4, Leader(0, 8))  # an older election: not ours to delete
    assert not election.should_repair(4, Leader(2, 9))
    assert not election.should_repair(4, None)
    win(election, [4], 0, epoch=9)
    assert not election.should_repair(4, Leader(0, 9))


def test_a_partition_goes_back_to_its_preferred_node_once_it_has_been_live_for_the_delay():
    election = policy(node_id=0, live=(0,))
    win(election, range(PARTITIONS), 0)
    theirs = set(preferred_by(1, {0, 1}))
    election.nodes_live({0, 1}, 10_000)
    waiting = election.plan(10_000)
    assert waiting.hand_back == set() and waiting.wake_in_ms == HANDBACK_MS
    assert election.plan(10_000 + HANDBACK_MS).hand_back == theirs


def test_the_hand_back_delay_counts_from_our_latest_claim_when_that_is_later():
    election = policy(node_id=0, live=(0, 1))
    (theirs, *_) = preferred_by(1, {0, 1})
    win(election, [theirs], 5_000)
    assert election.plan(5_000 + HANDBACK_MS - 1).hand_back == set()
    assert election.plan(5_000 + HANDBACK_MS).hand_back == {theirs}


def test_each_hand_back_the_preferred_node_does_not_take_doubles_the_delay_up_to_the_maximum():
    election = policy(node_id=0, live=(0, 1))
    (theirs, *_) = preferred_by(1, {0, 1})
    now, delays = 0, []
    for _ in range(6):  # we keep winning it back after the grace, as if node 1 never claimed
        win(election, [theirs], now)
        delay = election.handback_delay(theirs)
        assert election.plan(now + delay - 1).hand_back == set()
        assert election.plan(now + delay).hand_back == {theirs}
        election.lose({theirs})
        delays.append(delay)
        now += delay + GRACE_MS
    assert delays == [1_000, 2_000, 4_000, 5_000, 5_000, 5_000]


def test_a_hand_back_that_worked_resets_the_delay():
    election = policy(node_id=0, live=(0, 1))
    (theirs, *_) = preferred_by(1, {0, 1})
    win(election, [theirs], 0)
    assert election.plan(HANDBACK_MS).hand_back == {theirs}
    election.lose({theirs})
    assert election.handback_delay(theirs) == 2 * HANDBACK_MS
    election.leader_seen(theirs, Leader(1, 2), HANDBACK_MS + 10)
    election.plan(HANDBACK_MS + 10)
    assert election.handback_delay(theirs) == HANDBACK_MS


def test_a_node_that_is_the_preferred_one_keeps_its_partitions():
    election = policy(node_id=0, live=(0, 1))
    mine = preferred_by(0, {0, 1})
    win(election, mine, 0)
    assert election.plan(1_000_000).hand_back == set()


def test_the_stall_limit_is_half_the_session_timeout_and_at_least_a_second():
    assert (stall_limit_ms(10_000), stall_limit_ms(6_000), stall_limit_ms(1_000)) == (5_000, 3_000, 1_000)
