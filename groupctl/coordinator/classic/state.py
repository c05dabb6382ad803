"""The classic group's states and the only transitions allowed between them.

The legality table is Apache Kafka's (`ClassicGroupState`): each state lists the states it may be
entered from. `GroupState.check_transition` raises `IllegalStateTransition` for anything else;
the core treats that as a bug, never as a client error.

Loading a group from its stored document constructs it directly in Stable or Empty: that is not
a transition and is not checked against the table.
"""

from __future__ import annotations

from enum import Enum


class IllegalStateTransition(RuntimeError):
    """A transition the legality table forbids: a coordinator bug, raised loudly."""


class GroupState(Enum):
    """A classic group's state; each member's docstring says how the state answers each API."""

    def __new__(cls, value: str, doc: str) -> "GroupState":
        state = object.__new__(cls)
        state._value_ = value
        state.__doc__ = doc
        return state

    EMPTY = ("Empty", """
    No members (there may be offsets, and pending members that were told MEMBER_ID_REQUIRED).

    JoinGroup: a new member is accepted and the group starts an initial rebalance (with the
    initial rebalance delay); a known member id is UNKNOWN_MEMBER_ID.
    SyncGroup / Heartbeat / LeaveGroup: UNKNOWN_MEMBER_ID.
    OffsetCommit: simple commits (generation -1) only. OffsetFetch: allowed.
    OffsetDelete / DeleteGroups: allowed.
    """)

    PREPARING_REBALANCE = ("PreparingRebalance", """
    A join phase is open: JoinGroups are parked until every known member rejoined (and no
    pending member is outstanding) or the rebalance timeout passes.

    JoinGroup: parked. SyncGroup / Heartbeat: REBALANCE_IN_PROGRESS (for valid members).
    LeaveGroup: the member goes; the join phase may complete.
    OffsetCommit: accepted from members of the current (about to be previous) generation.
    OffsetDelete: NON_EMPTY_GROUP unless protocol type "consumer". DeleteGroups: NON_EMPTY_GROUP.
    """)

    COMPLETING_REBALANCE = ("CompletingRebalance", """
    The join phase completed with a new generation; waiting for the leader's assignment.

    JoinGroup: same metadata -> the current generation's answer again; changed metadata ->
    PreparingRebalance. SyncGroup: followers are parked, the leader's assignment makes the group
    Stable and answers everyone. Heartbeat: NONE (Kafka: members may heartbeat right after their
    JoinGroup response). LeaveGroup / session expiry -> PreparingRebalance.
    OffsetCommit: REBALANCE_IN_PROGRESS. DeleteGroups: NON_EMPTY_GROUP.
    """)

    STABLE = ("Stable", """
    Everyone has an assignment for the current generation.

    JoinGroup: the leader, or a member with changed metadata -> PreparingRebalance; a follower
    with the same metadata gets the current generation back; a static member's restart with the
    same protocol replaces its member id without a rebalance. SyncGroup: the current assignment.
    Heartbeat: NONE. LeaveGroup / session expiry -> PreparingRebalance.
    OffsetCommit: from members of the current generation. DeleteGroups: NON_EMPTY_GROUP.
    """)

    DEAD = ("Dead", """
    The group was deleted; it is removed from the coordinator right after the transition, so
    every later request finds no group (UNKNOWN_MEMBER_ID for member APIs, -1 offsets for
    OffsetFetch, GROUP_ID_NOT_FOUND for admin APIs, and a new JoinGroup creates a new group).""")

    def check_transition(self, target: "GroupState") -> None:
        """Raise `IllegalStateTransition` unless `self -> target` is in the legality table."""
        if self not in _PREDECESSORS[target]:
            raise IllegalStateTransition(f"illegal classic group transition {self.value} -> {target.value}")

    @property
    def predecessors(self) -> frozenset["GroupState"]:
        """The states this one may be entered from."""
        return _PREDECESSORS[self]


_PREDECESSORS: dict[GroupState, frozenset[GroupState]] = {
    GroupState.EMPTY: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.PREPARING_REBALANCE: frozenset(
        {GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY}
    ),
    GroupState.COMPLETING_REBALANCE: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.STABLE: frozenset({GroupState.COMPLETING_REBALANCE}),
    GroupState.DEAD: frozenset(GroupState),
}
