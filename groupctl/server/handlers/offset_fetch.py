"""OffsetFetch (API 9), versions 1-10: read a group's committed offsets.

Version notes:
- v1 names one group and lists its topics; a group-wide error is reported in every requested
  partition (there is no top-level error field), as Kafka does.
- v2+ `topics` may be null, meaning every partition the group has committed, and the response
  has a top-level `error_code` (with no topics when it is set, as in Kafka).
- v3+ the response has `throttle_time_ms` (always 0 here).
- v5+ the response carries each partition's `committed_leader_epoch`.
- v6+ are flexible.
- v7+ `require_stable` (KIP-447): a partition for which an open transaction holds offsets
  (TxnOffsetCommit, before its marker) answers UNSTABLE_OFFSET_COMMIT with offset -1, and the
  client retries; without the flag such a partition answers its committed offset.
- v8+ batch several groups (`groups[]`, each with its own topic list or null); each group is
  answered by its own core call and carries its own error.
- v9+ each group may carry a KIP-848 `member_id`/`member_epoch`, passed to the core: a consumer
  group answers a member it does not know UNKNOWN_MEMBER_ID and another epoch than the member's
  STALE_MEMBER_EPOCH (no id and epoch -1, as librdkafka and admin tools send: no check), as the
  group's error; a classic group, or a group that does not exist, does not check them.
- v10 names topics by topic id: ids resolve through the topic registry and an unknown id is
  answered UNKNOWN_TOPIC_ID for each of its partitions; with null topics, committed offsets of
  topics that no longer exist (no id to name them by) are left out, as in Kafka.

Topics given by name are not checked against the topic registry (Kafka does not either): a
partition with nothing committed answers offset -1.

Authorization (`--authorizer`), as Kafka: Describe on each group, else GROUP_AUTHORIZATION_FAILED
as that group's error; Describe on each topic, else its requested partitions answer
TOPIC_AUTHORIZATION_FAILED (offset -1, not asked of the core), and with null topics the topics
without it are left out.

From v8 a group named more than once is answered once, for its first entry (a deliberate
difference: `validation.distinct`).
"""

from __future__ import annotations

import uuid
from typing import Any, Optional

from kafka.protocol.consumer.group import OffsetFetchRequest, OffsetFetchResponse

from groupctl.coordinator.offsets.messages import CommittedOffset, FetchOffsets, FetchOffsetsResult
from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.protocol.validation import distinct
from groupctl.security.acls import Operation
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import GROUP, TOPIC, allowed, allowed_names

TopicAnswer = tuple[str, Optional[uuid.UUID], list[CommittedOffset]]
"""One response topic: name, topic id (v10), and its partitions in answer order."""


def _resolve_names(
    ctx: RequestContext, wire_topics: list[Any]
) -> list[tuple[str, Optional[uuid.UUID], bool]]:
    """(name, id, known) per requested topic; v10 ids that name no topic are not known."""
    resolved = []
    for topic in wire_topics:
        if ctx.version >= 10:
            record = ctx.node.topics.by_id(str(topic.topic_id))
            resolved.append((record.name if record else "", topic.topic_id, record is not None))
        else:
            resolved.append((topic.name, None, True))
    return resolved


