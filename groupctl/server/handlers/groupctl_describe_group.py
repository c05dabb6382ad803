"""GroupctlDescribeGroup (API 32000, groupctl's own), versions 0-1: a group's stored document,
and (v1) its pending transactional offsets.

Why: Kafka's DescribeGroups has no generation, and following rebalances needs one. This API gives
`group describe` the generation and `rebalance watch` its events with `--bootstrap` alone,
whichever store the coordinator uses. Other Kafka clients ignore the key in ApiVersions. v0 is
flexible (request header v2, response header v1, tagged fields). v1 adds the offsets producers'
open transactions committed to the group (TxnOffsetCommit) and hold until each transaction's
marker: producer id and epoch, topic, partition, offset, sorted so (what `group describe` shows;
Kafka's APIs tell only that such an offset exists, by OffsetFetch's UNSTABLE_OFFSET_COMMIT).

Answers:
- NONE and the group's document exactly as stored (docs/zookeeper-layout.md);
- GROUP_ID_NOT_FOUND and a null document when the store holds none: the group does not exist,
  its first rebalance has not completed yet, or it only commits offsets (v1: its pending
  offsets, if it has any, are still answered);
- COORDINATOR_NOT_AVAILABLE and a null document when the store cannot be read or the document
  does not decode (`groupctl.layout.groups`);
- NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS when this node does not coordinate the group
  (only the coordinator's writes wake a long poll); a poll whose group moves away meanwhile
  answers at once with the stored document, and the next one is told NOT_COORDINATOR.

Authorization (`--authorizer`): Describe on the group, as for DescribeGroups, else
GROUP_AUTHORIZATION_FAILED and a null document; v1's pending offsets list only the topics the
principal may Describe, as OffsetFetch filters a group's offsets.

Long-polling: with `after_generation` >= 0 and `max_wait_ms` > 0 the answer waits until the
stored generation is greater than `after_generation`, the group is deleted (GROUP_ID_NOT_FOUND),
or `max_wait_ms` passes (then the current document), capped at MAX_WAIT_MS: a client must allow
that long. A waiting request occupies its connection, as a parked JoinGroup does.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.extensions import DESCRIBE_GROUP_KEY
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import GROUP, TOPIC, allowed, allowed_names
from groupctl.store.base import StoreError

MAX_WAIT_MS = 30_000


@api(key=DESCRIBE_GROUP_KEY, versions=(0, 1))
async def handle_groupctl_describe_group(ctx: RequestContext, request: Any) -> Any:
    if not allowed(ctx, Operation.DESCRIBE, GROUP, request.group_id):
        return _answer(ctx, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    placement_error = ctx.node.placement.error(request.group_id)
    if placement_error:
        return _answer(ctx, placement_error)
    wait_ms = min(request.max_wait_ms, MAX_WAIT_MS) if request.after_generation >= 0 else 0
    try:
        stored = await ctx.node.wait_for_document(request.group_id, request.after_generation,
                                                   max(wait_ms, 0) / 1000)
    except StoreError:  # unreadable, or a document that does not decode
        return _answer(ctx, ErrorCode.COORDINATOR_NOT_AVAILABLE)
    if stored is None:  # a group that only commits offsets has none, but may hold pending offsets
        return _answer(ctx, ErrorCode.GROUP_ID_NOT_FOUND, None, _pending(ctx, request.group_id))
    return _answer(ctx, ErrorCode.NONE, stored.data.decode(), _pending(ctx, request.group_id))


def _answer(ctx: RequestContext, error: ErrorCode, document: Optional[str] = None,
            pending: Sequence[Any] = ()) -> Any:
    fields = {"pending_offsets": list(pending)} if ctx.version >= 1 else {}
    return ctx.respond(throttle_time_ms=0, error_code=int(error), document=document, **fields)


def _pending(ctx: RequestContext, group_id: str) -> list[Any]:
    if ctx.version < 1:
        return []
    entry = ctx.response_class.PendingOffset
    held = ctx.node.core.pending_offsets(group_id)
    described = allowed_names(ctx, Operation.DESCRIBE, TOPIC, {o.topic for r in held.values() for o in r.offsets})
    return [entry(producer_id=producer_id, producer_epoch=held[producer_id].producer_epoch, topic=o.topic,
                  partition=o.partition, offset=o.offset)
            for producer_id in sorted(held) for o in sorted(held[producer_id].offsets,
                                                            key=lambda o: (o.topic, o.partition))
            if o.topic in described]
