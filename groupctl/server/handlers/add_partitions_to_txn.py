"""AddPartitionsToTxn (24), v0-5.

Version notes: v1 is v0; v2 may answer PRODUCER_FENCED (older versions get
INVALID_PRODUCER_EPOCH instead); v3 is flexible. v4+ (KIP-890) batches transactional ids and
adds VerifyOnly: what Kafka's brokers send each other (a partition leader verifying a
transactional batch, `groupctl.server.txn_verification`), never clients (the Java client,
librdkafka and kafka-python 3.0.12 stop at v3); v5 may answer TRANSACTION_ABORTABLE, which v4
gets as well here (only brokers send either, and Kafka's from 3.8 expect it).

Semantics (Kafka's TransactionCoordinator.handleAddPartitionsToTransaction): the partitions join
the producer's transaction, which opens with the first (state Ongoing, its timeout counted from
then); the new state is stored before the answer. The partitions may be led by any node: the
markers go to their leaders when the transaction completes (`groupctl.server.transactions`).
Errors are per partition and all alike for a coordinator-level refusal: NOT_COORDINATOR /
COORDINATOR_LOAD_IN_PROGRESS when this node does not coordinate the id (now),
INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED, CONCURRENT_TRANSACTIONS (while a previous
transaction completes; retried), INVALID_TXN_STATE. A partition that does not exist answers
UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED, as in Kafka. A v4+
transaction with VerifyOnly changes nothing: each partition answers NONE when it is in the
producer's open transaction, else TRANSACTION_ABORTABLE, or the coordinator-level error
(`TransactionCoordinator.verify_partitions`); without VerifyOnly it is added as above.

Authorization (`--authorizer`), as Kafka: v0-3 need Write on the TransactionalId, else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition, and Write on each topic, else its
partitions TOPIC_AUTHORIZATION_FAILED and the others OPERATION_NOT_ATTEMPTED. v4+ need
ClusterAction on the Cluster (the request's top-level CLUSTER_AUTHORIZATION_FAILED otherwise),
as only brokers send them.
"""

from __future__ import annotations

from typing import Any

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import TOPIC, TRANSACTIONAL_ID, allowed, allowed_names, cluster_allowed
from groupctl.server.handlers.txn_errors import for_version


def _topic_results(ctx: Any, errors: dict[tuple[str, int], ErrorCode]) -> list[Any]:
    topic_result = ctx.response_class.AddPartitionsToTxnTopicResult
    partition_result = topic_result.AddPartitionsToTxnPartitionResult
    by_topic: dict[str, list[Any]] = {}
    for (topic, partition), error in errors.items():
        by_topic.setdefault(topic, []).append(partition_result(partition_index=partition, partition_error_code=error))
    return [topic_result(name=name, results_by_partition=results) for name, results in by_topic.items()]


def _answer(ctx: Any, errors: dict[tuple[str, int], ErrorCode]) -> Any:
    return ctx.respond(throttle_time_ms=0, results_by_topic_v3_and_below=_topic_results(ctx, errors))


def _partition_errors(ctx: Any, wanted: list[tuple[str, int]]) -> dict[tuple[str, int], ErrorCode]:
    """The partitions that cannot join (authorization, existence), Kafka's order."""
    writable = allowed_names(ctx, Operation.WRITE, TOPIC, {topic for topic, _ in wanted})
    errors: dict[tuple[str, int], ErrorCode] = {}
    for topic, partition in wanted:
        if topic not in writable:
            errors[(topic, partition)] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            continue
        record = ctx.node.topics.get(topic)
        replicas = None if record is None else record.replicas.get(partition)
        if replicas is None:
            errors[(topic, partition)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    return errors


@api(key=24, versions=(0, 5))
async def handle_add_partitions_to_txn(ctx: Any, request: Any) -> Any:
    if ctx.version >= 4:
        return await _between_nodes(ctx, request)
    transactional_id = request.v3_and_below_transactional_id
    wanted = _partitions(request.v3_and_below_topics)
    if not allowed(ctx, Operation.WRITE, TRANSACTIONAL_ID, transactional_id):
        return _answer(ctx, {key: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED for key in wanted})
    errors = _partition_errors(ctx, wanted)
    if errors:
        return _answer(ctx, {key: errors.get(key, ErrorCode.OPERATION_NOT_ATTEMPTED) for key in wanted})
    error = await _add(ctx, transactional_id, request.v3_and_below_producer_id,
                       request.v3_and_below_producer_epoch, wanted)
    return _answer(ctx, {key: for_version(error, ctx.version, 2) for key in wanted})


def _partitions(topics: Any) -> list[tuple[str, int]]:
    return list(dict.fromkeys((t.name, p) for t in topics for p in t.partitions))


async def _add(ctx: Any, transactional_id: str, producer_id: int, producer_epoch: int,
               wanted: list[tuple[str, int]]) -> ErrorCode:
    error = ctx.node.transactions.error(transactional_id)
    if error is not ErrorCode.NONE:
        return error
    reply = await ctx.node.transactions.run(lambda core, now_ms: core.add_partitions(
        transactional_id, producer_id, producer_epoch, wanted, now_ms))
    return reply.error


async def _between_nodes(ctx: Any, request: Any) -> Any:
    """v4+: a broker's batch of transactions, each verified (VerifyOnly) or added."""
    result_cls = ctx.response_class.AddPartitionsToTxnResult
    if not cluster_allowed(ctx, Operation.CLUSTER_ACTION):
        return ctx.respond(throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                           results_by_transaction=[])
    results = []
    for transaction in request.transactions:
        transactional_id = transaction.transactional_id
        wanted = _partitions(transaction.topics)
        if not transaction.verify_only:
            errors = _partition_errors(ctx, wanted)
            if errors:
                answers = {key: errors.get(key, ErrorCode.OPERATION_NOT_ATTEMPTED) for key in wanted}
            else:
                answers = dict.fromkeys(wanted, await _add(ctx, transactional_id, transaction.producer_id,
                                                           transaction.producer_epoch, wanted))
        elif ctx.node.transactions.error(transactional_id) is not ErrorCode.NONE:
            answers = dict.fromkeys(wanted, ctx.node.transactions.error(transactional_id))
        else:
            answers = ctx.node.transactions.core.verify_partitions(
                transactional_id, transaction.producer_id, transaction.producer_epoch, wanted)
        results.append(result_cls(transactional_id=transactional_id, topic_results=_topic_results(ctx, answers)))
    return ctx.respond(throttle_time_ms=0, error_code=ErrorCode.NONE, results_by_transaction=results)
