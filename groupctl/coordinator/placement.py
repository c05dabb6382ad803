"""Group placement: which group partition a group belongs to, and whether this node serves it.

A cluster splits groups over a fixed number of group partitions (default 50, like Kafka's
`__consumer_offsets`), by Kafka's own rule: `Utils.abs(groupId.hashCode()) % partitions`, with
Java's `String.hashCode` over UTF-16 code units. So a group lands on the same partition number
as it would in Apache Kafka with the same partition count. Each partition has one leader node,
elected through the metadata store (`groupctl.server.election`); the leader coordinates every
group of the partition.

`Placement` is what the sans-IO core asks before it touches a group: a pure view of this node's
partitions, changed only by the runtime on the event loop (the core never sees a half-changed
view, because the core runs synchronously between the runtime's changes).

Invariants:
- A partition is in at most one of `loading` and `serving`.
- The core holds groups only of partitions in `loading` or `serving`: the runtime loads a
  partition's groups while it is `loading` and removes them when it leaves both.
- `suspended` changes no partition's membership: it only keeps `serving` from being served.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable

from groupctl.coordinator.errors import ErrorCode
from groupctl.defaults import GROUP_PARTITIONS as DEFAULT_GROUP_PARTITIONS


def java_string_hash(text: str) -> int:
    """Java's `String.hashCode()`: a signed 32-bit hash over UTF-16 code units."""
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _group_partition(group_id: str, partitions: int) -> int:
    h = java_string_hash(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


_cached_group_partition = lru_cache(maxsize=1 << 14)(_group_partition)
CACHED_ID_CHARS = 255
"""Only ids this short are cached: every group request asks, so the hash is cached, but ids come
from clients and may be 32767 bytes long; 16,384 of those would hold 512 MiB."""


def group_partition(group_id: str, partitions: int = DEFAULT_GROUP_PARTITIONS) -> int:
    """The group partition of `group_id`: Kafka's `Utils.abs(hashCode) % partitions`
    (`Utils.abs` maps Integer.MIN_VALUE to 0, where Java's `Math.abs` would stay negative)."""
    if len(group_id) > CACHED_ID_CHARS:
        return _group_partition(group_id, partitions)
    return _cached_group_partition(group_id, partitions)


def partition_ranges(partitions: Iterable[int]) -> str:
    """Partition numbers written compactly, for people: {0, 1, 2, 3, 7} -> "0-3,7"; "" for none."""
    runs: list[list[int]] = []
    for n in sorted(set(partitions)):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


@dataclass
class Placement:
    """The group partitions this node leads: `serving` answers requests, `loading` answers
    COORDINATOR_LOAD_IN_PROGRESS while the partition's groups are read from the store, and any
    other partition answers NOT_COORDINATOR. While `suspended` (the connection to the store is
    down and the session may be expiring) served partitions answer COORDINATOR_NOT_AVAILABLE,
    which clients retry after looking the coordinator up again."""

    partitions: int = DEFAULT_GROUP_PARTITIONS
    serving: set[int] = field(default_factory=set)
    loading: set[int] = field(default_factory=set)
    suspended: bool = False  # the store is unreachable: serve nothing, keep every partition

    def partition_of(self, group_id: str) -> int:
        return group_partition(group_id, self.partitions)

    def error(self, group_id: str) -> ErrorCode:
        """NONE when this node serves `group_id` now, else the error to answer for it."""
        return self.partition_error(group_partition(group_id, self.partitions))

    def partition_error(self, partition: int) -> ErrorCode:
        """NONE when this node serves group partition `partition` now, else the error to answer."""
        if partition in self.serving:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE if self.suspended else ErrorCode.NONE
        if partition in self.loading:
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        return ErrorCode.NOT_COORDINATOR

    @classmethod
    def everything(cls, partitions: int = DEFAULT_GROUP_PARTITIONS) -> "Placement":
        """A node that serves every partition (a single node, and the core's unit tests)."""
        return cls(partitions, serving=set(range(partitions)))
