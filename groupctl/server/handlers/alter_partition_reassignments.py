"""AlterPartitionReassignments (45), v0-1 (flexible): move partitions to other replicas.

Version notes: v1 adds `allow_replication_factor_change` (KIP-860), echoed in the response.
`timeout_ms` is not used: nothing is waited for.

Semantics, as Kafka's controller (`ReplicationControlManager.alterPartitionReassignment`) answers,
for a cluster that does not move data (partition logs are not replicated, so a partition's
replicas are fixed at creation). Per partition, in request order:
- a topic or partition that does not exist: UNKNOWN_TOPIC_OR_PARTITION ("Unable to find a topic
  named t.", "Unable to find partition t:p.");
- null replicas (cancel): NO_REASSIGNMENT_IN_PROGRESS, as no reassignment is ever in progress;
- a target Kafka refuses: INVALID_REPLICA_ASSIGNMENT with Kafka's message (an empty list, a
  broker that is not registered, a broker named twice); registered brokers are the live nodes
  plus the partition's current replicas (a down node is still registered, as in KRaft);
- v1 with `allow_replication_factor_change` false and a target of another size:
  INVALID_REPLICATION_FACTOR;
- the partition's current replica list: NONE (nothing to do, as Kafka);
- any other valid target: INVALID_REPLICA_ASSIGNMENT, saying that groupctl does not move
  partitions (a deliberate difference: Kafka would start moving the data).
The top-level error is 0 with a null message.

Authorization (`--authorizer`), as Kafka: Alter on the Cluster, else CLUSTER_AUTHORIZATION_FAILED
at the top level and for every partition, with the same message.
"""

from __future__ import annotations

from typing import Optional, Sequence

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import cluster_allowed, denial

NO_REASSIGNMENT = "No partition reassignment is in progress."
"""Kafka's message for NO_REASSIGNMENT_IN_PROGRESS."""


def _invalid_target(target: Sequence[int], registered: set[int]) -> Optional[str]:
    """Kafka's `validateManualPartitionAssignment` message for `target`, or None when valid."""
    if not target:
        return "The manual partition assignment includes an empty replica list."
    previous = None
    for broker in sorted(target):
        if broker not in registered:
            return (f"The manual partition assignment includes broker {broker}, but no such broker is "
                    "registered.")
        if broker == previous:
            return f"The manual partition assignment includes the broker {broker} more than once."
        previous = broker
    return None


def reassignment(ctx, live, request, topic: str, partition: int,
                 target: Optional[list[int]]) -> tuple[ErrorCode, Optional[str]]:
    """(error, message) of moving `topic`/`partition` to the replicas `target` (None: cancel)."""
    record = ctx.node.topics.get(topic)
    if record is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {topic}."
    current = record.replicas.get(partition)
    if current is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {topic}:{partition}."
    if target is None:
        return ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, NO_REASSIGNMENT
    problem = _invalid_target(target, set(live) | set(current))
    if problem is not None:
        return ErrorCode.INVALID_REPLICA_ASSIGNMENT, problem
    if ctx.version >= 1 and not request.allow_replication_factor_change and len(target) != len(current):
        return (ErrorCode.INVALID_REPLICATION_FACTOR,
                f"The replication factor is changed from {len(current)} to {len(target)} but "
                "allow_replication_factor_change is false.")
    if list(target) == list(current):
        return ErrorCode.NONE, None
    return (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            f"Cannot move {topic}-{partition} from replicas {list(current)} to {list(target)}: groupctl does "
            "not move partitions (their logs are not replicated); only the current replica list is accepted.")


def request_flag(ctx, request) -> bool:
    """The request's `allow_replication_factor_change` (v1+; true, its default, before)."""
    return request.allow_replication_factor_change if ctx.version >= 1 else True


@api(key=45, versions=(0, 1))
async def handle_alter_partition_reassignments(ctx, request):
    topic_cls = ctx.response_class.ReassignableTopicResponse
    partition_cls = topic_cls.ReassignablePartitionResponse
    if not cluster_allowed(ctx, Operation.ALTER):
        message = denial(ctx, Operation.ALTER)
        code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        return ctx.respond(
            throttle_time_ms=0, allow_replication_factor_change=request_flag(ctx, request), error_code=code,
            error_message=message, responses=[topic_cls(name=t.name, partitions=[
                partition_cls(partition_index=p.partition_index, error_code=code, error_message=message)
                for p in t.partitions]) for t in request.topics])
    live = ctx.node.live_brokers(ctx.listener)
    responses = []
    for t in request.topics:
        partitions = []
        for p in t.partitions:
            code, message = reassignment(ctx, live, request, t.name, p.partition_index, p.replicas)
            partitions.append(partition_cls(partition_index=p.partition_index, error_code=code, error_message=message))
        responses.append(topic_cls(name=t.name, partitions=partitions))
    return ctx.respond(throttle_time_ms=0, allow_replication_factor_change=request_flag(ctx, request), error_code=0,
                       error_message=None, responses=responses)

