"""Transactions as operators see them (`groupctl transactions`), as Kafka's kafka-transactions.sh
(KIP-664) shows them, through any Kafka cluster or groupctl node.

- `list_transactions`: ListTransactions at every broker (each answers for the transactional ids
  it coordinates), then DescribeTransactions of the listed ids at the broker that listed them,
  for the producer epoch, timeout, start time and partitions kafka-transactions.sh's `list` does
  not show.
- `describe_transaction`: DescribeTransactions at the id's coordinator (FindCoordinator, key
  type 1).
- `describe_producers`: DescribeProducers at the partition's leader.
- `find_hanging`: kafka-transactions.sh's `find-hanging`: an open transaction a partition's log
  holds (DescribeProducers) older than the maximum transaction timeout (by its producer's last
  timestamp) whose producer id no coordinator lists, or whose coordinator does not count the
  partition in the transaction: its markers never came, and read_committed consumers of the
  partition are stuck behind it.
- `abort_transaction`: kafka-transactions.sh's `abort` (Admin.abortTransaction): an abort marker
  (WriteTxnMarkers) for the producer's open transaction on one partition, sent to its leader.
  The transaction is named by its start offset (the producer, its epoch and its coordinator
  epoch come from DescribeProducers: the log fences a marker whose coordinator epoch is older
  than the last it saw for the producer) or by those three ids. A dry run unless `execute`.

Invariants:
- Waits are bounded by the operator's `--timeout` (the Bootstrap carries it). A coordinator
  that is loading, moving or cut off from its store (COORDINATOR_LOAD_IN_PROGRESS,
  COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR) is asked again, after finding it again, until the
  bound; any other error is one line naming it: NotFound for an unknown id, topic or partition,
  NotAuthorized for the ACLs, OpsError otherwise. An abort marker a node answers as not the
  partition's leader is sent again, within the same bound, to the leader Metadata names then;
  one the partition fences (an older producer or coordinator epoch) is Refused.
- Results carry `now_ms`, the local clock when they were read: durations are `now_ms` minus a
  start the cluster reported (None when it reported none).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, Sequence, TypeVar

from groupctl.client.kafka import (
    RETRIABLE_COORDINATOR_ERRORS,
    TRANSACTION_KEY,
    BootstrapLike,
    KafkaClient,
    Node,
    error_name,
    retry_pauses,
)
from groupctl.client.transaction_apis import ActiveProducer, Described, PartitionProducers
from groupctl.client.transaction_apis import describe_producers as describe_producers_api
from groupctl.client.transaction_apis import describe_transactions, list_transactions as list_transactions_api
from groupctl.client.transaction_apis import write_abort_marker
from groupctl.errors import BadInput, NotAuthorized, NotFound, OpsError, Refused, Unreachable

NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
TOPIC_AUTHORIZATION_FAILED = 29
TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
TRANSACTIONAL_ID_NOT_FOUND = 105
DEFAULT_MAX_TRANSACTION_TIMEOUT_MS = 15 * 60_000
"""kafka-transactions.sh find-hanging's default (Kafka's transaction.max.timeout.ms)."""
OPEN_STATES = ("Ongoing", "PrepareCommit", "PrepareAbort")

T = TypeVar("T")


def _now_ms() -> int:
    return int(time.time() * 1000)


def _duration(now_ms: int, start_ms: int) -> Optional[int]:
    return max(0, now_ms - start_ms) if start_ms >= 0 else None


@dataclass(frozen=True)
class Transaction:
    """A transactional id as its coordinator holds it."""

    transactional_id: str
    coordinator_id: int
    state: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    start_ms: int  # -1: no transaction started (Empty)
    partitions: tuple[tuple[str, int], ...]

    def duration_ms(self, now_ms: int) -> Optional[int]:
        return _duration(now_ms, self.start_ms)

    def to_json(self, now_ms: int) -> dict[str, Any]:
        return {"transactional_id": self.transactional_id, "coordinator_id": self.coordinator_id,
                "state": self.state, "producer_id": self.producer_id, "producer_epoch": self.producer_epoch,
                "timeout_ms": self.timeout_ms, "start_time_ms": self.start_ms if self.start_ms >= 0 else None,
                "duration_ms": self.duration_ms(now_ms),
                "partitions": [{"topic": t, "partition": p} for t, p in self.partitions]}


@dataclass(frozen=True)
class Transactions:
    now_ms: int
    transactions: tuple[Transaction, ...]
    unknown_state_filters: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"transactions": [t.to_json(self.now_ms) for t in self.transactions],
                "unknown_state_filters": list(self.unknown_state_filters)}


@dataclass(frozen=True)
class PartitionProducer:
    """A producer a partition's log remembers."""

    topic: str
    partition: int
    producer: ActiveProducer

    def to_json(self, now_ms: int) -> dict[str, Any]:
        p = self.producer
        start = p.current_txn_start_offset
        return {"topic": self.topic, "partition": self.partition, "producer_id": p.producer_id,
                "producer_epoch": p.producer_epoch, "last_sequence": p.last_sequence,
                "last_timestamp_ms": p.last_timestamp if p.last_timestamp >= 0 else None,
                "coordinator_epoch": p.coordinator_epoch,
                "current_transaction_start_offset": start if start >= 0 else None,
                "idle_ms": _duration(now_ms, p.last_timestamp)}


