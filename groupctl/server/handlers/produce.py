"""Produce (0), v3-13.

Version notes: v3 is the first version that carries only v2 record batches (and the oldest any
current client sends; kcat uses 7, librdkafka 10); v5 adds log_start_offset to the response; v8
record_errors and error_message; v9 is flexible; v10 adds the tagged current_leader and
node_endpoints (left empty: with one node there is no other leader to point to); v13 names
topics by id (an unknown id answers UNKNOWN_TOPIC_ID).

Semantics: each partition's batches are validated, given the next offsets and appended to the
local partition log; the response carries the base offset of the first record and the log
start offset. acks must be -1, 0 or 1 (else INVALID_REQUIRED_ACKS for every partition); with
acks=0 nothing is answered. With a single replica, acks=-1 and acks=1 are the same thing: the
append is in the OS page cache when the response goes out (see `groupctl.log.partition` on
durability), so timeout_ms never matters.

Idempotent producers (batches with a producer id): the partition log checks sequences and
epochs (see `groupctl.log.producers`). A retry of one of the producer's last five batches is
answered NONE with the original base offset and not written again; a gap or a new epoch not
starting at sequence 0 answers OUT_OF_ORDER_SEQUENCE_NUMBER; an older epoch answers
INVALID_PRODUCER_EPOCH.

Deliberate differences from Apache Kafka:
- Malformed batches answer CORRUPT_MESSAGE where Kafka 2.5+ answers INVALID_RECORD, and legacy
  message sets (magic 0/1) answer UNSUPPORTED_FOR_MESSAGE_FORMAT; Kafka requires exactly one
  batch per partition from v3, this node accepts one or more.
- No transactions: transactional_id is ignored and transactional batches are checked and
  stored like idempotent ones (no producer can get a transactional id here: InitProducerId
  refuses them).
- No max.message.bytes check (the server's frame limit bounds a request).
- log_append_time_ms is always -1: timestamps are the producer's (CreateTime).
- With acks=0 an error is not signalled by closing the connection; the request is just dropped.
"""

from __future__ import annotations

import logging
from typing import Any

from groupctl.coordinator.errors import ErrorCode
from groupctl.log import (
    CorruptBatchError,
    InvalidProducerEpochError,
    OutOfOrderSequenceError,
    UnsupportedMagicError,
)
from groupctl.protocol.registry import api
from groupctl.server.handlers.local_partitions import partition_log, requested_topic

log = logging.getLogger(__name__)

VALID_ACKS = (-1, 0, 1)


@api(key=0, versions=(3, 13))
async def handle_produce(ctx: Any, request: Any) -> Any:
    by_id = ctx.version >= 13
    topic_cls = ctx.response_class.TopicProduceResponse
    partition_cls = topic_cls.PartitionProduceResponse

    def answer(index: int, error: ErrorCode, base_offset: int = -1, log_start_offset: int = -1) -> Any:
        return partition_cls(index=index, error_code=error, base_offset=base_offset,
                             log_append_time_ms=-1, log_start_offset=log_start_offset,
                             record_errors=[], error_message=None)

    responses = []
    for topic in request.topic_data:
        record, unknown = requested_topic(ctx, by_id, topic.name, topic.topic_id)
        partitions = []
        for data in topic.partition_data:
            if request.acks not in VALID_ACKS:
                partitions.append(answer(data.index, ErrorCode.INVALID_REQUIRED_ACKS))
                continue
            error, partition = partition_log(ctx, record, data.index, unknown)
            if partition is None:
                partitions.append(answer(data.index, error))
                continue
            try:
                appended = partition.append(data.records or b"")
            except UnsupportedMagicError:
                partitions.append(answer(data.index, ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT))
            except CorruptBatchError:
                partitions.append(answer(data.index, ErrorCode.CORRUPT_MESSAGE))
            except OutOfOrderSequenceError:
                partitions.append(answer(data.index, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER))
            except InvalidProducerEpochError:
                partitions.append(answer(data.index, ErrorCode.INVALID_PRODUCER_EPOCH))
            except OSError:
                log.exception("appending to %s-%d failed", partition.topic, partition.partition)
                partitions.append(answer(data.index, ErrorCode.KAFKA_STORAGE_ERROR))
            else:
                partitions.append(answer(data.index, ErrorCode.NONE, appended.base_offset, appended.log_start_offset))
        if by_id:
            responses.append(topic_cls(topic_id=topic.topic_id, partition_responses=partitions))
        else:
            responses.append(topic_cls(name=topic.name, partition_responses=partitions))
    if request.acks == 0:
        return None
    return ctx.respond(responses=responses, throttle_time_ms=0)
