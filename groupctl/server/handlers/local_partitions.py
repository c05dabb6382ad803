"""Which local partition log a Produce, Fetch or ListOffsets request names, or the error Kafka
answers for it: the topic must exist (by name, or by id from the versions that use ids), the
partition must exist, and this node must lead it (first replica). A log that cannot be opened
(damaged files, an I/O error) answers KAFKA_STORAGE_ERROR, as a broker with an offline log dir
does; the next request tries to open it again."""

from __future__ import annotations

import logging
import uuid
from typing import Any, Optional

from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.records import TopicRecord
from groupctl.log import LogError

log = logging.getLogger(__name__)


def topic_by_name(ctx: Any, name: str) -> Optional[TopicRecord]:
    return ctx.node.topics.get(name)


def topic_by_id(ctx: Any, topic_id: uuid.UUID) -> Optional[TopicRecord]:
    return ctx.node.topics.by_id(str(topic_id))


def requested_topic(ctx: Any, by_id: bool, name: str, topic_id: Optional[uuid.UUID]
                    ) -> tuple[Optional[TopicRecord], ErrorCode]:
    """The topic a request names (by id in the versions that use topic ids), and the error code
    for it not existing: UNKNOWN_TOPIC_ID or UNKNOWN_TOPIC_OR_PARTITION."""
    if by_id:
        return topic_by_id(ctx, topic_id), ErrorCode.UNKNOWN_TOPIC_ID
    return topic_by_name(ctx, name), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def partition_log(ctx: Any, topic: Optional[TopicRecord], partition: int,
                  unknown_topic: ErrorCode) -> tuple[ErrorCode, Any]:
    """(NONE, the PartitionLog) when this node leads `topic`/`partition`, else (error, None);
    `unknown_topic` is the code for a topic that does not exist (UNKNOWN_TOPIC_OR_PARTITION,
    or UNKNOWN_TOPIC_ID when the request named it by id)."""
    if topic is None:
        return unknown_topic, None
    replicas = topic.replicas.get(partition)
    if replicas is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
    if not replicas:
        return ErrorCode.LEADER_NOT_AVAILABLE, None
    if replicas[0] != ctx.node.config.node_id:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER, None
    try:
        return ErrorCode.NONE, ctx.node.logs.partition(topic.name, partition)
    except (LogError, OSError):
        log.exception("cannot open the log of %s-%d", topic.name, partition)
        return ErrorCode.KAFKA_STORAGE_ERROR, None
