"""The member's states and the table of legal transitions (Apache Kafka's `MemberState`).

Invariants:
- A member is in exactly one state; `check_transition` is the only gate between two states and
  raises `IllegalTransition` for a move the table does not list. An illegal move is a bug in the
  member (or its driver), never a peer's doing: whatever the coordinator answers, the machine
  picks a legal move or ignores the answer.
- Staying in the same state is not a transition (as in AK's `transitionTo`), so it is always allowed.

Deliberate difference from Apache Kafka: STALE -> UNSUBSCRIBED is legal. AK leaves a stale member
STALE when the application unsubscribes (the consumer is about to close anyway); here the member
has already sent its leave heartbeat, so unsubscribing from STALE simply ends in UNSUBSCRIBED.
"""

from __future__ import annotations

from enum import Enum


class MemberState(Enum):
    UNSUBSCRIBED = "UNSUBSCRIBED"
    """No topics and no regex: not in a group, sends nothing."""
    JOINING = "JOINING"
    """Subscribed; sends full heartbeats with epoch 0 (at once, then after each failure's backoff)
    until a response gives it an epoch and an assignment."""
    RECONCILING = "RECONCILING"
    """A target assignment differs from what the member acknowledged: revoke, then assign, through
    the application's callbacks; heartbeats continue on the interval meanwhile."""
    ACKNOWLEDGING = "ACKNOWLEDGING"
    """The callbacks are done: the next heartbeat goes out at once carrying the new owned
    partitions, and sending it ends this state (STABLE, or RECONCILING if a newer target waits)."""
    STABLE = "STABLE"
    """In the group with everything reconciled: heartbeats on the interval only."""
    FENCED = "FENCED"
    """The coordinator said 25 or 110: epoch 0, onLost for everything held, then JOINING with the
    same member id. Sends nothing meanwhile."""
    PREPARE_LEAVING = "PREPARE_LEAVING"
    """unsubscribe/close (or an expired poll timer, briefly): the release callback runs; heartbeats
    continue on the interval."""
    LEAVING = "LEAVING"
    """Released: the next heartbeat, at once, is the leave (epoch -1, or -2 for a static member)."""
    STALE = "STALE"
    """The application did not poll within max.poll.interval.ms: the member left the group and
    releases its partitions as lost; it rejoins on the next poll."""
    FATAL = "FATAL"
    """An unrecoverable error: terminal and quiet; the reason is kept."""


_S = MemberState

# Each state with the states it may be entered from (AK's previousValidStates, plus STALE ->
# UNSUBSCRIBED: see the module docstring).
PREVIOUS_VALID_STATES: dict[MemberState, frozenset[MemberState]] = {
    _S.STABLE: frozenset({_S.JOINING, _S.ACKNOWLEDGING, _S.RECONCILING}),
    _S.RECONCILING: frozenset({_S.STABLE, _S.JOINING, _S.ACKNOWLEDGING, _S.RECONCILING}),
    _S.ACKNOWLEDGING: frozenset({_S.RECONCILING}),
    _S.FATAL: frozenset({_S.JOINING, _S.STABLE, _S.RECONCILING, _S.ACKNOWLEDGING, _S.PREPARE_LEAVING,
                         _S.LEAVING, _S.UNSUBSCRIBED}),
    _S.FENCED: frozenset({_S.JOINING, _S.STABLE, _S.RECONCILING, _S.ACKNOWLEDGING, _S.PREPARE_LEAVING,
                          _S.LEAVING}),
    _S.JOINING: frozenset({_S.FENCED, _S.UNSUBSCRIBED, _S.STALE}),
    _S.PREPARE_LEAVING: frozenset({_S.JOINING, _S.STABLE, _S.RECONCILING, _S.ACKNOWLEDGING,
                                   _S.UNSUBSCRIBED}),
    _S.LEAVING: frozenset({_S.PREPARE_LEAVING}),
    _S.UNSUBSCRIBED: frozenset({_S.PREPARE_LEAVING, _S.LEAVING, _S.FENCED, _S.STALE}),
    _S.STALE: frozenset({_S.LEAVING}),
}

LEGAL_TRANSITIONS: frozenset[tuple[MemberState, MemberState]] = frozenset(
    (before, after) for after, befores in PREVIOUS_VALID_STATES.items() for before in befores)

# States in which a new target assignment is taken in (AK: canHandleNewAssignment).
CAN_HANDLE_NEW_ASSIGNMENT = PREVIOUS_VALID_STATES[_S.RECONCILING]

# States in which the member is not in the group from its own point of view: responses to
# requests sent earlier are ignored, and nothing is sent (AK: isNotInGroup / shouldSkipHeartbeat).
NOT_IN_GROUP = frozenset({_S.UNSUBSCRIBED, _S.FENCED, _S.FATAL, _S.STALE})

# States in which a heartbeat goes out at once rather than on the interval (AK: shouldHeartbeatNow).
HEARTBEAT_NOW = frozenset({_S.JOINING, _S.ACKNOWLEDGING, _S.LEAVING})


class IllegalTransition(RuntimeError):
    """A move the legality table does not allow: a bug in the member or its driver."""


def is_legal(before: MemberState, after: MemberState) -> bool:
    return before is after or (before, after) in LEGAL_TRANSITIONS


def check_transition(before: MemberState, after: MemberState) -> None:
    if not is_legal(before, after):
        raise IllegalTransition(f"invalid member state transition from {before.name} to {after.name}")
