"""Heartbeat (API 12), versions 0-4: a classic member proves it is alive.

Version notes:
- v1+ the response has `throttle_time_ms` (always 0 here).
- v3+ carries `group_instance_id` (static membership).
- v4 is flexible.

The answer's error is the member's signal: REBALANCE_IN_PROGRESS tells it to rejoin,
ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID that it was fenced.
"""

from __future__ import annotations

from kafka.protocol.consumer.group import HeartbeatRequest, HeartbeatResponse

from groupctl.coordinator.classic.messages import Heartbeat, HeartbeatResult
from groupctl.protocol.registry import api
from groupctl.server.context import RequestContext


@api(key=12, versions=(0, 4))
async def handle_heartbeat(ctx: RequestContext, request: HeartbeatRequest) -> HeartbeatResponse:
    beat = Heartbeat(
        group_id=request.group_id,
        generation_id=request.generation_id,
        member_id=request.member_id,
        group_instance_id=request.group_instance_id if ctx.version >= 3 else None,
    )
    result: HeartbeatResult = await ctx.node.call_groups(
        lambda core, token, now: core.heartbeat(token, beat, now)
    )
    return ctx.respond(throttle_time_ms=0, error_code=int(result.error))
