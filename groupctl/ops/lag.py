"""Committed offset, log end offset and lag per partition (shared by describe and offsets show).

Lag follows the one rule of `groupctl.lag.offsets`, which `analyze lag` applies too (to the raw
offsets `lag record` stores): `log_end - committed`, never negative. A committed offset past the
log end (committed with `offsets commit`, or kept after the topic was recreated) has lag 0 and
`ahead_of_log_end` set, so that an operator sees it flagged instead of a negative number that
sums wrongly into a group's total lag. Lag is null when either side is unknown (nothing
committed yet, or the partition's leader could not be asked).

A row reports the leader epoch committed with its offset (`kafka_apis.CommittedOffsets`), so every
JSON row of a committed offset (describe, offsets show, one group or many) carries
`committed_leader_epoch` (null when none was committed); the tables keep kafka-consumer-groups.sh's
columns.

A module of its own so that `group describe` does not import the reset machinery.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Optional

from groupctl.lag.offsets import ahead_of_log_end, consumer_lag
from groupctl.client import kafka_apis as apis
from groupctl.client.kafka_apis import CommittedOffsets, TopicPartition
from groupctl.client.kafka import KafkaClient


@dataclass(frozen=True)
class PartitionOffsets:
    """One partition's committed offset and log end; its lag is derived from them, never stored,
    so that no caller can build a row whose lag disagrees with the rule."""

    topic: str
    partition: int
    committed_offset: Optional[int]
    log_end_offset: Optional[int]
    committed_leader_epoch: Optional[int] = None  # None: committed without one, or nothing committed

    @property
    def lag(self) -> Optional[int]:
        return consumer_lag(self.committed_offset, self.log_end_offset)

    @property
    def ahead_of_log_end(self) -> bool:
        return ahead_of_log_end(self.committed_offset, self.log_end_offset)

    def to_json(self) -> dict:
        return {"topic": self.topic, "partition": self.partition, "committed_offset": self.committed_offset,
                "log_end_offset": self.log_end_offset, "lag": self.lag, "ahead_of_log_end": self.ahead_of_log_end,
                "committed_leader_epoch": self.committed_leader_epoch}


def partition_offsets(
    client: KafkaClient, committed: CommittedOffsets, also: Iterable[TopicPartition] = ()
) -> tuple[PartitionOffsets, ...]:
    """Committed offset (with its leader epoch), log end offset and lag of every committed
    partition and of `also`."""
    partitions = sorted(set(committed) | set(also))
    if not partitions:
        return ()
    metadata = client.metadata(sorted({t for t, _ in partitions}))
    [log_end] = apis.list_offsets(client, metadata, partitions, [apis.LATEST])
    return offset_rows(committed, partitions, log_end)


def offset_rows(committed: CommittedOffsets, partitions: Iterable[TopicPartition],
                log_end: Mapping[TopicPartition, Optional[int]]) -> tuple[PartitionOffsets, ...]:
    """The rows of `partitions` (in their order) from a group's committed offsets and the log ends."""
    return tuple(PartitionOffsets(t, p, committed.get((t, p)), log_end.get((t, p)), committed.leader_epoch((t, p)))
                 for t, p in partitions)
