"""Consumer groups over the Kafka protocol: find the coordinator, list, describe, delete.

Invariants:
- Works against any Kafka cluster. Only a groupctl coordinator (one serving the
  GroupctlDescribeGroup extension API, 32000) tells `describe_group` a classic group's stored
  generation; elsewhere, or when it cannot read its store, `generation` is null (the Kafka
  protocol does not expose a classic group's generation to admin clients).
- Both group types: `describe_group` asks ConsumerGroupDescribe (69) beside DescribeGroups when
  the coordinator serves it, and a group it describes is a KIP-848 consumer group (epochs,
  assignor, target assignments; its `generation` is its group epoch); any other group is
  "classic", as Kafka's admin client decides. `list_groups` reports ListGroups v5's group type
  (null from brokers before v5, which cannot filter by type either).
- Group ids an operator gives are checked before anything is sent (`check_group_id`): Kafka has
  no empty group id, and a classic-protocol string carries at most 32767 bytes.
- Describe and delete go through `kafka_apis.with_coordinator`: they follow the group to its new
  coordinator when it moves. In a cluster each node answers ListGroups for its own groups, so
  `list_groups` asks every broker Metadata names (one pipelined exchange), again while one loads.
- `to_json` keys are a contract: docs/commands.md.
- Many groups (`describe_groups`, `list_groups --topic`) cost a few exchanges whatever their
  number, each pipelining at most `kafka_apis.PIPELINED_CALLS` requests; one group's failure
  (it does not exist, its coordinator is gone) is that group's, the others are still answered.

`describe_group` takes five round trips on one connection to a single-node cluster: ApiVersions,
FindCoordinator, one pipelined DescribeGroups + ConsumerGroupDescribe + OffsetFetch +
GroupctlDescribeGroup, Metadata for the group's topics, ListOffsets (one request per partition
leader). No more can be pipelined: each step needs the answer before it (the versions served, the
coordinator, the topics, their leaders). `describe_groups` takes the same five for up to
`GROUPS_PER_DESCRIBE_EXCHANGE` groups of one coordinator, and one describe exchange more per
further batch of that many (one FindCoordinator exchange more per `PIPELINED_CALLS` groups).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Mapping, Optional, Sequence

from groupctl.client import consumer_group_apis as consumer_apis
from groupctl.client.config_apis import GROUP_RESOURCE, ConfigValue, describe_configs
from groupctl.client import kafka_apis as apis
from groupctl.errors import BadInput, NotFound, OpsError, Refused, Unsupported
from groupctl.client.kafka import (
    DEFAULT_TIMEOUT,
    BootstrapLike,
    Call,
    ConnectionFailed,
    KafkaClient,
    Node,
    error_name,
    retry_pauses,
)
from groupctl.layout.consumer_groups import CONSUMER
from groupctl.layout.groups import CLASSIC, GROUP_TYPES
from groupctl.ops.lag import PartitionOffsets, offset_rows, partition_offsets
from groupctl.protocol.extensions import DESCRIBE_GROUP_KEY

GROUP_STATES = ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead",
                "Assigning", "Reconciling")
"""Classic and KIP-848 group states, as Kafka spells them."""

NON_EMPTY_GROUP = 68
MAX_GROUP_ID_BYTES = 32767
"""Non-flexible request versions encode strings with an int16 length."""


def check_group_id(group: str) -> str:
    """`group`, or BadInput when it cannot be a group id (empty, or too long for the wire)."""
    if not group:
        raise BadInput("the group id must not be empty")
    if len(group.encode("utf-8")) > MAX_GROUP_ID_BYTES:
        raise BadInput(f"group id '{group[:40]}...' is too long (at most {MAX_GROUP_ID_BYTES} bytes)")
    return group


def check_group_exists(group: str, info: apis.GroupInfo, committed: Mapping[apis.TopicPartition, int]) -> None:
    """NotFound ("group 'x' does not exist") unless the group exists, the one test of every
    command that names an existing group (describe, offsets show/export/reset/import/delete):
    it exists when the coordinator describes it (ConsumerGroupDescribe describes it as a
    consumer group, or DescribeGroups answers neither GROUP_ID_NOT_FOUND nor Dead, see
    `consumer_group_apis.parse_group_states`) or it has committed offsets. So an Empty group that
    only commits offsets exists, and a typo is an error instead of an empty answer."""
    if not info.exists and not committed:
        raise NotFound(f"group '{group}' does not exist")


def _listed_values(values: Sequence[str]) -> list[str]:
    """Repeated and comma-separated values as one list (`--state stable,empty --state dead`, as
    kafka-consumer-groups.sh takes `--state stable,empty`); blanks around items are dropped, an
    empty item stays (and is unknown)."""
    return [item.strip() for value in values for item in value.split(",")]


def normalize_states(states: Sequence[str]) -> tuple[str, ...]:
    """Case-insensitive state names (repeated or comma-separated) -> Kafka's spelling, without
    repeats; BadInput for an unknown state."""
    by_lower = {s.lower(): s for s in GROUP_STATES}
    normalized = []
    for state in _listed_values(states):
        canonical = by_lower.get(state.lower())
        if canonical is None:
            raise BadInput(f"unknown group state '{state}' (one of: {', '.join(GROUP_STATES)})")
        if canonical not in normalized:
            normalized.append(canonical)
    return tuple(normalized)


def normalize_types(types: Sequence[str]) -> tuple[str, ...]:
    """Case-insensitive group types (repeated or comma-separated) -> "classic" / "consumer",
    without repeats; BadInput for an unknown type."""
    normalized = []
    for kind in (t.lower() for t in _listed_values(types)):
        if kind not in GROUP_TYPES:
            raise BadInput(f"unknown group type '{kind}' (one of: {', '.join(GROUP_TYPES)})")
        if kind not in normalized:
            normalized.append(kind)
    return tuple(normalized)


def check_topic_names(topics: Sequence[str]) -> tuple[str, ...]:
    """`topics` without repeats; BadInput for an empty name."""
    if any(not t for t in topics):
        raise BadInput("a topic name must not be empty")
    return tuple(dict.fromkeys(topics))


def find_coordinator(bootstrap: BootstrapLike, group: str, *, timeout: float = DEFAULT_TIMEOUT) -> Node:
    """The group's coordinator per FindCoordinator (`to_json`: node_id, host, port)."""
    check_group_id(group)
    with KafkaClient(bootstrap, timeout=timeout) as client:
        return client.find_coordinator(group)


