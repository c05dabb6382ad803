"""Committed offset, log end offset and lag per partition (shared by describe and offsets show).

Lag is `log_end_offset - committed_offset`, not clamped: a negative lag means the committed
offset is past the log end, which an operator wants to see. It is null when either side is
unknown (nothing committed yet, or the partition's leader could not be asked).

A module of its own so that `group describe` does not import the reset machinery.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Optional

from groupctl.ops import kafka_apis as apis
from groupctl.ops.kafka_apis import TopicPartition
from groupctl.ops.kafka_client import KafkaClient


@dataclass(frozen=True)
class PartitionOffsets:
    topic: str
    partition: int
    committed_offset: Optional[int]
    log_end_offset: Optional[int]
    lag: Optional[int]

    def to_json(self) -> dict:
        return {"topic": self.topic, "partition": self.partition, "committed_offset": self.committed_offset,
                "log_end_offset": self.log_end_offset, "lag": self.lag}


def partition_offsets(
    client: KafkaClient, committed: Mapping[TopicPartition, int], also: Iterable[TopicPartition] = ()
) -> tuple[PartitionOffsets, ...]:
    """Committed offset, log end offset and lag of every committed partition and of `also`."""
    partitions = sorted(set(committed) | set(also))
    if not partitions:
        return ()
    metadata = client.metadata(sorted({t for t, _ in partitions}))
    [log_end] = apis.list_offsets(client, metadata, partitions, [apis.LATEST])
    rows = []
    for tp in partitions:
        current, end = committed.get(tp), log_end.get(tp)
        lag = end - current if current is not None and end is not None else None
        rows.append(PartitionOffsets(tp[0], tp[1], current, end, lag))
    return tuple(rows)
