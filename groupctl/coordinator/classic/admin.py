"""Admin APIs over classic groups: ListGroups, DescribeGroups, DeleteGroups, operator rebalance.

- ListGroups: every live group; the state and type filters are case-insensitive (Kafka compares
  lower-cased names), empty filters match everything. Classic groups have type "classic".
- DescribeGroups: an unknown group is described as state "Dead" with error NONE (Kafka before
  DescribeGroups v6). Member metadata and assignments are only filled in Stable (as Kafka does);
  the protocol is reported once chosen (CompletingRebalance and Stable).
- DeleteGroups: only Empty groups (NON_EMPTY_GROUP otherwise, GROUP_ID_NOT_FOUND when unknown);
  a GroupTombstone removes the document and the committed offsets (a `group_deleted` event).
- Trigger rebalance (groupctl's own, for `groupctl rebalance trigger`; Kafka has no such API):
  a Stable or CompletingRebalance group goes to PreparingRebalance, starting a rebalance with
  reason "trigger" (or, from CompletingRebalance, restarting the join phase of the one in
  progress), so the members rejoin and the next generation's document is written; a group
  already in PreparingRebalance is left as it is (NONE: the rebalance in progress is the one
  asked for). An Empty group has nobody to rebalance: NONE, nothing changes (the answer's state
  and `started` tell the caller; the wire handler refuses it). An unknown group is
  GROUP_ID_NOT_FOUND.
"""

from __future__ import annotations

from typing import Hashable

from groupctl.coordinator.classic import rebalance
from groupctl.coordinator.classic.causes import Reason, RebalanceCause
from groupctl.coordinator.classic.context import Core
from groupctl.coordinator.classic.messages import (
    DeletedGroup,
    DescribedMember,
    GroupDescription,
    ListedGroup,
    TriggerRebalance,
    TriggerRebalanceResult,
)
from groupctl.coordinator.classic.replay import apply_record
from groupctl.coordinator.classic.state import GroupState
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.journal import group_deleted
from groupctl.coordinator.records import GroupTombstone
from groupctl.coordinator.results import Result

GROUP_TYPE = "classic"


def list_groups(core: Core, token: Hashable, req: tuple[frozenset[str], frozenset[str]], now_ms: int) -> Result:
    states, types = ({name.lower() for name in names} for names in req)
    listed = tuple(
        ListedGroup(group.group_id, group.protocol_type or "", group.state.value, GROUP_TYPE)
        for group_id, group in sorted(core.groups.items())
        if (not states or group.state.value.lower() in states) and (not types or GROUP_TYPE in types)
    )
    return Result().reply(token, listed)


def describe_groups(core: Core, token: Hashable, req: tuple[str, ...], now_ms: int) -> Result:
    descriptions = []
    for group_id in req:
        group = core.groups.get(group_id)
        if group is None:
            descriptions.append(GroupDescription(group_id, ErrorCode.NONE, state=GroupState.DEAD.value))
            continue
        stable = group.state is GroupState.STABLE
        members = tuple(
            DescribedMember(
                member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
                client_host=m.client_host, metadata=m.metadata(group.protocol) if stable else b"",
                assignment=m.assignment if stable else b"",
            )
            for m in group.members.values()
        )
        chosen = group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE)
        descriptions.append(GroupDescription(
            group_id, ErrorCode.NONE, state=group.state.value, protocol_type=group.protocol_type or "",
            protocol=(group.protocol or "") if chosen else "", generation_id=group.generation, members=members,
        ))
    return Result().reply(token, tuple(descriptions))


def delete_groups(core: Core, token: Hashable, req: tuple[str, ...], now_ms: int) -> Result:
    out = Result()
    answers = []
    for group_id in req:
        group = core.groups.get(group_id)
        if group is None:
            answers.append(DeletedGroup(group_id, ErrorCode.GROUP_ID_NOT_FOUND))
        elif group.state is not GroupState.EMPTY:
            answers.append(DeletedGroup(group_id, ErrorCode.NON_EMPTY_GROUP))
        else:
            record = GroupTombstone(group_id)
            out.records.append(record)
            out.events.append(group_deleted(core.node_id, now_ms, group_id))
            apply_record(core, record)
            answers.append(DeletedGroup(group_id, ErrorCode.NONE))
    return out.reply(token, tuple(answers))


def trigger_rebalance(core: Core, token: Hashable, req: str | TriggerRebalance, now_ms: int) -> Result:
    """Reply: an ErrorCode for a bare group id, a TriggerRebalanceResult for a TriggerRebalance."""
    out = Result()
    request = req if isinstance(req, TriggerRebalance) else TriggerRebalance(req)
    group = core.groups.get(request.group_id)
    if group is None:
        answer = TriggerRebalanceResult(ErrorCode.GROUP_ID_NOT_FOUND)
    elif group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
        answer = TriggerRebalanceResult(ErrorCode.NONE, group.state.value, started=True)
        detail = request.reason or "an operator asked for a rebalance"
        rebalance.prepare_rebalance(core, group, now_ms, out,
                                    RebalanceCause(Reason.TRIGGER, client_id=request.client_id, detail=detail))
    else:
        answer = TriggerRebalanceResult(ErrorCode.NONE, group.state.value)
    if isinstance(req, TriggerRebalance):
        return out.reply(token, answer)
    return out.reply(token, answer.error)
