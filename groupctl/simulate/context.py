"""What every simulated member of one simulation shares: the settings, the event loop's clock, the
link to the coordinator, the ledger, topic names and the positions members commit.

Invariants:
- Time is milliseconds since the simulation started, from the event loop's monotonic clock
  (`now_ms`); members' machines get it as their `now_ms`.
- Topic ids are learned for the whole simulation at once: a member that meets an unknown id asks
  `resolve_topic_ids`, which runs one Metadata request however many members ask meanwhile.
- Positions (with --commit): the members consume nothing, so a member's position in a partition is
  where it would resume: the group's committed offset when it was assigned the partition
  (`fetch_positions`, an OffsetFetch as a real consumer sends), else the log end offset as the run
  started (auto.offset.reset=latest; `learn_end_offsets`). Committing it never moves a group's
  offset backwards past what was committed before the member took the partition.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import signal
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from groupctl.client.kafka import METADATA, BootstrapLike, ConnectionFailed, KafkaClient
from groupctl.client.kafka_apis import LATEST, list_offsets, offset_fetch_call, parse_offset_fetch
from groupctl.errors import OpsError
from groupctl.simulate.ledger import Ledger, TopicPartition
from groupctl.simulate.link import CoordinatorLink

CONSUMER = "consumer"
CLASSIC = "classic"


@dataclass(frozen=True)
class Settings:
    """What the operator asked for (see `groupctl members simulate --help`)."""

    bootstrap: BootstrapLike  # servers, and TLS/SASL settings (--command-config)
    group: str
    count: int
    topics: tuple[str, ...] = ()
    pattern: Optional[str] = None
    protocol: str = CONSUMER
    assignor: str = "uniform"
    static: bool = False
    commit: bool = False
    churn_per_s: float = 0.0
    session_timeout_ms: int = 45_000  # classic members (the consumer protocol's is the group's)
    heartbeat_interval_ms: int = 3_000  # classic members (the consumer protocol's is the group's)
    rebalance_timeout_ms: int = 300_000  # max.poll.interval.ms, sent as the rebalance timeout
    members_per_connection: int = 50  # consumer protocol: heartbeats answered at once share connections
    seed: int = 0


def _ignore_interrupts() -> None:
    """The worker's start: Ctrl-C at the terminal reaches the whole process group, and it is the
    simulator's to handle (its members leave); the worker must not die of it mid-assignment."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class SimulationContext:
    def __init__(self, settings: Settings, link: CoordinatorLink, ledger: Ledger) -> None:
        self.settings = settings
        self.link = link
        self.ledger = ledger
        self.loop = asyncio.get_running_loop()
        self.started_at = self.loop.time()
        self.topic_names: dict[str, str] = {}  # topic id -> name
        self.partition_counts: dict[str, int] = {}  # topic name -> partitions
        self.positions: dict[TopicPartition, int] = {}  # where each partition's owner resumes (--commit)
        self._resolving: Optional[asyncio.Future] = None
        self._worker: Optional[ProcessPoolExecutor] = None

    def run_apart(self, function: Callable[..., Any], *args: Any) -> asyncio.Future:
        """`function(*args)` in a worker process: CPU-heavy work of one member (a classic leader's
        assignment: 1.5 s and a 150 MiB transient at 1,000 x 1,000 with kafka-python's
        cooperative-sticky) would otherwise stall every member's heartbeats on this loop and keep
        its memory; a real consumer computes in its own process. Spawned, not forked, so the worker
        holds none of the members' sockets open."""
        if self._worker is None:
            self._worker = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                               initializer=_ignore_interrupts)
        return self.loop.run_in_executor(self._worker, function, *args)

    def close(self) -> None:
        if self._worker is not None:
            self._worker.shutdown(wait=False, cancel_futures=True)

    def now_ms(self) -> int:
        return int((self.loop.time() - self.started_at) * 1000)

    def at(self, ms: int) -> float:
        """The event loop time of simulation time `ms`."""
        return self.started_at + ms / 1000

    def run_soon(self, callback: Callable[..., Any], *args: Any) -> None:
        self.loop.call_soon(callback, *args)

    def resolve_topic_ids(self, topic_ids: Iterable[str], done: Callable[[dict[str, str]], None]) -> None:
        """Learn the names of `topic_ids` (and of every topic), then call `done(names)`."""
        if self._resolving is None:
            self._resolving = asyncio.ensure_future(self._learn_topics())
            self._resolving.add_done_callback(self._resolved)
        wanted = tuple(topic_ids)
        self._resolving.add_done_callback(
            lambda _: done({t: self.topic_names[t] for t in wanted if t in self.topic_names}))

    def _resolved(self, future: asyncio.Future) -> None:
        self._resolving = None
        if not future.cancelled():
            future.exception()  # retrieved: a failed lookup is asked again by the next unresolved id

    async def _learn_topics(self) -> None:
        await self.learn_topics(None)

    async def learn_topics(self, topics: Optional[Iterable[str]]) -> set[str]:
        """Metadata for `topics` (None: every topic): remember ids, names and partition counts;
        the names the cluster does not have."""
        connection = await self.link.bootstrap_connection()
        wanted = None if topics is None else list(topics)

        def build(cls: type, version: int) -> Any:
            return cls(topics=None if wanted is None else [cls.MetadataRequestTopic(name=t) for t in wanted],
                       allow_auto_topic_creation=False)

        try:
            response = await connection.call(METADATA, (10, 12), build)
        except ConnectionFailed as exc:
            raise OpsError(f"Metadata failed: {exc.message}") from None
        missing = set()
        for topic in response.topics:
            if topic.error_code == 3:  # UNKNOWN_TOPIC_OR_PARTITION
                missing.add(topic.name)
                continue
            if topic.topic_id is not None:
                self.topic_names[str(topic.topic_id)] = topic.name
            self.partition_counts[topic.name] = len(topic.partitions)
        return missing

    async def learn_end_offsets(self, topics: Iterable[str]) -> None:
        """The log end offset of every partition of `topics`, as the defaults of `positions`."""
        bootstrap = self.settings.bootstrap

        def ask() -> dict[TopicPartition, Optional[int]]:
            with KafkaClient(bootstrap) as client:
                metadata = client.metadata(list(topics))
                partitions = [(t, p) for t, ps in metadata.partitions.items() for p in ps]
                return list_offsets(client, metadata, partitions, [LATEST])[0]

        ends = await asyncio.to_thread(ask)
        self.positions.update({tp: offset for tp, offset in ends.items() if offset is not None})

    async def fetch_positions(self, slot: int, partitions: Iterable[TopicPartition]) -> None:
        """The group's committed offsets of `partitions`, now theirs to resume from (OffsetFetch)."""
        call = offset_fetch_call(None, self.settings.group)  # type: ignore[arg-type]
        try:
            committed = parse_offset_fetch(await self.link.send(slot, call.key, call.versions, call.build),
                                           self.settings.group)
        except (ConnectionFailed, OpsError):
            return  # the end offsets stay the positions: the commit before revoking tells if it mattered
        for tp in partitions:
            if tp in committed:
                self.positions[tp] = committed[tp]

    def offsets_to_commit(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        return {tp: self.positions[tp] for tp in partitions if tp in self.positions}
