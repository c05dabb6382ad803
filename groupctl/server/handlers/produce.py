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
transaction open there answers INVALID_TXN_STATE. A transactional batch is verified with the
transactional id's coordinator first, on whichever node it is (Kafka's verification, KIP-890
part 1; `groupctl.server.txn_verification`): a partition not added to the producer's open
transaction answers INVALID_TXN_STATE, a producer the transactional id no longer names
INVALID_PRODUCER_EPOCH, and a coordinator that cannot answer now (moving, loading, completing
the previous transaction, unreachable) NOT_ENOUGH_REPLICAS, which clients retry, as Kafka's
ReplicaManager answers them. With the coordinator on another node, a producer's transaction
already open in the partition's log is not verified again, as in Kafka. The topic's Write ACL
and the partition's leadership are checked before the verification (as Kafka authorizes
first), and the verification is guarded as Kafka's (`groupctl.log.producers`: the log's guard
is taken before the coordinator is asked and the append must present it): a transaction marker
written while the question was out voids it, and the batch answers INVALID_TXN_STATE instead of
opening a transaction after the marker that no coordinator knows. The topic's configs apply
as in Kafka (`groupctl.log.config`): a batch larger than max.message.bytes answers
MESSAGE_TOO_LARGE and a partition's batches larger than segment.bytes RECORD_LIST_TOO_LARGE;
with message.timestamp.type=LogAppendTime the log stamps the batches and log_append_time_ms
carries the time (-1 with CreateTime, as Kafka).

Authorization (`--authorizer`), as Kafka: Write on each topic, else its partitions answer
TOPIC_AUTHORIZATION_FAILED (before the unknown-topic check; a v13 topic id that names no topic
is UNKNOWN_TOPIC_ID); with a transactional id, Write on the TransactionalId, else every partition
answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED.

Deliberate differences from Apache Kafka: a transactional batch in a request without a
transactional id is appended unverified (Kafka answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
malformed batches answer CORRUPT_MESSAGE (Kafka 2.5+:
INVALID_RECORD), legacy message sets UNSUPPORTED_FOR_MESSAGE_FORMAT, and one or more batches per
partition are accepted (Kafka: exactly one from v3); a verification's TRANSACTION_ABORTABLE
answers INVALID_TXN_STATE at every version (Kafka passes it on to v11+, which only
transaction.version 2 clients expect), and an unknown producer id mapping
INVALID_PRODUCER_EPOCH; a retried duplicate
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
    NO_GUARD,
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
from groupctl.server.handlers.local_partitions import Failures, answer_with_open_logs, partition_log, requested_topic
from groupctl.server.txn_verification import verify

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
        targets = await answer_with_open_logs(ctx, lambda failed: _targets(ctx, request, by_id, failed))
        guards, asks = _start_verifications(ctx, request, targets, transactional_id)
        verdicts = await _verify(ctx, transactional_id, asks)
        if asks:  # the verification awaited: ask for the logs again (no await after this pass)
            targets = await answer_with_open_logs(ctx, lambda failed: _targets(ctx, request, by_id, failed))
    responses = []
    for t, topic in enumerate(request.topic_data):
        partitions = []
        for i, data in enumerate(topic.partition_data):
            if targets is None:
                partitions.append(answer(data.index, refusal))
                continue
            error, partition = targets[t][i]
            if partition is not None:
                error = verdicts.get((partition.topic, partition.partition), ErrorCode.NONE)
            if error is not ErrorCode.NONE:
                partitions.append(answer(data.index, error))
                continue
            try:
                appended = partition.append(data.records or b"", _guard(guards, partition, transactional_id))
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


_PRODUCE_ANSWERS = {
    ErrorCode.TRANSACTION_ABORTABLE: ErrorCode.INVALID_TXN_STATE,
    ErrorCode.INVALID_PRODUCER_ID_MAPPING: ErrorCode.INVALID_PRODUCER_EPOCH,
    **dict.fromkeys((ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.NETWORK_EXCEPTION,
                     ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE,
                     ErrorCode.NOT_COORDINATOR), ErrorCode.NOT_ENOUGH_REPLICAS),
}
"""A verification's answers as a Produce partition carries them (Kafka's ReplicaManager: the
retriable ones become NOT_ENOUGH_REPLICAS, which every client retries without a metadata refresh)."""


def _start_verifications(ctx: Any, request: Any, targets: list[list[tuple[Any, Any]]], transactional_id: Any
                         ) -> tuple[dict[tuple[str, int], Any], dict[tuple[int, int], list[tuple[str, int]]]]:
    """The guards of the partitions whose data starts with a transactional batch (taken from
    their logs before the coordinator is asked: a marker written meanwhile voids them, and the
    append refuses the batch), and what to ask the coordinator: (producer id, epoch) -> those
    partitions. With the coordinator on another node, a partition whose log holds the producer's
    open transaction at that epoch is not asked about (Kafka's sentinel guard: the append takes
    the batch only while that transaction is still open)."""
    guards: dict[tuple[str, int], Any] = {}
    asks: dict[tuple[int, int], list[tuple[str, int]]] = {}
    if transactional_id is None:
        return guards, asks
    remote = ctx.node.transactions.error(transactional_id) is not ErrorCode.NONE
    for topic, found in zip(request.topic_data, targets):
        for data, (_, partition) in zip(topic.partition_data, found):
            header = None if partition is None else _transactional_header(data.records)
            if header is None:
                continue  # nothing to verify, or the partition answers its own error
            key = (partition.topic, partition.partition)
            guards[key] = partition.start_verification(header.producer_id)
            if remote and _open_in(partition, header):
                continue
            asks.setdefault((header.producer_id, header.producer_epoch), []).append(key)
    return guards, asks


async def _verify(ctx: Any, transactional_id: Any, asks: dict[tuple[int, int], list[tuple[str, int]]]
                  ) -> dict[tuple[str, int], ErrorCode]:
    """Each asked partition's verdict at the transactional id's coordinator
    (`groupctl.server.txn_verification`) as Produce answers it (absent: not asked)."""
    verdicts: dict[tuple[str, int], ErrorCode] = {}
    for (producer_id, producer_epoch), partitions in asks.items():
        answers = await verify(ctx.node, transactional_id, producer_id, producer_epoch, partitions)
        verdicts.update({p: _PRODUCE_ANSWERS.get(error, error) for p, error in answers.items()})
    return verdicts


def _guard(guards: dict[tuple[str, int], Any], partition: Any, transactional_id: Any) -> Any:
    """The guard the append presents: its verification's; `NO_GUARD` (a transactional batch
    cannot open a transaction) for a partition of a transactional request that was not verified;
    None (not checked) without a transactional id (see the deliberate differences)."""
    if transactional_id is None:
        return None
    return guards.get((partition.topic, partition.partition), NO_GUARD)


def _transactional_header(records: Any) -> Any:
    """The header of the data's first batch when it is transactional, else None."""
    if not records or len(records) < HEADER_SIZE:
        return None
    try:
        header = parse_header(records, 0, 0)
    except CorruptBatchError:
        return None  # the append answers it
    return header if header.is_transactional else None


def _open_in(partition: Any, header: Any) -> bool:
    """Whether the producer's transaction is open in `partition`'s log at the batch's epoch."""
    entry = partition.producers.entry(header.producer_id)
    return header.producer_id in partition.producers.ongoing and entry is not None and entry.epoch == header.producer_epoch


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
