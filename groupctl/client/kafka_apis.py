"""The Kafka APIs the operator tools call: request builders (`*_call`, to pipeline several in one
`KafkaClient.call_many`), parsers (`parse_*`) into plain data, and one-call helpers.

Version ranges are those whose request layout the builders know, chosen so that every Kafka broker
since 2.x and groupctl's coordinator share one: ListGroups 0-5 (v4 adds the state filter, which
`groupctl.ops.groups` also applies for older brokers; v5 the type filter), DescribeGroups 0-6 (v6
answers an unknown group GROUP_ID_NOT_FOUND, before it is Dead), OffsetFetch 2-7 for one group (v2
allows "all partitions") and 8-9 for several in one request (Kafka 3.0+; v10 names topics by id),
FindCoordinator 0-3 (`find_coordinators` pipelines one request per group), OffsetCommit 2-9 (v10
names topics by id), ListOffsets 1-11, DeleteGroups 0-2, OffsetDelete 0, GroupctlDescribeGroup 0.
ConsumerGroupDescribe: `groupctl.client.consumer_group_apis`, which also pipelines it beside
DescribeGroups for whatever learns a group's state and members (`group_state_calls`):
DescribeGroups alone does not describe a KIP-848 consumer group.

Errors: the coordinator-moved codes (COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE,
NOT_COORDINATOR) raise `CoordinatorMoved`; GROUP_ID_NOT_FOUND raises `NotFound`; other group-level
errors raise `OpsError` naming the Kafka error. Per-partition errors are returned, not raised.

`GroupCoordinator.run` is the one retry mechanism of every group-scoped operation: when the
operation raises `CoordinatorMoved` or loses its connection to the coordinator, it asks
FindCoordinator again and runs the whole operation again, with growing pauses, within the client's
timeout. Safe because an operation reads what it needs from the coordinator it runs against; one
that writes must make a repeated run write the same thing (`groupctl.ops.offsets`: a reset is
planned once). As in Kafka's admin client, a write whose answer was lost is sent again, so a group
delete repeated that way reports the group as not found.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, TypeVar

from groupctl.errors import NotFound, OpsError, Unreachable, Unsupported
from groupctl.client.kafka import (
    FIND_COORDINATOR,
    RETRIABLE_COORDINATOR_ERRORS,
    Build,
    Call,
    ClusterMetadata,
    ConnectionFailed,
    KafkaClient,
    Node,
    error_name,
    retry_pauses,
)
from groupctl.layout.codec import LayoutError
from groupctl.layout.any_group import AnyGroupDocument, decode_group
from groupctl.protocol.extensions import DESCRIBE_GROUP_KEY

TopicPartition = tuple[str, int]
T = TypeVar("T")
NO_EPOCHS: Mapping[TopicPartition, int] = MappingProxyType({})
"""No partition's leader epoch: offsets are committed without one (-1)."""

LIST_OFFSETS = 2
OFFSET_COMMIT = 8
OFFSET_FETCH = 9
DESCRIBE_GROUPS = 15
LIST_GROUPS = 16
DELETE_GROUPS = 42
OFFSET_DELETE = 47

LATEST = -1
EARLIEST = -2

GROUP_ID_NOT_FOUND = 69


class CoordinatorMoved(Unreachable):
    """The node asked is not (or not yet) the group's coordinator; find it again and retry."""


class GroupCoordinator:
    """The coordinator of one group: found on first use, kept across operations (a watch's
    long polls), and found again whenever it turns out to have moved."""

    def __init__(self, client: KafkaClient, group: str) -> None:
        self.client = client
        self.group = group
        self._node: Optional[Node] = None

    @property
    def node(self) -> Node:
        """The coordinator as last found (FindCoordinator when not found yet)."""
        if self._node is None:
            self._node = self.client.find_coordinator(self.group)
        return self._node

    def run(self, operation: Callable[[Node], T], *, deadline: Optional[float] = None) -> T:
        """`operation(coordinator)`, run again on the coordinator FindCoordinator names next
        while it raises `CoordinatorMoved` or loses its connection to the coordinator (see the
        module docstring). Retries end within the client's timeout (and by `deadline`, a
        `time.monotonic()` value, when given); then the last failure is raised. Any other
        failure, a lost connection to another node included, is raised at once."""
        until = min(time.monotonic() + self.client.timeout, self.client.deadline)
        pauses = retry_pauses(until if deadline is None else min(until, deadline))
        while True:
            coordinator = self.node
            try:
                return operation(coordinator)
            except (CoordinatorMoved, ConnectionFailed) as exc:
                if isinstance(exc, ConnectionFailed) and exc.node != coordinator:
                    raise
                self._node = None
                pause = next(pauses, None)
                if pause is None:
                    raise
            time.sleep(pause)


