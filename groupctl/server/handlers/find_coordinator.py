"""FindCoordinator (10), v0-6.

Version notes: v1 adds key_type and error messages; v3 is flexible; v4 batches keys
(`coordinator_keys`) and answers one entry per key; v5/v6 change only error semantics
(v6: share-group keys, which are not served).

Semantics: any node answers with the live leader of the group's partition (see
`groupctl.server.election`), itself included even while it is still loading the partition (the
client then hears COORDINATOR_LOAD_IN_PROGRESS from it and retries). A partition without a live
leader (its node died and the election has not finished) is COORDINATOR_NOT_AVAILABLE, which
clients retry. A transactional id (key_type 1) is placed as a group id is (its transaction
coordinator is the leader of the same partition); an empty one is INVALID_REQUEST, as in Kafka.
Share groups (key_type 2) are not implemented: COORDINATOR_NOT_AVAILABLE, as a cluster without
them answers; any other key type is INVALID_REQUEST, as in Kafka. An empty group id gets
INVALID_GROUP_ID, as in Kafka.

Authorization (`--authorizer`), as Kafka: Describe on the group, else GROUP_AUTHORIZATION_FAILED
(no coordinator); Describe on the TransactionalId for a transaction key, else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
"""

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import GROUP, TRANSACTIONAL_ID, allowed

GROUP_KEY = 0
TRANSACTION_KEY = 1
KEY_TYPES = (0, 1, 2)  # group, transaction, share: what Kafka's CoordinatorType knows


def _locate(ctx, key, key_type):
    """(error, message, node_id, host, port) for one key."""
    if key_type not in KEY_TYPES:  # Kafka: InvalidRequestException("Unknown coordinator type")
        return ErrorCode.INVALID_REQUEST, f"unknown coordinator type {key_type}", -1, "", -1
    if key_type == TRANSACTION_KEY:
        if not key:
            return ErrorCode.INVALID_REQUEST, "transactional id is empty", -1, "", -1
        if not allowed(ctx, Operation.DESCRIBE, TRANSACTIONAL_ID, key):
            return (ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "Transactional Id authorization failed.",
                    -1, "", -1)
    elif key_type != GROUP_KEY:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, "only group and transaction coordinators are served", -1, "", -1
    elif not key:
        return ErrorCode.INVALID_GROUP_ID, "group id is empty", -1, "", -1
    elif not allowed(ctx, Operation.DESCRIBE, GROUP, key):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED, "Group authorization failed.", -1, "", -1
    coordinator = ctx.node.coordinator_of(key, ctx.listener)
    if coordinator is None:
        return (ErrorCode.COORDINATOR_NOT_AVAILABLE,
                f"partition {ctx.node.placement.partition_of(key)} has no live leader yet", -1, "", -1)
    node_id, (host, port) = coordinator
    return ErrorCode.NONE, None, node_id, host, port


@api(key=10, versions=(0, 6))
async def handle_find_coordinator(ctx, request):
    key_type = request.key_type if ctx.version >= 1 else GROUP_KEY
    if ctx.version >= 4:
        entry = ctx.response_class.Coordinator
        coordinators = []
        for key in request.coordinator_keys:
            error, message, node_id, host, port = _locate(ctx, key, key_type)
            coordinators.append(entry(key=key, node_id=node_id, host=host, port=port,
                                      error_code=error, error_message=message))
        return ctx.respond(throttle_time_ms=0, coordinators=coordinators)
    error, message, node_id, host, port = _locate(ctx, request.key, key_type)
    return ctx.respond(throttle_time_ms=0, error_code=error, error_message=message,
                       node_id=node_id, host=host, port=port)
