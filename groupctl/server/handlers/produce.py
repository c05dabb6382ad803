"""Produce (0), v3-13.

Version notes: v3 is the first that carries only v2 record batches (the oldest any current client
sends; kcat uses 7, librdkafka 10); v5 adds log_start_offset; v8 record_errors and error_message;
v9 is flexible; v10 adds the tagged current_leader and node_endpoints (left empty); v13 names
topics by id (an unknown id answers UNKNOWN_TOPIC_ID).

Semantics: each partition's batches are validated, given the next offsets and appended to the
local partition log (`local_partitions`: this node must lead it); the response carries the base
offset of the first record and the log start offset. The request's logs that are not open yet
are opened first, all at once and off the event loop; then every partition is appended to, in
request order, with no wait in between. acks must be -1, 0 or 1 (else
INVALID_REQUIRED_ACKS for every partition); with acks=0 nothing is answered. With a single
replica acks=-1 and acks=1 are the same: the append is in the page cache when the response goes
out (see `groupctl.log.partition`), so timeout_ms never matters. Idempotent producers' sequences
and epochs are checked by the log (`groupctl.log.producers`): a retry of one of the last five
batches is answered NONE with its original offset, a gap or a new epoch not at sequence 0
OUT_OF_ORDER_SEQUENCE_NUMBER, an older epoch INVALID_PRODUCER_EPOCH. A transactional batch opens
the producer's transaction in the partition log (it holds the last stable offset until the
transaction coordinator's marker ends it); a non-transactional batch from a producer with a
transaction open there answers INVALID_TXN_STATE. A transactional batch for a partition the
transaction coordinator has not added to the producer's open transaction answers
INVALID_TXN_STATE, one from a producer the transactional id no longer names
INVALID_PRODUCER_EPOCH (Kafka's verification, KIP-890 part 1). The topic's configs apply
as in Kafka (`groupctl.log.config`): a batch larger than max.message.bytes answers
MESSAGE_TOO_LARGE and a partition's batches larger than segment.bytes RECORD_LIST_TOO_LARGE;
with message.timestamp.type=LogAppendTime the log stamps the batches and log_append_time_ms
carries the time (-1 with CreateTime, as Kafka).

Authorization (`--authorizer`), as Kafka: Write on each topic, else its partitions answer
TOPIC_AUTHORIZATION_FAILED (before the unknown-topic check; a v13 topic id that names no topic
is UNKNOWN_TOPIC_ID); with a transactional id, Write on the TransactionalId, else every partition
answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED.

Deliberate differences from Apache Kafka: malformed batches answer CORRUPT_MESSAGE (Kafka 2.5+:
INVALID_RECORD), legacy message sets UNSUPPORTED_FOR_MESSAGE_FORMAT, and one or more batches per
partition are accepted (Kafka: exactly one from v3); a transactional batch is verified against
the transaction only when this node coordinates its transactional id (in a cluster, Kafka asks
the coordinator on another node); a retried duplicate
answers log_append_time_ms -1 (Kafka: the original batch's time); with acks=0 an error does not
close the connection, the request is just dropped.
"""

from __future__ import annotations

import logging
from typing import Any

from groupctl.coordinator.errors import ErrorCode
from groupctl.log import (
    CorruptBatchError,
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
    UnsupportedMagicError,
)
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.log.batches import HEADER_SIZE, parse_header
from groupctl.server.handlers.acl_checks import TOPIC, TRANSACTIONAL_ID, allowed
from groupctl.server.handlers.local_partitions import NO_FAILURES, Failures, open_logs, partition_log, requested_topic

log = logging.getLogger(__name__)

VALID_ACKS = (-1, 0, 1)


