"""AlterReplicaLogDirs (34), v1-2: move partitions' logs to another log directory of the node.

Version notes: v1 is v0 (gone in Apache Kafka 4) with throttling after the response; v2 is
flexible.

Semantics, as Kafka's `ReplicaManager.alterReplicaLogDirs` on a broker with one log directory
(see `describe_log_dirs`): a node has at most one log directory, so no log ever moves. Per
partition (a partition named under several paths takes the last one, as Kafka's map does):
- a topic whose name would make the future log's directory name longer than 255 characters is
  INVALID_TOPIC_EXCEPTION;
- a path that is not the node's log directory (absolute path, compared as a string) is
  LOG_DIR_NOT_FOUND, whatever the partition; a node without a data dir has no log directory,
  so every path is;
- the node's own log directory: NONE for a partition this node hosts (leads), already there;
  REPLICA_NOT_AVAILABLE for an existing partition hosted elsewhere; UNKNOWN_TOPIC_OR_PARTITION
  for one that does not exist.
Results are grouped by topic, in the order topics first appear.

Authorization (`--authorizer`), as Kafka: Alter on the Cluster, else CLUSTER_AUTHORIZATION_FAILED
for every partition of the request.
"""

from __future__ import annotations

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import cluster_allowed
from groupctl.server.handlers.describe_log_dirs import log_dir

MAX_DIRECTORY_NAME = 255
FUTURE_SUFFIX_LENGTH = len(".") + 32 + len("-future")
"""Kafka's future log directory is `<topic>-<partition>.<32 hex digits>-future`."""


def _outcome(ctx, directory, path: str, topic: str, partition: int) -> ErrorCode:
    if len(f"{topic}-{partition}") + FUTURE_SUFFIX_LENGTH > MAX_DIRECTORY_NAME:
        return ErrorCode.INVALID_TOPIC_EXCEPTION
    if directory is None or path != str(directory):
        return ErrorCode.LOG_DIR_NOT_FOUND
    record = ctx.node.topics.get(topic)
    replicas = None if record is None else record.replicas.get(partition)
    if replicas is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if replicas and replicas[0] == ctx.node.config.node_id:
        return ErrorCode.NONE
    return ErrorCode.REPLICA_NOT_AVAILABLE


@api(key=34, versions=(1, 2))
async def handle_alter_replica_log_dirs(ctx, request):
    result = ctx.response_class.AlterReplicaLogDirTopicResult
    partition_cls = result.AlterReplicaLogDirPartitionResult
    if not cluster_allowed(ctx, Operation.ALTER):
        return ctx.respond(throttle_time_ms=0, results=[
            result(topic_name=topic.name, partitions=[
                partition_cls(partition_index=p, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
                for p in topic.partitions])
            for d in request.dirs for topic in d.topics])
    targets: dict[tuple[str, int], str] = {}
    for d in request.dirs:
        for topic in d.topics:
            for p in topic.partitions:
                targets[(topic.name, p)] = d.path
    directory = log_dir(ctx)
    by_topic: dict[str, list] = {}
    for (topic, p), path in targets.items():
        code = _outcome(ctx, directory, path, topic, p)
        by_topic.setdefault(topic, []).append(partition_cls(partition_index=p, error_code=code))
    return ctx.respond(throttle_time_ms=0, results=[
        result(topic_name=topic, partitions=partitions) for topic, partitions in by_topic.items()])
