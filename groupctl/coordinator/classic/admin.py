"""Admin APIs over classic groups: ListGroups, DescribeGroups, DeleteGroups, operator rebalance.

- ListGroups: every live group; the state and type filters are case-insensitive (Kafka compares
  lower-cased names), empty filters match everything. Classic groups have type "classic".
- DescribeGroups: an unknown group is described as state "Dead" with error NONE (Kafka before
  DescribeGroups v6). Member metadata and assignments are only filled in Stable (as Kafka does);
  the protocol is reported once chosen (CompletingRebalance and Stable).
- DeleteGroups: only Empty groups (NON_EMPTY_GROUP otherwise, GROUP_ID_NOT_FOUND when unknown);
  a GroupTombstone removes the document and the committed offsets.
- Trigger rebalance (groupctl's own, for `groupctl rebalance trigger`): a Stable or
  CompletingRebalance group goes to PreparingRebalance; a rebalancing or Empty group is left as
  it is (NONE); an unknown group is GROUP_ID_NOT_FOUND.
"""

from __future__ import annotations

from typing import Hashable

from groupctl.coordinator.classic import rebalance
from groupctl.coordinator.classic.context import Core
from groupctl.coordinator.classic.messages import DeletedGroup, DescribedMember, GroupDescription, ListedGroup
from groupctl.coordinator.classic.replay import apply_record
from groupctl.coordinator.classic.state import GroupState
from groupctl.coordinator.errors import ErrorCode
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
            apply_record(core, record)
            answers.append(DeletedGroup(group_id, ErrorCode.NONE))
    return out.reply(token, tuple(answers))


def trigger_rebalance(core: Core, token: Hashable, req: str, now_ms: int) -> Result:
    out = Result()
    group = core.groups.get(req)
    if group is None:
        return out.reply(token, ErrorCode.GROUP_ID_NOT_FOUND)
    if group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
        rebalance.prepare_rebalance(core, group, now_ms, out)
    return out.reply(token, ErrorCode.NONE)
