"""OffsetForLeaderEpoch (23), v2-4.

Version notes: v2 (the schema's floor) has current_leader_epoch and throttle_time_ms; v3 adds
replica_id; v4 is flexible. librdkafka sends v2, kafka-python up to v4. Consumers call it
(KIP-320) to validate a position after seeing a newer leader epoch: kafka-python as soon as
Metadata reports an epoch above its position's, librdkafka for positions that carry an epoch.

Semantics, per partition of the local log, as Kafka's Partition.lastOffsetForLeaderEpoch: the
current_leader_epoch is checked as Fetch checks it (-1: no check; lower FENCED_LEADER_EPOCH;
higher UNKNOWN_LEADER_EPOCH); then the answer is the epoch cache's end offset for leader_epoch
(`LeaderEpochCache.end_offset_for`): the current epoch ends at the log end offset; an older epoch
at the start of the next one, reported under the largest known epoch at or below it; -1/-1 for
epoch -1 or one this log does not know. A partition another node leads answers
NOT_LEADER_OR_FOLLOWER, an unknown one UNKNOWN_TOPIC_OR_PARTITION, a log that cannot be opened
KAFKA_STORAGE_ERROR. replica_id is ignored, as Kafka does (every answer comes from the leader).
Logs not open yet are opened first (all at once, off the event loop).

Authorization (`--authorizer`), as Kafka: ClusterAction on the Cluster allows every topic;
otherwise Describe on each topic, else its partitions answer TOPIC_AUTHORIZATION_FAILED, listed
after the allowed topics as Kafka lists them.
"""

from __future__ import annotations

from typing import Any

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import TOPIC, allowed_names, cluster_allowed
from groupctl.server.handlers.leader_epochs import NO_EPOCH, end_offset_for, epoch_error
from groupctl.server.handlers.local_partitions import Failures, answer_with_open_logs, partition_log, topic_by_name


@api(key=23, versions=(2, 4))
async def handle_offset_for_leader_epoch(ctx: Any, request: Any) -> Any:
    if cluster_allowed(ctx, Operation.CLUSTER_ACTION):
        described = {topic.topic for topic in request.topics}
    else:
        described = allowed_names(ctx, Operation.DESCRIBE, TOPIC, (topic.topic for topic in request.topics))
    wanted = [topic for topic in request.topics if topic.topic in described]
    refused = [topic for topic in request.topics if topic.topic not in described]
    topics = await answer_with_open_logs(ctx, lambda failed: _answer(ctx, wanted, failed))
    topic_cls = ctx.response_class.OffsetForLeaderTopicResult
    partition_cls = topic_cls.EpochEndOffset
    for topic in refused:
        topics.append(topic_cls(topic=topic.topic, partitions=[
            partition_cls(partition=p.partition, error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                          leader_epoch=NO_EPOCH, end_offset=-1) for p in topic.partitions]))
    return ctx.respond(throttle_time_ms=0, topics=topics)


def _answer(ctx: Any, request_topics: list[Any], failed: Failures) -> tuple[list[Any], list[tuple[str, int]]]:
    """The response topics, and the led partitions whose logs are not open yet (when there are
    any, the topics are not the answer: open them and ask again)."""
    topic_cls = ctx.response_class.OffsetForLeaderTopicResult
    partition_cls = topic_cls.EpochEndOffset
    topics = []
    to_open = []
    for topic in request_topics:
        record = topic_by_name(ctx, topic.topic)
        partitions = []
        for wanted in topic.partitions:
            error, log = partition_log(ctx, record, wanted.partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, failed)
            if error is None:
                to_open.append((record.name, wanted.partition))
                continue
            if to_open:
                continue  # this pass is only looking for logs to open
            epoch, end_offset = NO_EPOCH, -1
            if log is not None:
                error = epoch_error(log, wanted.current_leader_epoch)
                if error is ErrorCode.NONE:
                    epoch, end_offset = end_offset_for(log, wanted.leader_epoch)
            partitions.append(partition_cls(partition=wanted.partition, error_code=error,
                                            leader_epoch=epoch, end_offset=end_offset))
        topics.append(topic_cls(topic=topic.topic, partitions=partitions))
    return topics, to_open
