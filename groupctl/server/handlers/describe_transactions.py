"""DescribeTransactions (65), v0 (KIP-664; the only version, flexible).

Semantics (Kafka's TransactionCoordinator.handleDescribeTransactions): for each transactional id
of the request, in request order, its state as the coordinator holds it: state name, producer
id and epoch, timeout, the start time of its current (or last) transaction (-1 in Empty) and the
partitions of the open transaction, grouped by topic. An id this node does not coordinate answers
NOT_COORDINATOR (COORDINATOR_LOAD_IN_PROGRESS while its partition loads, COORDINATOR_NOT_AVAILABLE
while the node is cut off from the store), so a client sends each id to the coordinator
FindCoordinator (key type 1) names; an id never initialized TRANSACTIONAL_ID_NOT_FOUND; an empty
id INVALID_REQUEST. The answer is read from memory and changes nothing.

Authorization (`--authorizer`), as Kafka: Describe on each TransactionalId, else that id answers
TRANSACTIONAL_ID_AUTHORIZATION_FAILED; the partitions of topics the principal may not Describe are
left out of an answer.
"""

from __future__ import annotations

from typing import Any

from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.transactions.outcomes import TransactionView
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import TOPIC, TRANSACTIONAL_ID, allowed, allowed_names


@api(key=65, versions=(0, 0))
async def handle_describe_transactions(ctx: Any, request: Any) -> Any:
    return ctx.respond(throttle_time_ms=0,
                       transaction_states=[_state(ctx, transactional_id)
                                           for transactional_id in request.transactional_ids or ()])


def _state(ctx: Any, transactional_id: str) -> Any:
    state_cls = ctx.response_class.TransactionState
    if not allowed(ctx, Operation.DESCRIBE, TRANSACTIONAL_ID, transactional_id):
        return _error(state_cls, transactional_id, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    error = ctx.node.transactions.error(transactional_id) if transactional_id else ErrorCode.NONE
    if error is not ErrorCode.NONE:
        return _error(state_cls, transactional_id, error)
    described = ctx.node.transactions.core.describe(transactional_id)
    if described.view is None:
        return _error(state_cls, transactional_id, described.error)
    return _described(ctx, state_cls, described.view)


def _error(state_cls: Any, transactional_id: str, error: ErrorCode) -> Any:
    return state_cls(error_code=error, transactional_id=transactional_id, transaction_state="",
                     transaction_timeout_ms=0, transaction_start_time_ms=-1, producer_id=-1, producer_epoch=-1,
                     topics=[])


def _described(ctx: Any, state_cls: Any, view: TransactionView) -> Any:
    by_topic: dict[str, list[int]] = {}
    for topic, partition in sorted(view.partitions):
        by_topic.setdefault(topic, []).append(partition)
    visible = allowed_names(ctx, Operation.DESCRIBE, TOPIC, by_topic)
    return state_cls(error_code=ErrorCode.NONE, transactional_id=view.transactional_id,
                     transaction_state=view.state, transaction_timeout_ms=view.timeout_ms,
                     transaction_start_time_ms=view.start_ms, producer_id=view.producer_id,
                     producer_epoch=view.producer_epoch,
                     topics=[state_cls.TopicData(topic=topic, partitions=partitions)
                             for topic, partitions in by_topic.items() if topic in visible])
