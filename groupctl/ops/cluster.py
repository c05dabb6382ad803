"""The coordinator cluster as ZooKeeper shows it (`groupctl coordinator status`).

Reads the live nodes (`/brokers/ids`), the group partition count (`/coordinators/config`, 50 when
absent), each partition's leader (`/coordinators/partitions/<p>/leader`) and every group document
(docs/zookeeper-layout.md), and reports per node the partitions it leads and their load: the
groups that hash to them (`groupctl.coordinator.placement.group_partition`, as the nodes place
them) and those groups' members. The JSON keys are a contract (docs/commands.md).

Invariants:
- A chroot under which nothing is registered (`groupctl.ops.zk.empty_chroot_note`) is `NotFound`
  with one line that hints at the chroot, never an outage report: it is almost always a mistyped
  chroot. A cluster whose nodes are all down keeps /coordinators and is reported as an outage.
- One read-only ZooKeeper session; independent reads are pipelined (`ZkSession.get_many`), so
  thousands of groups cost a few round trips, not one per group.
- Not a snapshot: znodes are read one after another while the cluster runs, so a change may be
  seen before or after it happens. A group deleted after it was listed is left out.
- A node is listed when it is registered or leads a partition; one that leads without a
  registration (its session is ending) has `registered` false and no address.
- A group counts the members its document lists; a znode under `/groups` that does not decode as
  a group document (`groupctl.layout.groups`) counts as a group without members.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from groupctl.client.zookeeper import ZkSession
from groupctl.coordinator.placement import group_partition
from groupctl.errors import NotFound
from groupctl.layout.brokers import BrokerRegistration
from groupctl.layout.codec import LayoutError
from groupctl.layout.coordinators import PartitionLeader
from groupctl.layout.any_group import decode_group
from groupctl.layout.paths import GROUPS, decode_name, leader_path
from groupctl.ops.zk import empty_chroot_note, group_partitions, parse_leader, registered_brokers


@dataclass(frozen=True)
class PartitionStatus:
    """One group partition: its leader (None: none now) and the groups placed on it."""

    partition: int
    leader: Optional[int]
    epoch: Optional[int]
    groups: int
    members: int

    def to_json(self) -> dict[str, Any]:
        return {"partition": self.partition, "leader": self.leader, "epoch": self.epoch,
                "groups": self.groups, "members": self.members}


@dataclass(frozen=True)
class NodeStatus:
    """A node and the load of the partitions it leads."""

    node_id: int
    host: Optional[str]  # None when the node leads partitions but is not registered
    port: Optional[int]
    started_at_ms: Optional[int]
    registered: bool
    partitions: tuple[int, ...]  # the group partitions it leads, ascending
    groups: int
    members: int

    def to_json(self) -> dict[str, Any]:
        return {"node_id": self.node_id, "host": self.host, "port": self.port,
                "started_at_ms": self.started_at_ms, "registered": self.registered,
                "partitions": list(self.partitions), "groups": self.groups, "members": self.members}


@dataclass(frozen=True)
class ClusterStatus:
    group_partitions: int
    nodes: tuple[NodeStatus, ...]
    partitions: tuple[PartitionStatus, ...]

    @property
    def leaderless(self) -> tuple[int, ...]:
        """The partitions without a leader now: their groups have no coordinator."""
        return tuple(p.partition for p in self.partitions if p.leader is None)

    @property
    def groups(self) -> int:
        return sum(p.groups for p in self.partitions)

    @property
    def members(self) -> int:
        return sum(p.members for p in self.partitions)

    def to_json(self) -> dict[str, Any]:
        return {"group_partitions": self.group_partitions, "groups": self.groups, "members": self.members,
                "nodes": [n.to_json() for n in self.nodes],
                "leaderless_partitions": list(self.leaderless),
                "partitions": [p.to_json() for p in self.partitions]}


def cluster_status(connect: str, *, auth: Optional[str] = None, timeout_s: Optional[float] = None) -> ClusterStatus:
    """Nodes, partition leaders and the load on each (see the module docstring); NotFound when
    nothing is registered under the chroot. `auth`: the operator's `--zk-auth` value."""
    with ZkSession(connect, auth=auth, timeout_s=timeout_s) as session:
        count = group_partitions(session)
        brokers = registered_brokers(session)
        if not brokers and (note := empty_chroot_note(session)):
            raise NotFound(note)
        leader_nodes = session.get_many([leader_path(p) for p in range(count)])
        leaders = {p: parse_leader(p, node) for p, node in enumerate(leader_nodes) if node is not None}
        components = session.children(GROUPS) or []
        documents = session.get_many([f"{GROUPS}/{c}" for c in components])
    load = {p: [0, 0] for p in range(count)}  # partition -> [groups, members]
    for component, node in zip(components, documents):
        if node is None:
            continue  # deleted since listed
        group = decode_name(component)
        try:
            members = len(decode_group(group, node.data).members)
        except LayoutError:
            members = 0
        tally = load[group_partition(group, count)]
        tally[0] += 1
        tally[1] += members
    partitions = tuple(
        PartitionStatus(p, leaders[p].node_id if p in leaders else None, leaders[p].epoch if p in leaders else None,
                        groups, members)
        for p, (groups, members) in load.items())
    return ClusterStatus(count, _nodes(brokers, leaders, partitions), partitions)


def _nodes(brokers: dict[int, BrokerRegistration], leaders: dict[int, PartitionLeader],
           partitions: tuple[PartitionStatus, ...]) -> tuple[NodeStatus, ...]:
    nodes = []
    for node_id in sorted(brokers.keys() | {leader.node_id for leader in leaders.values()}):
        led = [p for p in partitions if p.leader == node_id]
        broker = brokers.get(node_id)
        nodes.append(NodeStatus(
            node_id=node_id,
            host=broker.host if broker else None,
            port=broker.port if broker else None,
            started_at_ms=broker.started_at_ms if broker else None,
            registered=broker is not None,
            partitions=tuple(p.partition for p in led),
            groups=sum(p.groups for p in led),
            members=sum(p.members for p in led),
        ))
    return tuple(nodes)
