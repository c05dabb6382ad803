"""ZooKeeper inspection for operators: znodes, stored group documents, and their changes.

Invariants:
- Read-only but for one write, a rebalance request (`request_rebalance`): a znode the
  coordinator watches.
- One bounded session per call (`groupctl.client.zookeeper.ZkSession`): connecting and every
  request within `timeout_s` (the operator's `--timeout`; None: the session's default, 6 s);
  running out of time is `Unreachable`, never a hang.
- Every call takes `auth`, the operator's `--zk-auth` value (None: no credentials), for
  ZooKeeper trees whose znodes carry ACLs (docs/security.md); a znode the ACLs keep from these
  credentials is `Refused` naming it.
- A chroot where nothing is registered (`empty_chroot_note`) is almost always a mistyped one:
  `coordinator find` (and `coordinator status`, `groupctl.ops.cluster`) fail saying so, and
  "does not exist" / "no znode" errors carry that note on such a chroot only. Watches keep
  waiting for a group to appear (a cluster may not be started yet), whatever the chroot holds.
- Group names in paths are encoded as the store encodes them (`encode_name`); the legacy Kafka
  0.8 layout `/consumers/<group>/{ids,owners,offsets}`, read for clusters that still carry it,
  uses raw names, as 0.8 wrote them.
- `coordinator_from_zk` finds a group's coordinator as the cluster places groups: the leader of
  its group partition (`groupctl.coordinator.placement`), never the node a document names (only
  its last writer). `watch_documents` may see quick changes as one, so generations can skip
  (and a consumer group's epoch be seen only once it settled).

Formats: `groupctl.layout` and docs/zookeeper-layout.md; `zk show`'s output for both layouts:
docs/commands.md, "ZooKeeper documents".
"""

from __future__ import annotations

import json
import time
from contextlib import closing
from dataclasses import dataclass
from typing import Any, Iterator, Optional

from groupctl.client.zookeeper import Znode, ZnodeStat, ZkSession, normalize_path
from groupctl.coordinator.placement import DEFAULT_GROUP_PARTITIONS, group_partition
from groupctl.errors import BadInput, NotFound, OpsError, Refused, Timeout, Unreachable
from groupctl.layout.brokers import BrokerRegistration, node_id_of
from groupctl.layout.codec import LayoutError, is_number
from groupctl.layout.coordinators import ClusterConfig, PartitionElection, PartitionLeader
from groupctl.layout.any_group import group_from_json
from groupctl.layout.offsets import OffsetsDocument
from groupctl.layout.paths import (
    BROKER_IDS,
    COORDINATORS_CONFIG,
    broker_path,
    decode_name,
    group_path,
    leader_path,
    legacy_group_path,
    offsets_path,
    partition_path,
    rebalance_request_path,
)
from groupctl.layout.rebalance_requests import RebalanceRequest
from groupctl.ops.documents import StoredDocument, milestones, read_group_document

DEFAULT_TREE_DEPTH = 8
DEFAULT_TREE_NODES = 1000
@dataclass(frozen=True)
class ZnodeChildren:
    """A znode's children, sorted (`zk ls`); names are as stored (percent-encoded)."""

    path: str
    children: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "children": list(self.children)}


@dataclass(frozen=True)
class TreeEntry:
    path: str
    depth: int  # 0 for the tree's root
    num_children: int


@dataclass(frozen=True)
class ZnodeTree:
    """A depth-first, sorted walk below `path` (`zk tree`). `truncated` says that nodes exist
    beyond what is listed: below `max_depth`, or after `max_nodes` entries."""

    path: str
    entries: tuple[TreeEntry, ...]
    truncated: bool
    max_depth: int
    max_nodes: int

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "nodes": [{"path": e.path, "depth": e.depth, "num_children": e.num_children}
                      for e in self.entries],
            "truncated": self.truncated,
            "max_depth": self.max_depth,
            "max_nodes": self.max_nodes,
        }


