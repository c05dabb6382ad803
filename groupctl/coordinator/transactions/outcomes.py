"""What the transaction coordinator hands back to the shell: answers, records, markers, views."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, FrozenSet, Optional

from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.transactions.records import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    Partition,
    TransactionRecord,
)


@dataclass(frozen=True)
class TxnReply:
    """The answer to a transactional request: the error, and for InitProducerId the producer id
    and epoch the producer is to use."""

    error: ErrorCode
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH


@dataclass(frozen=True)
class Outcome:
    """`reply` is sent once `record` (when there is one) is persisted and handed back through
    `TransactionCoordinator.written`; when the write fails the shell calls `write_failed` and
    answers with the store's error instead. Work the coordinator starts itself (a timed-out
    transaction's abort, a completion) has no reply. `events` are journal events
    (`groupctl.coordinator.journal`) to write once `record` is persisted, never when its write fails."""

    reply: Optional[TxnReply]
    record: Optional[TransactionRecord] = None
    events: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class MarkerWrite:
    """Write a commit or abort marker for `producer_id`/`producer_epoch` to every partition, then
    call `TransactionCoordinator.markers_written(this MarkerWrite, ...)`. Retried until written
    for as long as `TransactionCoordinator.completing` says it is the transaction's completion,
    as Kafka's marker channel retries while it coordinates the id."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    commit: bool
    partitions: FrozenSet[Partition]


@dataclass(frozen=True)
class TransactionView:
    """One transaction as DescribeTransactions (65) shows it."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    state: str
    timeout_ms: int
    start_ms: int
    partitions: FrozenSet[Partition]


@dataclass(frozen=True)
class Described:
    error: ErrorCode
    view: Optional[TransactionView] = None


@dataclass(frozen=True)
class Listed:
    """ListTransactions (66): the matching transactions and the state filters no state has."""

    transactions: tuple[TransactionView, ...]
    unknown_state_filters: tuple[str, ...] = ()