# -- list ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupListing:
    group: str
    state: Optional[str]  # None only from brokers too old to report states (ListGroups v0-3)
    protocol_type: str
    coordinator: Node
    group_type: Optional[str] = None  # "classic" or "consumer"; None from brokers before ListGroups v5

    def to_json(self) -> dict:
        return {"group": self.group, "state": self.state, "protocol_type": self.protocol_type,
                "group_type": self.group_type, "coordinator": self.coordinator.to_json()}


def list_groups(
    bootstrap: BootstrapLike, states: Sequence[str] = (), types: Sequence[str] = (), topics: Sequence[str] = (),
    *, timeout: float = DEFAULT_TIMEOUT
) -> tuple[GroupListing, ...]:
    """Every group on every broker (sorted by name), only those in `states`, of `types` and with
    committed offsets on one of `topics` if given (Unsupported when a broker cannot tell types:
    ListGroups before v5). States and types may be comma lists (`normalize_states`)."""
    wanted = normalize_states(states)
    kinds = normalize_types(types)
    on_topics = check_topic_names(topics)
    with KafkaClient(bootstrap, timeout=timeout) as client:
        brokers = sorted(client.metadata([]).brokers.values(), key=lambda n: n.node_id)
        listings = []
        for node, listed in _list_on_every_node(client, brokers, wanted, kinds).items():
            stateless = [g.group for g in listed if g.state is None]
            states_of = {}
            if stateless:  # old brokers: ask the node (the groups' coordinator) for the states
                states_of = {i.group: i.state
                             for i in consumer_apis.describe_group_states(client, node, stateless)}
            for g in listed:
                state = g.state if g.state is not None else states_of.get(g.group)
                listings.append(GroupListing(g.group, state, g.protocol_type, node, g.group_type))
        listings = [g for g in listings if (not wanted or g.state in wanted) and (not kinds or g.group_type in kinds)]
        if on_topics:
            committed = _committed_of_many(client, {g.group: g.coordinator for g in listings})
            listings = [g for g in listings if any(t in on_topics for t, _ in committed[g.group])]
    return tuple(sorted(listings, key=lambda g: g.group))