@dataclass(frozen=True)
class ZkGroup:
    """A group as ZooKeeper holds it (`zk show`): groupctl's document unchanged with its offsets,
    or the legacy 0.8 layout in the shape docs/commands.md ("ZooKeeper documents") describes."""

    group: str
    layout: str  # "groupctl" or "kafka-0.8"
    path: str
    document: dict[str, Any]
    stat: ZnodeStat
    offsets: dict[str, dict[str, dict[str, Any]]]

    @property
    def generation(self) -> Optional[int]:
        if self.layout != "groupctl":
            return None
        try:
            return group_from_json(self.group, self.document).generation
        except LayoutError:
            return None

    def to_json(self) -> dict[str, Any]:
        return {"group": self.group, "layout": self.layout, "path": self.path,
                "stat": self.stat.to_json(), "document": self.document, "offsets": self.offsets}


@dataclass(frozen=True)
class ZkCoordinator:
    """Where a group's coordinator listens, according to ZooKeeper: the leader of the group's
    partition. `to_json` keys: node_id, host, port, partition (the group partition), epoch (the
    leader's election epoch; null for the lone-node fallback of `coordinator_from_zk`)."""

    node_id: int
    host: str
    port: int
    partition: int
    epoch: Optional[int]

    def to_json(self) -> dict[str, Any]:
        return {"node_id": self.node_id, "host": self.host, "port": self.port,
                "partition": self.partition, "epoch": self.epoch}


def zk_get(connect: str, path: str, *, auth: Optional[str] = None, timeout_s: Optional[float] = None) -> Znode:
    path = normalize_path(path)
    with ZkSession(connect, auth=auth, timeout_s=timeout_s) as session:
        node = session.get(path)
        if node is None:
            raise _no_znode(session, path)
    return node


def zk_ls(connect: str, path: str, *, auth: Optional[str] = None,
          timeout_s: Optional[float] = None) -> ZnodeChildren:
    path = normalize_path(path)
    with ZkSession(connect, auth=auth, timeout_s=timeout_s) as session:
        children = session.children(path)
        if children is None:
            raise _no_znode(session, path)
    return ZnodeChildren(path, tuple(children))


def zk_tree(connect: str, path: str = "/", *, max_depth: int = DEFAULT_TREE_DEPTH,
            max_nodes: int = DEFAULT_TREE_NODES, auth: Optional[str] = None,
            timeout_s: Optional[float] = None) -> ZnodeTree:
    """The znodes below `path` (itself included, depth 0), depth first in name order, at most
    `max_nodes` entries and `max_depth` levels below `path`."""
    path = normalize_path(path)
    if max_depth < 0 or max_nodes < 1:
        raise BadInput(f"a tree needs max depth >= 0 and max nodes >= 1, not {max_depth} and {max_nodes}")
    entries: list[TreeEntry] = []
    truncated = False
    with ZkSession(connect, auth=auth, timeout_s=timeout_s) as session:
        root = session.get(path)
        if root is None:
            raise _no_znode(session, path)
        stack: list[tuple[str, int]] = [(path, 0)]
        while stack:
            if len(entries) >= max_nodes:
                truncated = True
                break
            node_path, depth = stack.pop()
            children = session.children(node_path)
            if children is None:
                continue  # deleted while walking
            entries.append(TreeEntry(node_path, depth, len(children)))
            if not children:
                continue
            if depth >= max_depth:
                truncated = True
                continue
            prefix = "" if node_path == "/" else node_path
            stack.extend((f"{prefix}/{child}", depth + 1) for child in reversed(children))
    return ZnodeTree(path, tuple(entries), truncated, max_depth, max_nodes)


def zk_show(connect: str, group: str, *, auth: Optional[str] = None, timeout_s: Optional[float] = None) -> ZkGroup:
    """The group's stored document and offsets; the legacy 0.8 layout when groupctl's has no
    such group. NotFound when neither has it."""
    with ZkSession(connect, auth=auth, timeout_s=timeout_s) as session:
        found = _groupctl_group(session, group) or _legacy_group(session, group)
        if found is None:
            raise _group_not_found(session, group)
    return found