@dataclass(frozen=True)
class Producers:
    now_ms: int
    producers: tuple[PartitionProducer, ...]

    def to_json(self) -> dict[str, Any]:
        return {"producers": [p.to_json(self.now_ms) for p in self.producers]}


# -- input --------------------------------------------------------------------------------------

MAX_INT32 = 2 ** 31 - 1
MAX_INT64 = 2 ** 63 - 1


def check_range(option: str, value: int, low: int, high: int) -> None:
    """BadInput unless `value` fits the Kafka field the option fills (int16/32/64 ranges), so an
    out-of-range number is a usage error rather than a request that cannot be encoded."""
    if not low <= value <= high:
        raise BadInput(f"{option} must be {low} to {high}")


# -- list ----------------------------------------------------------------------------------------


def list_transactions(bootstrap: BootstrapLike, *, states: Sequence[str] = (), producer_ids: Sequence[int] = (),
                      duration_ms: Optional[int] = None) -> Transactions:
    """Every transactional id the cluster's coordinators list, with the filters kafka-transactions.sh
    list takes (state names, producer ids, open longer than `duration_ms`), described."""
    if duration_ms is not None:
        check_range("--duration-filter", duration_ms, 0, MAX_INT64)
    for producer_id in producer_ids:
        check_range("--producer-id", producer_id, 0, MAX_INT64)
    with KafkaClient(bootstrap) as client:
        nodes = sorted(client.metadata([]).brokers.values(), key=lambda n: n.node_id)
        listed = _retrying(client, lambda: _list_once(client, nodes, states, producer_ids, duration_ms))
        found: list[Transaction] = []
        unknown: set[str] = set()
        for node, answer in zip(nodes, listed):
            unknown.update(answer.unknown_state_filters)
            ids = [transactional_id for transactional_id, _, _ in answer.transactions]
            if ids:
                found.extend(_described_at(client, node, ids, {i: (p, s) for i, p, s in answer.transactions}))
        now = _now_ms()
    return Transactions(now, tuple(sorted(found, key=lambda t: t.transactional_id)), tuple(sorted(unknown)))


def _list_once(client: KafkaClient, nodes: Sequence[Node], states: Sequence[str], producer_ids: Sequence[int],
               duration_ms: Optional[int]) -> list:
    answers = list_transactions_api(client, nodes, states=states, producer_ids=producer_ids,
                                    duration_ms=-1 if duration_ms is None else duration_ms)
    for node, answer in zip(nodes, answers):
        if answer.error_code != NONE:
            raise _CoordinatorError(answer.error_code, f"node {node.node_id} did not list its transactions: "
                                                       f"{error_name(answer.error_code)}")
    return answers


