"""DescribeProducers (61), DescribeTransactions (65), ListTransactions (66) and WriteTxnMarkers
(27), for `groupctl transactions`: any Kafka cluster since 3.0 (KIP-664) and groupctl's node
serve them.

Each goes to a chosen node: ListTransactions to every broker (each answers for the transactional
ids it coordinates), DescribeTransactions to an id's coordinator, DescribeProducers to a
partition's leader, WriteTxnMarkers with an abort marker to a partition's leader (what Kafka's
Admin.abortTransaction sends). Answers are returned as the broker gave them, errors included: what an error
means to the operator is `groupctl.ops.transactions`'s business.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from groupctl.client.kafka import Call, KafkaClient, Node

WRITE_TXN_MARKERS = 27
DESCRIBE_PRODUCERS = 61
DESCRIBE_TRANSACTIONS = 65
LIST_TRANSACTIONS = 66


@dataclass(frozen=True)
class Listed:
    """One broker's ListTransactions answer: (transactional id, producer id, state) per id."""

    error_code: int
    unknown_state_filters: tuple[str, ...]
    transactions: tuple[tuple[str, int, str], ...]


@dataclass(frozen=True)
class Described:
    """One transactional id as its coordinator describes it (error_code != 0: nothing else)."""

    transactional_id: str
    error_code: int
    state: str
    timeout_ms: int
    start_ms: int
    producer_id: int
    producer_epoch: int
    partitions: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class ActiveProducer:
    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int
    current_txn_start_offset: int


@dataclass(frozen=True)
class PartitionProducers:
    topic: str
    partition: int
    error_code: int
    error_message: Optional[str]
    producers: tuple[ActiveProducer, ...]


def list_transactions(client: KafkaClient, nodes: Sequence[Node], *, states: Sequence[str] = (),
                      producer_ids: Sequence[int] = (), duration_ms: int = -1) -> list[Listed]:
    """ListTransactions at each of `nodes`, pipelined; answers in `nodes` order. A duration
    filter needs v1 (Kafka 3.8): an older broker is Unsupported rather than ignoring it."""

    def build(cls: type, version: int) -> Any:
        fields: dict[str, Any] = {"state_filters": list(states), "producer_id_filters": list(producer_ids)}
        if version >= 1:
            fields["duration_filter"] = duration_ms
        if version >= 2:
            fields["transactional_id_pattern"] = None
        return cls(**fields)

    versions = (1, 2) if duration_ms >= 0 else (0, 2)
    responses = client.call_many([Call(node, LIST_TRANSACTIONS, versions, build) for node in nodes])
    return [Listed(r.error_code, tuple(r.unknown_state_filters or ()),
                   tuple((t.transactional_id, t.producer_id, t.transaction_state) for t in r.transaction_states or ()))
            for r in responses]


def describe_transactions(client: KafkaClient, node: Optional[Node], transactional_ids: Sequence[str]) -> list[Described]:
    """DescribeTransactions of `transactional_ids` at `node` (their coordinator)."""

    def build(cls: type, version: int) -> Any:
        return cls(transactional_ids=list(transactional_ids))

    response = client.call(node, DESCRIBE_TRANSACTIONS, (0, 0), build)
    return [Described(s.transactional_id, s.error_code, s.transaction_state, s.transaction_timeout_ms,
                      s.transaction_start_time_ms, s.producer_id, s.producer_epoch,
                      tuple((t.topic, p) for t in s.topics or () for p in t.partitions or ()))
            for s in response.transaction_states]


def describe_producers(client: KafkaClient, node: Optional[Node],
                       partitions: Mapping[str, Sequence[int]]) -> list[PartitionProducers]:
    """DescribeProducers of `partitions` (topic -> partition numbers) at `node` (their leader)."""

    def build(cls: type, version: int) -> Any:
        return cls(topics=[cls.TopicRequest(name=topic, partition_indexes=list(numbers))
                           for topic, numbers in partitions.items()])

    response = client.call(node, DESCRIBE_PRODUCERS, (0, 0), build)
    return [PartitionProducers(topic.name, p.partition_index, p.error_code, p.error_message,
                               tuple(ActiveProducer(s.producer_id, s.producer_epoch, s.last_sequence, s.last_timestamp,
                                                    s.coordinator_epoch, s.current_txn_start_offset)
                                     for s in p.active_producers or ()))
            for topic in response.topics for p in topic.partitions]


def write_abort_marker(client: KafkaClient, node: Optional[Node], topic: str, partition: int, producer_id: int,
                       producer_epoch: int, coordinator_epoch: int) -> list[tuple[str, int, int]]:
    """WriteTxnMarkers of one abort marker for the producer's transaction on `topic`-`partition`
    at `node` (its leader): (topic, partition, error code) of each partition answered. v0 for
    Kafka before 4.0, v1 (flexible) after; v2's transaction version is left at its default, as
    Kafka's admin client leaves it."""

    def build(cls: type, version: int) -> Any:
        marker = cls.WritableTxnMarker
        return cls(markers=[marker(producer_id=producer_id, producer_epoch=producer_epoch, transaction_result=False,
                                   topics=[marker.WritableTxnMarkerTopic(name=topic, partition_indexes=[partition])],
                                   coordinator_epoch=coordinator_epoch)])

    response = client.call(node, WRITE_TXN_MARKERS, (0, 2), build)
    return [(t.name, p.partition_index, p.error_code)
            for m in response.markers if m.producer_id == producer_id for t in m.topics for p in t.partitions]
