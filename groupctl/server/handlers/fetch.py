"""Fetch (1), v4-18.

Version notes: v4 adds isolation_level, last_stable_offset and aborted_transactions (the schema's
floor; the oldest any current client sends is kcat's 11); v5 log_start_offset; v7 fetch sessions
and a top-level error; v9 current_leader_epoch; v11 rack_id and preferred_read_replica; v12 is
flexible, with last_fetched_epoch and tagged follower fields; v13 names topics by id (an unknown
id answers UNKNOWN_TOPIC_ID); v15-18 more follower-only fields. Every fetcher is a consumer here.

Semantics: each partition is read from its local log, whole batches only, from the batch that
holds fetch_offset, at most partition_max_bytes per partition and max_bytes in all, except that
the first partition with data returns at least one batch whatever its size (KIP-74).
high_watermark is the log end offset (one replica) and last_stable_offset the log's last stable
offset (the first offset of its earliest open transaction, else the high watermark). With
isolation_level read_committed (1) a read stops before the last stable offset, as Kafka's
maxOffset for READ_COMMITTED (a fetch at or past it answers no records), and aborted_transactions
lists the aborted transactions (producer id, first offset) overlapping the batches returned, from
the logs' transaction indexes, so the consumer drops their records and the abort markers; with
read_uncommitted it is null. An offset outside [log start, log end] answers OFFSET_OUT_OF_RANGE with -1 offsets, as Kafka does (DeleteRecords and retention move the log start
up, so a consumer behind it resets per its auto.offset.reset). Leader epochs (`leader_epochs`):
current_leader_epoch (v9+) below the partition's epoch answers FENCED_LEADER_EPOCH, above it
UNKNOWN_LEADER_EPOCH (-1: no check); last_fetched_epoch (v12+) is checked as Kafka does: when the
fetcher's log diverges from this one (its epoch ended here before fetch_offset, or is unknown
here but older epochs are known) the partition answers diverging_epoch (epoch, end offset) and no
records; an epoch this log cannot place answers OFFSET_OUT_OF_RANGE. The answer goes out at once
when min_bytes are available, any partition has an error or a diverging epoch, or max_wait_ms is
0; otherwise the handler waits on the logs' append listeners until enough bytes arrive or
max_wait_ms passes. Logs not open yet are opened first (all at once, off the event loop) and the
partitions read after.

Fetch sessions are disabled, as on a broker with no session cache slots: a full request (epoch -1
or 0) gets a full response with session_id 0, so clients keep sending full requests; an
incremental one (epoch > 0) answers FETCH_SESSION_ID_NOT_FOUND.

Authorization (`--authorizer`), as Kafka for consumers: Read on each topic, else its partitions
answer TOPIC_AUTHORIZATION_FAILED (before the unknown-topic check; a v13 topic id that names no
topic is UNKNOWN_TOPIC_ID), which, like any error, sends the answer at once.

Transactions are written only by the transaction coordinator's markers (`PartitionLog.append_marker`);
until the coordinator serves InitProducerId for transactional ids no client can open one here.

Deliberate differences from Apache Kafka: the aborted transactions are collected up to the end of
the batches returned (Kafka bounds the search by the offset index entry after them, which may
list a few more; consumers only use those overlapping their records); a partition another node leads answers
NOT_LEADER_OR_FOLLOWER without current_leader/node_endpoints; a read stops at a segment boundary.
"""

from __future__ import annotations

import asyncio
from typing import Any

from groupctl.coordinator.errors import ErrorCode
from groupctl.log import OffsetOutOfRangeError, next_offset_after
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import TOPIC, allowed
from groupctl.server.handlers.leader_epochs import NO_EPOCH, divergence, epoch_error
from groupctl.server.handlers.local_partitions import NO_FAILURES, Failures, open_logs, partition_log, requested_topic

READ_COMMITTED = 1


class _Round:
    """One pass over the requested partitions: the response topics, how many record bytes
    they carry, the logs read (to wait on), whether any partition had an error or a diverging
    epoch (either sends the answer at once), and the led partitions whose logs are not open yet
    (when there are any, the round is not an answer)."""

    def __init__(self) -> None:
        self.topics: list[Any] = []
        self.bytes = 0
        self.logs: list[Any] = []
        self.failed = False
        self.to_open: list[tuple[str, int]] = []


