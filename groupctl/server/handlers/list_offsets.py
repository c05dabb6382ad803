"""ListOffsets (2), v1-11.

Version notes: v1 drops v0's max_num_offsets list for a single (timestamp, offset) answer (v0 is
not served); v2 isolation_level; v4 current_leader_epoch and the response leader_epoch; v6 is
flexible; v7 allows MAX_TIMESTAMP (-3); v8 EARLIEST_LOCAL_TIMESTAMP (-4); v9
LATEST_TIERED_TIMESTAMP (-5); v10 timeout_ms; v11 EARLIEST_PENDING_UPLOAD_TIMESTAMP (-6).
kafka-python sends 10-11, librdkafka 7, kcat 2.

Semantics, per partition of the local log: -1 (latest) answers the high watermark (the log end
offset: one replica), or with isolation_level read_committed (1, v2+) the last stable offset
(the first offset of the earliest open transaction, else the high watermark), as Kafka; -2 (earliest)
and -4 (earliest local: there is no remote tier) the log start offset (which DeleteRecords and
retention move), both with timestamp -1; -3 the first record carrying the log's largest timestamp,
with that timestamp; -5 and -6 (tiered-storage positions, with no tier) offset -1; any other value
the first record at or after the log start, in offset order, whose timestamp is >= it, with its
timestamp, or offset -1 and timestamp -1 when none is (or, with read_committed, when it is at or
past the last stable offset, as Kafka). leader_epoch, as Kafka: the current epoch
with latest, the first cached epoch with earliest when it starts at the log start (else -1: older
batches carry none), the found batch's epoch otherwise (-1 with offset -1). current_leader_epoch
(v4+) is checked as Fetch checks it (`leader_epochs.epoch_error`): FENCED_LEADER_EPOCH or
UNKNOWN_LEADER_EPOCH with offset -1. Logs not open yet are opened first (all at once, off the
event loop).

Authorization (`--authorizer`), as Kafka: Describe on each topic, else its partitions answer
TOPIC_AUTHORIZATION_FAILED (offset and timestamp -1).

Deliberate differences from Apache Kafka: duplicate partitions in one request are answered twice
instead of INVALID_REQUEST; the special timestamps are honoured at every version, as Kafka's
broker does (clients gate them by version).
"""

from __future__ import annotations

from typing import Any

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import TOPIC, allowed
from groupctl.server.handlers.leader_epochs import NO_EPOCH, epoch_error, list_offsets_epoch
from groupctl.server.handlers.local_partitions import Failures, answer_with_open_logs, partition_log, topic_by_name

LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5
EARLIEST_PENDING_UPLOAD_TIMESTAMP = -6


READ_COMMITTED = 1


def lookup(log: Any, timestamp: int, isolation_level: int = 0) -> tuple[int, int]:
    """(offset, timestamp) that ListOffsets answers for `timestamp` on `log`."""
    if timestamp == LATEST_TIMESTAMP:
        return (log.last_stable_offset if isolation_level == READ_COMMITTED else log.high_watermark), -1
    if timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
        return log.log_start_offset, -1
    if timestamp in (LATEST_TIERED_TIMESTAMP, EARLIEST_PENDING_UPLOAD_TIMESTAMP):
        return -1, -1
    if timestamp == MAX_TIMESTAMP:
        if log.log_end_offset == log.log_start_offset:
            return -1, -1
        timestamp = log.max_timestamp
    found = log.offset_for_timestamp(timestamp) or (-1, -1)
    if isolation_level == READ_COMMITTED and found[0] >= log.last_stable_offset:
        return -1, -1  # not readable yet by a read_committed consumer (Kafka's lastFetchableOffset)
    return found


@api(key=2, versions=(1, 11))
async def handle_list_offsets(ctx: Any, request: Any) -> Any:
    topics = await answer_with_open_logs(ctx, lambda failed: _answer(ctx, request, failed))
    return ctx.respond(throttle_time_ms=0, topics=topics)


def _answer(ctx: Any, request: Any, failed: Failures) -> tuple[list[Any], list[tuple[str, int]]]:
    """The response topics, and the led partitions whose logs are not open yet (when there are
    any, the topics are not the answer: open them and ask again)."""
    topic_cls = ctx.response_class.ListOffsetsTopicResponse
    partition_cls = topic_cls.ListOffsetsPartitionResponse
    topics = []
    to_open = []
    for topic in request.topics:
        record = topic_by_name(ctx, topic.name)
        described = allowed(ctx, Operation.DESCRIBE, TOPIC, topic.name)
        partitions = []
        for wanted in topic.partitions:
            if not described:
                partitions.append(partition_cls(partition_index=wanted.partition_index, timestamp=-1, offset=-1,
                                                error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, leader_epoch=-1))
                continue
            error, log = partition_log(ctx, record, wanted.partition_index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                       failed)
            if error is None:
                to_open.append((record.name, wanted.partition_index))
                continue
            if to_open:
                continue  # this pass is only looking for logs to open
            if log is not None:
                error = epoch_error(log, getattr(wanted, "current_leader_epoch", NO_EPOCH))
            if log is None or error is not ErrorCode.NONE:
                partitions.append(partition_cls(partition_index=wanted.partition_index, error_code=error,
                                                timestamp=-1, offset=-1, leader_epoch=NO_EPOCH))
                continue
            offset, timestamp = lookup(log, wanted.timestamp, getattr(request, "isolation_level", 0))
            partitions.append(partition_cls(partition_index=wanted.partition_index, error_code=error,
                                            timestamp=timestamp, offset=offset,
                                            leader_epoch=list_offsets_epoch(log, wanted.timestamp, offset)))
        topics.append(topic_cls(name=topic.name, partitions=partitions))
    return topics, to_open