async def _fetch_group(
    ctx: RequestContext,
    group_id: str,
    wire_topics: Optional[list[Any]],
    require_stable: bool,
    member_id: Optional[str] = None,
    member_epoch: int = -1,
) -> tuple[ErrorCode, list[TopicAnswer]]:
    """Ask the core for one group's offsets and lay them out as the response lists topics."""
    resolved = None if wire_topics is None else _resolve_names(ctx, wire_topics)
    described = allowed_names(ctx, Operation.DESCRIBE, TOPIC, (name for name, _, known in resolved or () if known))
    partitions = None
    if wire_topics is not None:
        partitions = tuple(
            (name, p)
            for topic, (name, _, known) in zip(wire_topics, resolved)
            if known and name in described
            for p in topic.partition_indexes
        )
    fetch = FetchOffsets(group_id=group_id, partitions=partitions, require_stable=require_stable,
                         member_id=member_id, member_epoch=member_epoch)
    if not allowed(ctx, Operation.DESCRIBE, GROUP, group_id):
        result = FetchOffsetsResult(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    else:
        result = await ctx.node.call_groups(lambda core, token, now: core.fetch_offsets(token, fetch, now))

    if result.error != ErrorCode.NONE:
        if ctx.version >= 2:
            return result.error, []
        # v1 has no top-level error (nor null topics): every requested partition carries it.
        return result.error, [
            (
                name,
                topic_id,
                [CommittedOffset(name, p, -1, error=result.error) for p in topic.partition_indexes],
            )
            for topic, (name, topic_id, _) in zip(wire_topics, resolved)
        ]
    if wire_topics is None:
        described = allowed_names(ctx, Operation.DESCRIBE, TOPIC, {o.topic for o in result.offsets})
        return result.error, _all_committed(ctx, tuple(o for o in result.offsets if o.topic in described))
    committed = {(o.topic, o.partition): o for o in result.offsets}
    answers: list[TopicAnswer] = []
    for topic, (name, topic_id, known) in zip(wire_topics, resolved):
        offsets = []
        for p in topic.partition_indexes:
            if not known:
                offsets.append(CommittedOffset(name, p, -1, error=ErrorCode.UNKNOWN_TOPIC_ID))
            elif name not in described:
                offsets.append(CommittedOffset(name, p, -1, error=ErrorCode.TOPIC_AUTHORIZATION_FAILED))
            else:
                # A partition the core does not list has nothing committed.
                offsets.append(committed.get((name, p), CommittedOffset(name, p, -1)))
        answers.append((name, topic_id, offsets))
    return result.error, answers


def _all_committed(ctx: RequestContext, offsets: tuple[CommittedOffset, ...]) -> list[TopicAnswer]:
    """Group the core's offsets by topic, in the core's order (null topics in the request)."""
    by_topic: dict[str, list[CommittedOffset]] = {}
    for offset in offsets:
        by_topic.setdefault(offset.topic, []).append(offset)
    answers: list[TopicAnswer] = []
    for name, partitions in by_topic.items():
        topic_id = None
        if ctx.version >= 10:
            record = ctx.node.topics.get(name)
            if record is None:
                continue  # deleted topic: no id to report it under
            topic_id = uuid.UUID(record.topic_id)
        answers.append((name, topic_id, partitions))
    return answers


def _partitions(partition_class: Any, offsets: Any) -> list[Any]:
    """The response's partition entries; the class differs between the v0-7 and v8+ layouts."""
    return [
        partition_class(
            partition_index=o.partition,
            committed_offset=o.offset,
            committed_leader_epoch=o.leader_epoch,
            metadata=o.metadata,
            error_code=int(o.error),
        )
        for o in offsets
    ]


def _single_group_response(
    ctx: RequestContext, error: ErrorCode, answers: list[TopicAnswer]
) -> OffsetFetchResponse:
    topic_class = OffsetFetchResponse.OffsetFetchResponseTopic
    partition_class = topic_class.OffsetFetchResponsePartition
    topics = [
        topic_class(
            name=name,
            partitions=_partitions(partition_class, offsets),
        )
        for name, _, offsets in answers
    ]
    return ctx.respond(throttle_time_ms=0, topics=topics, error_code=int(error))


def _group_entry(group_id: str, error: ErrorCode, answers: list[TopicAnswer]) -> Any:
    group_class = OffsetFetchResponse.OffsetFetchResponseGroup
    topic_class = group_class.OffsetFetchResponseTopics
    partition_class = topic_class.OffsetFetchResponsePartitions
    return group_class(
        group_id=group_id,
        error_code=int(error),
        topics=[
            topic_class(
                name=name,
                topic_id=topic_id,
                partitions=_partitions(partition_class, offsets),
            )
            for name, topic_id, offsets in answers
        ],
    )


@api(key=9, versions=(1, 10))
async def handle_offset_fetch(
    ctx: RequestContext, request: OffsetFetchRequest
) -> OffsetFetchResponse:
    if ctx.version >= 8:
        request.groups = distinct(request.groups, key=lambda group: group.group_id)
    require_stable = bool(request.require_stable) if ctx.version >= 7 else False
    if ctx.version < 8:
        error, answers = await _fetch_group(ctx, request.group_id, request.topics, require_stable)
        return _single_group_response(ctx, error, answers)
    groups = []
    for group in request.groups:
        member = (group.member_id, group.member_epoch) if ctx.version >= 9 else (None, -1)
        error, answers = await _fetch_group(ctx, group.group_id, group.topics, require_stable, *member)
        groups.append(_group_entry(group.group_id, error, answers))
    return ctx.respond(throttle_time_ms=0, groups=groups)