def _read(ctx: Any, request: Any, opening_failed: Failures) -> _Round:
    by_id = ctx.version >= 13
    topic_cls = ctx.response_class.FetchableTopicResponse
    partition_cls = topic_cls.PartitionData
    committed = request.isolation_level == READ_COMMITTED
    out = _Round()
    remaining = request.max_bytes

    def answer(index: int, error: ErrorCode, records: bytes = b"", log: Any = None, diverging: Any = None,
               fetch_offset: int = 0) -> Any:
        extra = {} if diverging is None else {
            "diverging_epoch": partition_cls.EpochEndOffset(epoch=diverging[0], end_offset=diverging[1])}
        return partition_cls(
            partition_index=index, error_code=error,
            high_watermark=log.high_watermark if log is not None else -1,
            last_stable_offset=log.last_stable_offset if log is not None else -1,
            log_start_offset=log.log_start_offset if log is not None else -1,
            aborted_transactions=aborted(log, fetch_offset, records) if committed else None,
            preferred_read_replica=-1, records=records, **extra,
        )

    def aborted(log: Any, fetch_offset: int, records: bytes) -> list[Any]:
        upper = next_offset_after(records) if log is not None and records else None
        if upper is None:
            return []
        return [partition_cls.AbortedTransaction(producer_id=txn.producer_id, first_offset=txn.first_offset)
                for txn in log.aborted_transactions(fetch_offset, upper)]

    for topic in request.topics:
        record, unknown = requested_topic(ctx, by_id, topic.topic, topic.topic_id)
        readable = (record is None and by_id) or allowed(
            ctx, Operation.READ, TOPIC, record.name if record is not None else topic.topic)
        partitions = []
        for wanted in topic.partitions:
            if not readable:
                out.failed = True
                partitions.append(answer(wanted.partition, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
                continue
            error, log = partition_log(ctx, record, wanted.partition, unknown, opening_failed)
            if log is None:
                if error is None:
                    out.to_open.append((record.name, wanted.partition))
                    continue
                out.failed = True
                partitions.append(answer(wanted.partition, error))
                continue
            if out.to_open:
                continue  # this round is only looking for logs to open
            error, diverging = epoch_error(log, getattr(wanted, "current_leader_epoch", NO_EPOCH)), None
            if error is ErrorCode.NONE:
                error, diverging = divergence(log, getattr(wanted, "last_fetched_epoch", NO_EPOCH),
                                              wanted.fetch_offset)
            if error is not ErrorCode.NONE or diverging is not None:
                out.failed = True
                partitions.append(answer(wanted.partition, error, b"", log if diverging else None, diverging))
                continue
            out.logs.append(log)
            try:
                records = log.read(wanted.fetch_offset, min(wanted.partition_max_bytes, remaining),
                                   at_least_one=out.bytes == 0,
                                   max_offset=log.last_stable_offset if committed else None)
            except OffsetOutOfRangeError:
                out.failed = True
                partitions.append(answer(wanted.partition, ErrorCode.OFFSET_OUT_OF_RANGE))
                continue
            out.bytes += len(records)
            remaining -= len(records)
            partitions.append(answer(wanted.partition, ErrorCode.NONE, records, log, fetch_offset=wanted.fetch_offset))
        if by_id:
            out.topics.append(topic_cls(topic_id=topic.topic_id, partitions=partitions))
        else:
            out.topics.append(topic_cls(topic=topic.topic, partitions=partitions))
    return out


@api(key=1, versions=(4, 18))
async def handle_fetch(ctx: Any, request: Any) -> Any:
    if ctx.version >= 7 and request.session_epoch > 0:
        return ctx.respond(throttle_time_ms=0, error_code=ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
                           session_id=0, responses=[])
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max(request.max_wait_ms, 0) / 1000
    failed: Failures = NO_FAILURES
    while True:
        result = _read(ctx, request, failed)
        if result.to_open:
            failed = await open_logs(ctx, result.to_open, failed)
            continue
        timeout = deadline - loop.time()
        if result.failed or result.bytes >= request.min_bytes or not result.logs or timeout <= 0:
            return ctx.respond(throttle_time_ms=0, error_code=ErrorCode.NONE, session_id=0,
                               responses=result.topics)
        await _wait_for_append(result.logs, timeout)


async def _wait_for_append(logs: list[Any], timeout: float) -> None:
    """Return when any of `logs` is appended to (or deleted), or after `timeout` seconds. Logs
    call listeners on the event loop's thread, so the listener may set the event directly."""
    appended = asyncio.Event()
    wake = appended.set
    for log in logs:
        log.add_listener(wake)
    try:
        await asyncio.wait_for(appended.wait(), timeout)
    except TimeoutError:
        pass
    finally:
        for log in logs:
            log.remove_listener(wake)
