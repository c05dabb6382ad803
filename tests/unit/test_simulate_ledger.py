"""The simulation's ledger: what the members' callbacks did to ownership, and what a rebalance cost."""

from __future__ import annotations

from groupctl.simulate.ledger import Ledger, Transition

A, B = 0, 1


def ledger_of_two(total: int = 4) -> Ledger:
    ledger = Ledger()
    ledger.total_partitions = total
    ledger.joined(A, "a", "UNSUBSCRIBED")
    ledger.joined(B, "b", "UNSUBSCRIBED")
    return ledger


def test_a_partitions_first_owner_is_not_a_move_and_nothing_released_is_unowned_time():
    ledger = ledger_of_two()
    ledger.assigned(A, [("t", 0), ("t", 1)], at_ms=100)
    assert ledger.moved == 0 and ledger.max_unowned_ms == 0
    assert ledger.unowned_now == 2  # two of four were never assigned


def test_a_partition_given_to_another_member_after_its_release_is_one_move_and_its_gap_is_measured():
    ledger = ledger_of_two()
    ledger.assigned(A, [("t", 0)], at_ms=100)
    ledger.released(A, [("t", 0)], at_ms=200)
    ledger.assigned(B, [("t", 0)], at_ms=450)
    assert ledger.moved == 1 and ledger.max_unowned_ms == 250 and ledger.overlaps == 0


def test_a_partition_coming_back_to_its_owner_is_not_a_move():
    ledger = ledger_of_two()
    ledger.assigned(A, [("t", 0)], at_ms=0)
    ledger.released(A, [("t", 0)], at_ms=10)
    ledger.assigned(A, [("t", 0)], at_ms=20)
    assert ledger.moved == 0 and ledger.max_unowned_ms == 10


def test_a_partition_assigned_while_another_member_holds_it_is_an_overlap():
    ledger = ledger_of_two()
    ledger.assigned(A, [("t", 0)], at_ms=0)
    ledger.assigned(B, [("t", 0)], at_ms=5)
    assert ledger.overlaps == 1


def test_a_release_by_a_member_that_does_not_hold_the_partition_changes_nothing():
    ledger = ledger_of_two()
    ledger.assigned(A, [("t", 0)], at_ms=0)
    ledger.released(B, [("t", 0)], at_ms=5)
    assert ledger.assignment() == {"a": [["t", 0]], "b": []}


def test_transitions_move_the_state_counts_and_reach_the_listener_as_json_lines():
    seen: list[Transition] = []
    ledger = Ledger(seen.append)
    ledger.joined(A, "a", "UNSUBSCRIBED")
    ledger.transition(A, "a", "UNSUBSCRIBED", "JOINING", 0, at_ms=1)
    ledger.transition(A, "a", "JOINING", "STABLE", 3, at_ms=7)
    assert ledger.state_counts() == {"STABLE": 1}
    assert seen[-1].to_json() == {"event": "transition", "member_id": "a", "from": "JOINING", "to": "STABLE",
                                  "epoch": 3, "at_ms": 7}


def test_a_churned_member_is_counted_once_in_its_replacements_state():
    ledger = ledger_of_two()
    ledger.transition(A, "a", "UNSUBSCRIBED", "STABLE", 1, at_ms=1)
    ledger.left(A)
    ledger.joined(A, "a2", "UNSUBSCRIBED")
    assert ledger.state_counts() == {"UNSUBSCRIBED": 2}
    assert set(ledger.assignment()) == {"a2", "b"}


def test_a_static_members_restart_resuming_its_partitions_is_not_a_move():
    ledger = Ledger()
    ledger.joined(A, "a", "UNSUBSCRIBED", identity="instance-0")
    ledger.assigned(A, [("t", 0)], at_ms=0)
    ledger.left(A)
    ledger.joined(B, "a-restarted", "UNSUBSCRIBED", identity="instance-0")
    ledger.assigned(B, [("t", 0)], at_ms=10)
    assert ledger.moved == 0