def with_coordinator(client: KafkaClient, group: str, operation: Callable[[Node], T]) -> T:
    """`operation(coordinator)` for a one-shot operation: `GroupCoordinator.run`."""
    return GroupCoordinator(client, group).run(operation)


PIPELINED_CALLS = 100
"""The most calls an operation over many groups pipelines in one exchange: few round trips for
hundreds of groups, and what is sent before reading stays far below the socket buffers (a peer
that stops reading while its answers go unread would otherwise stall both sides)."""


def call_in_batches(client: KafkaClient, calls: Sequence[Call]) -> list[Any]:
    """`client.call_many(calls)` in exchanges of at most `PIPELINED_CALLS` calls."""
    answers: list[Any] = []
    for start in range(0, len(calls), PIPELINED_CALLS):
        answers += client.call_many(calls[start:start + PIPELINED_CALLS])
    return answers


def find_coordinators(client: KafkaClient, groups: Sequence[str]) -> dict[str, Node]:
    """The coordinator of each of `groups`, FindCoordinator (v0-3, one group per request)
    pipelined. A group whose answer is an error is left out: `GroupCoordinator` asks again for
    it, with retries."""

    def build(group: str) -> Build:
        return lambda cls, version: cls(key=group, key_type=0)

    answers = call_in_batches(client, [Call(None, FIND_COORDINATOR, (0, 3), build(g)) for g in groups])
    return {g: Node(a.node_id, a.host, a.port) for g, a in zip(groups, answers) if a.error_code == 0}


def _check_group_error(code: int, group: str, what: str) -> None:
    if code == 0:
        return
    if code in RETRIABLE_COORDINATOR_ERRORS:
        raise CoordinatorMoved(f"coordinator for group '{group}' is not available: {error_name(code)}")
    if code == GROUP_ID_NOT_FOUND:
        raise NotFound(f"group '{group}' does not exist")
    raise OpsError(f"{what} for group '{group}' failed: {error_name(code)}")


# -- DescribeGroups --------------------------------------------------------------------------


@dataclass(frozen=True)
class MemberInfo:
    member_id: str
    group_instance_id: Optional[str]
    client_id: str
    client_host: str
    assignment: Mapping[str, tuple[int, ...]]


@dataclass(frozen=True)
class GroupInfo:
    group: str
    exists: bool
    state: str
    protocol_type: str
    protocol: str
    members: tuple[MemberInfo, ...]
    group_type: str = "classic"  # "consumer": a KIP-848 group, as ConsumerGroupDescribe described it
    # (`consumer_group_apis.parse_group_states`)


def describe_groups_call(coordinator: Node, groups: Sequence[str]) -> Call:
    def build(cls: type, version: int) -> Any:
        return cls(groups=list(groups), include_authorized_operations=False)

    return Call(coordinator, DESCRIBE_GROUPS, (0, 6), build)


def _member_assignment(protocol_type: str, data: bytes) -> dict[str, tuple[int, ...]]:
    """{topic: partitions} for protocol type "consumer"; {} for other types (their bytes are
    opaque to groupctl) and for bytes that do not decode."""
    # Imported on first use: its kafka-python message classes cost ~1 ms, which describing a
    # group without members never needs.
    from groupctl.coordinator import consumer_protocol

    if protocol_type != consumer_protocol.CONSUMER_PROTOCOL_TYPE:
        return {}
    return {t: tuple(ps) for t, ps in consumer_protocol.decode_assignment(data).items()}


def parse_describe_groups(response: Any) -> list[GroupInfo]:
    """One GroupInfo per group, in request order; a group that does not exist has exists=False."""
    return [parse_described_group(g) for g in response.groups]


def parse_described_group(g: Any) -> GroupInfo:
    """One group of a DescribeGroups answer (see `parse_describe_groups`)."""
    missing = g.error_code == GROUP_ID_NOT_FOUND or (g.error_code == 0 and g.group_state == "Dead")
    if not missing:
        _check_group_error(g.error_code, g.group_id, "DescribeGroups")
    members = tuple(
        MemberInfo(
            member_id=m.member_id,
            group_instance_id=m.group_instance_id,
            client_id=m.client_id,
            client_host=m.client_host,
            assignment=_member_assignment(g.protocol_type, m.member_assignment),
        )
        for m in g.members
    )
    return GroupInfo(g.group_id, not missing, "Dead" if missing else g.group_state,
                     g.protocol_type, g.protocol_data, members)


