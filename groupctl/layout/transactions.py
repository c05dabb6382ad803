"""A transactional id's state, `/transactions/<transactional-id>` (docs/zookeeper-layout.md):

`{"version": 1, "transactional_id", "producer_id", "previous_producer_id", "producer_epoch",
"last_producer_epoch", "timeout_ms", "state", "partitions": {"<topic>": [p, ...]}, "start_ms",
"last_update_ms"}`, the whole state after a transition (Kafka's transaction log value), rewritten
by the id's coordinator before it answers the request that changed it and read when a node starts
coordinating the id's partition.

Invariants:
- The document is the state, never a delta: loading keeps the one document per id.
- `state` is one of Kafka's transaction state names (`STATES`); producer ids are >= -1, epochs
  within -1..32767 (Kafka's short), the timeout positive.
- `partitions` lists each topic's partitions in ascending order, topics sorted, so equal states
  encode to equal bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, FrozenSet, Optional, Tuple

from groupctl.layout.codec import LayoutError, encode, integer, read, text
from groupctl.layout.paths import transaction_path

VERSION = 1
STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead",
          "PrepareEpochFence")
"""Kafka's transaction state names, as DescribeTransactions reports them."""
MAX_EPOCH = 32767


@dataclass(frozen=True)
class TransactionDocument:
    transactional_id: str
    producer_id: int
    previous_producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    timeout_ms: int
    state: str
    partitions: FrozenSet[Tuple[str, int]]
    start_ms: int
    last_update_ms: int

    def encode(self) -> bytes:
        topics: dict[str, list[int]] = {}
        for topic, partition in sorted(self.partitions):
            topics.setdefault(topic, []).append(partition)
        return encode({"version": VERSION, "transactional_id": self.transactional_id,
                       "producer_id": self.producer_id, "previous_producer_id": self.previous_producer_id,
                       "producer_epoch": self.producer_epoch, "last_producer_epoch": self.last_producer_epoch,
                       "timeout_ms": self.timeout_ms, "state": self.state, "partitions": topics,
                       "start_ms": self.start_ms, "last_update_ms": self.last_update_ms})

    @classmethod
    def decode(cls, transactional_id: str, data: Optional[bytes]) -> "TransactionDocument":
        """The document stored for `transactional_id`; a LayoutError when it is malformed, newer,
        or names another id."""
        path = transaction_path(transactional_id)
        document = read(path, data, VERSION)
        stored_id = text(path, document, "transactional_id")
        if stored_id != transactional_id:
            raise LayoutError(path, f'"transactional_id" is {stored_id!r}, not the id of its path')
        state = text(path, document, "state")
        if state not in STATES:
            raise LayoutError(path, f'"state" must be one of {", ".join(STATES)}, not {state!r}')
        return cls(
            transactional_id=stored_id,
            producer_id=integer(path, document, "producer_id", minimum=-1),
            previous_producer_id=integer(path, document, "previous_producer_id", minimum=-1),
            producer_epoch=integer(path, document, "producer_epoch", minimum=-1, maximum=MAX_EPOCH),
            last_producer_epoch=integer(path, document, "last_producer_epoch", minimum=-1, maximum=MAX_EPOCH),
            timeout_ms=integer(path, document, "timeout_ms", minimum=1),
            state=state,
            partitions=_partitions(path, document.get("partitions")),
            start_ms=integer(path, document, "start_ms", minimum=-1),
            last_update_ms=integer(path, document, "last_update_ms"))


def _partitions(path: str, value: Any) -> FrozenSet[Tuple[str, int]]:
    if not isinstance(value, dict) or not all(
            isinstance(topic, str) and isinstance(numbers, list)
            and all(type(number) is int and number >= 0 for number in numbers)
            for topic, numbers in value.items()):
        raise LayoutError(path, f'"partitions" must be an object of {{"<topic>": [partition, ...]}}, not {value!r}')
    return frozenset((topic, number) for topic, numbers in value.items() for number in numbers)