def _group_not_found(session: ZkSession, group: str) -> NotFound:
    """"group 'x' does not exist in ZooKeeper", with `empty_chroot_note` when it applies."""
    return _not_found(session, f"group {group!r} does not exist in ZooKeeper")


def _no_znode(session: ZkSession, path: str) -> NotFound:
    """"no znode at PATH", with `empty_chroot_note` when it applies."""
    return _not_found(session, f"no znode at {path}")


def _not_found(session: ZkSession, message: str) -> NotFound:
    note = empty_chroot_note(session)
    return NotFound(f"{message}; {note}" if note else message)


def empty_chroot_note(session: ZkSession) -> Optional[str]:
    """When nothing is registered under the session's chroot, one sentence saying so that hints
    at the chroot (a wrong or missing chroot in --zk is the usual cause); None otherwise.

    "Nothing" is: no node in /brokers/ids (live coordinators, or Kafka brokers), and no
    /coordinators (written by the first coordinator of a cluster and kept after its nodes stop),
    /groups or legacy /consumers. A cluster whose nodes are all down is not nothing: it keeps
    /coordinators, so `coordinator status` still reports it as an outage."""
    top = set(session.children("/") or ())  # None: the chroot itself does not exist
    if top & {"coordinators", "groups", "consumers"} or ("brokers" in top and session.children(BROKER_IDS)):
        return None
    hint = (f"is the chroot {session.chroot!r} right?" if session.chroot
            else "does --zk need a chroot, HOST:PORT/CHROOT?")
    return (f"nothing is registered in ZooKeeper at {session.connect} "
            f"(no node in {BROKER_IDS}, no /coordinators, /groups or /consumers): {hint}")


def _decode_json(node: Znode) -> Any:
    try:
        return json.loads(node.data)
    except ValueError:
        raise OpsError(f"{node.path} does not hold a JSON document") from None


def _groupctl_group(session: ZkSession, group: str) -> Optional[ZkGroup]:
    path = group_path(group)
    node = session.get(path)
    if node is None:
        return None
    document = _decode_json(node)
    if not isinstance(document, dict):
        raise OpsError(f"{path} does not hold a group document")
    offsets: dict[str, dict[str, dict[str, Any]]] = {}
    for component in session.children(offsets_path(group)) or []:
        topic_node = session.get(f"{offsets_path(group)}/{component}")
        if topic_node is None:
            continue  # deleted since listed
        try:
            partitions = OffsetsDocument.decode(topic_node.path, topic_node.data).partitions
        except LayoutError as exc:
            raise OpsError(str(exc)) from None
        offsets[decode_name(component)] = dict(sorted(partitions.items(), key=lambda kv: _partition_key(kv[0])))
    return ZkGroup(group, "groupctl", path, document, node.stat, offsets)


def _partition_key(partition: str) -> tuple[int, str]:
    return (int(partition), "") if is_number(partition) else (1 << 31, partition)


def _legacy_group(session: ZkSession, group: str) -> Optional[ZkGroup]:
    path = legacy_group_path(group)
    root = session.get(path) if path else None
    if root is None:
        return None
    members = []
    for consumer_id in session.children(f"{path}/ids") or []:
        node = session.get(f"{path}/ids/{consumer_id}")
        if node is None:
            continue  # the consumer's ephemeral node went away since listed
        registration = node.document if isinstance(node.document, dict) else {}
        members.append({
            "consumer_id": consumer_id,
            "subscription": registration.get("subscription"),
            "pattern": registration.get("pattern"),
            "timestamp": registration.get("timestamp"),
        })
    ownership = _legacy_partition_values(session, f"{path}/owners", lambda node: node.text)
    offsets = _legacy_partition_values(session, f"{path}/offsets", _legacy_offset)
    document = {"group": group, "members": members, "ownership": ownership}
    return ZkGroup(group, "kafka-0.8", path, document, root.stat,
                   {topic: {p: {"offset": value} for p, value in partitions.items()}
                    for topic, partitions in offsets.items()})


