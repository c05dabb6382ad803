"""AddPartitionsToTxn (24), v0-3.

Version notes: v1 is v0; v2 may answer PRODUCER_FENCED (older versions get
INVALID_PRODUCER_EPOCH instead); v3 is flexible. v4+ (KIP-890: batched transactional ids and
VerifyOnly) is what Kafka's brokers send each other, never clients (the Java client, librdkafka
and kafka-python 3.0.12 stop at v3), and is not advertised.

Semantics (Kafka's TransactionCoordinator.handleAddPartitionsToTransaction): the partitions join
the producer's transaction, which opens with the first (state Ongoing, its timeout counted from
then); the new state is stored before the answer. Errors are per partition and all alike for a
coordinator-level refusal: NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS when this node does not
coordinate the id (now), INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED, CONCURRENT_TRANSACTIONS
(while a previous transaction completes; retried), INVALID_TXN_STATE. A partition that does not
exist answers UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED, as in Kafka.

Authorization (`--authorizer`), as Kafka: Write on the TransactionalId, else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition; Write on each topic, else its
partitions TOPIC_AUTHORIZATION_FAILED and the others OPERATION_NOT_ATTEMPTED.

Deliberate difference from Apache Kafka: a partition another node leads answers
NOT_LEADER_OR_FOLLOWER (and the others OPERATION_NOT_ATTEMPTED): this node writes transaction
markers only to the logs it leads (`groupctl.server.transactions`).
"""

from __future__ import annotations

from typing import Any

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import TOPIC, TRANSACTIONAL_ID, allowed, allowed_names
from groupctl.server.handlers.txn_errors import for_version


def _answer(ctx: Any, errors: dict[tuple[str, int], ErrorCode]) -> Any:
    topic_result = ctx.response_class.AddPartitionsToTxnTopicResult
    partition_result = topic_result.AddPartitionsToTxnPartitionResult
    by_topic: dict[str, list[Any]] = {}
    for (topic, partition), error in errors.items():
        by_topic.setdefault(topic, []).append(partition_result(partition_index=partition, partition_error_code=error))
    return ctx.respond(throttle_time_ms=0, results_by_topic_v3_and_below=[
        topic_result(name=name, results_by_partition=results) for name, results in by_topic.items()])


def _partition_errors(ctx: Any, wanted: list[tuple[str, int]]) -> dict[tuple[str, int], ErrorCode]:
    """The partitions that cannot join (authorization, existence, leadership), Kafka's order."""
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
        elif not replicas or replicas[0] != ctx.node.config.node_id:
            errors[(topic, partition)] = ErrorCode.NOT_LEADER_OR_FOLLOWER
    return errors


@api(key=24, versions=(0, 3))
async def handle_add_partitions_to_txn(ctx: Any, request: Any) -> Any:
    transactional_id = request.v3_and_below_transactional_id
    wanted = list(dict.fromkeys((t.name, p) for t in request.v3_and_below_topics for p in t.partitions))
    if not allowed(ctx, Operation.WRITE, TRANSACTIONAL_ID, transactional_id):
        return _answer(ctx, {key: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED for key in wanted})
    errors = _partition_errors(ctx, wanted)
    if errors:
        return _answer(ctx, {key: errors.get(key, ErrorCode.OPERATION_NOT_ATTEMPTED) for key in wanted})
    error = ctx.node.transactions.error(transactional_id)
    if error is ErrorCode.NONE:
        reply = await ctx.node.transactions.run(lambda core, now_ms: core.add_partitions(
            transactional_id, request.v3_and_below_producer_id, request.v3_and_below_producer_epoch, wanted,
            now_ms))
        error = for_version(reply.error, ctx.version, 2)
    return _answer(ctx, {key: error for key in wanted})
