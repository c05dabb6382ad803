"""DescribeProducers (61), v0 (KIP-664; the only version, flexible).

Semantics (Kafka's KafkaApis.handleDescribeProducersRequest and UnifiedLog.activeProducers): for
each requested partition of each topic, in request order, the producers the partition's log
remembers (`groupctl.log.producers`: idempotent and transactional producers, at most the log's
producer limit): producer id, epoch, the sequence of its last record (-1 when a marker started a
new epoch), its last batch's max timestamp, the coordinator epoch of its last transaction marker
(-1 before any), and the first offset of its open transaction here (-1 when none is open). Errors
per partition, as Kafka: an illegal topic name INVALID_TOPIC_EXCEPTION, an unknown topic or
partition UNKNOWN_TOPIC_OR_PARTITION, a partition this node does not lead NOT_LEADER_OR_FOLLOWER
(a client asks each partition's leader), a log that cannot be opened KAFKA_STORAGE_ERROR. Logs
not open yet are opened first (all at once, off the event loop). Changes nothing.

Authorization (`--authorizer`), as Kafka: Read on each topic, else its partitions answer
TOPIC_AUTHORIZATION_FAILED.

Deliberate differences from Apache Kafka: the last timestamp is the last batch's, where Kafka
also takes a marker's (after a marker that started a new epoch it is -1); producers are not
expired by time, so a long idle one stays listed until the producer limit evicts it.
"""

from __future__ import annotations

from typing import Any, Optional

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import TOPIC, allowed
from groupctl.server.handlers.local_partitions import Failures, answer_with_open_logs, partition_log, topic_by_name
from groupctl.server.topics import topic_name_error


@api(key=61, versions=(0, 0))
async def handle_describe_producers(ctx: Any, request: Any) -> Any:
    topics = await answer_with_open_logs(ctx, lambda failed: _answer(ctx, request, failed))
    return ctx.respond(throttle_time_ms=0, topics=topics)


def _topic_error(ctx: Any, name: str) -> Optional[ErrorCode]:
    if topic_name_error(name):
        return ErrorCode.INVALID_TOPIC_EXCEPTION
    if not allowed(ctx, Operation.READ, TOPIC, name):
        return ErrorCode.TOPIC_AUTHORIZATION_FAILED
    return None


def _answer(ctx: Any, request: Any, failed: Failures) -> tuple[list[Any], list[tuple[str, int]]]:
    """The response topics, and the led partitions whose logs are not open yet (when there are
    any, the topics are not the answer: open them and ask again)."""
    topic_cls = ctx.response_class.TopicResponse
    partition_cls = topic_cls.PartitionResponse
    topics = []
    to_open = []
    for wanted in request.topics or ():
        topic_error = _topic_error(ctx, wanted.name)
        record = topic_by_name(ctx, wanted.name) if topic_error is None else None
        partitions = []
        for index in wanted.partition_indexes or ():
            if topic_error is not None:
                partitions.append(partition_cls(partition_index=index, error_code=topic_error, error_message=None,
                                                active_producers=[]))
                continue
            error, log = partition_log(ctx, record, index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, failed)
            if error is None:
                to_open.append((record.name, index))
                continue
            partitions.append(partition_cls(partition_index=index, error_code=error, error_message=None,
                                            active_producers=[] if log is None else _producers(partition_cls, log)))
        topics.append(topic_cls(name=wanted.name, partitions=partitions))
    return topics, to_open


def _producers(partition_cls: Any, log: Any) -> list[Any]:
    state_cls = partition_cls.ProducerState
    ongoing = log.producers.ongoing
    return [state_cls(producer_id=producer_id, producer_epoch=entry.epoch, last_sequence=entry.last_sequence,
                      last_timestamp=entry.last_timestamp, coordinator_epoch=entry.coordinator_epoch,
                      current_txn_start_offset=ongoing.get(producer_id, -1))
            for producer_id, entry in log.producers.entries.items()]
