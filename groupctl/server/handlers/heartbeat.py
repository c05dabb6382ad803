"""Heartbeat (API 12), versions 0-4: a classic member proves it is alive.

Version notes:
- v1+ the response has `throttle_time_ms` (always 0 here).
- v3+ carries `group_instance_id` (static membership).
- v4 is flexible.

The answer's error is the member's signal: REBALANCE_IN_PROGRESS tells it to rejoin,
ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID that it was fenced.

Authorization (`--authorizer`), as Kafka: Read on the group, else GROUP_AUTHORIZATION_FAILED.

The hot path: on the wire, requests are decoded and responses encoded by the hand-written codec in
`groupctl.protocol.fastpath`, so `request` is its `HeartbeatRequestBody` (kafka-python's field
names) rather than kafka-python's `HeartbeatRequest`; this handler reads only the fields.
"""

from __future__ import annotations

from functools import cache
from typing import Union

from kafka.protocol.consumer.group import HeartbeatRequest, HeartbeatResponse

from groupctl.coordinator.classic.messages import Heartbeat, HeartbeatResult
from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.fastpath import HeartbeatRequestBody
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import GROUP, allowed


@api(key=12, versions=(0, 4))
async def handle_heartbeat(
    ctx: RequestContext, request: Union[HeartbeatRequestBody, HeartbeatRequest]
) -> HeartbeatResponse:
    if ctx.authorizer is not None and not allowed(ctx, Operation.READ, GROUP, request.group_id):
        return _answer(ctx.response_class, int(ErrorCode.GROUP_AUTHORIZATION_FAILED))
    beat = Heartbeat(
        group_id=request.group_id,
        generation_id=request.generation_id,
        member_id=request.member_id,
        group_instance_id=request.group_instance_id if ctx.version >= 3 else None,
    )
    result: HeartbeatResult = await ctx.node.call_groups(
        lambda core, token, now: core.heartbeat(token, beat, now)
    )
    return _answer(ctx.response_class, int(result.error))


@cache
def _answer(response_class: type, error_code: int) -> HeartbeatResponse:
    """The response for this version and error, built once: a heartbeat's answer is a value, and
    building a kafka-python message cost as much as the rest of the handler. Sharing is safe
    because nothing changes a response after its handler returns (framing encodes Heartbeat
    through `fastpath`, which only reads it)."""
    return response_class(throttle_time_ms=0, error_code=error_code)
