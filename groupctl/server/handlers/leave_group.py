"""LeaveGroup (API 13), versions 0-5: members leave their group (a consumer closing, or an
admin removing static members).

Version notes:
- v0-2 name one `member_id` at the top level and answer one `error_code`. As in Kafka, that
  error is the group-wide error if there is one, else the member's own error.
- v1+ the response has `throttle_time_ms` (always 0 here).
- v3+ (KIP-345) carry a `members` batch, each with `member_id` and `group_instance_id` (an admin
  may name a static member by instance id with member id ""), and answer per-member errors
  next to the group-wide one.
- v4+ is flexible.
- v5 each member may give a `reason`.

Authorization (`--authorizer`), as Kafka: Read on the group, else GROUP_AUTHORIZATION_FAILED
(group-wide, no member entries).
"""

from __future__ import annotations

from kafka.protocol.consumer.group import LeaveGroupRequest, LeaveGroupResponse

from groupctl.coordinator.classic.messages import (
    LeaveGroup,
    LeaveGroupResult,
    LeavingMember,
)
from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import GROUP, allowed


def _to_core(ctx: RequestContext, request: LeaveGroupRequest) -> LeaveGroup:
    if ctx.version < 3:
        members: tuple[LeavingMember, ...] = (LeavingMember(member_id=request.member_id),)
    else:
        members = tuple(
            LeavingMember(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                reason=m.reason if ctx.version >= 5 else None,
            )
            for m in request.members
        )
    return LeaveGroup(group_id=request.group_id, members=members)


def _to_wire(ctx: RequestContext, result: LeaveGroupResult) -> LeaveGroupResponse:
    if ctx.version < 3:
        error = result.error
        if error == ErrorCode.NONE:
            error = next(
                (m.error for m in result.members if m.error != ErrorCode.NONE), ErrorCode.NONE
            )
        return ctx.respond(throttle_time_ms=0, error_code=int(error))
    member_class = LeaveGroupResponse.MemberResponse
    return ctx.respond(
        throttle_time_ms=0,
        error_code=int(result.error),
        members=[
            member_class(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                error_code=int(m.error),
            )
            for m in result.members
        ],
    )


@api(key=13, versions=(0, 5))
async def handle_leave_group(ctx: RequestContext, request: LeaveGroupRequest) -> LeaveGroupResponse:
    if not allowed(ctx, Operation.READ, GROUP, request.group_id):
        return _to_wire(ctx, LeaveGroupResult(ErrorCode.GROUP_AUTHORIZATION_FAILED))
    leave = _to_core(ctx, request)
    result: LeaveGroupResult = await ctx.node.call_groups(
        lambda core, token, now: core.leave_group(token, leave, now)
    )
    return _to_wire(ctx, result)
