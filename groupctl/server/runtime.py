"""The node runtime: the one place where the core's results are applied (persisted, then answered).

Invariants:
- Requests and timers reach the core only through `call_groups`/`submit`, which run it
  synchronously on the event loop (never re-entered: no locks) and start persisting each result's
  records at once, in core-operation order (one task per result; `RecordWriter` coalesces them).
- Replies go out only once their result's records and every earlier result's are durable: none
  shows state the store lacks (an acknowledged commit survives kill -9). With no write pending, a
  result without records is answered at once (the heartbeat fast path: no future).
- Journal events (`groupctl.server.journal`) follow core-operation order: queued once the result's
  own records are durable (never if the store refused them), just before its replies, and written
  with one `os.write` per loop iteration, the system call being most of their cost at thousands
  of commits/s; a kill -9 loses at most that iteration's events, `close` writes what is queued.
- Every EMPTY_GROUP_CLEANUP_INTERVAL_MS the Empty groups without committed offsets are deleted
  (`Coordinator.delete_empty_groups`), so groups created under throwaway ids do not pile up.
- Topic partitions this node leads are served only once their leader epochs are raised for this
  start or ZooKeeper session (`leader_epochs.LeaderEpochs.lead`, before the election starts).
- Only group partitions this node leads are served: one won answers COORDINATOR_LOAD_IN_PROGRESS
  until its groups are loaded into the core; one lost leaves the core at once (NOT_COORDINATOR).
- Group state the store refused is never served: a failed write's partitions are given up and
  claimed again under a new epoch, reloading from the store, and later writes fail their fence.
  Its waiting requests fail with `CoordinatorUnavailable`, which closes their connections (clients
  reconnect and retry): a deliberate difference from Apache Kafka, which answers
  COORDINATOR_NOT_AVAILABLE/NOT_COORDINATOR in-band.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from typing import Any, Callable, Hashable, Iterable, Mapping, Optional

from groupctl.configs.catalog import ResourceType
from groupctl.configs.resolve import group_timeouts, log_config
from groupctl.coordinator.backoff import Backoff
from groupctl.coordinator.consumer.topics import TopicImage, TopicInfo
from groupctl.coordinator.coordinator import EMPTY_GROUP_CLEANUP_INTERVAL_MS, Coordinator
from groupctl.coordinator.classic.messages import TriggerRebalance, TriggerRebalanceResult
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.offsets.messages import CompleteTxnPartition
from groupctl.coordinator.leadership import CLAIM_GRACE_MS
from groupctl.coordinator.loading import LoadQueue
from groupctl.coordinator.placement import Placement, partition_ranges
from groupctl.coordinator.records import Record, TopicRecord
from groupctl.coordinator.transactions import TransactionRecord
from groupctl.coordinator.results import Reply, Result
from groupctl.layout.codec import LayoutError
from groupctl.layout.credentials import ScramCredential, decode_credentials
from groupctl.layout.topics import INITIAL_LEADER_EPOCH
from groupctl.layout.paths import user_path
from groupctl.log import LogManager
from groupctl.server.authorizer import NodeAuthorizer
from groupctl.server.config import NodeConfig
from groupctl.server.dynamic_configs import DynamicConfigs
from groupctl.server.election import Election, NotLeader, monotonic_ms
from groupctl.server.faults import FaultInjector
from groupctl.server.group_documents import GroupDocuments, StoredDocument
from groupctl.server.journal import Journal
from groupctl.server.leader_epochs import LeaderEpochs
from groupctl.server.marker_refusals import warn_without_cluster_action
from groupctl.server.metrics import NodeMetrics
from groupctl.server.rebalance_requests import RebalanceRequests
from groupctl.server.timers import AsyncioTimer
from groupctl.server.topic_watch import TopicWatch
from groupctl.server.topics import TopicRegistry
from groupctl.server.peers import Peers
from groupctl.server.transactions import Transactions
from groupctl.store.base import MetadataStore, NodeExists, Op, StoreError, StoreUnavailable
from groupctl.store.connect import open_store
from groupctl.store.persist import RecordWriter
from groupctl.store.registration import register_broker

log = logging.getLogger("groupctl.node")


_UNANSWERED: Any = object()  # marks "no reply to this token in the result"
_GROUP_CLEANUP = ("node-group-cleanup",)  # the timer key of the periodic Empty-group cleanup


class CoordinatorUnavailable(Exception):
    """A result's replies cannot be sent: the store did not accept its records (or an earlier
    result's, on which it may depend), or the node is shutting down."""


