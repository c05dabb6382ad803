"""OffsetDelete (API 47), version 0: delete a group's committed offsets for some partitions.

Version notes: only v0 exists.

As Kafka's request handler does, partitions of topics this node does not know are answered
UNKNOWN_TOPIC_OR_PARTITION here and the rest go to the core (even none, so that group-wide
errors such as GROUP_ID_NOT_FOUND are still reported). A group-wide error from the core is the
whole answer (top-level error, no topics); otherwise per-partition errors (for example
GROUP_SUBSCRIBED_TO_TOPIC) are merged back in request order.

Authorization (`--authorizer`), as Kafka: Delete on the group, else GROUP_AUTHORIZATION_FAILED
(top-level, no topics); then Read on each topic, else its partitions answer
TOPIC_AUTHORIZATION_FAILED (before the unknown-topic check) and are not asked of the core.
"""

from __future__ import annotations

from kafka.protocol.consumer.group import OffsetDeleteRequest, OffsetDeleteResponse

from groupctl.coordinator.offsets.messages import DeleteOffsets, DeleteOffsetsResult
from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import GROUP, TOPIC, allowed, allowed_names


@api(key=47, versions=(0, 0))
async def handle_offset_delete(
    ctx: RequestContext, request: OffsetDeleteRequest
) -> OffsetDeleteResponse:
    if not allowed(ctx, Operation.DELETE, GROUP, request.group_id):
        return ctx.respond(error_code=int(ErrorCode.GROUP_AUTHORIZATION_FAILED), throttle_time_ms=0, topics=[])
    readable = allowed_names(ctx, Operation.READ, TOPIC, (topic.name for topic in request.topics))
    known = [ctx.node.topics.get(topic.name) is not None for topic in request.topics]
    delete = DeleteOffsets(
        group_id=request.group_id,
        partitions=tuple(
            (topic.name, p.partition_index)
            for topic, is_known in zip(request.topics, known)
            if is_known and topic.name in readable
            for p in topic.partitions
        ),
    )
    result: DeleteOffsetsResult = await ctx.node.call_groups(
        lambda core, token, now: core.delete_offsets(token, delete, now)
    )
    if result.error != ErrorCode.NONE:
        return ctx.respond(error_code=int(result.error), throttle_time_ms=0, topics=[])

    core_errors = {(p.topic, p.partition): p.error for p in result.partitions}
    topic_class = OffsetDeleteResponse.OffsetDeleteResponseTopic
    partition_class = topic_class.OffsetDeleteResponsePartition
    topics = []
    for topic, is_known in zip(request.topics, known):
        partitions = []
        for p in topic.partitions:
            if topic.name not in readable:
                error = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif is_known:
                # A partition the core does not list had nothing to delete: not an error.
                error = core_errors.get((topic.name, p.partition_index), ErrorCode.NONE)
            else:
                error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            partitions.append(
                partition_class(partition_index=p.partition_index, error_code=int(error))
            )
        topics.append(topic_class(name=topic.name, partitions=partitions))
    return ctx.respond(error_code=int(ErrorCode.NONE), throttle_time_ms=0, topics=topics)
