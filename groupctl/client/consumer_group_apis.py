"""ConsumerGroupDescribe (API 69, versions 0-1) for the operator tools: a KIP-848 consumer group
as Kafka 4 admin clients and kafka-consumer-groups.sh 4.x see it (state, group epoch, target
assignment epoch, assignor, and per member its epoch, current and target assignment).

Why beside DescribeGroups: DescribeGroups has no epochs and no target assignment, and Apache
Kafka answers it for a consumer group with GROUP_ID_NOT_FOUND (groupctl with the group's members
but empty assignments). Kafka's admin client asks ConsumerGroupDescribe first and falls back to
DescribeGroups; the tools do the same, pipelining both.

Invariants:
- Asked only of a coordinator that lists API 69 in ApiVersions (Kafka 3.8+ serving the consumer
  group protocol, groupctl); older brokers have no consumer groups.
- A group the coordinator does not describe as a consumer group (unknown, classic, or any other
  group-level error) parses as None: DescribeGroups, asked beside it, has the last word and
  reports its own errors. The coordinator-moved codes raise `CoordinatorMoved`.
- Assignments are {topic name: sorted partitions}; a topic the coordinator cannot name (deleted
  meanwhile) is keyed by its topic id.
- Whatever learns a group's state or members (offsets show/reset/import/delete and their safety
  checks, group delete's refusal, group list on old brokers, lag record) asks through
  `group_state_calls` / `parse_group_states`: DescribeGroups, and in the same pipelined exchange
  ConsumerGroupDescribe where served, whose description wins for a consumer group. Without it, a
  live consumer group would look Dead (DescribeGroups v0-5) or unknown (v6) and, for instance,
  could have its offsets reset under its members. `describe_group` reads the full answer instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from groupctl.client import kafka_apis as apis
from groupctl.client.kafka import RETRIABLE_COORDINATOR_ERRORS, Call, KafkaClient, Node, error_name
from groupctl.client.kafka_apis import CoordinatorMoved

CONSUMER_GROUP_DESCRIBE = 69

Assignment = Mapping[str, tuple[int, ...]]

_UPGRADED = {0: False, 1: True}
"""MemberType (v1+) -> upgraded, as Kafka's admin client reads it: 0 a classic-protocol member of
a migrating group, 1 a consumer-protocol member, -1 unknown."""


@dataclass(frozen=True)
class ConsumerMemberInfo:
    member_id: str
    instance_id: Optional[str]
    client_id: str
    client_host: str
    member_epoch: int
    assignment: Assignment  # what it owns now (assigned, and revoking but not yet released)
    target_assignment: Assignment  # what the group's target assignment gives it
    upgraded: Optional[bool]  # speaks the consumer protocol (False: a classic member of a migrating
    # group); None before v1, which has no member type


@dataclass(frozen=True)
class ConsumerGroupInfo:
    group: str
    state: str  # Empty, Assigning, Reconciling, Stable (Dead: answered as not found)
    group_epoch: int
    assignment_epoch: int  # the target assignment's epoch (kafka-consumer-groups.sh: TARGET-EPOCH)
    assignor: str
    members: tuple[ConsumerMemberInfo, ...]


def consumer_group_describe_call(coordinator: Node, groups: Sequence[str]) -> Call:
    def build(cls: type, version: int) -> Any:
        return cls(group_ids=list(groups), include_authorized_operations=False)

    return Call(coordinator, CONSUMER_GROUP_DESCRIBE, (0, 1), build)


def parse_consumer_group_describe(response: Any) -> list[Optional[ConsumerGroupInfo]]:
    """One entry per group, in request order: its description, or None when the coordinator does
    not describe it as a consumer group (see the module invariants)."""
    infos: list[Optional[ConsumerGroupInfo]] = []
    for g in response.groups:
        if g.error_code in RETRIABLE_COORDINATOR_ERRORS:
            raise CoordinatorMoved(f"coordinator for group '{g.group_id}' is not available: "
                                   f"{error_name(g.error_code)}")
        if g.error_code:
            infos.append(None)
            continue
        members = tuple(
            ConsumerMemberInfo(m.member_id, m.instance_id, m.client_id, m.client_host, m.member_epoch,
                               _assignment(m.assignment), _assignment(m.target_assignment),
                               _UPGRADED.get(m.member_type))
            for m in g.members)
        infos.append(ConsumerGroupInfo(g.group_id, g.group_state, g.group_epoch, g.assignment_epoch,
                                       g.assignor_name, members))
    return infos


def _assignment(block: Any) -> dict[str, tuple[int, ...]]:
    partitions: dict[str, set[int]] = {}
    for topic in block.topic_partitions:
        name = topic.topic_name or str(topic.topic_id)
        partitions.setdefault(name, set()).update(topic.partitions)
    return {name: tuple(sorted(ps)) for name, ps in sorted(partitions.items())}


# -- state and members of either group type ----------------------------------------------------


def group_state_calls(client: KafkaClient, coordinator: Node, groups: Sequence[str]) -> list[Call]:
    """The calls that learn the state and members of `groups` (all coordinated by `coordinator`),
    whatever their type: DescribeGroups, and ConsumerGroupDescribe beside it when the coordinator
    serves it (ApiVersions, known from connecting: no extra round trip). Pipeline them with any
    other calls; `parse_group_states` reads their answers."""
    calls = [apis.describe_groups_call(coordinator, groups)]
    if client.supports(coordinator, CONSUMER_GROUP_DESCRIBE):
        calls.append(consumer_group_describe_call(coordinator, groups))
    return calls


def parse_group_states(answers: Sequence[Any]) -> list[apis.GroupInfo]:
    """One GroupInfo per group, in request order, from the answers to `group_state_calls`'s
    calls (in their order). A group ConsumerGroupDescribe describes is a consumer group
    (`consumer_group_info`); any other is as DescribeGroups describes it, errors included."""
    classic, *consumer = answers
    described: dict[str, ConsumerGroupInfo] = {}
    if consumer:
        described = {info.group: info for info in parse_consumer_group_describe(consumer[0]) if info is not None}
    return [consumer_group_info(described[g.group_id]) if g.group_id in described
            else apis.parse_described_group(g) for g in classic.groups]


def describe_group_states(client: KafkaClient, coordinator: Node, groups: Sequence[str]) -> list[apis.GroupInfo]:
    """`parse_group_states` of `group_state_calls`, in one pipelined exchange."""
    return parse_group_states(client.call_many(group_state_calls(client, coordinator, groups)))


def consumer_group_info(info: ConsumerGroupInfo) -> apis.GroupInfo:
    """A consumer group in DescribeGroups' terms: it exists, protocol type "consumer", the
    assignor as its protocol, and each member with what it owns now (revoking included)."""
    members = tuple(apis.MemberInfo(m.member_id, m.instance_id, m.client_id, m.client_host, m.assignment)
                    for m in info.members)
    return apis.GroupInfo(info.group, True, info.state, "consumer", info.assignor, members, group_type="consumer")
