"""ListGroups (API 16), versions 0-5: the groups this coordinator owns.

Version notes:
- v1+ the response has `throttle_time_ms` (always 0 here).
- v3+ are flexible.
- v4+ the request may filter by group state (`states_filter`, empty = all) and the response
  names each group's state (`group_state`).
- v5 the request may filter by group type (`types_filter`, e.g. "classic", "consumer") and the
  response names each group's type (`group_type`).

The filters are passed to the core as given; the response's top-level error is always NONE
(the core lists what it owns, and owns nothing while it loads).

Authorization (`--authorizer`), as Kafka: with Describe on the Cluster every group is listed,
otherwise only the groups the principal may Describe.
"""

from __future__ import annotations

from kafka.protocol.admin.groups import ListGroupsRequest, ListGroupsResponse

from groupctl.coordinator.classic.messages import ListedGroup
from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import GROUP, allowed_names, cluster_allowed


@api(key=16, versions=(0, 5))
async def handle_list_groups(ctx: RequestContext, request: ListGroupsRequest) -> ListGroupsResponse:
    states = frozenset(request.states_filter or ()) if ctx.version >= 4 else frozenset()
    types = frozenset(request.types_filter or ()) if ctx.version >= 5 else frozenset()
    listed: tuple[ListedGroup, ...] = await ctx.node.call_groups(
        lambda core, token, now: core.list_groups(token, (states, types), now)
    )
    if not cluster_allowed(ctx, Operation.DESCRIBE):
        described = allowed_names(ctx, Operation.DESCRIBE, GROUP, (g.group_id for g in listed))
        listed = tuple(g for g in listed if g.group_id in described)
    group_class = ListGroupsResponse.ListedGroup
    return ctx.respond(
        throttle_time_ms=0,
        error_code=int(ErrorCode.NONE),
        groups=[
            group_class(
                group_id=g.group_id,
                protocol_type=g.protocol_type,
                group_state=g.state,
                group_type=g.group_type,
            )
            for g in listed
        ],
    )
