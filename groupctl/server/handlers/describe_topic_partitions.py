"""DescribeTopicPartitions (75), v0 (flexible): topics and their partitions, a page at a time.

What kafka-python's `describe_topic_partitions` and Kafka's AdminClient (`describeTopics`, from
Apache Kafka 3.8) send in place of Metadata to describe topics with many partitions.

Semantics, as Kafka's `DescribeTopicPartitionsRequestHandler` and `KRaftMetadataCache`:
- An empty topic list means every topic; names before the cursor's topic are skipped. Topics are
  answered in name order, at most `response_partition_limit` partitions in all (clamped to
  1..2000, Kafka's `max.request.partition.size.limit` default). When the limit stops the answer
  inside a topic, or before the next one, `next_cursor` names where to continue; otherwise it is
  null.
- A named topic that does not exist answers UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION
  for an illegal name) with no partitions; when listing every topic nothing is answered for it.
- A cursor whose topic is not among the named ones, or with a negative partition, is
  INVALID_REQUEST for every named topic, as Kafka's error response answers it.
- A partition's leader and leader epoch are the ones Metadata reports (`metadata.leader_of`; leader
  -1 while it has none, with the partition's error code still 0, as Kafka's); offline replicas are
  the replicas of nodes that are down; in-sync replicas are the live replicas (as this node's
  Metadata answers). With one replica per partition there is no eligible-leader set:
  `eligible_leader_replicas` and `last_known_elr` are empty lists, as Kafka fills them.

Authorization (`--authorizer`), as Kafka: Describe on each topic. A named topic the principal may
not describe answers TOPIC_AUTHORIZATION_FAILED with the zero topic id, listed after the others;
listing every topic leaves it out. `topic_authorized_operations` is always filled (the request has
no flag): the topic operations Kafka defines that the principal is allowed.
"""

from __future__ import annotations

import uuid

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import SUPPORTED_OPERATIONS, Operation
from groupctl.server.handlers.acl_checks import TOPIC, allowed
from groupctl.server.handlers.metadata import leader_of
from groupctl.server.topics import topic_name_error

ZERO_UUID = uuid.UUID(int=0)
MAX_PARTITIONS = 2000
"""Kafka's `max.request.partition.size.limit` default: the most partitions one answer holds."""
NOT_COMPUTED = -2147483648
"""`topic_authorized_operations` of a refused topic (the schema's default), as Kafka leaves it."""


def authorized_operations(ctx, topic: str) -> int:
    """The bitfield of topic operations the principal may do on `topic` (Kafka's
    `Utils.to32BitField` of `authorizedOperations`)."""
    field = 0
    for operation in SUPPORTED_OPERATIONS[TOPIC]:
        if allowed(ctx, operation, TOPIC, topic):
            field |= 1 << operation
    return field


def _partition(ctx, record, p: int, live) -> object:
    cls = ctx.response_class.DescribeTopicPartitionsResponseTopic.DescribeTopicPartitionsResponsePartition
    replicas = record.replicas[p]
    return cls(error_code=0, partition_index=p, leader_id=leader_of(ctx, replicas, live),
               leader_epoch=record.leader_epoch(p),
               replica_nodes=list(replicas), isr_nodes=[n for n in replicas if n in live],
               eligible_leader_replicas=[], last_known_elr=[],
               offline_replicas=[n for n in replicas if n not in live])


def _topic(ctx, name: str, code: int, topic_id: uuid.UUID = ZERO_UUID, partitions=(),
           operations: int = NOT_COMPUTED) -> object:
    return ctx.response_class.DescribeTopicPartitionsResponseTopic(
        error_code=code, name=name, topic_id=topic_id, is_internal=False, partitions=list(partitions),
        topic_authorized_operations=operations)


def _invalid(ctx, request):
    return ctx.respond(throttle_time_ms=0, next_cursor=None,
                       topics=[_topic(ctx, t.name, ErrorCode.INVALID_REQUEST) for t in request.topics])


@api(key=75, versions=(0, 0))
async def handle_describe_topic_partitions(ctx, request):
    node = ctx.node
    cursor = request.cursor
    first = cursor.topic_name if cursor is not None else ""
    every = not request.topics
    names = {r.name for r in node.topics.all()} if every else {t.name for t in request.topics}
    names = {n for n in names if n >= first}
    if cursor is not None and ((not every and cursor.topic_name not in names) or cursor.partition_index < 0):
        return _invalid(ctx, request)
    refused = []
    wanted = []
    for name in sorted(names):
        if allowed(ctx, Operation.DESCRIBE, TOPIC, name):
            wanted.append(name)
        elif not every:
            refused.append(_topic(ctx, name, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
    live = node.live_brokers(ctx.listener)
    remaining = max(min(MAX_PARTITIONS, request.response_partition_limit), 1)
    topics, next_cursor = [], None
    for name in wanted:
        if remaining == 0:
            next_cursor = ctx.response_class.Cursor(topic_name=name, partition_index=0)
            break
        record = node.topics.get(name)
        if record is None:
            if not every:
                code = ErrorCode.INVALID_TOPIC_EXCEPTION if topic_name_error(name) else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                topics.append(_topic(ctx, name, code, operations=authorized_operations(ctx, name)))
            continue
        start = cursor.partition_index if cursor is not None and name == cursor.topic_name else 0
        count = len(record.replicas)
        upper = min(count, start + remaining)
        shown = [_partition(ctx, record, p, live) for p in range(start, upper)]
        topics.append(_topic(ctx, name, ErrorCode.NONE, uuid.UUID(record.topic_id), shown,
                             authorized_operations(ctx, name)))
        if upper < count:
            next_cursor = ctx.response_class.Cursor(topic_name=name, partition_index=upper)
            break
        remaining -= len(shown)
    return ctx.respond(throttle_time_ms=0, topics=topics + refused, next_cursor=next_cursor)
