"""DeleteGroups (API 42), versions 0-2: delete empty groups and their committed offsets.

Version notes:
- v0-1 are identical on the wire (v1 only changed Kafka's throttling behaviour).
- v2 is flexible.

Each requested group gets its own result in request order; the core answers NON_EMPTY_GROUP
for a group that still has members and GROUP_ID_NOT_FOUND for one it does not know.

Authorization (`--authorizer`), as Kafka: Delete on each group, else GROUP_AUTHORIZATION_FAILED;
those results follow the others (Kafka's order) and the group is not asked of the core.
"""

from __future__ import annotations

from kafka.protocol.admin.groups import DeleteGroupsRequest, DeleteGroupsResponse

from groupctl.coordinator.classic.messages import DeletedGroup
from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import GROUP, allowed_names


@api(key=42, versions=(0, 2))
async def handle_delete_groups(
    ctx: RequestContext, request: DeleteGroupsRequest
) -> DeleteGroupsResponse:
    deletable = allowed_names(ctx, Operation.DELETE, GROUP, request.groups_names)
    group_ids = tuple(g for g in request.groups_names if g in deletable)
    deleted: tuple[DeletedGroup, ...] = await ctx.node.call_groups(
        lambda core, token, now: core.delete_groups(token, group_ids, now)
    )
    denied = tuple(DeletedGroup(g, ErrorCode.GROUP_AUTHORIZATION_FAILED)
                   for g in dict.fromkeys(request.groups_names) if g not in deletable)
    result_class = DeleteGroupsResponse.DeletableGroupResult
    return ctx.respond(
        throttle_time_ms=0,
        results=[result_class(group_id=d.group_id, error_code=int(d.error)) for d in deleted + denied],
    )
