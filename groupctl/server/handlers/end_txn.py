"""EndTxn (26), v0-4.

Version notes: v1 is v0; v2 may answer PRODUCER_FENCED (older versions get
INVALID_PRODUCER_EPOCH instead); v3 is flexible; v4 adds TRANSACTION_ABORTABLE, never answered
here. v5 (KIP-890 part 2, an epoch bump at every end) is only for transaction.version 2, which
this node does not offer, so it is not advertised.

Semantics (Kafka's TransactionCoordinator.endTransaction): commit or abort the producer's open
transaction. The answer goes out once PrepareCommit/PrepareAbort is stored; the markers are then
written to every partition of the transaction and the outcome completed in the background
(`groupctl.server.transactions`), and until that is done the producer's next transactional
request answers CONCURRENT_TRANSACTIONS, which clients retry. A retry of an EndTxn that completed
answers NONE; the opposite outcome INVALID_TXN_STATE; EndTxn without an open transaction
INVALID_TXN_STATE. Coordinator errors as AddPartitionsToTxn's.

Authorization (`--authorizer`), as Kafka: Write on the TransactionalId, else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from typing import Any

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import TRANSACTIONAL_ID, allowed
from groupctl.server.handlers.txn_errors import for_version


@api(key=26, versions=(0, 4))
async def handle_end_txn(ctx: Any, request: Any) -> Any:
    transactional_id = request.transactional_id
    if not allowed(ctx, Operation.WRITE, TRANSACTIONAL_ID, transactional_id):
        return ctx.respond(throttle_time_ms=0, error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    error = ctx.node.transactions.error(transactional_id)
    if error is ErrorCode.NONE:
        reply = await ctx.node.transactions.run(lambda core, now_ms: core.end_txn(
            transactional_id, request.producer_id, request.producer_epoch, request.committed, now_ms))
        error = for_version(reply.error, ctx.version, 2)
    return ctx.respond(throttle_time_ms=0, error_code=error)
