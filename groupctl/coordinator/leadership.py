"""Who leads which group partition: the election's rules, decided on a clock the caller hands in.

Sans-IO: `LeadershipPolicy` is told what ZooKeeper showed (live nodes, each partition's leader
znode, the claims this node won, session loss) with a monotonic `now_ms`, and answers what to do:
which partitions to claim, repair or hand back, which it has lost, and when to look again. The
asyncio shell (`groupctl.server.election`) does the watching and the writing; the rules and the
znodes are described in docs/zookeeper-layout.md and docs/operations.md.

Invariants:
- This node holds a fence for a partition only between a claim it won and the moment it steps
  down (`lose`); everything that takes the partition away returns the fences it held.
- Nothing is claimed before every partition's leader watch has reported once, nor while this node
  is not among the live nodes (a first "no leader" arriving after our claim would read as a loss).
- A partition without a live leader is claimed at once by its preferred node (highest rendezvous
  hash among the live nodes) and by any live node after `claim_grace_ms`.
- A led partition whose preferred node is another is handed back once that node has been live and
  we have led the partition for the hand-back delay; each hand-back its preferred node does not
  take doubles that delay, up to `max_handback_delay_ms`.
- An event loop that ran `stall_limit_ms` late may have outlived its session: step down from all.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Iterable, Optional


CLAIM_GRACE_MS = 2_000  # an orphaned partition's preferred node may be stalled: anyone claims it after this
TICK_MS = 200  # how often the stall check runs
RETRY_MS = 500  # a failed claim or release is tried again after this
MAX_HANDBACK_DELAY_MS = 600_000


def stall_limit_ms(session_timeout_ms: int) -> int:
    """How late the event loop may run before the session may have expired meanwhile: half the
    session timeout, at least a second."""
    return max(1_000, session_timeout_ms // 2)


def preferred_node(partition: int, live: Iterable[int]) -> Optional[int]:
    """The live node with the highest rendezvous hash for `partition` (None: nobody is live)."""
    def weight(node_id: int) -> bytes:
        return hashlib.blake2b(f"{partition}:{node_id}".encode(), digest_size=8).digest()

    return max(live, key=weight, default=None)


@dataclass(frozen=True)
class Leader:
    """A partition's leader, as its leader znode names it."""
    node_id: int
    epoch: int


@dataclass(frozen=True)
class Fence:
    """What this node's claim of a partition produced: the partition znode's version (every write
    of the partition's groups checks it) and the epoch."""
    version: int
    epoch: int


@dataclass(frozen=True)
class Plan:
    """What one reconciliation does: `repair` (our leader znode without our fence) before `claim`,
    then `hand_back`; look again after `wake_in_ms` (None: only when something changes)."""
    repair: list[int] = field(default_factory=list)
    claim: list[int] = field(default_factory=list)
    hand_back: set[int] = field(default_factory=set)
    wake_in_ms: Optional[int] = None