# -- ListGroups ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ListedGroup:
    group: str
    protocol_type: str
    state: Optional[str]  # None when the broker's ListGroups version predates states (v0-3)
    group_type: Optional[str] = None  # "classic" or "consumer"; None before ListGroups v5


def list_groups_call(node: Node, states: Sequence[str], types: Sequence[str] = ()) -> Call:
    def build(cls: type, version: int) -> Any:
        return cls(states_filter=list(states), types_filter=list(types))

    return Call(node, LIST_GROUPS, (0, 5), build)


def parse_list_groups(response: Any, node: Node, types: Sequence[str] = ()) -> list[ListedGroup]:
    """The groups `node` listed; Unsupported when `types` should filter them but the node's
    ListGroups predates group types (v5, Kafka 3.8), as Kafka's admin client refuses it."""
    if response.error_code in RETRIABLE_COORDINATOR_ERRORS:
        raise CoordinatorMoved(f"node {node.node_id} cannot list groups yet: {error_name(response.error_code)}")
    if response.error_code:
        raise OpsError(f"listing groups on node {node.node_id} failed: {error_name(response.error_code)}")
    if types and response.version < 5:
        raise Unsupported(f"node {node.node_id} ({node.address}) cannot list groups by type "
                          f"(it serves ListGroups up to v{response.version}; types need v5)")
    has_state, has_type = response.version >= 4, response.version >= 5
    return [ListedGroup(g.group_id, g.protocol_type, g.group_state if has_state else None,
                        g.group_type if has_type else None)
            for g in response.groups]


# -- OffsetFetch -----------------------------------------------------------------------------


def offset_fetch_call(coordinator: Node, group: str) -> Call:
    """Every committed offset of `group` (topics=None: all partitions)."""

    def build(cls: type, version: int) -> Any:
        return cls(group_id=group, topics=None, require_stable=False)

    return Call(coordinator, OFFSET_FETCH, (2, 7), build)


class CommittedOffsets(dict[TopicPartition, int]):
    """{(topic, partition): committed offset} of one group as OffsetFetch answered, carrying the
    leader epoch committed with each offset (`leader_epoch`), so that every report of a committed
    offset can say its epoch. Equal to a plain dict of the same offsets (the epochs aside)."""

    def __init__(self, offsets: Mapping[TopicPartition, int] = MappingProxyType({}),
                 leader_epochs: Mapping[TopicPartition, int] = MappingProxyType({})) -> None:
        super().__init__(offsets)
        self.leader_epochs: dict[TopicPartition, int] = {tp: e for tp, e in leader_epochs.items() if tp in offsets}

    def leader_epoch(self, tp: TopicPartition) -> Optional[int]:
        """The leader epoch committed with the offset of `tp`; None when none was (or no offset)."""
        return self.leader_epochs.get(tp)


def parse_offset_fetch(response: Any, group: str) -> CommittedOffsets:
    """The committed offsets of an `offset_fetch_call` answer, with the leader epochs committed
    with them (OffsetFetch v5+); partitions without a committed offset omitted."""
    _check_group_error(response.error_code, group, "OffsetFetch")
    return _committed(response.topics, group, with_epochs=response.version >= 5)


def _committed(topics: Iterable[Any], group: str, with_epochs: bool) -> CommittedOffsets:
    """The offsets committed (>= 0) and the leader epochs committed with them (>= 0: -1 is none)."""
    offsets, epochs = {}, {}
    for topic in topics:
        for p in topic.partitions:
            if p.error_code:
                _check_group_error(p.error_code, group, "OffsetFetch")
            if p.committed_offset >= 0:
                offsets[(topic.name, p.partition_index)] = p.committed_offset
                if with_epochs and p.committed_leader_epoch >= 0:
                    epochs[(topic.name, p.partition_index)] = p.committed_leader_epoch
    return CommittedOffsets(offsets, epochs)


OFFSET_FETCH_GROUPS_MIN_VERSION = 8


def serves_offset_fetch_groups(client: KafkaClient, node: Node) -> bool:
    """Whether `node` answers OffsetFetch for several groups in one request (v8+, Kafka 3.0+)."""
    served = client.connection(node).api_versions.get(OFFSET_FETCH)
    return served is not None and served[1] >= OFFSET_FETCH_GROUPS_MIN_VERSION


