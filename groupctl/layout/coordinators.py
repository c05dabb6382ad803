"""A coordinator cluster's documents under `/coordinators` (groupctl's own; docs/zookeeper-layout.md):

- `/coordinators/config`: `{"version": 1, "group_partitions": n}`, written once by the first
  node of a cluster; later nodes and the tools read n from it (50 while it is absent).
- `/coordinators/partitions/<p>`: `{"version": 1, "epoch", "node_id", "elected_at_ms"}`, the last
  election of group partition p; the epoch grows with every election.
- `/coordinators/partitions/<p>/leader` (ephemeral): `{"node_id", "epoch"}`, present while that
  node leads p.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from groupctl.layout.codec import encode, integer, read
from groupctl.layout.paths import COORDINATORS_CONFIG, leader_path, partition_path

VERSION = 1
MAX_GROUP_PARTITIONS = 10_000
"""The most group partitions a cluster may have."""


@dataclass(frozen=True)
class ClusterConfig:
    group_partitions: int

    def encode(self) -> bytes:
        return encode({"version": VERSION, "group_partitions": self.group_partitions})

    @classmethod
    def decode(cls, data: Optional[bytes]) -> "ClusterConfig":
        document = read(COORDINATORS_CONFIG, data, VERSION)
        return cls(integer(COORDINATORS_CONFIG, document, "group_partitions", minimum=1, maximum=MAX_GROUP_PARTITIONS))


@dataclass(frozen=True)
class PartitionElection:
    """The last election of a group partition."""

    epoch: int
    node_id: int
    elected_at_ms: Optional[int] = None

    def encode(self) -> bytes:
        return encode({"version": VERSION, "epoch": self.epoch, "node_id": self.node_id,
                       "elected_at_ms": self.elected_at_ms})

    @classmethod
    def decode(cls, partition: int, data: Optional[bytes]) -> "PartitionElection":
        path = partition_path(partition)
        document = read(path, data, VERSION)
        return cls(epoch=integer(path, document, "epoch", minimum=0), node_id=integer(path, document, "node_id"),
                   elected_at_ms=integer(path, document, "elected_at_ms", default=None))


@dataclass(frozen=True)
class PartitionLeader:
    """The node leading a group partition now, at the epoch it was elected in."""

    node_id: int
    epoch: int

    def encode(self) -> bytes:
        return encode({"node_id": self.node_id, "epoch": self.epoch})

    @classmethod
    def decode(cls, partition: int, data: Optional[bytes]) -> "PartitionLeader":
        path = leader_path(partition)
        document = read(path, data, VERSION)
        return cls(node_id=integer(path, document, "node_id"), epoch=integer(path, document, "epoch"))