class LeadershipPolicy:
    """This node's view of the election and its decisions; see the module docstring."""

    def __init__(self, node_id: int, partitions: int, *, session_timeout_ms: int, handback_delay_ms: int,
                 now_ms: int, claim_grace_ms: int = CLAIM_GRACE_MS,
                 max_handback_delay_ms: int = MAX_HANDBACK_DELAY_MS, tick_ms: int = TICK_MS) -> None:
        self.node_id = node_id
        self.partitions = partitions
        self.claim_grace_ms = claim_grace_ms
        self.handback_delay_ms = handback_delay_ms
        self.max_handback_delay_ms = max_handback_delay_ms
        self.tick_ms = tick_ms
        self.stall_limit_ms = stall_limit_ms(session_timeout_ms)
        self.leaders: dict[int, Leader] = {}  # partition -> its leader, per the leader znodes
        self.live_since: dict[int, int] = {}  # live node id -> when first seen live
        self._fences: dict[int, Fence] = {}
        self._gained_at: dict[int, int] = {}  # partition -> our latest claim
        self._unled_since: dict[int, int] = {}
        self._handbacks: dict[int, int] = {}  # partition -> hand-backs its preferred node did not take
        self._unprimed = set(range(partitions))
        self._last_tick = now_ms

    # -- what the rest of the node asks ------------------------------------------------------

    def led(self) -> set[int]:
        return set(self._fences)

    def fence(self, partition: int) -> Optional[Fence]:
        return self._fences.get(partition)

    def live_leader(self, partition: int) -> Optional[int]:
        """The node leading `partition` if it is live (None: an election is pending)."""
        leader = self.leaders.get(partition)
        return leader.node_id if leader is not None and leader.node_id in self.live_since else None

    def settled(self) -> bool:
        """Every partition has a leader (as far as the watches tell)."""
        return all(p in self.leaders for p in range(self.partitions))

    # -- what ZooKeeper showed ---------------------------------------------------------------

    def resize(self, partitions: int) -> None:
        """The cluster's partition count, agreed before any watch starts."""
        self.partitions = partitions
        self._unprimed = set(range(partitions))

    def nodes_live(self, live: set[int], now_ms: int) -> None:
        """The registered nodes are now `live`."""
        for gone in set(self.live_since) - live:
            del self.live_since[gone]
        for new in live - set(self.live_since):
            self.live_since[new] = now_ms

    def leader_seen(self, partition: int, leader: Optional[Leader], now_ms: int) -> dict[int, Fence]:
        """The partition's leader znode now names `leader` (None: no leader znode, or a malformed
        one). Returns the fence lost if it no longer names our claim."""
        self._unprimed.discard(partition)
        if leader is None:
            self.leaders.pop(partition, None)
            self._unled_since.setdefault(partition, now_ms)
        else:
            self.leaders[partition] = leader
            self._unled_since.pop(partition, None)
        held = self._fences.get(partition)
        if held is not None and leader != Leader(self.node_id, held.epoch):
            return self.lose({partition})
        return {}

    def claimed(self, partition: int, fence: Fence, now_ms: int) -> None:
        """Our claim of `partition` won."""
        self._fences[partition] = fence
        self._gained_at[partition] = now_ms
        self.leaders[partition] = Leader(self.node_id, fence.epoch)
        self._unled_since.pop(partition, None)

    def session_lost(self) -> dict[int, Fence]:
        """The ZooKeeper session expired, and with it our leader znodes: step down from all."""
        self.leaders = {p: leader for p, leader in self.leaders.items() if leader.node_id != self.node_id}
        return self.lose(set(self._fences))

    def lose(self, partitions: set[int]) -> dict[int, Fence]:
        """Stop leading `partitions`; returns the fences held (to release their leader znodes)."""
        return {p: self._fences.pop(p) for p in sorted(partitions) if p in self._fences}

    def ticked(self, now_ms: int) -> dict[int, Fence]:
        """The periodic tick ran at `now_ms`, `tick_ms` after the previous one was due: after a
        stall past `stall_limit_ms`, every fence given up (the caller releases them)."""
        late = now_ms - self._last_tick - self.tick_ms
        self._last_tick = now_ms
        return self.lose(set(self._fences)) if late > self.stall_limit_ms else {}

    def should_repair(self, partition: int, election: Optional[Leader]) -> bool:
        """Whether our leader znode of `partition` (`election`: the partition znode's last election)
        is stale: it names this node at the epoch we were elected, yet we hold no fence, so the
        znode would keep the partition unserved. Deleting it is safe (guarded by that election)."""
        leader = self.leaders.get(partition)
        return (election is not None and leader is not None and election.node_id == self.node_id
                and election.epoch == leader.epoch and partition not in self._fences)

    # -- deciding ----------------------------------------------------------------------------

    def plan(self, now_ms: int) -> Plan:
        """What to do now; a hand-back it decides counts as tried."""
        live = set(self.live_since)
        if self.node_id not in live or self._unprimed:
            return Plan()
        waits: list[int] = []
        repair, claim = [], []
        for partition in range(self.partitions):
            leader = self.leaders.get(partition)
            preferred = preferred_node(partition, live)
            if leader is not None and leader.node_id in live:
                self._unled_since.pop(partition, None)
                if leader.node_id == self.node_id and partition not in self._fences:
                    repair.append(partition)
                elif leader.node_id == preferred:
                    self._handbacks.pop(partition, None)  # a hand-back (if any) has worked
                continue
            waited = now_ms - self._unled_since.setdefault(partition, now_ms)
            if preferred == self.node_id or waited >= self.claim_grace_ms:
                claim.append(partition)
            else:
                waits.append(self.claim_grace_ms - waited)
        hand_back = set()
        for partition in self._fences:
            preferred = preferred_node(partition, live)
            if preferred == self.node_id:
                continue
            delay = self.handback_delay(partition)
            waited = now_ms - max(self.live_since[preferred], self._gained_at[partition])
            if waited >= delay:
                hand_back.add(partition)
                self._handbacks[partition] = self._handbacks.get(partition, 0) + 1
            else:
                waits.append(delay - waited)
        return Plan(repair, claim, hand_back, min(waits, default=None))

    def handback_delay(self, partition: int) -> int:
        """How long the preferred node must have been live before `partition` goes back to it."""
        tries = self._handbacks.get(partition, 0)
        return min(self.handback_delay_ms * 2 ** tries, self.max_handback_delay_ms)