@api(key=0, versions=(3, 13))
async def handle_produce(ctx: Any, request: Any) -> Any:
    by_id = ctx.version >= 13
    topic_cls = ctx.response_class.TopicProduceResponse
    partition_cls = topic_cls.PartitionProduceResponse

    def answer(index: int, error: ErrorCode, base_offset: int = -1, log_start_offset: int = -1,
               log_append_time: int = -1) -> Any:
        return partition_cls(index=index, error_code=error, base_offset=base_offset,
                             log_append_time_ms=log_append_time, log_start_offset=log_start_offset,
                             record_errors=[], error_message=None)

    transactional_id = request.transactional_id
    if transactional_id is not None and not allowed(ctx, Operation.WRITE, TRANSACTIONAL_ID, transactional_id):
        targets = None
        refusal = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    elif request.acks not in VALID_ACKS:
        targets = None
        refusal = ErrorCode.INVALID_REQUIRED_ACKS
    else:
        targets, to_open = _targets(ctx, request, by_id, NO_FAILURES)
        failed: Failures = NO_FAILURES
        while to_open:  # no await between the last pass and the appends: the logs stay open
            failed = await open_logs(ctx, to_open, failed)
            targets, to_open = _targets(ctx, request, by_id, failed)
    responses = []
    for t, topic in enumerate(request.topic_data):
        partitions = []
        for i, data in enumerate(topic.partition_data):
            if targets is None:
                partitions.append(answer(data.index, refusal))
                continue
            error, partition = targets[t][i]
            if partition is not None:
                error = _unverified(ctx, transactional_id, partition, data.records)
            if error is not ErrorCode.NONE:
                partitions.append(answer(data.index, error))
                continue
            try:
                appended = partition.append(data.records or b"")
            except UnsupportedMagicError:
                partitions.append(answer(data.index, ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT))
            except CorruptBatchError:
                partitions.append(answer(data.index, ErrorCode.CORRUPT_MESSAGE))
            except RecordTooLargeError:
                partitions.append(answer(data.index, ErrorCode.MESSAGE_TOO_LARGE))
            except RecordBatchTooLargeError:
                partitions.append(answer(data.index, ErrorCode.RECORD_LIST_TOO_LARGE))
            except OutOfOrderSequenceError:
                partitions.append(answer(data.index, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER))
            except InvalidProducerEpochError:
                partitions.append(answer(data.index, ErrorCode.INVALID_PRODUCER_EPOCH))
            except InvalidTxnStateError:
                partitions.append(answer(data.index, ErrorCode.INVALID_TXN_STATE))
            except OSError:
                log.exception("appending to %s-%d failed", partition.topic, partition.partition)
                partitions.append(answer(data.index, ErrorCode.KAFKA_STORAGE_ERROR))
            else:
                partitions.append(answer(data.index, ErrorCode.NONE, appended.base_offset, appended.log_start_offset,
                                         appended.log_append_time))
        if by_id:
            responses.append(topic_cls(topic_id=topic.topic_id, partition_responses=partitions))
        else:
            responses.append(topic_cls(name=topic.name, partition_responses=partitions))
    if request.acks == 0:
        return None
    return ctx.respond(responses=responses, throttle_time_ms=0)


def _unverified(ctx: Any, transactional_id: Any, partition: Any, records: Any) -> ErrorCode:
    """NONE unless the data starts with a transactional batch for a partition its transaction
    coordinator (this node) has not added to the producer's open transaction: INVALID_TXN_STATE,
    or INVALID_PRODUCER_EPOCH for a producer that is not the id's (KIP-890 part 1)."""
    if not records or len(records) < HEADER_SIZE or transactional_id is None:
        return ErrorCode.NONE
    try:
        header = parse_header(records, 0, 0)
    except CorruptBatchError:
        return ErrorCode.NONE  # the append answers it
    transactions = ctx.node.transactions
    if not header.is_transactional or transactions.error(transactional_id) is not ErrorCode.NONE:
        return ErrorCode.NONE
    error = transactions.core.verify(transactional_id, header.producer_id, header.producer_epoch,
                                     (partition.topic, partition.partition))
    if error in (ErrorCode.PRODUCER_FENCED, ErrorCode.INVALID_PRODUCER_ID_MAPPING):
        return ErrorCode.INVALID_PRODUCER_EPOCH
    return error


def _targets(ctx: Any, request: Any, by_id: bool, failed: Failures
             ) -> tuple[list[list[tuple[Any, Any]]], list[tuple[str, int]]]:
    """Per topic and partition of the request, (error, log) as `partition_log` answers; and the
    led partitions whose logs are not open yet (their entries are to be asked for again)."""
    targets = []
    to_open = []
    for topic in request.topic_data:
        record, unknown = requested_topic(ctx, by_id, topic.name, topic.topic_id)
        if (record is not None or not by_id) and not allowed(
                ctx, Operation.WRITE, TOPIC, record.name if record is not None else topic.name):
            targets.append([(ErrorCode.TOPIC_AUTHORIZATION_FAILED, None)] * len(topic.partition_data))
            continue
        found = []
        for data in topic.partition_data:
            error, partition = partition_log(ctx, record, data.index, unknown, failed)
            if error is None:
                to_open.append((record.name, data.index))
            found.append((error, partition))
        targets.append(found)
    return targets, to_open