def _described_at(client: KafkaClient, node: Node, ids: list[str],
                  listed: dict[str, tuple[int, str]]) -> Iterable[Transaction]:
    """The listed ids as `node` describes them; an id that moved or ended in between keeps what
    ListTransactions said of it."""
    for described in describe_transactions(client, node, ids):
        if described.error_code == NONE:
            yield _transaction(node.node_id, described)
        else:
            producer_id, state = listed[described.transactional_id]
            yield Transaction(described.transactional_id, node.node_id, state, producer_id, -1, -1, -1, ())


def _transaction(coordinator_id: int, d: Described) -> Transaction:
    return Transaction(d.transactional_id, coordinator_id, d.state, d.producer_id, d.producer_epoch, d.timeout_ms,
                       d.start_ms, tuple(sorted(d.partitions)))


# -- describe ------------------------------------------------------------------------------------


def describe_transaction(bootstrap: BootstrapLike, transactional_id: str) -> Transactions:
    """The transactional id at its coordinator."""
    if not transactional_id:
        raise BadInput("a transactional id must not be empty")
    with KafkaClient(bootstrap) as client:
        def once() -> Transaction:
            coordinator = client.find_coordinator(transactional_id, TRANSACTION_KEY)
            [described] = describe_transactions(client, coordinator, [transactional_id])
            if described.error_code == TRANSACTIONAL_ID_NOT_FOUND:
                raise NotFound(f"transactional id {transactional_id!r} not found")
            if described.error_code == TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
                raise NotAuthorized(f"not authorized to describe transactional id {transactional_id!r} "
                                    "(needs Describe on the TransactionalId)")
            if described.error_code != NONE:
                raise _CoordinatorError(described.error_code, f"cannot describe transactional id {transactional_id!r}: "
                                                              f"{error_name(described.error_code)}")
            return _transaction(coordinator.node_id, described)

        found = _retrying(client, once)
    return Transactions(_now_ms(), (found,))


# -- producers -----------------------------------------------------------------------------------


def describe_producers(bootstrap: BootstrapLike, topic: str, partition: int) -> Producers:
    """The producers the partition's leader remembers."""
    with KafkaClient(bootstrap) as client:
        leaders = _leaders(client, topic, [partition])
        answers = describe_producers_api(client, leaders[partition], {topic: [partition]})
    return Producers(_now_ms(), tuple(_producers(answers)))


def _leaders(client: KafkaClient, topic: str, partitions: Optional[Sequence[int]]) -> dict[int, Node]:
    """Partition -> its leader (every partition of `topic` for None)."""
    if not topic:
        raise BadInput("a topic name must not be empty")
    metadata = client.metadata([topic])
    if topic in metadata.missing or topic not in metadata.partitions:
        raise NotFound(f"topic {topic!r} not found")
    wanted = sorted(metadata.partitions[topic]) if partitions is None else partitions
    leaders = {}
    for partition in wanted:
        if partition not in metadata.partitions[topic]:
            raise NotFound(f"topic {topic!r} has no partition {partition}")
        leader = metadata.leader(topic, partition)
        if leader is None:
            raise Unreachable(f"partition {topic}-{partition} has no leader")
        leaders[partition] = leader
    return leaders


def _producers(answers: Sequence[PartitionProducers]) -> Iterable[PartitionProducer]:
    for answer in answers:
        where = f"{answer.topic}-{answer.partition}"
        if answer.error_code == TOPIC_AUTHORIZATION_FAILED:
            raise NotAuthorized(f"not authorized to describe the producers of {where} (needs Read on the topic)")
        if answer.error_code == UNKNOWN_TOPIC_OR_PARTITION:
            raise NotFound(f"partition {where} not found")
        if answer.error_code != NONE:
            detail = f" ({answer.error_message})" if answer.error_message else ""
            raise OpsError(f"cannot describe the producers of {where}: {error_name(answer.error_code)}{detail}")
        for producer in sorted(answer.producers, key=lambda p: p.producer_id):
            yield PartitionProducer(answer.topic, answer.partition, producer)


