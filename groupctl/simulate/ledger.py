"""What the simulated members did, as they report it: state changes, the partitions each one holds,
and what a rebalance cost (partitions moved between members, how long a released partition stayed
unowned, heartbeats sent).

Members are known by their `key` (unique per simulated member: a churned member's replacement gets
a new one); events name their current member id. A static member's replacement keeps its
`identity` (its instance id): handing partitions from a static member to its own restart is not a
move, as the restarted process resumes them. Ownership is what the members' callbacks did: a partition is
owned from the ASSIGN (or SyncGroup) that gave it to a member until the REVOKE or LOST that took it
away.

Invariants:
- Each partition has at most one owner here; an assignment to a member while another member still
  holds the partition is counted in `overlaps`. Without fencing a correct coordinator never causes
  one; a fenced member may still hold partitions (until its LOST callback runs) that the coordinator
  has already given to others, as KIP-848 allows.
- `moved` counts assignments of a partition to a member whose identity differs from its previous
  owner's; a partition's first owner is not a move.
- An unowned interval starts when an owner releases a partition and ends when a member takes it;
  `max_unowned_ms` is the longest that ended (the pause a rebalance caused), and `unowned_now`
  counts partitions nobody here holds (never assigned included).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Optional

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class Transition:
    member_id: str
    from_state: str
    to_state: str
    epoch: int
    at_ms: int

    def to_json(self) -> dict:
        return {"event": "transition", "member_id": self.member_id, "from": self.from_state,
                "to": self.to_state, "epoch": self.epoch, "at_ms": self.at_ms}


class Ledger:
    def __init__(self, on_transition: Optional[Callable[[Transition], None]] = None) -> None:
        self.on_transition = on_transition
        self.states: Counter[str] = Counter()
        self.state_of: dict[int, str] = {}
        self.epoch_of: dict[int, int] = {}
        self.member_id_of: dict[int, str] = {}
        self.owner: dict[TopicPartition, int] = {}
        self.heartbeats = 0
        self.commits = Counter()  # "ok" / "failed"
        self.fatal: Counter[str] = Counter()  # why members went FATAL -> how many
        self.moved = 0
        self.overlaps = 0
        self.max_unowned_ms = 0
        self.total_partitions = 0
        self.transitions = 0
        self._identity: dict[int, object] = {}
        self._previous_owner: dict[TopicPartition, object] = {}  # the identity of the last owner
        self._released_at: dict[TopicPartition, int] = {}

    # -- what the members report -------------------------------------------------------------

    def joined(self, key: int, member_id: str, state: str, identity: object = None) -> None:
        """A member started in `state`; `identity` (default: the key) is what a restart keeps."""
        self._count_out(key)
        self._identity[key] = key if identity is None else identity
        self.state_of[key] = state
        self.states[state] += 1
        self.member_id_of[key] = member_id
        self.epoch_of[key] = 0

    def transition(self, key: int, member_id: str, from_state: str, to_state: str, epoch: int, at_ms: int) -> None:
        self.member_id_of[key] = member_id
        self.epoch_of[key] = epoch
        self.states[self.state_of[key]] -= 1
        self.state_of[key] = to_state
        self.states[to_state] += 1
        self.transitions += 1
        if self.on_transition is not None:
            self.on_transition(Transition(member_id, from_state, to_state, epoch, at_ms))

    def epoch(self, key: int, epoch: int) -> None:
        self.epoch_of[key] = epoch

    def assigned(self, key: int, partitions: Iterable[TopicPartition], at_ms: int) -> None:
        for tp in partitions:
            holder = self.owner.get(tp)
            if holder is not None and holder != key:
                self.overlaps += 1
            identity = self._identity.get(key, key)
            previous = self._previous_owner.get(tp)
            if previous is not None and previous != identity:
                self.moved += 1
            released = self._released_at.pop(tp, None)
            if released is not None:
                self.max_unowned_ms = max(self.max_unowned_ms, at_ms - released)
            self.owner[tp] = key
            self._previous_owner[tp] = identity

    def released(self, key: int, partitions: Iterable[TopicPartition], at_ms: int) -> None:
        for tp in partitions:
            if self.owner.get(tp) == key:
                del self.owner[tp]
                self._released_at[tp] = at_ms

    def left(self, key: int) -> None:
        """A member is gone for good (churned out and replaced, or stopped)."""
        self._count_out(key)
        self.state_of.pop(key, None)
        self._identity.pop(key, None)

    def _count_out(self, key: int) -> None:
        state = self.state_of.get(key)
        if state is not None:
            self.states[state] -= 1

    # -- views ---------------------------------------------------------------------------------

    @property
    def unowned_now(self) -> int:
        return max(0, self.total_partitions - len(self.owner))

    def assignment(self) -> dict[str, list[list]]:
        """member id -> [[topic, partition], ...] of every member, sorted."""
        result: dict[str, list[list]] = {self.member_id_of[k]: [] for k in self.state_of}
        for (topic, partition), key in sorted(self.owner.items()):
            result.setdefault(self.member_id_of[key], []).append([topic, partition])
        return result

    def state_counts(self) -> dict[str, int]:
        return {state: n for state, n in sorted(self.states.items()) if n > 0}
