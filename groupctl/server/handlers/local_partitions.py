"""Which local partition log a Produce, Fetch or ListOffsets request names, or the error Kafka
answers for it: the topic must exist (by name, or by id from the versions that use ids), the
partition must exist, and this node must lead it (first replica) and be serving as its leader:
while the node raises its leader epochs (`LogManager.leading` False, at a start or a new
ZooKeeper session) its partitions answer NOT_LEADER_OR_FOLLOWER, as a Kafka broker does before it
is told it leads them. A log that cannot be opened
(damaged files, an I/O error) answers KAFKA_STORAGE_ERROR, as a broker with an offline log dir
does; the next request tries to open it again.

Logs are opened off the event loop (`LogManager.open`, in worker threads), so a handler works in
two steps: `partition_log` answers from what is open, and names a led partition whose log is not
open yet with (None, None); the handler then awaits `open_logs` for all such partitions of the
request at once and asks again, with the failures `open_logs` returned (`answer_with_open_logs`
runs that loop). While a log is being opened the loop serves everything else; an open log costs
a dict lookup, as before."""

from __future__ import annotations

import asyncio
import logging
import uuid
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping, Optional, TypeVar

from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.records import TopicRecord
from groupctl.log import LogError, PartitionDeletedError

log = logging.getLogger(__name__)

Failures = Mapping[tuple[str, int], ErrorCode]
"""(topic, partition) -> the error its log's open failed with, in this request."""

NO_FAILURES: Failures = MappingProxyType({})

Answer = TypeVar("Answer")


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


def partition_log(ctx: Any, topic: Optional[TopicRecord], partition: int, unknown_topic: ErrorCode,
                  failed: Failures = NO_FAILURES) -> tuple[Optional[ErrorCode], Any]:
    """(NONE, the open PartitionLog) when this node leads `topic`/`partition`, else (error, None);
    `unknown_topic` is the code for a topic that does not exist (UNKNOWN_TOPIC_OR_PARTITION,
    or UNKNOWN_TOPIC_ID when the request named it by id). (None, None) when this node leads it
    and its log is not open yet: `await open_logs(...)` and ask again with what it returned as
    `failed`, which answers the partitions whose open failed."""
    if topic is None:
        return unknown_topic, None
    replicas = topic.replicas.get(partition)
    if replicas is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
    if not replicas:
        return ErrorCode.LEADER_NOT_AVAILABLE, None
    if replicas[0] != ctx.node.config.node_id or not ctx.node.logs.leading:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER, None
    opened = ctx.node.logs.get(topic.name, partition)
    if opened is not None:
        return ErrorCode.NONE, opened
    return failed.get((topic.name, partition)), None


async def open_logs(ctx: Any, partitions: Iterable[tuple[str, int]], failed: Failures = NO_FAILURES) -> Failures:
    """Open the logs of `partitions` (topic, partition), all at once, off the event loop; return
    `failed` plus the partitions whose open failed: KAFKA_STORAGE_ERROR (logged; not remembered
    by the log manager, so the next request tries again), or UNKNOWN_TOPIC_OR_PARTITION when
    the topic was deleted meanwhile."""
    wanted = list(dict.fromkeys(partitions))
    outcomes = await asyncio.gather(*(ctx.node.logs.open(topic, p) for topic, p in wanted), return_exceptions=True)
    failures = dict(failed)
    for (topic, p), outcome in zip(wanted, outcomes):
        if isinstance(outcome, PartitionDeletedError):
            failures[(topic, p)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        elif isinstance(outcome, (LogError, OSError)):
            log.error("cannot open the log of %s-%d", topic, p, exc_info=outcome)
            failures[(topic, p)] = ErrorCode.KAFKA_STORAGE_ERROR
        elif isinstance(outcome, BaseException):
            raise outcome
    return failures


async def answer_with_open_logs(ctx: Any, answer: Callable[[Failures], tuple[Answer, list[tuple[str, int]]]]) -> Answer:
    """`answer(failed)` -> (the answer, the led partitions whose logs are not open yet), asked
    again after opening those until none is missing. Nothing awaits between the last `answer` and
    the return, so the logs it used are still open when the caller acts on them."""
    result, to_open = answer(NO_FAILURES)
    failed: Failures = NO_FAILURES
    while to_open:
        failed = await open_logs(ctx, to_open, failed)
        result, to_open = answer(failed)
    return result
