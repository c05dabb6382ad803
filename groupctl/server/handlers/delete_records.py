"""DeleteRecords (21), v0-2.

Version notes: v1 is v0 again (throttling after the response); v2 is flexible. librdkafka and
kafka-python both send v2.

Semantics, per partition, as Kafka's leader: the partition's log start offset moves up to the
requested offset (-1: the high watermark, which on one replica is the log end), so every record
below it is gone for Fetch (OFFSET_OUT_OF_RANGE), ListOffsets earliest and timestamp lookups;
segments entirely below it are deleted at once. An offset above the high watermark, or negative
other than -1, answers OFFSET_OUT_OF_RANGE; one at or below the current start changes nothing.
low_watermark is the log start offset after the request (-1 with an error). The new start is
checkpointed to disk before the answer goes out, so it survives a crash and a restart
(`groupctl.log.checkpoints`). Kafka waits up to timeout_ms for every replica's log start to
reach the offset; the only replica is this node's log, so the answer never waits and timeout_ms
does not matter. Logs not open yet are opened first (all at once, off the event loop).

Authorization (`--authorizer`), as Kafka: Delete on each topic, else its partitions answer
TOPIC_AUTHORIZATION_FAILED (before the unknown-topic check).

Deliberate differences from Apache Kafka: duplicate partitions in one request are each answered
(Kafka keeps the last); there are no internal topics (Kafka answers INVALID_TOPIC_EXCEPTION for
them) and no compacted ones (POLICY_VIOLATION); a checkpoint that cannot be written answers
KAFKA_STORAGE_ERROR, though the start has moved in memory.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from groupctl.coordinator.errors import ErrorCode
from groupctl.log import LogError, OffsetOutOfRangeError, Removal
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import TOPIC, allowed
from groupctl.server.handlers.local_partitions import Failures, answer_with_open_logs, partition_log, topic_by_name

log = logging.getLogger(__name__)

INVALID_LOW_WATERMARK = -1


@api(key=21, versions=(0, 2))
async def handle_delete_records(ctx: Any, request: Any) -> Any:
    targets = await answer_with_open_logs(ctx, lambda failed: _targets(ctx, request, failed))
    # No await from the last pass to here: the logs are still open when their starts move.
    errors: dict[tuple[int, int], ErrorCode] = {}
    moved: dict[tuple[int, int], tuple[Any, Removal]] = {}
    for t, topic in enumerate(request.topics):
        for p, wanted in enumerate(topic.partitions):
            error, opened = targets[t][p]
            if opened is None:
                errors[t, p] = error
                continue
            try:
                moved[t, p] = opened, opened.delete_records_before(wanted.offset)
            except OffsetOutOfRangeError:
                errors[t, p] = ErrorCode.OFFSET_OUT_OF_RANGE
    outcomes = await asyncio.gather(*(ctx.node.logs.finish_removal(opened, removal)
                                      for opened, removal in moved.values()), return_exceptions=True)
    for (key, (opened, _)), outcome in zip(moved.items(), outcomes):
        if isinstance(outcome, (LogError, OSError)):
            log.error("checkpointing the log start of %s-%d failed", opened.topic, opened.partition,
                      exc_info=outcome)
            errors[key] = ErrorCode.KAFKA_STORAGE_ERROR
        elif isinstance(outcome, BaseException):
            raise outcome
    topic_cls = ctx.response_class.DeleteRecordsTopicResult
    partition_cls = topic_cls.DeleteRecordsPartitionResult
    topics = []
    for t, topic in enumerate(request.topics):
        partitions = []
        for p, wanted in enumerate(topic.partitions):
            error = errors.get((t, p), ErrorCode.NONE)
            low_watermark = moved[t, p][0].log_start_offset if error == ErrorCode.NONE else INVALID_LOW_WATERMARK
            partitions.append(partition_cls(partition_index=wanted.partition_index, error_code=error,
                                            low_watermark=low_watermark))
        topics.append(topic_cls(name=topic.name, partitions=partitions))
    return ctx.respond(throttle_time_ms=0, topics=topics)


def _targets(ctx: Any, request: Any, failed: Failures) -> tuple[list[list[tuple[Any, Any]]], list[tuple[str, int]]]:
    """Per topic and partition of the request, (error, log) as `partition_log` answers, and the
    led partitions whose logs are not open yet."""
    targets = []
    to_open = []
    for topic in request.topics:
        if not allowed(ctx, Operation.DELETE, TOPIC, topic.name):
            targets.append([(ErrorCode.TOPIC_AUTHORIZATION_FAILED, None)] * len(topic.partitions))
            continue
        record = topic_by_name(ctx, topic.name)
        found = []
        for wanted in topic.partitions:
            error, opened = partition_log(ctx, record, wanted.partition_index,
                                          ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, failed)
            if error is None:
                to_open.append((record.name, wanted.partition_index))
            found.append((error, opened))
        targets.append(found)
    return targets, to_open
