"""OffsetCommit (API 8), versions 2-10: a member (or an admin tool) commits offsets.

Version notes: v2-4 carry `retention_time_ms` (ignored; v5 dropped it, KIP-211); v3+ the response
has `throttle_time_ms` (always 0); v6+ each partition's `committed_leader_epoch`; v7+
`group_instance_id`; v8+ flexible; v9 is the first a KIP-848 member may use (its member epoch in
the generation field; older versions naming a consumer-protocol member get UNSUPPORTED_VERSION)
and answers a commit with a generation to a group that does not exist with GROUP_ID_NOT_FOUND
(ILLEGAL_GENERATION before): the core decides both from the version passed with the commit; v10
names topics by id (an unknown id answers UNKNOWN_TOPIC_ID for each of its partitions).

v8 (kafka-python) and v9 (librdkafka) requests are decoded by `groupctl.protocol.fastpath`, so
`request` may be its `OffsetCommitRequestBody` (kafka-python's field names); this handler reads
only the fields. Generation -1 with member id "" is a simple commit; the core decides.

Checked here first, as Kafka's request handler does: a topic or partition this node does not
know is UNKNOWN_TOPIC_OR_PARTITION, metadata over 4096 bytes OFFSET_METADATA_TOO_LARGE. Only the
other partitions go to the core (not called when none remain); errors merge back in request order.

Authorization (`--authorizer`), as Kafka: Read on the group, else every partition answers
GROUP_AUTHORIZATION_FAILED; then Read on each topic, else its partitions answer
TOPIC_AUTHORIZATION_FAILED (before the unknown-topic check; a v10 topic id that names no topic
is UNKNOWN_TOPIC_ID, there being no name to authorize).

Deliberate differences from Apache Kafka: the metadata limit counts UTF-8 bytes (Kafka compares
the UTF-16 length with `offset.metadata.max.bytes`) and is checked before the group, so it is
reported even when the group would refuse the commit; v2-4 `retention_time_ms` is not honoured
(there is no per-commit retention).
"""

from __future__ import annotations

from typing import Any, Union

from kafka.protocol.consumer.group import OffsetCommitRequest, OffsetCommitResponse

from groupctl.coordinator.offsets.messages import CommitOffsets, CommitOffsetsResult, PartitionOffset
from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.fastpath import OffsetCommitRequestBody
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import GROUP, TOPIC, allowed

Request = Union[OffsetCommitRequestBody, OffsetCommitRequest]

METADATA_MAX_BYTES = 4096
"""Kafka's default `offset.metadata.max.bytes`."""


def _resolve(ctx: RequestContext, topic: Any) -> tuple[Any, ErrorCode]:
    """The topic's record (None when unknown) and the error that answers an unknown topic."""
    if ctx.version >= 10:
        return ctx.node.topics.by_id(str(topic.topic_id)), ErrorCode.UNKNOWN_TOPIC_ID
    return ctx.node.topics.get(topic.name), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


_UTF8_MAX_BYTES_PER_CHAR = 4
_SURELY_SMALL_METADATA = METADATA_MAX_BYTES // _UTF8_MAX_BYTES_PER_CHAR
"""Metadata of at most this many characters fits the limit whatever it holds: the byte count
is only computed for longer strings (commits run this check on every partition)."""

_TOPIC = OffsetCommitResponse.OffsetCommitResponseTopic
_PARTITION = _TOPIC.OffsetCommitResponsePartition


def _precheck(
    ctx: RequestContext, request: Request
) -> tuple[list[tuple[str, list[ErrorCode | None]]], list[PartitionOffset]]:
    """Per requested topic: its name and each partition's early error (None: goes to the core),
    plus the offsets that go to the core."""
    checked: list[tuple[str, list[ErrorCode | None]]] = []
    valid: list[PartitionOffset] = []
    with_epoch = ctx.version >= 6
    for topic in request.topics:
        record, unknown_topic = _resolve(ctx, topic)
        name = record.name if record is not None else (topic.name or "")
        readable = (record is None and ctx.version >= 10) or allowed(ctx, Operation.READ, TOPIC, name)
        errors: list[ErrorCode | None] = []
        for p in topic.partitions:
            metadata = p.committed_metadata or ""
            if not readable:
                errors.append(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
            elif record is None:
                errors.append(unknown_topic)
            elif p.partition_index not in record.replicas:
                errors.append(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            elif (len(metadata) > _SURELY_SMALL_METADATA
                  and len(metadata.encode("utf-8")) > METADATA_MAX_BYTES):
                errors.append(ErrorCode.OFFSET_METADATA_TOO_LARGE)
            else:
                errors.append(None)
                valid.append(
                    PartitionOffset(
                        topic=name,
                        partition=p.partition_index,
                        offset=p.committed_offset,
                        leader_epoch=p.committed_leader_epoch if with_epoch else -1,
                        metadata=metadata,
                    )
                )
        checked.append((name, errors))
    return checked, valid


@api(key=8, versions=(2, 10))
async def handle_offset_commit(
    ctx: RequestContext, request: Request
) -> OffsetCommitResponse:
    checked, valid = _precheck(ctx, request)
    if not allowed(ctx, Operation.READ, GROUP, request.group_id):
        checked = [(name, [ErrorCode.GROUP_AUTHORIZATION_FAILED] * len(errors)) for name, errors in checked]
        valid = []
    core_errors: dict[tuple[str, int], ErrorCode] = {}
    if valid:
        commit = CommitOffsets(
            group_id=request.group_id,
            generation_id=request.generation_id_or_member_epoch,
            member_id=request.member_id,
            group_instance_id=request.group_instance_id if ctx.version >= 7 else None,
            offsets=tuple(valid),
            api_version=ctx.version,
        )
        result: CommitOffsetsResult = await ctx.node.call_groups(
            lambda core, token, now: core.commit_offsets(token, commit, now)
        )
        core_errors = {(p.topic, p.partition): p.error for p in result.partitions}

    topics = []
    for topic, (name, errors) in zip(request.topics, checked):
        partitions = []
        for p, error in zip(topic.partitions, errors):
            if error is None:
                error = core_errors[(name, p.partition_index)]
            partitions.append(_PARTITION(partition_index=p.partition_index, error_code=int(error)))
        topics.append(_TOPIC(name=name, topic_id=topic.topic_id, partitions=partitions))
    return ctx.respond(throttle_time_ms=0, topics=topics)