def _committed_of_many(client: KafkaClient, coordinators: Mapping[str, Node]) -> dict[str, apis.CommittedOffsets]:
    """The committed offsets of each group, given the coordinator it was listed by, in few
    exchanges: per coordinator, OffsetFetch requests of `PIPELINED_CALLS` groups where it serves
    v8+, else one request per group, all pipelined. A group whose coordinator moved meanwhile is
    asked again where it went; a group deleted meanwhile has no offsets; other errors raise."""
    by_node: dict[Node, list[str]] = {}
    for group, node in coordinators.items():
        by_node.setdefault(node, []).append(group)
    calls, asked = [], []
    for node, groups in by_node.items():
        if apis.serves_offset_fetch_groups(client, node):
            for start in range(0, len(groups), apis.PIPELINED_CALLS):
                chunk = groups[start:start + apis.PIPELINED_CALLS]
                calls.append(apis.offset_fetch_groups_call(node, chunk))
                asked.append(chunk)
        else:
            calls += [apis.offset_fetch_call(node, group) for group in groups]
            asked += [[group] for group in groups]
    committed: dict[str, apis.CommittedOffsets] = {}
    moved = []
    for groups, answer in zip(asked, apis.call_in_batches(client, calls)):
        for group, found in _offset_fetch_answers(answer, groups).items():
            if isinstance(found, apis.CoordinatorMoved):
                moved.append(group)
            elif isinstance(found, NotFound):
                committed[group] = apis.CommittedOffsets()
            elif isinstance(found, OpsError):
                raise found
            else:
                committed[group] = found
    for group in moved:
        try:
            committed[group] = apis.with_coordinator(client, group, lambda node, g=group: apis.parse_offset_fetch(
                client.call_many([apis.offset_fetch_call(node, g)])[0], g))
        except NotFound:
            committed[group] = apis.CommittedOffsets()
    return committed


def _offset_fetch_answers(answer: Any, groups: Sequence[str]) -> dict[str, apis.CommittedOffsets | OpsError]:
    """Per group asked, its committed offsets or error, from a one-group (v2-7) or a batched
    (v8+) OffsetFetch answer; a group the answer leaves out has none."""
    if answer.version >= apis.OFFSET_FETCH_GROUPS_MIN_VERSION:
        found = apis.parse_offset_fetch_groups(answer)
        return {group: found.get(group, apis.CommittedOffsets()) for group in groups}
    [group] = groups
    try:
        return {group: apis.parse_offset_fetch(answer, group)}
    except OpsError as exc:
        return {group: exc}


def all_group_ids(bootstrap: BootstrapLike, *, timeout: float = DEFAULT_TIMEOUT) -> tuple[str, ...]:
    """The id of every group on every broker, sorted (what `--all-groups` means)."""
    return tuple(g.group for g in list_groups(bootstrap, timeout=timeout))


def _list_on_every_node(client: KafkaClient, brokers: Sequence[Node], states: Sequence[str],
                        types: Sequence[str]) -> dict[Node, list[apis.ListedGroup]]:
    """ListGroups on every node of `brokers` (in their order), asking the nodes that are still
    loading groups again, with growing pauses, within the client's timeout."""
    listed: dict[Node, list[apis.ListedGroup]] = {}
    pending = list(brokers)
    pauses = retry_pauses(client.deadline)
    while True:
        responses = client.call_many([apis.list_groups_call(node, states, types) for node in pending])
        loading = []
        for node, response in zip(pending, responses):
            try:
                listed[node] = apis.parse_list_groups(response, node, types)
            except apis.CoordinatorMoved as exc:
                loading.append(node)
                failure = exc
        if not loading:
            return {node: listed[node] for node in brokers}
        pause = next(pauses, None)
        if pause is None:
            raise failure
        time.sleep(pause)
        pending = loading


