"""ElectLeaders (43), v0-2: preferred or unclean leader election.

Version notes: v0 has no election type (preferred); v1 adds `election_type` and a top-level
error code; v2 is flexible. `timeout_ms` is not used: nothing is waited for.

Semantics, as Kafka's controller (`ReplicationControlManager.electLeaders`) answers for partitions
with one replica. A partition is led by its first replica while that node is live (see
`server/topics.py`), which is always its preferred leader, so:
- a partition whose leader is live: ELECTION_NOT_NEEDED, for both election types;
- a partition whose leader is down: PREFERRED_LEADER_NOT_AVAILABLE (preferred) or
  ELIGIBLE_LEADERS_NOT_AVAILABLE (unclean); its only replica is the one that is down;
- a topic or partition that does not exist: UNKNOWN_TOPIC_OR_PARTITION ("No such topic as t",
  "No such partition as t-p").
Each result carries Kafka's message for its error (null for none). A null partition list means
every partition of every topic: each topic is answered (in name order), listing only the
partitions whose answer is not ELECTION_NOT_NEEDED, as Kafka does. An election type other than
0 or 1 is INVALID_REQUEST for every named partition ("Unknown election type N").

Deliberate difference: partitions with more replicas are metadata only (nothing is replicated),
so an unclean election never moves leadership to another live replica; it answers as for one
replica.

Authorization (`--authorizer`), as Kafka: Alter on the Cluster, else CLUSTER_AUTHORIZATION_FAILED
at the top level (v1+) and for every named partition.
"""

from __future__ import annotations

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import cluster_allowed, denial

PREFERRED, UNCLEAN = 0, 1
MESSAGES = {
    ErrorCode.ELECTION_NOT_NEEDED: "Leader election not needed for topic partition.",
    ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE: "The preferred leader was not available.",
    ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE: "Eligible topic partition leaders are not available.",
}
"""Kafka's default messages (`Errors.message()`) for the election outcomes."""


def election(ctx, live, election_type: int, topic: str, partition: int) -> tuple[ErrorCode, str | None]:
    """(error, message) of electing a leader for `topic`/`partition`."""
    record = ctx.node.topics.get(topic)
    if record is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {topic}"
    replicas = record.replicas.get(partition)
    if replicas is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {topic}-{partition}"
    if replicas and replicas[0] in live:
        code = ErrorCode.ELECTION_NOT_NEEDED
    elif election_type == PREFERRED:
        code = ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
    else:
        code = ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE
    return code, MESSAGES[code]


def _refused(ctx, request, code: ErrorCode, message: str):
    """Kafka's `ElectLeadersRequest.getErrorResponse`: the error at the top and for every named
    partition (none when the request named none)."""
    topic_cls = ctx.response_class.ReplicaElectionResult
    result = topic_cls.PartitionResult
    results = [topic_cls(topic=t.topic, partition_result=[
        result(partition_id=p, error_code=code, error_message=message) for p in t.partitions])
        for t in request.topic_partitions or ()]
    return ctx.respond(throttle_time_ms=0, error_code=code, replica_election_results=results)


@api(key=43, versions=(0, 2))
async def handle_elect_leaders(ctx, request):
    if not cluster_allowed(ctx, Operation.ALTER):
        return _refused(ctx, request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, denial(ctx, Operation.ALTER))
    election_type = request.election_type if ctx.version >= 1 else PREFERRED
    if election_type not in (PREFERRED, UNCLEAN):
        return _refused(ctx, request, ErrorCode.INVALID_REQUEST, f"Unknown election type {election_type}")
    live = ctx.node.live_brokers(ctx.listener)
    topic_cls = ctx.response_class.ReplicaElectionResult
    result = topic_cls.PartitionResult
    results = []
    if request.topic_partitions is None:
        for record in sorted(ctx.node.topics.all(), key=lambda r: r.name):
            outcomes = [(p, *election(ctx, live, election_type, record.name, p)) for p in sorted(record.replicas)]
            results.append(topic_cls(topic=record.name, partition_result=[
                result(partition_id=p, error_code=code, error_message=message)
                for p, code, message in outcomes if code != ErrorCode.ELECTION_NOT_NEEDED]))
    else:
        for t in request.topic_partitions:
            results.append(topic_cls(topic=t.topic, partition_result=[
                result(partition_id=p, error_code=code, error_message=message)
                for p in t.partitions for code, message in [election(ctx, live, election_type, t.topic, p)]]))
    return ctx.respond(throttle_time_ms=0, error_code=0, replica_election_results=results)
