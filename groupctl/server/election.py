"""Group-partition leadership through the metadata store: the asyncio shell of the election.

The rules are the sans-IO `groupctl.coordinator.leadership.LeadershipPolicy`, on the clock this
shell hands it; this module watches the store, tells the policy what it saw and does the writes
it decides. Znodes: docs/zookeeper-layout.md; a cluster's behaviour: docs/operations.md.

Invariants:
- A claim is one transaction, so of racing claimants exactly one wins: the partition znode set
  (or created) at the version read with epoch + 1, and its ephemeral `leader` child created.
- Every write of a group's state carries `fence`: CheckVersion(partition znode, our claim's
  version), failing once anyone has claimed since, and CheckVersion(leader znode, 0), failing once
  our session is gone; so a paused or cut-off node never overwrites a newer leader's documents.
- Stepping down is immediate and writes nothing: on session loss, a change of a leader znode we
  hold, an event-loop stall (checked before any request read in the same wake-up is served), and
  for a hand-back (whose release waits for the runtime's pending writes, under the old fence).
  Our leader znodes are then released, each only at the partition znode's version we hold, so
  never another node's; failed claims and releases are retried.
- With the connection down the node serves nothing but keeps its fences (the session may come back).
- Deliberate differences from Apache Kafka: leadership lives in znodes, not in `__consumer_offsets`
  partition leadership, and the partition log is not replicated (group state is in the store).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Awaitable, Callable, Optional

from groupctl.coordinator.leadership import RETRY_MS, TICK_MS, Fence, Leader, LeadershipPolicy
from groupctl.coordinator.placement import group_partition, partition_ranges
from groupctl.layout.brokers import BrokerRegistration, node_id_of
from groupctl.layout.codec import LayoutError
from groupctl.layout.coordinators import ClusterConfig, PartitionElection, PartitionLeader
from groupctl.layout.paths import (
    BROKER_IDS,
    COORDINATOR_PARTITIONS,
    COORDINATORS,
    COORDINATORS_CONFIG,
    broker_path,
    leader_path,
    partition_path,
)
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

log = logging.getLogger("groupctl.election")



def monotonic_ms() -> int:
    return int(time.monotonic() * 1000)


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


class Election:
    """This node's part in electing group-partition leaders; see the module docstring.

    `on_gained(partitions)` and `on_lost(partitions)` are called on the event loop, `on_lost`
    synchronously at the moment this node stops leading; `on_suspend(True/False)` when the
    connection to ZooKeeper drops and comes back; `settle()` is awaited before a partition is
    handed back (the runtime's pending writes finish under the old fence). `clock` is monotonic
    milliseconds: every rule is decided on it.
    """

    def __init__(self, store: MetadataStore, node_id: int, *, partitions: int, session_timeout_s: float,
                 handback_delay_s: float, now_ms: Callable[[], int],
                 on_gained: Callable[[set[int]], None], on_lost: Callable[[set[int]], None],
                 on_suspend: Callable[[bool], None], settle: Callable[[], Awaitable[None]],
                 clock: Callable[[], int] = monotonic_ms) -> None:
        self.store = store
        self.node_id = node_id
        self.brokers: dict[int, Optional[BrokerRegistration]] = {}  # live node id -> its registration (None: unread)
        self._clock = clock
        self.policy = LeadershipPolicy(
            node_id, partitions, session_timeout_ms=int(session_timeout_s * 1000),
            handback_delay_ms=int(handback_delay_s * 1000), now_ms=clock())
        self._now_ms = now_ms
        self._on_gained = on_gained
        self._on_lost = on_lost
        self._on_suspend = on_suspend
        self._settle = settle
        self._unsubscribe: list[Callable[[], None]] = []
        self._broker_watches: dict[int, Callable[[], None]] = {}  # node id -> unsubscribe
        self._dirty = False
        self._reconciling: Optional[asyncio.Task] = None
        self._wakeup: Optional[asyncio.TimerHandle] = None
        self._tick: Optional[asyncio.TimerHandle] = None
        self._closed = False

    @property
    def partitions(self) -> int:
        return self.policy.partitions

    @property
    def leaders(self) -> dict[int, Leader]:
        """Partition -> its leader, per the leader znodes."""
        return self.policy.leaders

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Agree on the partition count, then watch the live nodes and every partition's leader."""
        for path in (COORDINATORS, COORDINATOR_PARTITIONS):
            try:
                await self.store.create(path, make_parents=True)
            except NodeExists:
                pass
        self.policy.resize(await self._agree_on_partitions())
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
        self.policy.ticked(self._clock())
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
        return self.policy.live_leader(self.partition_of(group_id))

    def led(self) -> set[int]:
        return self.policy.led()

    def epoch_of(self, group_id: str) -> Optional[int]:
        """The epoch at which this node leads the group's partition (None: it does not): the
        coordinator epoch its transaction markers carry, which grows with every election."""
        held = self.policy.fence(self.partition_of(group_id))
        return None if held is None else held.epoch

    def fence(self, group_id: str) -> list[Op]:
        """The checks a write of the group's state must carry (NotLeader if we do not lead it)."""
        partition = self.partition_of(group_id)
        held = self.policy.fence(partition)
        if held is None:
            raise NotLeader(f"node {self.node_id} does not lead group partition {partition}")
        return [CheckVersion(partition_path(partition), held.version), CheckVersion(leader_path(partition), 0)]

    # -- watches -----------------------------------------------------------------------------

    def _on_brokers(self, children: list[str]) -> None:
        """The set of live nodes changed. Each live node's registration is followed by a data
        watch of its own, so an address is current even when a node re-registers faster than
        the children watch can tell (a delete and a create seen as one unchanged set)."""
        ids = {node_id for node_id in map(node_id_of, children) if node_id is not None}
        self.policy.nodes_live(ids, self._clock())
        for gone in set(self.brokers) - ids:
            del self.brokers[gone]
            self._broker_watches.pop(gone)()
        for new in ids - set(self.brokers):
            self.brokers[new] = None
            self._broker_watches[new] = self.store.watch(
                broker_path(new), lambda node, node_id=new: self._on_broker(node_id, node))
        self._poke()

    def _on_broker(self, node_id: int, node: Optional[Node]) -> None:
        if node is not None and node_id in self.brokers:
            try:
                self.brokers[node_id] = BrokerRegistration.decode(node_id, node.data)
            except LayoutError as exc:
                log.warning("ignoring a malformed registration: %s", exc)
                self.brokers[node_id] = None

    def _on_leader(self, partition: int, node: Optional[Node]) -> None:
        seen = _decoded(PartitionLeader, partition, node)
        leader = Leader(seen.node_id, seen.epoch) if seen is not None else None
        lost = self.policy.leader_seen(partition, leader, self._clock())
        if lost:
            log.warning("lost group partition %d (leader now %s)", partition, leader)
            self._on_lost(set(lost))
        self._poke()

    def _session_lost(self) -> None:
        lost = self.policy.session_lost()
        if lost:
            log.warning("ZooKeeper session lost: stepping down from %d group partition(s)", len(lost))
            self._on_lost(set(lost))

    def _connection_changed(self, connected: bool) -> None:
        """While the connection to ZooKeeper is down the session may be expiring, and another
        node may take our partitions over: suspend serving (the fences stay) until ZooKeeper
        answers again with the same session; a lost session then steps down (`_session_lost`)."""
        if not connected and self.policy.led():
            log.warning("connection to ZooKeeper lost: suspending %d group partition(s)", len(self.policy.led()))
        self._on_suspend(not connected)
        if connected:
            self._poke()

    def abdicate(self, partitions: set[int]) -> None:
        """Stop leading `partitions` now and release them, so that they are claimed again under a
        new epoch (the runtime calls this when a write failed: the store, not the core, is right)."""
        self._step_down(self.policy.lose(partitions))

    def _step_down(self, held: dict[int, Fence]) -> None:
        """The runtime unloads `held`'s partitions at once; their leader znodes are released."""
        if held:
            self._on_lost(set(held))
            asyncio.get_running_loop().create_task(self._release(held))

    # -- stall detection ---------------------------------------------------------------------

    def _schedule_tick(self) -> None:
        self._tick = asyncio.get_running_loop().call_later(TICK_MS / 1000, self._on_tick)

    def _on_tick(self) -> None:
        held = self.policy.ticked(self._clock())
        if held:
            log.warning("the event loop stalled: stepping down from %d group partition(s) "
                        "until ZooKeeper confirms the session", len(held))
            self._step_down(held)
        if not self._closed:
            self._schedule_tick()

    async def _release(self, held: dict[int, Fence]) -> None:
        """Delete our leader znodes of the partitions in `held`, each only if no election happened
        since (so never another node's), letting the preferred node (maybe us again) claim them
        with a new epoch. A release that fails is retried by `_repair` from the next
        reconciliation."""
        for partition, fence in held.items():
            try:
                await self.store.transaction([CheckVersion(partition_path(partition), fence.version),
                                              Delete(leader_path(partition), 0)])
            except (NoNode, BadVersion):
                pass  # gone with our session, or someone else has claimed it since
            except StoreError as exc:  # unreachable or session gone: the rest would fail the same way
                log.warning("could not release group partition(s) %s (%s); will retry",
                            partition_ranges(held), exc)
                self._wake_in(RETRY_MS / 1000)
                return

    async def _repair(self, partitions: list[int]) -> None:
        """Release the partitions whose leader znode names this node while it holds no fence (a
        release or a claim whose answer was lost, a stale watch event), if their election znode
        still names us at that epoch, so that they are claimed afresh instead of staying
        unserved behind our own znode."""
        held = {}
        for partition in partitions:
            current = await self.store.get(partition_path(partition))
            election = _decoded(PartitionElection, partition, current)
            if current is not None and self.policy.should_repair(
                    partition, Leader(election.node_id, election.epoch) if election is not None else None):
                held[partition] = Fence(current.version, election.epoch)
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
                self._wake_in(RETRY_MS / 1000)

    async def _reconcile_once(self) -> None:
        plan = self.policy.plan(self._clock())
        wake_in_ms = plan.wake_in_ms
        if plan.repair:
            await self._repair(plan.repair)
        if plan.claim and not await self._claim(plan.claim):
            wake_in_ms = min(wake_in_ms if wake_in_ms is not None else RETRY_MS, RETRY_MS)
        if plan.hand_back:
            await self._hand_back(plan.hand_back)
        if wake_in_ms is not None:
            self._wake_in(wake_in_ms / 1000)

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
                self.policy.claimed(partition, result, self._clock())
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

    async def _claim_one(self, partition: int) -> Fence:
        """Win the partition or raise."""
        current = await self.store.get(partition_path(partition))
        previous = _decoded(PartitionElection, partition, current)
        epoch = (previous.epoch if previous is not None else 0) + 1
        record = PartitionElection(epoch=epoch, node_id=self.node_id, elected_at_ms=self._now_ms()).encode()
        leader = PartitionLeader(node_id=self.node_id, epoch=epoch).encode()
        first: Op = (Create(partition_path(partition), record) if current is None
                     else SetData(partition_path(partition), record, current.version))
        versions = await self.store.transaction([first, Create(leader_path(partition), leader, ephemeral=True)])
        return Fence(versions[0], epoch)

    async def _hand_back(self, partitions: set[int]) -> None:
        """Give `partitions` to their preferred nodes: no new writes for them from now on, the
        pending ones finish under our fence, then our leader znodes go."""
        log.info("handing group partition(s) %s back to their preferred nodes", partition_ranges(partitions))
        self._on_lost(partitions)
        await self._settle()
        await self._release(self.policy.lose(partitions))
