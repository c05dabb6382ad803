"""GroupctlTriggerRebalance (API 32001, groupctl's own), version 0: start a group's rebalance.

Why: `groupctl rebalance trigger GROUP` must make the coordinator start the group's next
generation (after changing partitions, to move load off a hot member, to test consumers) with
`--bootstrap` alone; Kafka has no such API. Other Kafka clients ignore the key in ApiVersions.
v0 is flexible (request header v2, response header v1, tagged fields).

Answers:
- NONE: a Stable or CompletingRebalance group went to PreparingRebalance; its members rejoin on
  their next heartbeat, and the completed rebalance's document has reason "trigger", the
  request's `reason` as its detail and the requesting client id. A group already in
  PreparingRebalance is left as it is, also NONE, with an `error_message` saying so.
- INVALID_REQUEST for an Empty group: no new generation can come, and an error tells the
  operator (and a script waiting for one) so. `rebalance trigger --zk` refuses it too.
- GROUP_ID_NOT_FOUND for a group the coordinator does not know.
- GROUP_AUTHORIZATION_FAILED (`--authorizer`) without Read on the group. Read, because a
  principal with Read can already start a rebalance (JoinGroup, or LeaveGroup naming members, as
  admin clients remove them); Kafka's Group resource has no Alter to ask for instead.
"""

from __future__ import annotations

from typing import Any

from groupctl.coordinator.classic.messages import TriggerRebalanceResult
from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.extensions import TRIGGER_REBALANCE_KEY
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import GROUP, allowed


def _answer(group: str, result: TriggerRebalanceResult) -> tuple[ErrorCode, str | None]:
    if result.error is ErrorCode.GROUP_ID_NOT_FOUND:
        return result.error, f"group {group!r} does not exist"
    if result.error is not ErrorCode.NONE:
        return result.error, None
    if result.state == "Empty":
        return ErrorCode.INVALID_REQUEST, f"group {group!r} is Empty: it has no members to rebalance"
    if not result.started:
        return ErrorCode.NONE, f"group {group!r} is already rebalancing ({result.state})"
    return ErrorCode.NONE, None


@api(key=TRIGGER_REBALANCE_KEY, versions=(0, 0))
async def handle_groupctl_trigger_rebalance(ctx: RequestContext, request: Any) -> Any:
    if not allowed(ctx, Operation.READ, GROUP, request.group_id):
        return ctx.respond(throttle_time_ms=0, error_code=int(ErrorCode.GROUP_AUTHORIZATION_FAILED),
                           error_message=f"{ctx.principal} is not allowed Read on group {request.group_id!r}")
    result = await ctx.node.trigger_rebalance(request.group_id, request.reason, ctx.client_id or None)
    error, message = _answer(request.group_id, result)
    return ctx.respond(throttle_time_ms=0, error_code=int(error), error_message=message)