# -- find-hanging --------------------------------------------------------------------------------


def find_hanging(bootstrap: BootstrapLike, *, topic: Optional[str] = None, partition: Optional[int] = None,
                 broker_id: Optional[int] = None,
                 max_transaction_timeout_ms: int = DEFAULT_MAX_TRANSACTION_TIMEOUT_MS) -> Producers:
    """Hanging transactions, as kafka-transactions.sh find-hanging finds them, on the partitions of
    `topic` (one `partition` of it) or of every topic with a replica on `broker_id`."""
    if topic is None and broker_id is None:
        raise BadInput("find-hanging needs --topic or --broker-id to limit the search")
    if partition is not None and topic is None:
        raise BadInput("--partition needs --topic")
    if max_transaction_timeout_ms <= 0:
        raise BadInput("--max-transaction-timeout must be 1 minute or more")
    with KafkaClient(bootstrap) as client:
        by_leader = _partitions_to_search(client, topic, partition, broker_id)
        now = _now_ms()
        candidates = []
        for leader, partitions in by_leader.values():
            for found in _producers(describe_producers_api(client, leader, partitions)):
                p = found.producer
                if p.current_txn_start_offset >= 0 and now - p.last_timestamp > max_transaction_timeout_ms:
                    candidates.append(found)
        hanging = _not_in_coordinators(client, candidates) if candidates else []
    return Producers(now, tuple(hanging))


def _partitions_to_search(client: KafkaClient, topic: Optional[str], partition: Optional[int],
                          broker_id: Optional[int]) -> dict[int, tuple[Node, dict[str, list[int]]]]:
    """Leader id -> (leader, topic -> partitions) of the partitions to search."""
    if topic is not None:
        leaders = {(topic, p): node for p, node in _leaders(client, topic, None if partition is None
                                                            else [partition]).items()}
    else:
        metadata = client.metadata(None)
        leaders = {(t, p): metadata.brokers[leader] for t, partitions in metadata.partitions.items()
                   for p, leader in partitions.items() if leader in metadata.brokers}
    by_leader: dict[int, tuple[Node, dict[str, list[int]]]] = {}
    for (t, p), node in sorted(leaders.items()):
        if broker_id is not None and node.node_id != broker_id:
            continue  # Kafka asks the replicas on the broker; groupctl's partitions have one
        by_leader.setdefault(node.node_id, (node, {}))[1].setdefault(t, []).append(p)
    return by_leader


def _not_in_coordinators(client: KafkaClient, candidates: list[PartitionProducer]) -> list[PartitionProducer]:
    producer_ids = sorted({c.producer.producer_id for c in candidates})
    nodes = sorted(client.metadata([]).brokers.values(), key=lambda n: n.node_id)
    listed = _retrying(client, lambda: _list_once(client, nodes, (), producer_ids, None))
    coordinated: dict[int, Transaction] = {}
    for node, answer in zip(nodes, listed):
        ids = [i for i, producer_id, _ in answer.transactions if producer_id in producer_ids]
        if ids:
            for transaction in _described_at(client, node, ids, {i: (p, s) for i, p, s in answer.transactions}):
                coordinated[transaction.producer_id] = transaction
    return [c for c in candidates if c.producer.producer_id not in coordinated
            or (c.topic, c.partition) not in coordinated[c.producer.producer_id].partitions]


# -- abort ---------------------------------------------------------------------------------------

