"""SyncGroup (API 14), versions 0-5: members collect their assignment; the leader brings it.

Version notes:
- v1+ the response has `throttle_time_ms` (always 0 here).
- v3+ carries `group_instance_id` (static membership).
- v4+ is flexible.
- v5 the request and response name `protocol_type` and `protocol_name`; the core checks the
  request's against the group's (INCONSISTENT_GROUP_PROTOCOL) and echoes the group's back.

Followers' SyncGroups may be parked by the core until the leader's arrives.

Authorization (`--authorizer`), as Kafka: Read on the group, else GROUP_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from kafka.protocol.consumer.group import SyncGroupRequest, SyncGroupResponse

from groupctl.coordinator.classic.messages import SyncGroup, SyncGroupResult
from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import GROUP, allowed


def _to_core(ctx: RequestContext, request: SyncGroupRequest) -> SyncGroup:
    version = ctx.version
    return SyncGroup(
        group_id=request.group_id,
        generation_id=request.generation_id,
        member_id=request.member_id,
        group_instance_id=request.group_instance_id if version >= 3 else None,
        protocol_type=request.protocol_type if version >= 5 else None,
        protocol_name=request.protocol_name if version >= 5 else None,
        assignments=tuple((a.member_id, bytes(a.assignment)) for a in request.assignments),
    )


@api(key=14, versions=(0, 5))
async def handle_sync_group(ctx: RequestContext, request: SyncGroupRequest) -> SyncGroupResponse:
    if not allowed(ctx, Operation.READ, GROUP, request.group_id):
        result = SyncGroupResult(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    else:
        sync = _to_core(ctx, request)
        result = await ctx.node.call_groups(lambda core, token, now: core.sync_group(token, sync, now))
    return ctx.respond(
        throttle_time_ms=0,
        error_code=int(result.error),
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name,
        assignment=result.assignment,
    )
