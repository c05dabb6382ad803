"""JoinGroup (API 11), versions 0-9: a classic member joins or rejoins its group.

Version notes:
- v0 has no rebalance timeout: the session timeout stands in for it (as Kafka does).
- v4+ a new member (empty member id) is answered MEMBER_ID_REQUIRED with an id to rejoin with
  (`require_known_member_id`); v0-3 members are admitted on their first JoinGroup.
- v5+ carries `group_instance_id` (static membership), in the request and for each member.
- v6+ is flexible (compact strings, tagged fields).
- v7+ the response names `protocol_type` and the protocol name may be null (on errors).
- v8+ the request carries a free-text `reason` (passed to the core, logged only).
- v9 the response's `skip_assignment` tells a static leader rejoining a stable group not to
  run the assignor.

The request may be parked by the core until the join phase completes; `call_groups` returns
when the core answers it. Only the leader's response lists the members.

Authorization (`--authorizer`), as Kafka: Read on the group, else GROUP_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from kafka.protocol.consumer.group import JoinGroupRequest, JoinGroupResponse

from groupctl.coordinator.classic.messages import JoinGroup, JoinGroupResult
from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import GROUP, allowed


def _to_core(ctx: RequestContext, request: JoinGroupRequest) -> JoinGroup:
    version = ctx.version
    return JoinGroup(
        group_id=request.group_id,
        member_id=request.member_id,
        group_instance_id=request.group_instance_id if version >= 5 else None,
        session_timeout_ms=request.session_timeout_ms,
        rebalance_timeout_ms=(
            request.rebalance_timeout_ms if version >= 1 else request.session_timeout_ms
        ),
        protocol_type=request.protocol_type,
        protocols=tuple((p.name, bytes(p.metadata)) for p in request.protocols),
        client_id=ctx.client_id,
        client_host=ctx.client_host,
        require_known_member_id=version >= 4,
        reason=request.reason if version >= 8 else None,
    )


def _to_wire(ctx: RequestContext, result: JoinGroupResult) -> JoinGroupResponse:
    member_class = JoinGroupResponse.JoinGroupResponseMember
    protocol_name = result.protocol_name
    if ctx.version < 7 and protocol_name is None:
        protocol_name = ""  # not nullable before v7
    return ctx.respond(
        throttle_time_ms=0,
        error_code=int(result.error),
        generation_id=result.generation_id,
        protocol_type=result.protocol_type,
        protocol_name=protocol_name,
        leader=result.leader,
        skip_assignment=result.skip_assignment,
        member_id=result.member_id,
        members=[
            member_class(
                member_id=m.member_id, group_instance_id=m.group_instance_id, metadata=m.metadata
            )
            for m in result.members
        ],
    )


@api(key=11, versions=(0, 9))
async def handle_join_group(ctx: RequestContext, request: JoinGroupRequest) -> JoinGroupResponse:
    if not allowed(ctx, Operation.READ, GROUP, request.group_id):
        return _to_wire(ctx, JoinGroupResult(ErrorCode.GROUP_AUTHORIZATION_FAILED))
    join = _to_core(ctx, request)
    result: JoinGroupResult = await ctx.node.call_groups(
        lambda core, token, now: core.join_group(token, join, now)
    )
    return _to_wire(ctx, result)