# -- describe --------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemberDescription:
    member_id: str
    client_id: str
    client_host: str
    group_instance_id: Optional[str]
    assignment: Mapping[str, tuple[int, ...]]
    member_epoch: Optional[int] = None  # consumer groups only, as the two fields below
    target_assignment: Optional[Mapping[str, tuple[int, ...]]] = None
    upgraded: Optional[bool] = None  # in a consumer group: speaks the consumer protocol (False: a
    # classic member of a group migrating online; None when the coordinator does not tell)

    def to_json(self) -> dict:
        return {"member_id": self.member_id, "group_instance_id": self.group_instance_id,
                "client_id": self.client_id, "client_host": self.client_host, "member_epoch": self.member_epoch,
                "assignment": _partitions_json(self.assignment),
                "target_assignment": None if self.target_assignment is None
                else _partitions_json(self.target_assignment),
                "upgraded": self.upgraded}


def _partitions_json(assignment: Mapping[str, tuple[int, ...]]) -> dict[str, list[int]]:
    return {t: list(ps) for t, ps in sorted(assignment.items())}


@dataclass(frozen=True)
class GroupDescription:
    group: str
    state: str
    protocol_type: str
    protocol: str
    generation: Optional[int]  # None when the server cannot tell (a classic group on any non-groupctl cluster)
    coordinator: Node
    members: tuple[MemberDescription, ...]
    offsets: tuple[PartitionOffsets, ...]  # empty when not requested
    group_type: str = CLASSIC
    group_epoch: Optional[int] = None  # consumer groups only, as the two fields below
    assignment_epoch: Optional[int] = None
    assignor: Optional[str] = None
    configs: Optional[tuple[ConfigValue, ...]] = None  # the group's configs, when asked and the cluster has them
    pending_offsets: tuple[apis.PendingOffset, ...] = ()  # held by open transactions (groupctl's nodes tell)

    def owner(self, topic: str, partition: int) -> Optional[MemberDescription]:
        """The member the partition is assigned to, if any."""
        for member in self.members:
            if partition in member.assignment.get(topic, ()):
                return member
        return None

    def to_json(self) -> dict:
        return {
            "group": self.group,
            "group_type": self.group_type,
            "state": self.state,
            "protocol_type": self.protocol_type,
            "protocol": self.protocol,
            "generation": self.generation,
            "group_epoch": self.group_epoch,
            "assignment_epoch": self.assignment_epoch,
            "assignor": self.assignor,
            "coordinator": self.coordinator.to_json(),
            "members": [m.to_json() for m in self.members],
            "offsets": [o.to_json() for o in self.offsets],
            "configs": None if self.configs is None else [
                {"name": c.name, "value": c.value, "source": c.source} for c in self.configs],
            "pending_offsets": [p.to_json() for p in self.pending_offsets],
        }


def describe_group(
    bootstrap: BootstrapLike, group: str, *, include_offsets: bool = True, include_configs: bool = False,
    timeout: float = DEFAULT_TIMEOUT
) -> GroupDescription:
    """State, protocol, generation, coordinator, members with assignments (a consumer group's
    with epochs and target assignments), (unless `include_offsets` is False) per-partition
    offsets and lag, and (with `include_configs`) its configs; NotFound for an unknown group."""
    check_group_id(group)
    with KafkaClient(bootstrap, timeout=timeout) as client:

        def run(coordinator: Node) -> GroupDescription:
            described, committed = _describe_on(client, coordinator, group, include_offsets)
            if not include_offsets:
                return described
            return replace(described, offsets=partition_offsets(client, committed, _assigned(described)))

        described = apis.with_coordinator(client, group, run)
        return _with_configs(client, [described])[0] if include_configs else described