def offset_fetch_groups_call(coordinator: Node, groups: Sequence[str]) -> Call:
    """Every committed offset of each of `groups` (all coordinated by `coordinator`) in one
    request, asked as an admin client asks (no member id, epoch -1: no member check)."""

    def build(cls: type, version: int) -> Any:
        group_cls = cls.OffsetFetchRequestGroup
        return cls(groups=[group_cls(group_id=g, member_id=None, member_epoch=-1, topics=None) for g in groups],
                   require_stable=False)

    return Call(coordinator, OFFSET_FETCH, (OFFSET_FETCH_GROUPS_MIN_VERSION, 9), build)


def parse_offset_fetch_groups(response: Any) -> dict[str, CommittedOffsets | OpsError]:
    """Per group of an `offset_fetch_groups_call` answer: its committed offsets as
    `parse_offset_fetch` reads them, or the error that would raise for it (`CoordinatorMoved`,
    `NotFound`, `OpsError`), so that one group's error does not hide the others' offsets."""
    answers: dict[str, CommittedOffsets | OpsError] = {}
    for g in response.groups:
        try:
            _check_group_error(g.error_code, g.group_id, "OffsetFetch")
            answers[g.group_id] = _committed(g.topics, g.group_id, with_epochs=True)
        except OpsError as exc:
            answers[g.group_id] = exc
    return answers


# -- ListOffsets -----------------------------------------------------------------------------


def list_offsets(
    client: KafkaClient,
    metadata: ClusterMetadata,
    partitions: Iterable[TopicPartition],
    timestamps: Sequence[int],
) -> list[dict[TopicPartition, Optional[int]]]:
    """For each of `timestamps` (LATEST, EARLIEST or epoch ms), the offset per partition.

    One request per (timestamp, partition leader), all pipelined. None: the partition has no
    leader, answered an error, or (for a time) has no record at or after it.
    """
    by_leader: dict[Node, dict[str, list[int]]] = {}
    wanted = sorted(set(partitions))
    for topic, partition in wanted:
        leader = metadata.leader(topic, partition)
        if leader is not None:
            by_leader.setdefault(leader, {}).setdefault(topic, []).append(partition)
    timeout_ms = int(client.timeout * 1000)

    def builder(topics: Mapping[str, list[int]], timestamp: int):
        def build(cls: type, version: int) -> Any:
            topic_cls = cls.ListOffsetsTopic
            part_cls = topic_cls.ListOffsetsPartition
            return cls(
                replica_id=-1, isolation_level=0, timeout_ms=timeout_ms,
                topics=[topic_cls(name=t, partitions=[part_cls(partition_index=p, timestamp=timestamp,
                                                               current_leader_epoch=-1) for p in ps])
                        for t, ps in topics.items()],
            )
        return build

    calls = [Call(leader, LIST_OFFSETS, (1, 11), builder(topics, timestamp))
             for timestamp in timestamps for leader, topics in by_leader.items()]
    responses = iter(client.call_many(calls) if calls else ())
    results = []
    for _ in timestamps:
        result: dict[TopicPartition, Optional[int]] = dict.fromkeys(wanted)
        for _leader in by_leader:
            for topic in next(responses).topics:
                for p in topic.partitions:
                    if p.error_code == 0 and p.offset >= 0:
                        result[(topic.name, p.partition_index)] = p.offset
        results.append(result)
    return results


# -- OffsetCommit ----------------------------------------------------------------------------


