"""Transaction markers on this node (Kafka's WriteTxnMarkers, the broker's side), and which node
each partition of a completing transaction is to be written on (the coordinator's side).

`write` is the one code path for a marker this node writes: the WriteTxnMarkers handler calls
it for a peer's (or an admin client's) request, the transaction coordinator for the partitions
this node leads. A data partition gets the marker in its log (`PartitionLog.append_marker`,
which checks the producer epoch and the coordinator epoch); an offsets partition
(`__consumer_offsets` p, a group partition) gets the group coordinator's completion: every
group placed on p holding pending offsets of the producer commits or drops them
(`Node.complete_txn_partition`).

Errors per partition, as Kafka's KafkaApis.handleWriteTxnMarkersRequest answers them: a topic or
partition that does not exist UNKNOWN_TOPIC_OR_PARTITION; a partition this node does not lead
now (another node does, this node is still raising its leader epochs, or its group partition is
loading or moving) NOT_LEADER_OR_FOLLOWER, which the coordinator retries at the leader it finds
then; an epoch older than the producer's INVALID_PRODUCER_EPOCH, a coordinator epoch older than
the last marker's TRANSACTION_COORDINATOR_FENCED (a data partition's log and an offsets
partition's store both keep it per producer); a log that cannot be opened or written
KAFKA_STORAGE_ERROR.

Invariants:
- A marker answered NONE is durable: in the log (page cache, as every append) or, for an
  offsets partition, in the store.
- Routing (`route`) decides from the topic registry and the election as they are when it is
  called; nothing is remembered between two rounds of a completion, so a partition whose leader
  moved is sent to its new leader, and a topic deleted meanwhile is dropped (Kafka's marker
  channel drops the markers of partitions no longer in its metadata).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Union

from groupctl.coordinator.errors import ErrorCode
from groupctl.log import (
    InvalidProducerEpochError,
    LogError,
    PartitionDeletedError,
    TransactionCoordinatorFencedError,
)

log = logging.getLogger(__name__)

OFFSETS_TOPIC = "__consumer_offsets"
"""The name a group partition has in a transaction (Kafka's topic; this node keeps offsets in
the metadata store, so the marker of one of its partitions is the group coordinator's
completion, not a log append)."""

Partition = tuple[str, int]


@dataclass(frozen=True)
class Marker:
    """One WriteTxnMarkers marker: commit (True) or abort of the producer's transaction."""

    producer_id: int
    producer_epoch: int
    commit: bool
    coordinator_epoch: int


_NOT_SERVED_NOW = (ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
                   ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.REQUEST_TIMED_OUT)
"""The group coordinator's answers Kafka turns into NOT_LEADER_OR_FOLLOWER for the transaction
coordinator, which expects partition errors."""


async def write(node: Any, marker: Marker, partitions: Iterable[Partition]) -> dict[Partition, ErrorCode]:
    """Write `marker` to each of `partitions` on this node; the error of each (NONE: written)."""
    return {partition: await _write_one(node, marker, partition) for partition in dict.fromkeys(partitions)}


async def _write_one(node: Any, marker: Marker, partition: Partition) -> ErrorCode:
    topic, index = partition
    if topic == OFFSETS_TOPIC:
        return await _complete_offsets(node, marker, index)
    record = node.topics.get(topic)
    replicas = None if record is None else record.replicas.get(index)
    if replicas is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if not replicas or replicas[0] != node.config.node_id or not node.logs.leading:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER
    try:
        partition_log = await node.logs.open(topic, index)
        partition_log.append_marker(marker.producer_id, marker.producer_epoch, marker.commit,
                                    marker.coordinator_epoch)
    except PartitionDeletedError:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    except InvalidProducerEpochError:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    except TransactionCoordinatorFencedError:
        return ErrorCode.TRANSACTION_COORDINATOR_FENCED
    except (LogError, OSError):
        log.exception("cannot write a transaction marker to %s-%d", topic, index)
        return ErrorCode.KAFKA_STORAGE_ERROR
    return ErrorCode.NONE


async def _complete_offsets(node: Any, marker: Marker, index: int) -> ErrorCode:
    if not 0 <= index < node.placement.partitions:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    try:
        error = await node.complete_txn_partition(index, marker.producer_id, marker.producer_epoch, marker.commit,
                                                  marker.coordinator_epoch)
    except Exception as exc:  # noqa: BLE001 - the node's CoordinatorUnavailable: the store write failed
        log.warning("offsets partition %d did not take a transaction marker: %s", index, exc)
        return ErrorCode.NOT_LEADER_OR_FOLLOWER
    return ErrorCode.NOT_LEADER_OR_FOLLOWER if error in _NOT_SERVED_NOW else error


# -- the coordinator's side ---------------------------------------------------------------------

DROPPED = "dropped"
"""What `leader_of` answers for a partition that no longer exists: its marker is not written."""

Leader = Union[int, None, str]
"""A node id; None while the partition has no live leader (tried again later); DROPPED."""


@dataclass(frozen=True)
class Routes:
    """A transaction's partitions still to be written, by the node leading each now."""

    by_node: dict[int, frozenset[Partition]] = field(default_factory=dict)
    waiting: frozenset[Partition] = frozenset()  # no live leader now
    dropped: frozenset[Partition] = frozenset()  # the topic or partition is gone


def route(partitions: Iterable[Partition], leader_of: Callable[[Partition], Leader]) -> Routes:
    """Group `partitions` by the node `leader_of` names for each."""
    by_node: dict[int, set[Partition]] = {}
    waiting: set[Partition] = set()
    dropped: set[Partition] = set()
    for partition in partitions:
        leader = leader_of(partition)
        if leader == DROPPED:
            dropped.add(partition)
        elif leader is None:
            waiting.add(partition)
        else:
            by_node.setdefault(leader, set()).add(partition)
    return Routes({node: frozenset(p) for node, p in sorted(by_node.items())}, frozenset(waiting), frozenset(dropped))


def leader_in(node: Any) -> Callable[[Partition], Leader]:
    """`leader_of` as this node sees the cluster now: a data partition's first replica (when it
    is live), an offsets partition's elected leader."""
    live = set(node.live_nodes())

    def leader_of(partition: Partition) -> Leader:
        topic, index = partition
        if topic == OFFSETS_TOPIC:
            if not 0 <= index < node.placement.partitions:
                return DROPPED
            return node.election.policy.live_leader(index)
        record = node.topics.get(topic)
        replicas = None if record is None else record.replicas.get(index)
        if replicas is None:
            return DROPPED
        return replicas[0] if replicas and replicas[0] in live else None

    return leader_of


DONE = (ErrorCode.NONE, ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.TRANSACTION_COORDINATOR_FENCED)
"""Partition answers after which the coordinator writes that marker no more: written, or a later
transaction's marker (a newer producer or coordinator epoch) is there already."""


def still_to_write(answers: dict[Partition, ErrorCode]) -> set[Partition]:
    """The partitions to try again (at the leader routing finds next time)."""
    return {partition for partition, error in answers.items() if error not in DONE}


def describe(partitions: Iterable[Partition]) -> str:
    return ", ".join(f"{topic}-{index}" for topic, index in sorted(partitions))