@dataclass(frozen=True)
class GroupDescriptions:
    """`describe_groups`' answer, each part in the order the groups were asked."""

    described: tuple[GroupDescription, ...]
    failed: Mapping[str, OpsError]  # group -> why it could not be described (NotFound: it does not exist)

    @property
    def failures(self) -> tuple[OpsError, ...]:
        """One per group that could not be described, in the order the groups were asked."""
        return tuple(self.failed.values())


def describe_groups(
    bootstrap: BootstrapLike, groups: Sequence[str], *, include_offsets: bool = True, include_configs: bool = False,
    timeout: float = DEFAULT_TIMEOUT
) -> GroupDescriptions:
    """`describe_group` of each of `groups` (repeats dropped), in few exchanges: FindCoordinator
    for all, pipelined; per coordinator, the describe requests of its groups, pipelined in
    batches; one Metadata and one ListOffsets per leader for the partitions of all.

    A group that cannot be described (it does not exist, its coordinator cannot be reached
    within the timeout, ...) is one failure and the others are still described. A group whose
    coordinator moved or whose coordinator connection dropped is described again on its own,
    following it as `describe_group` does. Invalid group ids are BadInput before anything is
    sent; a bootstrap that cannot be reached raises."""
    unique = [check_group_id(group) for group in dict.fromkeys(groups)]
    with KafkaClient(bootstrap, timeout=timeout) as client:
        found: dict[str, tuple[GroupDescription, apis.CommittedOffsets]] = {}
        failed: dict[str, OpsError] = {}
        located = apis.find_coordinators(client, unique)
        by_node: dict[Node, list[str]] = {}
        for group, node in located.items():
            by_node.setdefault(node, []).append(group)
        again = [group for group in unique if group not in located]
        for node, its_groups in by_node.items():
            again += _describe_many_on(client, node, its_groups, include_offsets, found, failed)
        for group in again:
            try:
                found[group] = apis.with_coordinator(
                    client, group, lambda node, g=group: _describe_on(client, node, g, include_offsets))
            except OpsError as exc:
                failed[group] = exc
        described = [found[g][0] for g in unique if g in found]
        if include_offsets:
            offsets = _offsets_of_many(client, [(found[d.group][1], _assigned(d)) for d in described])
            described = [replace(d, offsets=o) for d, o in zip(described, offsets)]
        if include_configs and described:
            described = _with_configs(client, described)
    return GroupDescriptions(tuple(described), {g: failed[g] for g in unique if g in failed})


GROUPS_PER_DESCRIBE_EXCHANGE = apis.PIPELINED_CALLS // 4
"""`_describe_calls` makes at most four calls per group."""


def _describe_many_on(client: KafkaClient, coordinator: Node, groups: Sequence[str], include_offsets: bool,
                      found: dict, failed: dict) -> list[str]:
    """Describe `groups` on `coordinator`, their calls pipelined in batches, into `found` (group
    -> description without offsets, committed offsets) and `failed` (group -> error); returns
    the groups to describe again on their own (the coordinator moved or its connection dropped)."""
    again: list[str] = []
    for start in range(0, len(groups), GROUPS_PER_DESCRIBE_EXCHANGE):
        batch = groups[start:start + GROUPS_PER_DESCRIBE_EXCHANGE]
        try:
            calls = [_describe_calls(client, coordinator, group, include_offsets) for group in batch]
            answers = iter(client.call_many([call for group_calls in calls for call in group_calls.values()]))
        except ConnectionFailed:  # every call goes to the coordinator: it is the one lost
            again += batch
            continue
        for group, group_calls in zip(batch, calls):
            answered = {name: next(answers) for name in group_calls}
            try:
                found[group] = _read_description(group, coordinator, answered, include_offsets)
            except apis.CoordinatorMoved:
                again.append(group)
            except OpsError as exc:
                failed[group] = exc
    return again


