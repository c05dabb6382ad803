"""InitProducerId (22), v0-5.

Version notes: v0 and v1 are the same; v2 is flexible; v3 adds producer_id/producer_epoch so a
producer can ask to bump its epoch instead of getting a new id (KIP-360); v4 PRODUCER_FENCED and
v5 TRANSACTION_ABORTABLE (transactional only, never answered here). kafka-python 3.0.12 and
librdkafka 2.x send v0-4, so every version from 0 is served. v6 (KIP-939) is unstable in the
schema and Apache Kafka does not advertise it by default, so neither does this node.

Semantics: without a transactional id (idempotent producers) the answer is a producer id never
issued before, with epoch 0 (`groupctl.log.producer_ids` says why ids stay unique). From v3 a
request naming the (id, epoch) this node last issued for that id gets the same id with the epoch
bumped, so the partitions keep one producer id; a retry of that bump gets the same answer; any
other id/epoch gets a fresh id and epoch 0. An id without an epoch or an epoch without an id is
INVALID_REQUEST, as in Kafka. With a transactional id the transaction coordinator answers
(`groupctl.server.transactions`, Kafka's handleInitProducerId): the id's producer id with its
epoch bumped, fencing the previous holder (a transaction it left open is aborted first, and the
request answers CONCURRENT_TRANSACTIONS until then, which clients retry); NOT_COORDINATOR /
COORDINATOR_LOAD_IN_PROGRESS when this node does not coordinate the id now;
INVALID_TRANSACTION_TIMEOUT for a timeout outside 1..transaction.max.timeout.ms (15 minutes);
PRODUCER_FENCED (INVALID_PRODUCER_EPOCH below v4) for a v3+ producer presenting an epoch that is
not the id's.

Authorization (`--authorizer`), as Kafka 2.8+ (KIP-679): an idempotent producer needs
IdempotentWrite on the Cluster or Write on some topic (any pattern), else
CLUSTER_AUTHORIZATION_FAILED. A transactional producer needs Write on the TransactionalId, else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED.

Deliberate differences from Apache Kafka: Kafka ignores a non-transactional producer's id/epoch
and always allocates a new id, where this node bumps the epoch of an id it issued; like Kafka it
never answers INVALID_PRODUCER_EPOCH or PRODUCER_FENCED to a non-transactional producer.
transaction_timeout_ms is validated with a transactional id only (it matters only then).
"""

from __future__ import annotations

from typing import Any

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import TOPIC, TRANSACTIONAL_ID, allowed, allowed_on_any, cluster_allowed
from groupctl.server.handlers.txn_errors import for_version

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1


def _refuse(ctx: Any, error: ErrorCode) -> Any:
    return ctx.respond(throttle_time_ms=0, error_code=error,
                       producer_id=NO_PRODUCER_ID, producer_epoch=NO_PRODUCER_EPOCH)


@api(key=22, versions=(0, 5))
async def handle_init_producer_id(ctx: Any, request: Any) -> Any:
    if request.transactional_id is not None:
        return await _transactional(ctx, request)
    if not (cluster_allowed(ctx, Operation.IDEMPOTENT_WRITE) or allowed_on_any(ctx, Operation.WRITE, TOPIC)):
        return _refuse(ctx, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    held = (request.producer_id, request.producer_epoch) if ctx.version >= 3 else (NO_PRODUCER_ID, NO_PRODUCER_EPOCH)
    if (held[0] == NO_PRODUCER_ID) != (held[1] == NO_PRODUCER_EPOCH):
        return _refuse(ctx, ErrorCode.INVALID_REQUEST)
    producer_ids = ctx.node.logs.producer_ids
    now_ms = ctx.node.now_ms()
    if held[0] == NO_PRODUCER_ID:
        producer_id, epoch = producer_ids.allocate(now_ms)
    else:
        producer_id, epoch = producer_ids.bump(held[0], held[1], now_ms)
    return ctx.respond(throttle_time_ms=0, error_code=ErrorCode.NONE,
                       producer_id=producer_id, producer_epoch=epoch)


async def _transactional(ctx: Any, request: Any) -> Any:
    transactional_id = request.transactional_id
    if transactional_id == "":
        return _refuse(ctx, ErrorCode.INVALID_REQUEST)
    if not allowed(ctx, Operation.WRITE, TRANSACTIONAL_ID, transactional_id):
        return _refuse(ctx, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    error = ctx.node.transactions.error(transactional_id)
    if error is not ErrorCode.NONE:
        return _refuse(ctx, error)
    held = (request.producer_id, request.producer_epoch) if ctx.version >= 3 else (NO_PRODUCER_ID, NO_PRODUCER_EPOCH)
    if (held[0] == NO_PRODUCER_ID) != (held[1] == NO_PRODUCER_EPOCH):
        return _refuse(ctx, ErrorCode.INVALID_REQUEST)
    expected = None if held[0] == NO_PRODUCER_ID else held
    reply = await ctx.node.transactions.run(lambda core, now_ms: core.init_producer_id(
        transactional_id, request.transaction_timeout_ms, now_ms, expected))
    if reply.error is not ErrorCode.NONE:
        return _refuse(ctx, for_version(reply.error, ctx.version, 4))
    return ctx.respond(throttle_time_ms=0, error_code=ErrorCode.NONE,
                       producer_id=reply.producer_id, producer_epoch=reply.producer_epoch)
