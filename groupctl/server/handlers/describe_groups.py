"""DescribeGroups (API 15), versions 0-6: state, protocol and members of classic groups.

Version notes:
- v1+ the response has `throttle_time_ms` (always 0 here).
- v3+ the request may ask for `authorized_operations`; otherwise the field carries
  -2147483648 ("not requested").
- v4+ each member names its `group_instance_id`.
- v5+ are flexible.
- v6 (KIP-1043) answers a group that does not exist with GROUP_ID_NOT_FOUND and an
  `error_message` ("Group <id> not found.", or "Group <id> is not a classic group." for a
  consumer group, as Apache Kafka 4: ConsumerGroupDescribe describes those); before v6 such a
  group is described as Dead with no error. `error_message` is null otherwise.

Groups are answered in request order, one entry each. The core may describe an unknown group
either as Dead or with GROUP_ID_NOT_FOUND; this handler turns either into what the version
expects.

Authorization (`--authorizer`), as Kafka: Describe on each group, else an entry with
GROUP_AUTHORIZATION_FAILED (listed first, then the groups described, as Kafka orders them).
Requested `authorized_operations` are the group operations groupctl serves (READ, DELETE,
DESCRIBE) that the principal is allowed: all three without an authorizer, which is what Kafka
answers when none is configured. (Kafka also lists DESCRIBE_CONFIGS and ALTER_CONFIGS, which
groupctl's groups do not have.)

A group id named more than once is described once (a deliberate difference: `validation.distinct`).
"""

from __future__ import annotations

from kafka.protocol.admin.groups import DescribeGroupsRequest, DescribeGroupsResponse

from groupctl.coordinator.classic.messages import GroupDescription
from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.protocol.validation import distinct
from groupctl.security.acls import Operation
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import GROUP, allowed, allowed_names

GROUP_OPERATIONS = frozenset({3, 6, 8})
"""Kafka's AclOperation codes a group supports: READ (3), DELETE (6), DESCRIBE (8)."""


def _not_found(d: GroupDescription) -> bool:
    return d.error == ErrorCode.GROUP_ID_NOT_FOUND or (
        d.error == ErrorCode.NONE and d.state == "Dead"
    )


def _error(ctx: RequestContext, d: GroupDescription) -> tuple[ErrorCode, str | None]:
    if not _not_found(d):
        return d.error, None
    if ctx.version >= 6:
        return ErrorCode.GROUP_ID_NOT_FOUND, d.error_message or f"Group {d.group_id} not found."
    return ErrorCode.NONE, None


def _allowed_operations(ctx: RequestContext, group_id: str) -> set[int]:
    return {op for op in GROUP_OPERATIONS if allowed(ctx, Operation(op), GROUP, group_id)}


@api(key=15, versions=(0, 6))
async def handle_describe_groups(
    ctx: RequestContext, request: DescribeGroupsRequest
) -> DescribeGroupsResponse:
    request.groups = distinct(request.groups)
    described = allowed_names(ctx, Operation.DESCRIBE, GROUP, request.groups)
    denied = [g for g in request.groups if g not in described]
    group_ids = tuple(g for g in request.groups if g in described)
    descriptions: tuple[GroupDescription, ...] = await ctx.node.call_groups(
        lambda core, token, now: core.describe_groups(token, group_ids, now)
    )
    # kafka-python encodes None as -2147483648, "not requested".
    operations = (
        set(GROUP_OPERATIONS)
        if ctx.version >= 3 and request.include_authorized_operations
        else None
    )
    group_class = DescribeGroupsResponse.DescribedGroup
    member_class = group_class.DescribedGroupMember
    groups = [group_class(error_code=int(ErrorCode.GROUP_AUTHORIZATION_FAILED), error_message=None, group_id=g,
                          group_state="", protocol_type="", protocol_data="", members=[],
                          authorized_operations=None) for g in denied]
    for d in descriptions:
        error, message = _error(ctx, d)
        groups.append(
            group_class(
                error_code=int(error),
                error_message=message,
                group_id=d.group_id,
                group_state="Dead" if _not_found(d) else d.state,
                protocol_type=d.protocol_type,
                protocol_data=d.protocol,
                members=[
                    member_class(
                        member_id=m.member_id,
                        group_instance_id=m.group_instance_id,
                        client_id=m.client_id,
                        client_host=m.client_host,
                        member_metadata=m.metadata,
                        member_assignment=m.assignment,
                    )
                    for m in d.members
                ],
                authorized_operations=None if operations is None else _allowed_operations(ctx, d.group_id),
            )
        )
    return ctx.respond(throttle_time_ms=0, groups=groups)