def _describe_on(client: KafkaClient, coordinator: Node, group: str,
                 include_offsets: bool) -> tuple[GroupDescription, apis.CommittedOffsets]:
    """The group as `coordinator` describes it (without offsets) and its committed offsets, in one
    pipelined exchange."""
    calls = _describe_calls(client, coordinator, group, include_offsets)
    answers = dict(zip(calls, client.call_many(list(calls.values()))))
    return _read_description(group, coordinator, answers, include_offsets)


def _describe_calls(client: KafkaClient, coordinator: Node, group: str, include_offsets: bool) -> dict[str, Call]:
    """The calls that describe `group`: DescribeGroups, ConsumerGroupDescribe where served,
    OffsetFetch (with offsets) and GroupctlDescribeGroup on a groupctl coordinator."""
    calls = {"classic": apis.describe_groups_call(coordinator, [group])}
    if client.supports(coordinator, consumer_apis.CONSUMER_GROUP_DESCRIBE):
        calls["consumer"] = consumer_apis.consumer_group_describe_call(coordinator, [group])
    if include_offsets:
        calls["offsets"] = apis.offset_fetch_call(coordinator, group)
    if client.supports(coordinator, DESCRIBE_GROUP_KEY):
        calls["document"] = apis.groupctl_document_call(coordinator, group)
    return calls


def _read_description(group: str, coordinator: Node, answers: Mapping[str, Any],
                      include_offsets: bool) -> tuple[GroupDescription, apis.CommittedOffsets]:
    """The answers to `_describe_calls` (by name) as the group's description (without offsets)
    and committed offsets: a group ConsumerGroupDescribe describes is a consumer group, any other
    is as DescribeGroups describes it; NotFound unless the group exists (`check_group_exists`).
    A groupctl coordinator's document answer adds the pending transactional offsets."""
    consumer = None
    if "consumer" in answers:
        consumer = consumer_apis.parse_consumer_group_describe(answers["consumer"])[0]
    committed = apis.parse_offset_fetch(answers["offsets"], group) if include_offsets else apis.CommittedOffsets()
    document = answers.get("document")
    pending = apis.parse_pending_offsets(document) if document is not None else ()
    if consumer is not None:
        return replace(_consumer_description(consumer, coordinator), pending_offsets=pending), committed
    info = apis.parse_describe_groups(answers["classic"])[0]
    check_group_exists(group, info, committed)
    described = _classic_description(info, _stored_generation(document, group), coordinator)
    return replace(described, pending_offsets=pending), committed


def _with_configs(client: KafkaClient, described: Sequence[GroupDescription]) -> list[GroupDescription]:
    """The groups with their configs, described in one DescribeConfigs request; a group the
    cluster cannot describe configs of (GROUP resources are Kafka 4's) keeps None."""
    try:
        answers = {r.name: r for r in describe_configs(client, GROUP_RESOURCE, [d.group for d in described])}
    except Unsupported:  # a broker without DescribeConfigs v1+
        return list(described)
    found = {name: r.configs for name, r in answers.items() if not r.error_code}
    return [replace(d, configs=found.get(d.group)) for d in described]


def _assigned(described: GroupDescription) -> list[apis.TopicPartition]:
    return [(t, p) for m in described.members for t, ps in m.assignment.items() for p in ps]


def _offsets_of_many(
    client: KafkaClient, groups: Sequence[tuple[apis.CommittedOffsets, Sequence[apis.TopicPartition]]]
) -> list[tuple[PartitionOffsets, ...]]:
    """`partition_offsets` of each (committed, assigned) pair, with one Metadata and one
    ListOffsets per leader for the partitions of all of them."""
    every = sorted({tp for committed, assigned in groups for tp in (*committed, *assigned)})
    if not every:
        return [() for _ in groups]
    metadata = client.metadata(sorted({t for t, _ in every}))
    [log_end] = apis.list_offsets(client, metadata, every, [apis.LATEST])
    return [offset_rows(committed, sorted({*committed, *assigned}), log_end) for committed, assigned in groups]