NOT_LEADER_OR_FOLLOWER = 6
BROKER_NOT_AVAILABLE = 8
REPLICA_NOT_AVAILABLE = 9
CLUSTER_AUTHORIZATION_FAILED = 31
INVALID_PRODUCER_EPOCH = 47
TRANSACTION_COORDINATOR_FENCED = 52
LEADER_MOVED = frozenset({NOT_LEADER_OR_FOLLOWER, BROKER_NOT_AVAILABLE, REPLICA_NOT_AVAILABLE,
                          UNKNOWN_TOPIC_OR_PARTITION})
"""Marker answers after which Kafka's admin client finds the partition's leader again and resends."""
MAX_PRODUCER_EPOCH = 32_767


@dataclass(frozen=True)
class AbortSpec:
    """The transaction to abort on one partition (Kafka's AbortTransactionSpec), with the offset
    it started at when DescribeProducers named it (None when the operator gave the ids)."""

    topic: str
    partition: int
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    start_offset: Optional[int]

    def describe(self) -> str:
        since = "" if self.start_offset is None else f", open since offset {self.start_offset}"
        return (f"the transaction of producer {self.producer_id} (epoch {self.producer_epoch}, coordinator epoch "
                f"{self.coordinator_epoch}) on {self.topic}-{self.partition}{since}")


@dataclass(frozen=True)
class Abort:
    spec: AbortSpec
    aborted: bool  # False: a dry run, nothing was sent

    def to_json(self) -> dict[str, Any]:
        s = self.spec
        return {"topic": s.topic, "partition": s.partition, "producer_id": s.producer_id,
                "producer_epoch": s.producer_epoch, "coordinator_epoch": s.coordinator_epoch,
                "start_offset": s.start_offset, "aborted": self.aborted}


def check_abort_request(partition: int, start_offset: Optional[int], producer_id: Optional[int],
                        producer_epoch: Optional[int], coordinator_epoch: Optional[int]) -> None:
    """The usage kafka-transactions.sh abort accepts, stricter on one point: the start offset and
    the ids together are refused (Kafka silently uses the offset)."""
    ids = {"--producer-id": producer_id, "--producer-epoch": producer_epoch, "--coordinator-epoch": coordinator_epoch}
    given = [name for name, value in ids.items() if value is not None]
    if start_offset is None and not given:
        raise BadInput("name the transaction to abort: --start-offset, or --producer-id, --producer-epoch and "
                       "--coordinator-epoch")
    if start_offset is not None and given:
        raise BadInput(f"give --start-offset or the producer's ids, not both ({', '.join(given)} given)")
    if given and len(given) < len(ids):
        missing = ", ".join(name for name in ids if name not in given)
        raise BadInput(f"--producer-id, --producer-epoch and --coordinator-epoch go together (missing {missing})")
    check_range("--partition", partition, 0, MAX_INT32)
    for option, value, low, high in (("--start-offset", start_offset, 0, MAX_INT64),
                                     ("--producer-id", producer_id, 0, MAX_INT64),
                                     ("--producer-epoch", producer_epoch, 0, MAX_PRODUCER_EPOCH),
                                     ("--coordinator-epoch", coordinator_epoch, -1, MAX_INT32)):
        if value is not None:
            check_range(option, value, low, high)



def spec_at_start_offset(topic: str, partition: int, producers: Sequence[ActiveProducer],
                         start_offset: int) -> AbortSpec:
    """The spec of the open transaction that starts at `start_offset` among the partition's
    producers (DescribeProducers); NotFound, naming the open ones' start offsets, when none does."""
    for p in producers:
        if p.current_txn_start_offset == start_offset:
            return AbortSpec(topic, partition, p.producer_id, p.producer_epoch, max(0, p.coordinator_epoch),
                             start_offset)
    starts = sorted(p.current_txn_start_offset for p in producers if p.current_txn_start_offset >= 0)
    there = f"those open there start at {', '.join(map(str, starts))}" if starts else "none is open there"
    raise NotFound(f"no open transaction starts at offset {start_offset} on {topic}-{partition} ({there})")


