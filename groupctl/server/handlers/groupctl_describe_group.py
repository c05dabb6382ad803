"""GroupctlDescribeGroup (API 32000, groupctl's own), version 0: a group's stored document.

Why it exists: Kafka's DescribeGroups has no generation, and following rebalances needs one.
This API gives `group describe` the generation and `rebalance watch` its events with
`--bootstrap` alone, whichever store the coordinator uses (the document otherwise lives only in
ZooKeeper, or in the embedded store's files). Other Kafka clients ignore the key in ApiVersions.

Version notes:
- v0 is flexible (request header v2, response header v1, tagged fields).

Answers:
- the group's document exactly as stored (docs/zookeeper-layout.md, compact JSON), with error NONE;
- GROUP_ID_NOT_FOUND and a null document when the store holds no document for the group: it
  does not exist, or it has not completed its first rebalance yet (a group whose first members
  are still joining has no document);
- COORDINATOR_NOT_AVAILABLE and a null document when the store cannot be read;
- NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS when this node does not coordinate the group
  (only the coordinator's writes wake a long poll); a poll whose group moves away meanwhile
  answers at once with the stored document, and the next one is told NOT_COORDINATOR.

Long-polling: with `after_generation` >= 0 and `max_wait_ms` > 0 the answer waits until the
stored generation is greater than `after_generation` (a rebalance completed), the group is
deleted (GROUP_ID_NOT_FOUND), or `max_wait_ms` passes (then the current document). The wait is
capped at MAX_WAIT_MS; a client must allow that long for the answer. `after_generation` -1 or
`max_wait_ms` 0 answers at once. A waiting request occupies its connection, as a parked
JoinGroup does: watch from a connection of its own.

Deliberate difference from Apache Kafka, which has no such API and keeps no group documents.
"""

from __future__ import annotations

from typing import Any

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.extensions import DESCRIBE_GROUP_KEY
from groupctl.protocol.registry import api
from groupctl.server.context import RequestContext
from groupctl.store.base import StoreError
from groupctl.layout.codec import encode as encode_document

MAX_WAIT_MS = 30_000


@api(key=DESCRIBE_GROUP_KEY, versions=(0, 0))
async def handle_groupctl_describe_group(ctx: RequestContext, request: Any) -> Any:
    placement_error = ctx.node.placement.error(request.group_id)
    if placement_error:
        return ctx.respond(throttle_time_ms=0, error_code=int(placement_error), document=None)
    wait_ms = min(request.max_wait_ms, MAX_WAIT_MS) if request.after_generation >= 0 else 0
    try:
        document = await ctx.node.wait_for_document(request.group_id, request.after_generation,
                                                     max(wait_ms, 0) / 1000)
    except StoreError:
        return ctx.respond(throttle_time_ms=0, error_code=int(ErrorCode.COORDINATOR_NOT_AVAILABLE), document=None)
    if document is None:
        return ctx.respond(throttle_time_ms=0, error_code=int(ErrorCode.GROUP_ID_NOT_FOUND), document=None)
    return ctx.respond(throttle_time_ms=0, error_code=int(ErrorCode.NONE),
                       document=encode_document(document).decode())