def only_with_lag(described: GroupDescription) -> GroupDescription:
    """The description without the partitions known to have no lag (`describe --only-with-lag`):
    kept are those with lag above 0 and those whose lag is unknown (nothing committed, or no log
    end: the trouble an operator filters for); left out, those caught up or committed past the
    log end (lag 0)."""
    return replace(described, offsets=tuple(o for o in described.offsets if o.lag is None or o.lag > 0))


def _stored_generation(response: Any, group: str) -> Optional[int]:
    """The generation in a GroupctlDescribeGroup answer (None: not asked, or no readable document:
    Kafka's view still stands)."""
    if response is None:
        return None
    try:
        document = apis.parse_groupctl_document(response, group)
    except OpsError:  # e.g. the store or its document is unreadable
        return None
    return document.generation if document is not None else None


def _classic_description(info: apis.GroupInfo, generation: Optional[int], coordinator: Node) -> GroupDescription:
    members = tuple(MemberDescription(m.member_id, m.client_id, m.client_host, m.group_instance_id, m.assignment)
                    for m in info.members)
    return GroupDescription(info.group, info.state, info.protocol_type, info.protocol, generation, coordinator,
                            members, ())


def _consumer_description(info: consumer_apis.ConsumerGroupInfo, coordinator: Node) -> GroupDescription:
    """A KIP-848 group in describe's terms: protocol type "consumer", the assignor as the
    protocol, the group epoch as the generation (what `zk show` and the watches follow)."""
    members = tuple(MemberDescription(m.member_id, m.client_id, m.client_host, m.instance_id, m.assignment,
                                      m.member_epoch, m.target_assignment, m.upgraded)
                    for m in info.members)
    return GroupDescription(info.group, info.state, CONSUMER, info.assignor, info.group_epoch, coordinator,
                            members, (), group_type=CONSUMER, group_epoch=info.group_epoch,
                            assignment_epoch=info.assignment_epoch, assignor=info.assignor)


# -- delete ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupDeletion:
    group: str
    error: Optional[OpsError]  # None: deleted

    @property
    def deleted(self) -> bool:
        return self.error is None

    def to_json(self) -> dict:
        return {"group": self.group, "deleted": self.deleted,
                "error": None if self.error is None else str(self.error)}


def delete_groups(
    bootstrap: BootstrapLike, groups: Sequence[str], *, timeout: float = DEFAULT_TIMEOUT
) -> tuple[GroupDeletion, ...]:
    """Delete each group (with its committed offsets), one result per group in order.

    Every group gets a result, whatever happened to the others: a group with members is refused
    (`Refused` naming its state), an unknown one is `NotFound`, and any other expected failure
    (the coordinator unreachable, ...) is that group's error. Invalid group ids are BadInput
    before anything is deleted.
    """
    if not groups:
        raise BadInput("give at least one group")
    unique = [check_group_id(group) for group in dict.fromkeys(groups)]
    with KafkaClient(bootstrap, timeout=timeout) as client:

        def delete_one(group: str) -> GroupDeletion:
            def run(coordinator: Node) -> GroupDeletion:
                code = apis.delete_groups(client, coordinator, [group]).get(group, 0)
                if code in apis.RETRIABLE_COORDINATOR_ERRORS:
                    raise apis.CoordinatorMoved(f"coordinator for group '{group}' is not available: {error_name(code)}")
                if code == 0:
                    return GroupDeletion(group, None)
                if code == apis.GROUP_ID_NOT_FOUND:
                    return GroupDeletion(group, NotFound(f"group '{group}' does not exist"))
                if code == NON_EMPTY_GROUP:
                    info = consumer_apis.describe_group_states(client, coordinator, [group])[0]
                    return GroupDeletion(group, Refused(
                        f"group '{group}' is {info.state} with {len(info.members)} member(s); "
                        "only a group without members can be deleted"))
                return GroupDeletion(group, OpsError(f"deleting group '{group}' failed: {error_name(code)}"))

            try:
                return apis.with_coordinator(client, group, run)
            except OpsError as error:
                return GroupDeletion(group, error)

        return tuple(delete_one(group) for group in unique)