def _log_failure(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("background task failed: %s", task.exception())


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


class Node:
    """Everything a running coordinator node is, minus the sockets (see `server.py`)."""

    def __init__(self, config: NodeConfig, *, now_ms: Callable[[], int] = wall_clock_ms,
                 clock: Callable[[], int] = monotonic_ms) -> None:
        """`now_ms` is the wall clock stored documents record; `clock` (monotonic ms) is the one
        the election and the node's retries decide on."""
        self.config = config
        self.now_ms = now_ms
        self.clock = clock
        self.faults = FaultInjector()
        journal_dir = config.journal_path()
        self.journal: Optional[Journal] = None if journal_dir is None else Journal(
            journal_dir, segment_bytes=config.journal_segment_bytes, keep_segments=config.journal_keep_segments)
        self._journal_queue: list[dict[str, Any]] = []  # events to write in the next loop iteration
        if self.journal is not None:
            log.info("journaling events to %s (next seq %d)", self.journal.directory, self.journal.next_seq)
        self.store: MetadataStore = open_store(zk=config.zk, data_dir=config.data_dir,
                                               session_timeout_s=config.zk_session_timeout_s,
                                               zk_auth=config.zk_auth, zk_world_readable=config.zk_world_readable)
        self.placement = Placement(config.group_partitions)  # nothing is served before the election
        self.election = Election(
            self.store, config.node_id, partitions=config.group_partitions,
            session_timeout_s=config.zk_session_timeout_s, handback_delay_s=config.handback_delay_s,
            now_ms=now_ms, on_gained=self._partitions_gained, on_lost=self._partitions_lost,
            on_suspend=self._suspend, settle=self.writes_settled, clock=clock,
        )
        self.writer = RecordWriter(self.store, config.node_id)
        # Prometheus metrics (--metrics-port): None when not asked for, so nothing is counted.
        self.metrics: Optional[NodeMetrics] = None
        if config.metrics_port is not None:
            self.metrics = NodeMetrics(self, per_group=config.metrics_per_group)
            self.writer.on_transaction = self.metrics.store_transaction
        self.logs = LogManager(config.data_dir / "log" if config.data_dir else None, node_id=config.node_id,
                               clock=now_ms, epoch_of=self._leader_epoch)
        self.logs.leading = False  # until `join_cluster` has raised this node's leader epochs
        self.topics = TopicRegistry(self.writer.write, self.live_nodes, reload=self.writer.reload_topic,
                                     configure=self._configure_new_topic, cached=self.writer.cached_topic)
        self.leader_epochs = LeaderEpochs(self.topics, self.logs, config.node_id, lambda: self.stopping)
        self.topic_watch = TopicWatch(self.store, self._topic_changed)
        self.configs = DynamicConfigs(self.store, self._config_changed)
        self.documents = GroupDocuments(self.store, self.serves)
        self.rebalance_requests = RebalanceRequests(self.store, self.trigger_rebalance, self.serves)
        self.authorizer: Optional[NodeAuthorizer] = NodeAuthorizer(
            self.store, config.super_users, config.allow_everyone_if_no_acl_found) if config.authorizer else None
        self.timer = AsyncioTimer(now_ms, self.submit)
        self.core = Coordinator(timer=self.timer, config=config.groups, consumer_config=config.consumer_groups,
                                node_id=config.node_id, placement=self.placement)
        self.transactions = Transactions(self)
        self.peers = Peers(self)
        self.bound_ports: dict[str, int] = {}  # listener name -> the port it is bound to, once listening
        self._unreadable_users: set[str] = set()  # users whose credential document did not decode (logged)
        self._waiting: dict[Hashable, asyncio.Future] = {}
        self._tokens = itertools.count()
        self._last_write: Optional[asyncio.Task] = None  # the newest result still being persisted
        self._write_failures = 0
        self._topics_seen: dict[str, TopicRecord] = {}  # what the topic watch reported last
        self._to_load = LoadQueue(Backoff.store_retries())  # partitions won, not yet being read
        self._loader: Optional[asyncio.Task] = None
        self._unsubscribe_session: Optional[Callable[[], None]] = None
        self.stopping = False  # set by the server at shutdown: connections read no new request

    # -- lifecycle ---------------------------------------------------------------------------

    async def load(self) -> None:
        """Open the store and read the topics back (groups load as their partitions are won),
        and the ACLs with --authorizer; start the partition logs' retention."""
        await self.store.start()
        await self.writer.start()
        for record in await self.writer.load(topics=True, wanted_group=lambda group: False):
            self.topics.replay(record)
        self._publish_topics()
        log.info("loaded %d topic(s) from the store", len(self.topics.all()))
        await self.configs.start()  # every topic's and group's configs are in force before the node listens
        if self.authorizer is not None:
            await self.authorizer.start()  # every ACL is read before the node listens
            if self.config.zk is not None:  # a node with the embedded store has no peers to send markers to
                warn_without_cluster_action(self.authorizer, self.peers.principal)
        self.logs.start_retention(self.config.log_retention_check_interval_ms)

    async def join_cluster(self) -> None:
        """Once listening: register, raise the leader epochs of the partitions this node leads
        (serving them from then on), take part in the election, watch topics, create the
        configured topics and serve stored rebalance requests."""
        await self.register()
        await self.leader_epochs.lead()
        on_session_lost = getattr(self.store, "on_session_lost", None)
        if on_session_lost is not None:
            self._unsubscribe_session = on_session_lost(self._register_again)
        await self.election.start()
        self.placement.partitions = self.election.partitions
        await self.topic_watch.start()
        await self.topics.ensure(self.config.topics)
        await self.rebalance_requests.start()
        self.timer.schedule(_GROUP_CLEANUP, EMPTY_GROUP_CLEANUP_INTERVAL_MS, self._clean_up_groups)
        await self._settle_placement(timeout_s=CLAIM_GRACE_MS / 1000 + 3.0)

    def _clean_up_groups(self, now_ms: int) -> Result:
        """Delete the Empty groups without offsets, and come back in another interval."""
        self.timer.schedule(_GROUP_CLEANUP, EMPTY_GROUP_CLEANUP_INTERVAL_MS, self._clean_up_groups)
        return self.core.delete_empty_groups(now_ms)

    async def _settle_placement(self, timeout_s: float) -> None:
        """Wait (bounded) until every group partition has a live leader and ours are loaded, so a
        node that says it is ready serves its groups at once."""
        deadline = self.clock() + timeout_s * 1000
        while self.clock() < deadline:
            if self.election.policy.settled() and not self.placement.loading and not self._to_load:
                return
            await asyncio.sleep(0.02)
        log.warning("group partitions still unsettled after %.0fs; serving anyway", timeout_s)

    def live_nodes(self) -> list[int]:
        """The registered nodes (this one included: it is live while it answers)."""
        return sorted(set(self.election.brokers) | {self.config.node_id})

    def live_brokers(self, listener: Optional[str] = None) -> dict[int, tuple[str, int]]:
        """Live node id -> its advertised (host, port) on `listener` (default: the first), per
        `/brokers/ids` (this node always). A node without that listener is left out, as Kafka
        leaves it out of Metadata."""
        listener = listener or self.listener_names()[0]
        brokers = {}
        for node_id, registration in self.election.brokers.items():
            address = registration.address(listener) if registration is not None else None
            if address is not None:
                brokers[node_id] = address
        own = dict((name, (host, port)) for name, host, port in self.endpoints())
        if listener in own:
            brokers[self.config.node_id] = own[listener]
        return brokers

    def coordinator_of(self, group_id: str, listener: Optional[str] = None) -> Optional[tuple[int, tuple[str, int]]]:
        """(node id, (host, port) on `listener`) of the live node leading the group's partition, if any."""
        leader = self.election.leader_of(group_id)
        address = self.live_brokers(listener).get(leader) if leader is not None else None
        return (leader, address) if address is not None else None

    def listener_names(self) -> list[str]:
        return [listener.name for listener in self.config.all_listeners()]

    def endpoints(self) -> tuple[tuple[str, str, int], ...]:
        """(listener name, advertised host, port) of each listener, as registered."""
        return tuple((listener.name, *self.config.advertised(self.bound_ports.get(listener.name, listener.port), listener))
                     for listener in self.config.all_listeners())

    async def credentials_of(self, user: str) -> dict[str, ScramCredential]:
        """`user`'s stored SCRAM credentials by mechanism ({} for an unknown user or an unreadable
        document, which is logged): what SASL authentication checks passwords against."""
        try:
            stored = await self.store.get(user_path(user))
        except StoreError as exc:
            raise CoordinatorUnavailable(f"cannot read the credentials of {user!r}: {exc}") from exc
        if stored is None:
            return {}
        try:
            return decode_credentials(user, stored.data)
        except LayoutError as exc:
            if user not in self._unreadable_users:  # once: every login attempt would log it again
                self._unreadable_users.add(user)
                log.error("cannot authenticate user %r: %s", user, exc)
            return {}

    def serves(self, group_id: str) -> bool:
        """Whether this node coordinates `group_id` now (its partition is loaded here)."""
        return not self.placement.error(group_id)

    def _register_again(self) -> None:
        """ZooKeeper expired our session, taking `/brokers/ids/<id>` with it: register anew (the
        election has already stepped down from every partition; it claims again once the new
        registration is seen). Its partitions are not led until their epochs are raised again."""
        if not self.bound_ports or self.stopping:
            return
        self.logs.leading = False
        log.warning("ZooKeeper session expired; registering node %d again", self.config.node_id)
        task = asyncio.get_running_loop().create_task(self._register_when_reconnected())
        task.add_done_callback(_log_failure)

    async def _register_when_reconnected(self) -> None:
        backoff = Backoff.store_retries()
        while not self.stopping:
            try:
                await self.register()
                break
            except StoreUnavailable:  # kazoo is still establishing the new session
                await asyncio.sleep(backoff.failed() / 1000)
        await self.leader_epochs.lead()

    async def register(self) -> None:
        """Register `/brokers/ids/<id>`. After a crash the previous process's ephemeral node
        lives until its ZooKeeper session expires; like a Kafka broker, wait that out (bounded by
        twice the session timeout) rather than take over a node another live process may own."""
        deadline = self.clock() + (2 * self.config.zk_session_timeout_s + 2) * 1000
        while True:
            try:
                await register_broker(self.store, self.config.node_id, self.endpoints(), self.now_ms())
                return
            except NodeExists:
                if self.clock() >= deadline:
                    raise
                log.info("node id %d is still registered by an earlier session; waiting for it to expire",
                         self.config.node_id)
                await asyncio.sleep(0.5)

    def fail_waiting(self, reason: str) -> None:
        """Fail every parked or waiting request (shutdown): their connections close and the
        clients retry, as after a broker restart."""
        waiting, self._waiting = self._waiting, {}
        for future in waiting.values():
            if not future.done():
                future.set_exception(CoordinatorUnavailable(reason))

    async def writes_settled(self) -> None:
        """Return once every result submitted so far is durable (or failed); results submitted
        meanwhile are not waited for (results complete in order: the newest one is enough)."""
        newest = self._last_write
        if newest is not None and not newest.done():
            await asyncio.wait([newest])

    async def quiesce(self, timeout_s: float = 10.0) -> None:
        """For shutdown: let every pending write finish and its replies go out, then fail the
        requests still parked in the core (they wait for other members, not for us)."""
        self.documents.release()  # long-polling GroupctlDescribeGroup requests answer now
        if self._last_write is not None:
            await asyncio.wait([self._last_write], timeout=timeout_s)
        self.fail_waiting("the coordinator is shutting down")

    async def close(self) -> None:
        if self._unsubscribe_session is not None:
            self._unsubscribe_session()
        await self.election.close()  # no more claims or loads: the session ends below
        await self.rebalance_requests.close()
        await self.topic_watch.close()
        await self.configs.close()
        if self.authorizer is not None:
            await self.authorizer.close()
        await self.quiesce()
        if self._loader is not None:
            self._loader.cancel()
            await asyncio.gather(self._loader, return_exceptions=True)
        self.timer.close()
        await self.transactions.close()
        self.peers.close()
        self.logs.close()
        self._close_journal()
        await self.store.close()

    def _close_journal(self) -> None:
        self._write_journal()
        journal, self.journal = self.journal, None  # results still finishing journal nothing now
        if journal is not None:
            try:
                journal.close()
            except OSError as exc:
                log.error("closing the journal in %s failed: %s", journal.directory, exc)

    def advertised(self) -> tuple[str, int]:
        """The first listener's advertised address (the bootstrap the node prints)."""
        _, host, port = self.endpoints()[0]
        return host, port

    # -- group partitions --------------------------------------------------------------------

    def _partitions_gained(self, partitions: set[int]) -> None:
        """The election won `partitions`: they answer COORDINATOR_LOAD_IN_PROGRESS until loaded."""
        self.placement.loading |= partitions
        self._to_load.add(partitions)
        if self.metrics is not None:
            self.metrics.partitions_changed("gained", len(partitions))
        if self._loader is None or self._loader.done():
            self._loader = asyncio.get_running_loop().create_task(self._load_partitions())
            self._loader.add_done_callback(_log_failure)

    async def _load_partitions(self) -> None:
        """Load the partitions won, in the batches `LoadQueue` decides (a corrupt document is
        logged and its partition retried)."""
        while self._to_load:
            batch = self._to_load.next_batch()
            try:
                records = await self._read_partitions(batch)
            except Exception as exc:  # noqa: BLE001 - the store, or a document it holds, is bad
                log.error("loading group partition(s) %s failed (%s); retrying", partition_ranges(batch), exc)
                await asyncio.sleep(self._to_load.failed(batch, self.placement.loading) / 1000)
                continue
            self._to_load.loaded()
            self._take_over(batch & self.placement.loading, records)  # lost meanwhile: stays unloaded

    async def _read_partitions(self, batch: set[int]) -> list[Record]:
        """The partitions' groups, then their transactional ids (placed as group ids are)."""
        partition_of = self.placement.partition_of
        records = await self.writer.load(topics=False, wanted_group=lambda g: partition_of(g) in batch)
        return records + await self.writer.load_transactions(lambda t: partition_of(t) in batch)

    def _take_over(self, batch: set[int], records: list[Record]) -> None:
        """Hand the partitions' groups to the core and start serving them."""
        if not batch:
            return
        partition_of = self.placement.partition_of
        self.transactions.load([r for r in records if isinstance(r, TransactionRecord)
                                and partition_of(r.transactional_id) in batch])
        records = [r for r in records if not isinstance(r, TransactionRecord) and partition_of(r.group) in batch]
        node = self.config.node_id
        detail = (f"node {node} took over group partition {min(batch)}" if len(batch) == 1
                  else f"node {node} took over {len(batch)} group partitions")
        result = self.core.load(records, self.now_ms(), detail)
        self.placement.loading -= batch
        self.placement.serving |= batch
        log.info("serving group partition(s) %s: %d group(s) loaded", partition_ranges(batch),
                 len({r.group for r in records}))
        self.submit(result)
        self.rebalance_requests.rescan()

    def _suspend(self, suspended: bool) -> None:
        """The store's connection dropped (True) or came back (False); see Placement.suspended."""
        self.placement.suspended = suspended

    def _partitions_lost(self, partitions: set[int]) -> None:
        """Stop serving `partitions` now: their groups leave the core (parked requests answer
        NOT_COORDINATOR) and the writer forgets their documents."""
        partitions = partitions & (self.placement.serving | self.placement.loading)
        if not partitions:
            return
        self.placement.serving -= partitions
        self.placement.loading -= partitions
        self._to_load.discard(partitions)
        partition_of = self.placement.partition_of

        def belongs(group_id: str) -> bool:
            return partition_of(group_id) in partitions

        log.info("no longer serving group partition(s) %s", partition_ranges(partitions))
        if self.metrics is not None:
            self.metrics.partitions_changed("lost", len(partitions))
            self.metrics.forget(belongs)
        self.submit(self.core.unload(belongs))
        self.transactions.unload(belongs)
        self.writer.forget(belongs)
        self.documents.moved(belongs)

    # -- applying results -----------------------------------------------------------------------

    async def call_groups(self, op: Callable[[Coordinator, Hashable, int], Result]) -> Any:
        token = next(self._tokens)
        result = op(self.core, token, self.now_ms())
        if not result.records and self._idle():
            # Nothing to persist and nothing earlier pending: every reply can go out now, and a
            # request the core answers at once (Heartbeat, most requests) skips the future.
            self._journal(result.events)
            own = self._deliver(result.replies, token)
            if own is not _UNANSWERED:
                return own
            result = Result()
        future = asyncio.get_running_loop().create_future()
        self._waiting[token] = future
        self.submit(result)
        return await future

    def submit(self, result: Result) -> None:
        """Persist `result` (starting now, in operation order), then deliver its replies once it
        and every earlier result are durable. Synchronous, so timers keep operation order too."""
        if not result.records and self._idle():
            self._journal(result.events)
            self._deliver(result.replies)
            return
        try:
            checks = self._leadership_checks(result.records)
        except NotLeader as exc:  # the core produced records for a group it no longer serves
            self._fail(result.replies, exc)
            self._write_failed(result.records)
            return
        previous = self._last_write
        self._last_write = asyncio.get_running_loop().create_task(
            self._persist(result, previous, self._write_failures, checks))

    def _leadership_checks(self, records: list[Record]) -> list[Op]:
        """The fences of the records' groups as they are now, when the core produced them: a
        write that reaches the store after this node claimed a partition again must fail, not
        land on top of what the new claim loaded."""
        checks: dict[str, Op] = {}
        for record in records:
            for check in self.election.fence(record.group):
                checks[check.path] = check
        return list(checks.values())

    def _idle(self) -> bool:
        return self._last_write is None or self._last_write.done()

    async def _persist(self, result: Result, previous: Optional[asyncio.Task], failures_before: int,
                       checks: list[Op]) -> None:
        """Write, wait for the earlier writes, deliver. A write that failed meanwhile fails these
        replies too: the result was computed by a core that included the failed records."""
        try:
            if result.records:
                await self.writer.write(list(result.records), checks)
            if previous is not None and not previous.done():
                await asyncio.wait([previous])  # writes complete in order; replies follow them
        except Exception as exc:  # noqa: BLE001 - any failure leaves the core ahead of the store
            log.error("store did not accept %d record(s): %s", len(result.records), exc)
            self._fail(result.replies, exc)
            self._write_failed(result.records)
            return
        self.documents.changed(result.records)
        self._journal(result.events)  # its records are in the store, even if an earlier write failed
        if self._write_failures != failures_before:
            self._fail(result.replies, CoordinatorUnavailable("an earlier store write failed"))
            return
        self._deliver(result.replies)

    def journal_events(self, events: Iterable[dict[str, Any]]) -> None:
        """Journal events whose records are persisted (the transaction coordinator's), in the
        same batches as the group coordinator's."""
        self._journal(list(events))

    def _journal(self, events: list[dict[str, Any]]) -> None:
        """Count a result's events in the metrics, and queue them for the one journal write of
        the next loop iteration."""
        if events and self.metrics is not None:
            self.metrics.events(events)
        if events and self.journal is not None:
            if not self._journal_queue:
                asyncio.get_running_loop().call_soon(self._write_journal)
            self._journal_queue.extend(events)

    def journal_backlog(self) -> int:
        """Journal events queued, not yet written."""
        return len(self._journal_queue)

    def _write_journal(self) -> None:
        events, self._journal_queue = self._journal_queue, []
        if events and self.journal is not None:
            self.journal.append(events)

    def _fail(self, replies: list[Reply], exc: Exception) -> None:
        for reply in replies:
            future = self._waiting.pop(reply.token, None)
            if future is not None and not future.done():
                future.set_exception(CoordinatorUnavailable(str(exc)))

    def _write_failed(self, records: list[Record]) -> None:
        """The groups of `records` may be ahead of the store in the core: give their partitions
        up and claim them again, which reloads them from the store under a new epoch."""
        self._write_failures += 1
        partitions = {self.placement.partition_of(r.group) for r in records} & self.election.led()
        if partitions:
            self.election.abdicate(partitions)

    def _deliver(self, replies: list[Reply], own_token: Hashable = _UNANSWERED) -> Any:
        """Complete the waiting requests' futures; return the reply addressed to `own_token`
        (a request still on the caller's stack, with no future), or `_UNANSWERED`."""
        own = _UNANSWERED
        for reply in replies:
            if reply.token == own_token:
                own = reply.response
                continue
            future = self._waiting.pop(reply.token, None)
            if future is not None and not future.done():
                future.set_result(reply.response)
        return own

    # -- groupctl's extension APIs ---------------------------------------------------------------

    async def wait_for_document(self, group: str, after_generation: int,
                                timeout_s: float) -> Optional[StoredDocument]:
        """The group's stored document once its generation is greater than `after_generation`,
        else (after `timeout_s`) the current one; None when there is none (see GroupDocuments)."""
        return await self.documents.wait(group, after_generation, timeout_s)

    async def trigger_rebalance(self, group: str, reason: Optional[str] = None,
                                client_id: Optional[str] = None) -> TriggerRebalanceResult:
        """Start the group's next rebalance (reason "trigger"), as `rebalance trigger` asks."""
        request = TriggerRebalance(group, reason, client_id)
        return await self.call_groups(lambda core, token, now: core.trigger_rebalance(token, request, now))

    async def complete_txn_partition(self, partition: int, producer_id: int, producer_epoch: int,
                                     commit: bool, coordinator_epoch: int) -> ErrorCode:
        """A transaction's marker for group partition `partition` (Kafka's `__consumer_offsets`
        partition; WriteTxnMarkers): in every group placed on it, the producer's pending offsets
        (TxnOffsetCommit) become committed offsets on commit, or are dropped on abort; durable
        (one store write) before this returns NONE. Idempotent: a retried marker finds nothing
        pending and answers NONE. Else NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS /
        COORDINATOR_NOT_AVAILABLE (this node does not serve the partition now) or
        INVALID_PRODUCER_EPOCH (a group holds pending offsets under a newer epoch; it is left as it
        is) or TRANSACTION_COORDINATOR_FENCED (the marker's coordinator epoch is below one the
        partition accepted for the producer; nothing changes). Raises CoordinatorUnavailable when
        the store write fails."""
        request = CompleteTxnPartition(partition, producer_id, producer_epoch, commit, coordinator_epoch)
        return await self.call_groups(lambda core, token, now: core.complete_txn_partition(token, request, now))

    async def delete_topic(self, name: str) -> TopicRecord:
        """Delete a topic, its partition logs, its configs and every group's committed offsets for
        it (on other nodes the topic watch does the same for their groups and logs)."""
        record = await self.topics.delete(name)
        self._topic_deleted(name)
        await self.configs.remove(ResourceType.TOPIC, name)
        await self.writes_settled()
        return record

    async def _configure_new_topic(self, name: str, config: Mapping[str, str]) -> None:
        """Store a topic's whole config before the topic is created (`TopicRegistry.create`),
        over whatever a deleted topic of that name left (a crash between the topic's deletion and
        its configs', or an AlterConfigs that raced the deletion on another node)."""
        await self.configs.alter(ResourceType.TOPIC, name, lambda _: dict(config), replaces=True)

    def _config_changed(self, kind: ResourceType, name: str) -> None:
        """A stored config changed, or a topic appeared (`DynamicConfigs.report`): put the
        effective configs in force. A broker config may change the default of every topic; a
        group's go to the core (its members' session timeout and heartbeat interval)."""
        if kind is ResourceType.TOPIC:
            self._apply_topic_configs([name])
        elif kind is ResourceType.BROKER:
            self._apply_topic_configs([t.name for t in self.topics.all()])
        else:
            own = self.configs.stored.groups.get(name)
            self.core.use_group_timeouts(name, group_timeouts(self.config, self.configs.stored, name) if own else None)

    def _apply_topic_configs(self, names: Iterable[str]) -> None:
        """The one place topic configs reach the partition logs: each topic's LogConfig, built
        from its effective configs, goes to its logs (those open and those opened later)."""
        for name in names:
            self.logs.set_topic_config(name, log_config(self.config, self.configs.stored, name))

    def _topic_deleted(self, name: str) -> None:
        self.logs.delete_topic(name)
        self.submit(self.core.delete_topic_offsets((name,), self.now_ms()))

    def _leader_epoch(self, topic: str, partition: int) -> int:
        """The partition's leader epoch as the topic registry holds it (what Metadata reports)."""
        record = self.topics.get(topic)
        return record.leader_epoch(partition) if record is not None else INITIAL_LEADER_EPOCH

    def _publish_topics(self) -> None:
        """Hand the core the topics as the registry has them (consumer groups assign by them)."""
        self.core.use_topics(TopicImage.of(TopicInfo(t.name, t.topic_id, len(t.replicas)) for t in self.topics.all()))

    def _topic_changed(self, name: str, record: Optional[TopicRecord]) -> None:
        """A topic znode changed (any node's write, including ours): keep the registry current,
        drop a deleted topic's logs and offsets here, and rebalance the groups subscribed to a
        topic that gained partitions (the original design's ZooKeeper watch). Growth is judged
        against what the watch reported last, not the registry, which this node's own
        CreatePartitions has already updated. The logs of new partitions (growth, or a topic
        another node created) start opening in the background (`open_new_logs`)."""
        before = self._topics_seen.pop(name, None)
        known = self.topics.observe(name, record)
        self._publish_topics()
        if record is None:
            self._topic_deleted(name)
            return
        self._topics_seen[name] = record
        self.leader_epochs.sync(record)
        recreated = before is not None and before.topic_id != record.topic_id
        if recreated and (known is None or known.topic_id != record.topic_id):
            self._topic_deleted(name)  # deleted and created again elsewhere, faster than the watch could tell
        if known is None or known.topic_id != record.topic_id:
            self.configs.report(ResourceType.TOPIC, name)  # its configs reach its logs before they open
            self.open_new_logs(record, record.replicas)  # created elsewhere (our own: CreateTopics)
        if before is not None and before.topic_id == record.topic_id and len(record.replicas) > len(before.replicas):
            self.open_new_logs(record, sorted(record.replicas.keys() - before.replicas.keys()))
            detail = f"topic {name} grew from {len(before.replicas)} to {len(record.replicas)} partitions"
            log.info("%s: rebalancing its groups", detail)
            self.submit(self.core.topics_changed(frozenset({name}), self.now_ms(), detail))

    def open_new_logs(self, record: TopicRecord, partitions: Iterable[int]) -> None:
        """Start opening, in the background and a few at a time, the logs of the new `partitions`
        of `record` that this node leads, so that the consumers and producers about to ask for
        them find them open (`LogManager.open_soon`; a request that comes first opens its own)."""
        node_id = self.config.node_id
        self.logs.open_soon((record.name, p) for p in partitions if (record.replicas.get(p) or [None])[0] == node_id)
