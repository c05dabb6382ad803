"""ListPartitionReassignments (46), v0 (flexible): the reassignments in progress.

Semantics, as Kafka's controller (`ReplicationControlManager.listPartitionReassignments`): it lists
only partitions being reassigned, and a partition's replicas never move here (see
`alter_partition_reassignments`), so the answer is always an empty topic list, whether the
request names topics or asks for all (null). `timeout_ms` is not used.

Authorization (`--authorizer`), as Kafka: Describe on the Cluster, else the top-level error
CLUSTER_AUTHORIZATION_FAILED, and each named partition listed with empty replica lists (Kafka's
`ListPartitionReassignmentsRequest.getErrorResponse`).
"""

from __future__ import annotations

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import cluster_allowed, denial


@api(key=46, versions=(0, 0))
async def handle_list_partition_reassignments(ctx, request):
    if cluster_allowed(ctx, Operation.DESCRIBE):
        return ctx.respond(throttle_time_ms=0, error_code=0, error_message=None, topics=[])
    topic_cls = ctx.response_class.OngoingTopicReassignment
    partition_cls = topic_cls.OngoingPartitionReassignment
    return ctx.respond(
        throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        error_message=denial(ctx, Operation.DESCRIBE),
        topics=[topic_cls(name=t.name, partitions=[
            partition_cls(partition_index=p, replicas=[], adding_replicas=[], removing_replicas=[])
            for p in t.partition_indexes]) for t in request.topics or ()])
