"""Admin APIs over consumer groups, in the classic admin APIs' values so that ListGroups,
DescribeGroups, DeleteGroups and `rebalance trigger` answer for both types alike.

- ListGroups: type "consumer", protocol type "consumer", the KIP-848 state (Empty, Assigning,
  Reconciling, Stable); the filters are case-insensitive.
- DescribeGroups (the classic API, as Apache Kafka answers it for a consumer group): protocol type
  "consumer", the assignor as the protocol, each member; member metadata and assignment bytes
  are empty (Kafka 4 admin clients describe consumer groups with ConsumerGroupDescribe).
- DeleteGroups: only an Empty group (NON_EMPTY_GROUP otherwise); its tombstone removes the
  document and the committed offsets, as for a classic group.
- Trigger: bumps the group epoch, so the next heartbeat recomputes the whole target assignment.
"""

from __future__ import annotations

from groupctl.coordinator.consumer.context import ConsumerCore
from groupctl.coordinator.consumer.group import ConsumerGroup, ConsumerGroupState
from groupctl.coordinator.consumer.heartbeat import persist
from groupctl.coordinator.classic.messages import (
    DeletedGroup,
    DescribedMember,
    GroupDescription,
    ListedGroup,
    TriggerRebalanceResult,
)
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.journal import group_deleted
from groupctl.coordinator.records import GroupTombstone
from groupctl.coordinator.results import Result

GROUP_TYPE = "consumer"


def listed(core: ConsumerCore, states: frozenset[str], types: frozenset[str]) -> tuple[ListedGroup, ...]:
    """`states` and `types` lower-cased; empty matches everything."""
    return tuple(ListedGroup(g.group_id, GROUP_TYPE, g.state.value, GROUP_TYPE)
                 for _, g in sorted(core.groups.items())
                 if (not states or g.state.value.lower() in states) and (not types or GROUP_TYPE in types))


def described(core: ConsumerCore, group: ConsumerGroup) -> GroupDescription:
    members = tuple(DescribedMember(member_id=m.member_id, group_instance_id=m.instance_id, client_id=m.client_id,
                                    client_host=m.client_host, metadata=b"", assignment=b"")
                    for m in sorted(group.members.values(), key=lambda m: m.member_id))
    return GroupDescription(group.group_id, ErrorCode.NONE, state=group.state.value, protocol_type=GROUP_TYPE,
                            protocol=group.assignor or "", generation_id=group.group_epoch, members=members)


def delete(core: ConsumerCore, group: ConsumerGroup, now_ms: int, out: Result) -> DeletedGroup:
    if group.state is not ConsumerGroupState.EMPTY:
        return DeletedGroup(group.group_id, ErrorCode.NON_EMPTY_GROUP)
    del core.groups[group.group_id]
    out.records.append(GroupTombstone(group.group_id))
    out.events.append(group_deleted(core.node_id, now_ms, group.group_id))
    return DeletedGroup(group.group_id, ErrorCode.NONE)


def trigger(core: ConsumerCore, group: ConsumerGroup, now_ms: int, out: Result) -> TriggerRebalanceResult:
    state = group.state.value
    if not group.members:
        return TriggerRebalanceResult(ErrorCode.NONE, state=state, started=False)
    group.group_epoch += 1
    persist(core, group, now_ms, out)
    return TriggerRebalanceResult(ErrorCode.NONE, state=state, started=True)