def offset_commit_request(group: str, offsets: Mapping[TopicPartition, int], *, generation: int = -1,
                          member_id: str = "", instance_id: Optional[str] = None,
                          leader_epochs: Mapping[TopicPartition, int] = NO_EPOCHS) -> Build:
    """The OffsetCommit builder committing `offsets`: a simple commit by default; a group member
    passes its generation (classic) or member epoch (v9, consumer protocol) and its ids. Each
    offset is committed with its partition's entry in `leader_epochs` (v6+), else with none (-1)."""
    by_topic: dict[str, list[tuple[int, int]]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        by_topic.setdefault(topic, []).append((partition, offset))

    def build(cls: type, version: int) -> Any:
        topic_cls = cls.OffsetCommitRequestTopic
        part_cls = topic_cls.OffsetCommitRequestPartition
        return cls(
            group_id=group, generation_id_or_member_epoch=generation, member_id=member_id,
            group_instance_id=instance_id, retention_time_ms=-1,
            topics=[topic_cls(name=t, partitions=[part_cls(partition_index=p, committed_offset=o,
                                                           committed_leader_epoch=leader_epochs.get((t, p), -1),
                                                           committed_metadata="")
                                                  for p, o in ps])
                    for t, ps in by_topic.items()],
        )

    return build


def commit_offsets(
    client: KafkaClient, coordinator: Node, group: str, offsets: Mapping[TopicPartition, int],
    leader_epochs: Mapping[TopicPartition, int] = NO_EPOCHS,
) -> dict[TopicPartition, int]:
    """A simple commit (generation -1, no member id) of `offsets`, each with its partition's leader
    epoch from `leader_epochs` where given; {(topic, partition): error code}."""
    response = client.call(coordinator, OFFSET_COMMIT, (2, 9),
                           offset_commit_request(group, offsets, leader_epochs=leader_epochs))
    return commit_errors(response)


def commit_errors(response: Any) -> dict[TopicPartition, int]:
    """{(topic, partition): error code} of an OffsetCommit response."""
    return {(t.name, p.partition_index): p.error_code for t in response.topics for p in t.partitions}


# -- DeleteGroups / OffsetDelete ---------------------------------------------------------------


def delete_groups(client: KafkaClient, coordinator: Node, groups: Sequence[str]) -> dict[str, int]:
    """{group: error code} for deleting `groups` (all coordinated by `coordinator`)."""

    def build(cls: type, version: int) -> Any:
        return cls(groups_names=list(groups))

    response = client.call(coordinator, DELETE_GROUPS, (0, 2), build)
    return {r.group_id: r.error_code for r in response.results}


def delete_offsets(
    client: KafkaClient, coordinator: Node, group: str, partitions: Iterable[TopicPartition]
) -> dict[TopicPartition, int]:
    """{(topic, partition): error code} for deleting the committed offsets of `partitions`."""
    by_topic: dict[str, list[int]] = {}
    for topic, partition in sorted(partitions):
        by_topic.setdefault(topic, []).append(partition)

    def build(cls: type, version: int) -> Any:
        topic_cls = cls.OffsetDeleteRequestTopic
        part_cls = topic_cls.OffsetDeleteRequestPartition
        return cls(group_id=group, topics=[topic_cls(name=t, partitions=[part_cls(partition_index=p) for p in ps])
                                           for t, ps in by_topic.items()])

    response = client.call(coordinator, OFFSET_DELETE, (0, 0), build)
    _check_group_error(response.error_code, group, "OffsetDelete")
    return {(t.name, p.partition_index): p.error_code for t in response.topics for p in t.partitions}


# -- groupctl extensions ---------------------------------------------------------------------


def groupctl_document_call(coordinator: Node, group: str, after_generation: int = -1,
                           max_wait_ms: int = 0) -> Call:
    """GroupctlDescribeGroup (32000): the stored group document (and from v1 its pending
    transactional offsets), long-polling for a generation newer than `after_generation` for at
    most `max_wait_ms`."""

    def build(cls: type, version: int) -> Any:
        return cls(group_id=group, after_generation=after_generation, max_wait_ms=max_wait_ms)

    return Call(coordinator, DESCRIBE_GROUP_KEY, (0, 1), build, extra_wait_s=max_wait_ms / 1000)


@dataclass(frozen=True)
class PendingOffset:
    """An offset a producer's open transaction committed to a group (TxnOffsetCommit), held
    until the transaction's marker."""

    producer_id: int
    producer_epoch: int
    topic: str
    partition: int
    offset: int

    def to_json(self) -> dict:
        return {"producer_id": self.producer_id, "producer_epoch": self.producer_epoch, "topic": self.topic,
                "partition": self.partition, "offset": self.offset}


def parse_pending_offsets(response: Any) -> tuple[PendingOffset, ...]:
    """The pending transactional offsets in a GroupctlDescribeGroup answer (none before v1)."""
    return tuple(PendingOffset(p.producer_id, p.producer_epoch, p.topic, p.partition, p.offset)
                 for p in getattr(response, "pending_offsets", None) or ())


def parse_groupctl_document(response: Any, group: str) -> Optional[AnyGroupDocument]:
    """The group's document; None when the group has no document."""
    if response.error_code == GROUP_ID_NOT_FOUND:
        return None
    _check_group_error(response.error_code, group, "GroupctlDescribeGroup")
    if response.document is None:
        return None
    try:
        return decode_group(group, response.document.encode())
    except LayoutError as exc:
        raise OpsError(f"the coordinator sent an unreadable document for group '{group}': {exc}") from None