def marker_failure(code: int, spec: AbortSpec) -> OpsError:
    """The one-line failure of an abort marker the leader answered `code` (not NONE)."""
    what = f"cannot abort {spec.describe()}: {error_name(code)}"
    if code == CLUSTER_AUTHORIZATION_FAILED:
        return NotAuthorized(f"{what} (WriteTxnMarkers needs ClusterAction on the Cluster)")
    if code == INVALID_PRODUCER_EPOCH:
        return Refused(f"{what} (the partition has seen a newer epoch of the producer)")
    if code == TRANSACTION_COORDINATOR_FENCED:
        return Refused(f"{what} (the partition has seen a marker of a newer coordinator epoch)")
    if code == UNKNOWN_TOPIC_OR_PARTITION:
        return NotFound(what)
    if code in LEADER_MOVED:
        return Unreachable(f"{what} (no leader took the marker in time)")
    return OpsError(what)


def abort_transaction(bootstrap: BootstrapLike, topic: str, partition: int, *, start_offset: Optional[int] = None,
                      producer_id: Optional[int] = None, producer_epoch: Optional[int] = None,
                      coordinator_epoch: Optional[int] = None, execute: bool = False) -> Abort:
    """Abort the transaction `start_offset` or the producer's ids name on `topic`-`partition`
    (with `execute`; otherwise only find it). A coordinator epoch below 0 (a producer that never
    had a marker there) is sent as 0, as Kafka does."""
    check_abort_request(partition, start_offset, producer_id, producer_epoch, coordinator_epoch)
    with KafkaClient(bootstrap) as client:
        leader = _leaders(client, topic, [partition])[partition]
        if start_offset is None:
            assert producer_id is not None and producer_epoch is not None and coordinator_epoch is not None
            spec = AbortSpec(topic, partition, producer_id, producer_epoch, max(0, coordinator_epoch), None)
        else:
            producers = _producers(describe_producers_api(client, leader, {topic: [partition]}))
            spec = spec_at_start_offset(topic, partition, [p.producer for p in producers], start_offset)
        if execute:
            _write_abort(client, leader, spec)
    return Abort(spec, execute)


def _write_abort(client: KafkaClient, leader: Node, spec: AbortSpec) -> None:
    """Send the abort marker to the partition's leader, finding the leader again and resending
    while one answers that it does not lead the partition (within the client's bound)."""
    pauses = retry_pauses(client.deadline)
    while True:
        answers = write_abort_marker(client, leader, spec.topic, spec.partition, spec.producer_id,
                                     spec.producer_epoch, spec.coordinator_epoch)
        codes = [code for topic, partition, code in answers if (topic, partition) == (spec.topic, spec.partition)]
        if len(codes) != 1 or len(answers) != 1:
            raise OpsError(f"node {leader.node_id} answered the abort marker for {spec.topic}-{spec.partition} "
                           f"with {len(answers)} partition results, not one for it")
        if codes[0] == NONE:
            return
        pause = next(pauses, None) if codes[0] in LEADER_MOVED else None
        if pause is None:
            raise marker_failure(codes[0], spec)
        time.sleep(pause)
        leader = _leaders(client, spec.topic, [spec.partition])[spec.partition]


# -- retries -------------------------------------------------------------------------------------


class _CoordinatorError(OpsError):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _retrying(client: KafkaClient, attempt: Callable[[], T]) -> T:
    """`attempt()`, again after a pause while a coordinator answers a retriable error, within the
    client's bound; the last error once the bound is reached."""
    pauses = retry_pauses(client.deadline)
    while True:
        try:
            return attempt()
        except _CoordinatorError as exc:
            if exc.code not in RETRIABLE_COORDINATOR_ERRORS:
                raise OpsError(exc.message) from None
            pause = next(pauses, None)
            if pause is None:
                raise Unreachable(exc.message) from None
            time.sleep(pause)
