"""ListTransactions (66), v0-2 (KIP-664; all flexible).

Version notes: v1 adds DurationFilter (KIP-994: only transactions open longer than it, in ms;
negative for all); v2 adds TransactionalIdPattern (KIP-1152: only the ids the regular expression
matches whole; null or empty for all).

Semantics (Kafka's TransactionStateManager.listTransactionStates): the transactional ids this node
coordinates, as each Kafka broker answers for its own transaction partitions (a client asks every
node), filtered by state names, producer ids, duration and pattern, all of which must hold; state
names no state has are echoed as UnknownStateFilters. While any group partition of this node is
loading the answer is COORDINATOR_LOAD_IN_PROGRESS with no transactions, and while the node is
cut off from the store COORDINATOR_NOT_AVAILABLE; a pattern RE2 rejects is
INVALID_REGULAR_EXPRESSION. Read from memory; changes nothing.

Authorization (`--authorizer`), as Kafka: only the ids the principal may Describe are listed
(nothing is refused outright).

Deliberate differences from Apache Kafka: the pattern is RE2 (Python's binding) where Kafka uses
RE2/J; the syntax is the same.
"""

from __future__ import annotations

from typing import Any

from groupctl.coordinator.consumer.regex import InvalidRegex, compiled
from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import TRANSACTIONAL_ID, allowed_names


@api(key=66, versions=(0, 2))
async def handle_list_transactions(ctx: Any, request: Any) -> Any:
    placement = ctx.node.placement
    if placement.loading:
        return _refused(ctx, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
    if placement.suspended:
        return _refused(ctx, ErrorCode.COORDINATOR_NOT_AVAILABLE)
    pattern = getattr(request, "transactional_id_pattern", None) if ctx.version >= 2 else None
    try:
        regex = compiled(pattern) if pattern else None
    except InvalidRegex:
        return _refused(ctx, ErrorCode.INVALID_REGULAR_EXPRESSION)
    duration = request.duration_filter if ctx.version >= 1 else -1
    listed = ctx.node.transactions.core.list_transactions(ctx.node.now_ms(), request.producer_id_filters or (),
                                                          request.state_filters or (), duration)
    views = [v for v in listed.transactions if regex is None or regex.fullmatch(v.transactional_id)]
    visible = allowed_names(ctx, Operation.DESCRIBE, TRANSACTIONAL_ID, (v.transactional_id for v in views))
    state_cls = ctx.response_class.TransactionState
    return ctx.respond(throttle_time_ms=0, error_code=ErrorCode.NONE,
                       unknown_state_filters=list(listed.unknown_state_filters),
                       transaction_states=[state_cls(transactional_id=v.transactional_id, producer_id=v.producer_id,
                                                     transaction_state=v.state)
                                           for v in views if v.transactional_id in visible])


def _refused(ctx: Any, error: ErrorCode) -> Any:
    return ctx.respond(throttle_time_ms=0, error_code=error, unknown_state_filters=[], transaction_states=[])
