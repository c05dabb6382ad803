"""GroupctlDescribeGroup (API 32000, groupctl's own), version 0: a group's stored document.

Why: Kafka's DescribeGroups has no generation, and following rebalances needs one. This API gives
`group describe` the generation and `rebalance watch` its events with `--bootstrap` alone,
whichever store the coordinator uses. Other Kafka clients ignore the key in ApiVersions. v0 is
flexible (request header v2, response header v1, tagged fields).

Answers:
- NONE and the group's document exactly as stored (docs/zookeeper-layout.md);
- GROUP_ID_NOT_FOUND and a null document when the store holds none: the group does not exist,
  or its first rebalance has not completed yet;
- COORDINATOR_NOT_AVAILABLE and a null document when the store cannot be read or the document
  does not decode (`groupctl.layout.groups`);
- NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS when this node does not coordinate the group
  (only the coordinator's writes wake a long poll); a poll whose group moves away meanwhile
  answers at once with the stored document, and the next one is told NOT_COORDINATOR.

Authorization (`--authorizer`): Describe on the group, as for DescribeGroups, else
GROUP_AUTHORIZATION_FAILED and a null document.

Long-polling: with `after_generation` >= 0 and `max_wait_ms` > 0 the answer waits until the
stored generation is greater than `after_generation`, the group is deleted (GROUP_ID_NOT_FOUND),
or `max_wait_ms` passes (then the current document), capped at MAX_WAIT_MS: a client must allow
that long. A waiting request occupies its connection, as a parked JoinGroup does.
"""

from __future__ import annotations

from typing import Any

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.extensions import DESCRIBE_GROUP_KEY
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import GROUP, allowed
from groupctl.store.base import StoreError

MAX_WAIT_MS = 30_000


@api(key=DESCRIBE_GROUP_KEY, versions=(0, 0))
async def handle_groupctl_describe_group(ctx: RequestContext, request: Any) -> Any:
    if not allowed(ctx, Operation.DESCRIBE, GROUP, request.group_id):
        return ctx.respond(throttle_time_ms=0, error_code=int(ErrorCode.GROUP_AUTHORIZATION_FAILED), document=None)
    placement_error = ctx.node.placement.error(request.group_id)
    if placement_error:
        return ctx.respond(throttle_time_ms=0, error_code=int(placement_error), document=None)
    wait_ms = min(request.max_wait_ms, MAX_WAIT_MS) if request.after_generation >= 0 else 0
    try:
        stored = await ctx.node.wait_for_document(request.group_id, request.after_generation,
                                                   max(wait_ms, 0) / 1000)
    except StoreError:  # unreadable, or a document that does not decode
        return ctx.respond(throttle_time_ms=0, error_code=int(ErrorCode.COORDINATOR_NOT_AVAILABLE), document=None)
    if stored is None:
        return ctx.respond(throttle_time_ms=0, error_code=int(ErrorCode.GROUP_ID_NOT_FOUND), document=None)
    return ctx.respond(throttle_time_ms=0, error_code=int(ErrorCode.NONE), document=stored.data.decode())