def _legacy_offset(node: Znode) -> Optional[int]:
    text = (node.text or "").strip()
    return int(text) if text.lstrip("-").isdigit() else None


def _legacy_partition_values(session: ZkSession, path: str, read: Any) -> dict[str, dict[str, Any]]:
    """`<path>/<topic>/<partition>` znodes as {topic: {partition: read(znode)}}."""
    values: dict[str, dict[str, Any]] = {}
    for topic in session.children(path) or []:
        partitions: dict[str, Any] = {}
        for partition in sorted(session.children(f"{path}/{topic}") or [], key=_partition_key):
            node = session.get(f"{path}/{topic}/{partition}")
            if node is not None:
                partitions[partition] = read(node)
        values[topic] = partitions
    return values


def coordinator_from_zk(connect: str, group: str, *, auth: Optional[str] = None,
                        timeout_s: Optional[float] = None) -> ZkCoordinator:
    """The node that coordinates `group`: the leader of its group partition (partition count from
    `/coordinators/config`, 50 when absent), whose address is its `/brokers/ids` registration.
    One fallback: a partition that has never had a leader (no `/coordinators/partitions/<p>`)
    while exactly one node is registered is that node's (a lone node starting up, or one from
    before coordinator clusters), with epoch None.
    Unreachable when the partition has no leader (an election in progress, or every node down);
    NotFound when no node is registered at all (saying so, with a hint at the chroot, when
    nothing is under it: `empty_chroot_note`), or the leader's registration is gone."""
    with ZkSession(connect, auth=auth, timeout_s=timeout_s) as session:
        partition = group_partition(group, group_partitions(session))
        leader_node = session.get(leader_path(partition))
        if leader_node is not None:
            leader = parse_leader(partition, leader_node)
            broker_node = session.get(broker_path(leader.node_id))
            broker = parse_broker(leader.node_id, broker_node) if broker_node is not None else None
            if broker is None:
                raise NotFound(f"node {leader.node_id}, the leader of group partition {partition} of group "
                               f"{group!r}, is not registered in {BROKER_IDS}")
            return ZkCoordinator(broker.node_id, broker.host, broker.port, partition, leader.epoch)
        election = session.get(partition_path(partition))
        registered = registered_brokers(session) if election is None else {}
        if election is None and not registered:
            note = empty_chroot_note(session)
            raise NotFound(note or f"no coordinator is registered in ZooKeeper at {connect} ({BROKER_IDS} is empty)")
    if len(registered) == 1:
        [broker] = registered.values()
        return ZkCoordinator(broker.node_id, broker.host, broker.port, partition, None)
    raise Unreachable(f"group partition {partition} (of group {group!r}) has no leader "
                      f"(election in progress or every node down{_last_election(partition, election)})")


def _last_election(partition: int, node: Optional[Znode]) -> str:
    """The note `; last led by node N at epoch E` from the election record
    `/coordinators/partitions/<p>`; "" without a readable record."""
    if node is None:
        return ""
    try:
        election = PartitionElection.decode(partition, node.data)
    except LayoutError:
        return ""
    return f"; last led by node {election.node_id} at epoch {election.epoch}"


def group_partitions(session: ZkSession) -> int:
    """The cluster's group partition count: `/coordinators/config` "group_partitions", or 50
    when the znode is absent (no node has started a cluster yet). OpsError when it is malformed."""
    node = session.get(COORDINATORS_CONFIG)
    if node is None:
        return DEFAULT_GROUP_PARTITIONS
    try:
        return ClusterConfig.decode(node.data).group_partitions
    except LayoutError as exc:
        raise OpsError(str(exc)) from None


def parse_leader(partition: int, node: Znode) -> PartitionLeader:
    """The leader znode of `partition`; OpsError when malformed."""
    try:
        return PartitionLeader.decode(partition, node.data)
    except LayoutError as exc:
        raise OpsError(str(exc)) from None


