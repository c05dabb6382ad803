"""Group-partition leadership through the metadata store: which node coordinates which groups.

Layout (under the chroot; docs/zookeeper-layout.md):
```
/coordinators/config                  {"version":1,"group_partitions":N}   written once, by the first node
/coordinators/partitions/<p>          {"version":1,"epoch":E,"node_id":N,"elected_at_ms":T}  the last election
/coordinators/partitions/<p>/leader   ephemeral {"node_id":N,"epoch":E}    present while N leads p
```

Election. A partition without a leader znode is claimed by its preferred node: among the live
nodes (`/brokers/ids`), the one with the highest rendezvous hash of (partition, node id). Every
node computes the same answer from the same view, and a node's death moves only its own
partitions. A claim is one transaction: set the partition znode at the version read (epoch + 1)
and create the ephemeral leader znode, so of racing claimants exactly one wins. If the preferred
node has not claimed an orphaned partition within CLAIM_GRACE_S (it may be stalled while its
session lives on), any live node claims it.

Fencing. The leader remembers the partition znode's version its claim produced. Every write of
a group's state carries `CheckVersion(partition znode, that version)` and `CheckVersion(leader
znode, 0)` (see `fence`): the first fails once anyone else has claimed the partition since, the
second once this node's session (and so its ephemeral znode) is gone. So a node that was paused
or cut off can never overwrite a newer leader's documents or offsets, even before it notices.

Stepping down, at once and without writing anything:
- on session loss (every partition);
- when the leader znode of a partition this node leads is deleted or names another epoch;
- after an event-loop stall longer than half the session timeout (SIGSTOP, swapping): the
  session may have expired meanwhile, and requests must not be served on that assumption before
  ZooKeeper says so. The check is a plain loop callback, which runs before any request read in
  the same wake-up is handled. The node then deletes its leader znodes (if its session still
  holds them) and claims afresh.
- when handing a partition back to its preferred node, once that node has been live (and we
  have led the partition) for `handback_delay_s` (a restarted node gets its share back, like
  Kafka's preferred leader election). The runtime first lets the partition's pending writes
  finish. A hand-back the preferred node does not take (it may not run the election) doubles
  the delay before the next one.
While the connection to ZooKeeper is down (kazoo's SUSPENDED) the node serves nothing and keeps
its fences: if the same session comes back it resumes, if the session is lost it steps down.

Repair. A leader znode that names this node while it holds no fence (a release that failed, a
claim whose answer was lost, a stale watch event) would keep its partition unserved: the node
deletes it, guarded by the election znode's version so never another node's, and claims again.
Releases are guarded the same way, and failed claims and releases are retried.

Deliberate differences from Apache Kafka: leadership lives in ZooKeeper znodes rather than in
`__consumer_offsets` partition leadership, and the partition log is not replicated (a group
partition moves with its leader; its state is in the store, so nothing is lost).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from dataclasses import dataclass
from typing import Awaitable, Callable, Optional

from groupctl.coordinator.placement import group_partition, partition_ranges
from groupctl.store.base import (
    BadVersion,
    CheckVersion,
    Create,
    Delete,
    MetadataStore,
    Node,
    NodeExists,
    NoNode,
    Op,
    SetData,
    StoreError,
)
from groupctl.layout.brokers import BrokerRegistration
from groupctl.layout.codec import LayoutError
from groupctl.layout.coordinators import ClusterConfig, PartitionElection, PartitionLeader
from groupctl.layout.paths import (
    BROKER_IDS,
    COORDINATOR_PARTITIONS,
    COORDINATORS,
    COORDINATORS_CONFIG,
    leader_path,
    partition_path,
)

log = logging.getLogger("groupctl.election")

CLAIM_GRACE_S = 2.0
TICK_S = 0.2
RETRY_S = 0.5  # a failed claim or release is tried again after this
MAX_HANDBACK_DELAY_S = 600.0


def preferred_node(partition: int, live: list[int] | set[int]) -> Optional[int]:
    """The live node with the highest rendezvous hash for `partition` (None: nobody is live)."""
    def weight(node_id: int) -> bytes:
        return hashlib.blake2b(f"{partition}:{node_id}".encode(), digest_size=8).digest()

    return max(live, key=weight, default=None)


def _decoded(codec, partition: int, node: Optional[Node]):
    """The document `codec` decodes from `node` (None: no node, or a malformed one, which the
    election treats as absent: a claim overwrites it)."""
    if node is None:
        return None
    try:
        return codec.decode(partition, node.data)
    except LayoutError as exc:
        log.warning("ignoring a malformed election znode: %s", exc)
        return None


class NotLeader(StoreError):
    """A write for a group whose partition this node does not lead (any more)."""


@dataclass(frozen=True)
class Leadership:
    node_id: int
    epoch: int



class Election:
    """This node's part in electing group-partition leaders; see the module docstring.

    `on_gained(partitions)` and `on_lost(partitions)` are called on the event loop, `on_lost`
    synchronously at the moment this node stops leading; `on_suspend(True/False)` when the
    connection to ZooKeeper drops and comes back; `settle()` is awaited before a partition is
    handed back (the runtime's pending writes finish under the old fence).
    """

    def __init__(self, store: MetadataStore, node_id: int, *, partitions: int, session_timeout_s: float,
                 handback_delay_s: float, now_ms: Callable[[], int],
                 on_gained: Callable[[set[int]], None], on_lost: Callable[[set[int]], None],
                 on_suspend: Callable[[bool], None], settle: Callable[[], Awaitable[None]]) -> None:
        self.store = store
        self.node_id = node_id
        self.partitions = partitions
        self.brokers: dict[int, Optional[BrokerRegistration]] = {}  # live node id -> its registration (None: unread)
        self.leaders: dict[int, Leadership] = {}  # partition -> its leader, per the leader znodes
        self._session_timeout_s = session_timeout_s
        self._handback_delay_s = handback_delay_s
        self._now_ms = now_ms
        self._on_gained = on_gained
        self._on_lost = on_lost
        self._on_suspend = on_suspend
        self._settle = settle
        self._handbacks: dict[int, int] = {}  # partition -> hand-backs its preferred node did not take
        self._gained_at: dict[int, float] = {}  # partition -> monotonic time of our latest claim
        self._fences: dict[int, tuple[int, int]] = {}  # partition -> (partition znode version, epoch)
        self._live_since: dict[int, float] = {}  # node id -> monotonic time first seen live
        self._unled_since: dict[int, float] = {}
        # Partitions whose leader watch has not delivered its first state yet: nothing is claimed
        # before every one has (a first "no leader" arriving after our claim would read as a loss).
        self._unprimed: set[int] = set()
        self._unsubscribe: list[Callable[[], None]] = []
        self._broker_watches: dict[int, Callable[[], None]] = {}  # node id -> unsubscribe
        self._dirty = False
        self._reconciling: Optional[asyncio.Task] = None
        self._wakeup: Optional[asyncio.TimerHandle] = None
        self._tick: Optional[asyncio.TimerHandle] = None
        self._last_tick = time.monotonic()
        self._closed = False

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Agree on the partition count, then watch the live nodes and every partition's leader."""
        for path in (COORDINATORS, COORDINATOR_PARTITIONS):
            try:
                await self.store.create(path, make_parents=True)
            except NodeExists:
                pass
        self.partitions = await self._agree_on_partitions()
        self._unprimed = set(range(self.partitions))
        self._unsubscribe.append(self.store.watch_children(BROKER_IDS, self._on_brokers))
        for partition in range(self.partitions):
            self._unsubscribe.append(self.store.watch(
                leader_path(partition), lambda node, p=partition: self._on_leader(p, node)))
        on_session_lost = getattr(self.store, "on_session_lost", None)
        if on_session_lost is not None:
            self._unsubscribe.append(on_session_lost(self._session_lost))
        on_connection_change = getattr(self.store, "on_connection_change", None)
        if on_connection_change is not None:
            self._unsubscribe.append(on_connection_change(self._connection_changed))
        self._schedule_tick()

    async def _agree_on_partitions(self) -> int:
        try:
            await self.store.create(COORDINATORS_CONFIG, ClusterConfig(self.partitions).encode())
            return self.partitions
        except NodeExists:
            pass
        node = await self.store.get(COORDINATORS_CONFIG)
        try:
            stored = ClusterConfig.decode(node.data if node is not None else None).group_partitions
        except LayoutError as exc:
            raise StoreError(str(exc)) from None
        if stored != self.partitions:
            log.warning("the cluster has %d group partitions (%s); ignoring --group-partitions %d",
                        stored, COORDINATORS_CONFIG, self.partitions)
        return stored

    async def close(self) -> None:
        """Stop taking part (the store's close ends the session and so our leadership)."""
        self._closed = True
        for unsubscribe in [*self._unsubscribe, *self._broker_watches.values()]:
            unsubscribe()
        for handle in (self._wakeup, self._tick):
            if handle is not None:
                handle.cancel()
        if self._reconciling is not None:
            self._reconciling.cancel()
            await asyncio.gather(self._reconciling, return_exceptions=True)

    # -- what the rest of the node asks ------------------------------------------------------

    def partition_of(self, group_id: str) -> int:
        return group_partition(group_id, self.partitions)

    def leader_of(self, group_id: str) -> Optional[int]:
        """The node leading the group's partition, if it is live (None: election pending)."""
        leader = self.leaders.get(self.partition_of(group_id))
        return leader.node_id if leader is not None and leader.node_id in self.brokers else None

    def led(self) -> set[int]:
        return set(self._fences)

    def fence(self, group_id: str) -> list[Op]:
        """The checks a write of the group's state must carry (NotLeader if we do not lead it)."""
        partition = self.partition_of(group_id)
        held = self._fences.get(partition)
        if held is None:
            raise NotLeader(f"node {self.node_id} does not lead group partition {partition}")
        return [CheckVersion(partition_path(partition), held[0]), CheckVersion(leader_path(partition), 0)]

    # -- watches -----------------------------------------------------------------------------

    def _on_brokers(self, children: list[str]) -> None:
        """The set of live nodes changed. Each live node's registration is followed by a data
        watch of its own, so an address is current even when a node re-registers faster than
        the children watch can tell (a delete and a create seen as one unchanged set)."""
        ids = {int(c) for c in children if c.lstrip("-").isdigit()}
        now = time.monotonic()
        for gone in set(self.brokers) - ids:
            del self.brokers[gone]
            self._live_since.pop(gone, None)
            self._broker_watches.pop(gone)()
        for new in ids - set(self.brokers):
            self._live_since.setdefault(new, now)
            self.brokers[new] = None
            self._broker_watches[new] = self.store.watch(
                f"{BROKER_IDS}/{new}", lambda node, node_id=new: self._on_broker(node_id, node))
        self._poke()

    def _on_broker(self, node_id: int, node: Optional[Node]) -> None:
        if node is not None and node_id in self.brokers:
            try:
                self.brokers[node_id] = BrokerRegistration.decode(node_id, node.data)
            except LayoutError as exc:
                log.warning("ignoring a malformed registration: %s", exc)
                self.brokers[node_id] = None

    def _on_leader(self, partition: int, node: Optional[Node]) -> None:
        self._unprimed.discard(partition)
        leader = _decoded(PartitionLeader, partition, node)
        if leader is None:
            self.leaders.pop(partition, None)
            self._unled_since.setdefault(partition, time.monotonic())
        else:
            self.leaders[partition] = Leadership(leader.node_id, leader.epoch)
            self._unled_since.pop(partition, None)
        held = self._fences.get(partition)
        leader = self.leaders.get(partition)
        if held is not None and (leader is None or leader != Leadership(self.node_id, held[1])):
            log.warning("lost group partition %d (leader now %s)", partition, leader)
            self._lose({partition})
        self._poke()

    def _session_lost(self) -> None:
        if self._fences:
            log.warning("ZooKeeper session lost: stepping down from %d group partition(s)", len(self._fences))
            self._lose(set(self._fences))
        self.leaders = {p: leader for p, leader in self.leaders.items() if leader.node_id != self.node_id}

    def _connection_changed(self, connected: bool) -> None:
        """While the connection to ZooKeeper is down the session may be expiring, and another
        node may take our partitions over: suspend serving (the fences stay) until ZooKeeper
        answers again with the same session; a lost session then steps down (`_session_lost`)."""
        if not connected and self._fences:
            log.warning("connection to ZooKeeper lost: suspending %d group partition(s)", len(self._fences))
        self._on_suspend(not connected)
        if connected:
            self._poke()

    def abdicate(self, partitions: set[int]) -> None:
        """Stop leading `partitions` now and release them, so that they are claimed again under a
        new epoch (the runtime calls this when a write failed: the store, not the core, is right)."""
        held = self._lose(partitions & set(self._fences))
        if held:
            asyncio.get_running_loop().create_task(self._release(held))

    def _lose(self, partitions: set[int]) -> dict[int, tuple[int, int]]:
        """Stop leading `partitions` (the runtime unloads them at once); returns the fences held."""
        held = {p: self._fences.pop(p) for p in partitions if p in self._fences}
        if partitions:
            self._on_lost(partitions)
        return held

    # -- stall detection ---------------------------------------------------------------------

    def _schedule_tick(self) -> None:
        self._last_tick = time.monotonic()
        self._tick = asyncio.get_running_loop().call_later(TICK_S, self._on_tick)

    def _on_tick(self) -> None:
        stalled = time.monotonic() - self._last_tick - TICK_S
        if stalled > max(1.0, self._session_timeout_s / 2) and self._fences:
            log.warning("the event loop stalled for %.1fs: stepping down from %d group partition(s) "
                        "until ZooKeeper confirms the session", stalled, len(self._fences))
            held = self._lose(set(self._fences))
            asyncio.get_running_loop().create_task(self._release(held))
        if not self._closed:
            self._schedule_tick()

    async def _release(self, held: dict[int, tuple[int, int]]) -> None:
        """Delete our leader znodes of the partitions in `held` (partition -> the fence we held),
        each only if no election happened since (so never another node's), letting the
        preferred node (maybe us again) claim them with a new epoch. A release that fails is
        retried by `_repair` from the next reconciliation."""
        for partition, (version, _) in held.items():
            try:
                await self.store.transaction([CheckVersion(partition_path(partition), version),
                                              Delete(leader_path(partition), 0)])
            except (NoNode, BadVersion):
                pass  # gone with our session, or someone else has claimed it since
            except StoreError as exc:  # unreachable or session gone: the rest would fail the same way
                log.warning("could not release group partition(s) %s (%s); will retry",
                            partition_ranges(held), exc)
                self._wake_in(RETRY_S)
                return

    async def _repair(self, partitions: list[int]) -> None:
        """Partitions whose leader znode names this node while it holds no fence (a release or a
        claim whose answer was lost, a stale watch event): release them if the election znode
        still names us at that epoch, so that they are claimed afresh instead of staying
        unserved behind our own znode."""
        held = {}
        for partition in partitions:
            current = await self.store.get(partition_path(partition))
            election = _decoded(PartitionElection, partition, current)
            leader = self.leaders.get(partition)
            if (election is not None and leader is not None and election.node_id == self.node_id
                    and election.epoch == leader.epoch and partition not in self._fences):
                held[partition] = (current.version, leader.epoch)
        if held:
            log.info("releasing group partition(s) %s that name this node without its leadership",
                     partition_ranges(held))
            await self._release(held)

    # -- reconciling -------------------------------------------------------------------------

    def _poke(self) -> None:
        if self._closed:
            return
        self._dirty = True
        if self._reconciling is None or self._reconciling.done():
            self._reconciling = asyncio.get_running_loop().create_task(self._reconcile())

    def _wake_in(self, seconds: float) -> None:
        if self._closed:
            return
        if self._wakeup is not None:
            self._wakeup.cancel()
        self._wakeup = asyncio.get_running_loop().call_later(max(seconds, 0.05), self._poke)

    async def _reconcile(self) -> None:
        while self._dirty and not self._closed:
            self._dirty = False
            try:
                await self._reconcile_once()
            except StoreError as exc:
                log.warning("group partition election: %s; retrying", exc)
                self._wake_in(RETRY_S)

    async def _reconcile_once(self) -> None:
        live = set(self.brokers)
        if self.node_id not in live or self._unprimed:
            return  # not registered (yet, or again after a session loss), or still learning who leads
        now = time.monotonic()
        next_check: Optional[float] = None
        claims, orphaned = [], []
        for partition in range(self.partitions):
            leader = self.leaders.get(partition)
            if leader is not None and leader.node_id in live:
                self._unled_since.pop(partition, None)
                if leader.node_id == self.node_id and partition not in self._fences:
                    orphaned.append(partition)
                elif leader.node_id == preferred_node(partition, live):
                    self._handbacks.pop(partition, None)  # a hand-back (if any) has worked
                continue
            preferred = preferred_node(partition, live)
            waited = now - self._unled_since.setdefault(partition, now)
            if preferred == self.node_id or waited >= CLAIM_GRACE_S:
                claims.append(partition)
            else:
                next_check = min(next_check or CLAIM_GRACE_S, CLAIM_GRACE_S - waited)
        if orphaned:
            await self._repair(orphaned)
        if claims:
            if not await self._claim(claims):
                next_check = min(next_check or RETRY_S, RETRY_S)
        handback = set()
        for partition in list(self._fences):
            preferred = preferred_node(partition, live)
            if preferred == self.node_id:
                continue
            delay = min(self._handback_delay_s * 2 ** self._handbacks.get(partition, 0), MAX_HANDBACK_DELAY_S)
            waited = now - max(self._live_since.get(preferred, now), self._gained_at.get(partition, 0.0))
            if waited >= delay:
                handback.add(partition)
            else:
                next_check = min(next_check or delay, delay - waited)
        if handback:
            await self._hand_back(handback)
        if next_check is not None:
            self._wake_in(next_check)

    async def _claim(self, partitions: list[int]) -> bool:
        """Claim `partitions`; False when some claim failed for another reason than losing the
        race (the caller tries again shortly)."""
        results = await asyncio.gather(*(self._claim_one(p) for p in partitions), return_exceptions=True)
        gained = set()
        settled = True
        for partition, result in zip(partitions, results):
            if isinstance(result, NodeExists):
                await self._learn_leader(partition)  # someone has it; maybe us, if a watch was stale
            elif isinstance(result, (BadVersion, NoNode)):
                pass  # lost the race; the watch tells us who won
            elif isinstance(result, BaseException):
                log.warning("claiming group partition %d failed: %s", partition, result)
                settled = False
            else:
                self._fences[partition] = result
                self._gained_at[partition] = time.monotonic()
                self.leaders[partition] = Leadership(self.node_id, result[1])
                self._unled_since.pop(partition, None)
                gained.add(partition)
        if gained:
            log.info("node %d now leads %d more group partition(s): %s", self.node_id, len(gained),
                     partition_ranges(gained))
            self._on_gained(gained)
        return settled

    async def _learn_leader(self, partition: int) -> None:
        node = await self.store.get(leader_path(partition))
        if node is not None:
            self._on_leader(partition, node)

    async def _claim_one(self, partition: int) -> tuple[int, int]:
        """Win the partition or raise: (the partition znode's new version, the new epoch)."""
        current = await self.store.get(partition_path(partition))
        previous = _decoded(PartitionElection, partition, current)
        epoch = (previous.epoch if previous is not None else 0) + 1
        record = PartitionElection(epoch=epoch, node_id=self.node_id, elected_at_ms=self._now_ms()).encode()
        leader = PartitionLeader(node_id=self.node_id, epoch=epoch).encode()
        first: Op = (Create(partition_path(partition), record) if current is None
                     else SetData(partition_path(partition), record, current.version))
        versions = await self.store.transaction([first, Create(leader_path(partition), leader, ephemeral=True)])
        return versions[0], epoch

    async def _hand_back(self, partitions: set[int]) -> None:
        """Give `partitions` to their preferred nodes. Each hand-back of a partition that its
        preferred node does not take (it may not run the election: an older groupctl) doubles
        the delay before the next one, up to MAX_HANDBACK_DELAY_S."""
        log.info("handing group partition(s) %s back to their preferred nodes", partition_ranges(partitions))
        for partition in partitions:
            self._handbacks[partition] = self._handbacks.get(partition, 0) + 1
        self._on_lost(partitions)  # no new writes for them from now on ...
        await self._settle()  # ... and the pending ones finish under our fence
        held = {p: self._fences.pop(p) for p in partitions if p in self._fences}
        await self._release(held)
