"""AddOffsetsToTxn (25), v0-4.

Version notes: v1 is v0; v2 may answer PRODUCER_FENCED (older versions get
INVALID_PRODUCER_EPOCH instead); v3 is flexible; v4 adds TRANSACTION_ABORTABLE, which this node
never answers.

Semantics (Kafka's handleAddOffsetsToTransaction): the partition holding the group's offsets
joins the producer's transaction, so the offsets the producer then commits with TxnOffsetCommit
become visible, or are dropped, with the transaction's outcome. Errors as AddPartitionsToTxn's
coordinator-level ones.

Authorization (`--authorizer`), as Kafka: Write on the TransactionalId, else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED; Read on the group, else GROUP_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from typing import Any

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import GROUP, TRANSACTIONAL_ID, allowed
from groupctl.server.handlers.txn_errors import for_version


@api(key=25, versions=(0, 4))
async def handle_add_offsets_to_txn(ctx: Any, request: Any) -> Any:
    transactional_id, group_id = request.transactional_id, request.group_id
    if not allowed(ctx, Operation.WRITE, TRANSACTIONAL_ID, transactional_id):
        return ctx.respond(throttle_time_ms=0, error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if not allowed(ctx, Operation.READ, GROUP, group_id):
        return ctx.respond(throttle_time_ms=0, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    error = ctx.node.transactions.error(transactional_id)
    if error is ErrorCode.NONE:
        reply = await ctx.node.transactions.run(lambda core, now_ms: core.add_offsets(
            transactional_id, request.producer_id, request.producer_epoch, group_id, now_ms))
        error = for_version(reply.error, ctx.version, 2)
    return ctx.respond(throttle_time_ms=0, error_code=error)