def registered_brokers(session: ZkSession) -> dict[int, BrokerRegistration]:
    """Every live node by id (malformed registrations are left out)."""
    ids = [node_id for node_id in map(node_id_of, session.children(BROKER_IDS) or []) if node_id is not None]
    nodes = session.get_many([broker_path(node_id) for node_id in ids])
    brokers = (parse_broker(node_id, node) for node_id, node in zip(ids, nodes) if node is not None)
    return {broker.node_id: broker for broker in brokers if broker is not None}


def parse_broker(node_id: int, node: Znode) -> Optional[BrokerRegistration]:
    """The registration at `/brokers/ids/<node_id>`; None when it is malformed."""
    try:
        return BrokerRegistration.decode(node_id, node.data)
    except LayoutError:
        return None


def request_rebalance(connect: str, group: str, *, reason: Optional[str], now_ms: int,
                      auth: Optional[str] = None, timeout_s: Optional[float] = None) -> bool:
    """Ask the group's coordinator for a rebalance through ZooKeeper; True when a request was
    already pending (its reason and time are then replaced). NotFound for a group without a
    document; Refused for a group without members (there is nothing to rebalance)."""
    request = RebalanceRequest(requested_at_ms=now_ms, reason=reason).encode()
    path = rebalance_request_path(group)
    with ZkSession(connect, auth=auth, timeout_s=timeout_s) as session:
        node = session.get(group_path(group))
        if node is None:
            raise _group_not_found(session, group)
        document = read_group_document(group, node.data).document
        if not document.members:
            raise Refused(f"group {group!r} is {document.state}: it has no members to rebalance")
        if session.create(path, request):
            return False
        session.set(path, request)
        return True


def watch_documents(connect: str, group: str, *, deadline: Optional[float] = None, auth: Optional[str] = None,
                    timeout_s: Optional[float] = None) -> Iterator[Optional[StoredDocument]]:
    """The group's current document (None when it has none), then every document whose
    `milestone` differs from the last one yielded (a new generation; for a consumer group also
    its settling at an epoch), and None when the group is deleted. Returns when
    `time.monotonic()` passes `deadline` (None: never)."""
    path = group_path(group)
    with (ZkSession(connect, auth=auth, timeout_s=timeout_s) as session,
          closing(session.watch(path, deadline=deadline)) as changes):
        yield from milestones(read_group_document(group, data) for data in changes)


def zk_watch(connect: str, group: str, *, count: Optional[int] = None, timeout_s: Optional[float] = None,
             auth: Optional[str] = None, connect_timeout_s: Optional[float] = None) -> Iterator[StoredDocument]:
    """Each new group document (a generation different from the previous one; for a consumer
    group, a new group epoch and the group settling at it), starting after the current one.
    Ends after `count` documents (None: never); raises Timeout when `timeout_s` runs out first.
    A group that does not exist yet is waited for. `connect_timeout_s` bounds connecting and each
    read (None: the session's default), not the watch."""
    if count is not None and count < 1:
        raise BadInput(f"count must be at least 1, not {count}")
    if timeout_s is not None and timeout_s <= 0:
        raise BadInput(f"timeout must be positive, not {timeout_s:g}s")
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    seen = 0
    documents = watch_documents(connect, group, deadline=deadline, auth=auth, timeout_s=connect_timeout_s)
    try:
        next(documents, None)  # the current document: not new
        for document in documents:
            if document is None:
                continue  # deleted: its next document will be new
            yield document
            seen += 1
            if count is not None and seen >= count:
                return
    finally:
        documents.close()
    raise Timeout(_timeout_message(group, seen, count, timeout_s, "new document"))


def _timeout_message(group: str, seen: int, count: Optional[int], timeout_s: Optional[float], what: str) -> str:
    wanted = f"{seen} of {count}" if count is not None else str(seen)
    return f"timed out after {timeout_s:g}s watching group {group!r} ({wanted} {what}s seen)"
