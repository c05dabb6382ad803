"""The coordinator cluster layout (docs/zookeeper-layout.md), written by hand for tests of
the tools that read it: registrations, the partition count, partition elections and leaders,
group documents — as the nodes would write them."""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Iterator

from kazoo.client import KazooClient

from groupctl.coordinator.placement import group_partition
from groupctl.layout.groups import GroupDocument, GroupMember
from groupctl.layout.paths import group_path
from groupctl.store.zookeeper import split_connect


class Layout:
    """Writes the cluster layout into one chroot with a plain kazoo client."""

    def __init__(self, client: KazooClient) -> None:
        self.client = client

    def _put(self, path: str, document: dict, *, ephemeral: bool = False) -> None:
        data = json.dumps(document).encode()
        if self.client.exists(path):
            self.client.set(path, data)
        else:
            self.client.create(path, data, ephemeral=ephemeral, makepath=True)

    def register(self, node_id: int, port: int, started_at_ms: int = 1_700_000_000_000) -> None:
        self._put(f"/brokers/ids/{node_id}", {"host": "127.0.0.1", "port": port, "node_id": node_id,
                                              "started_at_ms": started_at_ms}, ephemeral=True)

    def config(self, partitions) -> None:
        self._put("/coordinators/config", {"version": 1, "group_partitions": partitions})

    def elect(self, partition: int, node_id: int, epoch: int, *, leading: bool = True) -> None:
        """The election record of `partition`, and (when `leading`) its leader znode."""
        self._put(f"/coordinators/partitions/{partition}",
                  {"version": 1, "epoch": epoch, "node_id": node_id, "elected_at_ms": 1})
        if leading:
            self._put(f"/coordinators/partitions/{partition}/leader", {"node_id": node_id, "epoch": epoch},
                      ephemeral=True)

    def group(self, group: str, members: int, coordinator: int = 0) -> None:
        self._put(group_path(group), group_document(group, members, coordinator).to_json())


def group_document(group: str, members: int, coordinator: int = 0) -> GroupDocument:
    """A group with `members` members (Stable at generation 1, or Empty at 0 without)."""
    ids = [f"{group}-m{i}" for i in range(members)]
    return GroupDocument(
        group=group, protocol_type="consumer", protocol="range" if ids else None,
        generation=1 if ids else 0, state="Stable" if ids else "Empty", leader=ids[0] if ids else None,
        members=tuple(GroupMember(member_id=m, group_instance_id=None, client_id="app", client_host="/127.0.0.1",
                                  session_timeout_ms=10000, rebalance_timeout_ms=30000, subscription=[],
                                  assignment={}, metadata_bytes=b"", assignment_bytes=b"") for m in ids),
        ownership={}, coordinator=coordinator, updated_at_ms=1)


def group_on(partition: int, partitions: int = 50, prefix: str = "g") -> str:
    """A group name that hashes to `partition` of `partitions`."""
    for i in range(100 * partitions):
        name = f"{prefix}-{i}"
        if group_partition(name, partitions) == partition:
            return name
    raise AssertionError(f"no name with prefix {prefix!r} lands on partition {partition}")


@contextmanager
def cluster_layout(zookeeper_connect: str, zk_connect: str) -> Iterator[Layout]:
    """A `Layout` writing into the chroot of `zk_connect` (created when missing)."""
    chroot = split_connect(zk_connect)[1]
    client = KazooClient(hosts=zookeeper_connect)
    client.start(timeout=10)
    try:
        client.ensure_path(chroot)
        client.chroot = chroot
        yield Layout(client)
    finally:
        client.stop()
        client.close()
