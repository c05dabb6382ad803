"""Admin APIs over consumer groups, in the classic admin APIs' values so that ListGroups,
DeleteGroups and `rebalance trigger` answer for both types alike (DescribeGroups describes
classic groups only, as in Apache Kafka 4: see the facade; ConsumerGroupDescribe is `describe`).

- ListGroups: type "consumer", protocol type "consumer", the KIP-848 state (Empty, Assigning,
  Reconciling, Stable); the filters are case-insensitive.
- DeleteGroups: only an Empty group (NON_EMPTY_GROUP otherwise); its tombstone removes the
  document and the committed offsets, as for a classic group.
- Trigger: bumps the group epoch, so the next heartbeat recomputes the whole target assignment.
"""

from __future__ import annotations

from groupctl.coordinator import journal
from groupctl.coordinator.consumer import events
from groupctl.coordinator.consumer.context import ConsumerCore
from groupctl.coordinator.consumer.group import ConsumerGroup, ConsumerGroupState
from groupctl.coordinator.consumer.heartbeat import persist
from groupctl.coordinator.classic.messages import (
    DeletedGroup,
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
    out.events.append(events.epoch_bumped(core, group, now_ms, journal.TRIGGER))
    return TriggerRebalanceResult(ErrorCode.NONE, state=state, started=True)
