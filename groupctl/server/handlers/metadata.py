"""Metadata (3), v0-13.

Version notes: v1 makes an empty topic list mean "none" (v0: "all") and adds controller/rack;
v2 cluster id; v4 allow_auto_topic_creation; v7 leader epochs; v8 authorized operations;
v10 topic ids (request topics may be named by id from v10; names nullable from v12); v13 adds a
top-level error code. A v10/v11 request naming a topic by id or with a null name is INVALID_REQUEST
for every topic, as Kafka answers it.

Semantics: brokers are the live nodes (`/brokers/ids`) at their advertised addresses, the
controller the lowest live node id. A partition is led by its first replica; while that node is
down the partition has no leader (LEADER_NOT_AVAILABLE, leader -1): partition logs are not
replicated; nor does this node lead its own partitions while it raises their leader epochs at a
start or a new ZooKeeper session. leader_epoch is the partition's leader epoch (stored in the
topic's document, raised by its leader each time it starts leading), the one its leader stamps
on batches and checks requests against (KIP-320). A named topic
that does not exist is created when auto-creation is on and the request allows it (v4+; always
for older versions, as Kafka does), with the node's default partition count. Concurrent
requests that auto-create one name share one creation: the first writes the topic, the others
wait for that write and answer with the same topic id.

Authorization (`--authorizer`), as Kafka: a request for every topic lists only those the
principal may Describe; a named topic it may not Describe answers TOPIC_AUTHORIZATION_FAILED
whether it exists or not (zero topic id), one named by id TOPIC_AUTHORIZATION_FAILED with its id
and no name; auto-creating a topic needs Create on the Cluster or on the topic, else
TOPIC_AUTHORIZATION_FAILED. Deliberate differences: topics are answered in request order (Kafka
lists the refused ones last), and authorized operations are left at the schema default
(unknown, -2147483648) even when asked for.
"""

import uuid

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import TOPIC, allowed, cluster_allowed
from groupctl.server.topics import TopicError, topic_name_error

ZERO_UUID = uuid.UUID(int=0)


def _requested(ctx, request):
    """(names, ids) asked for, or None for every topic."""
    if request.topics is None or (ctx.version == 0 and not request.topics):
        return None
    return [(t.name, getattr(t, "topic_id", None)) for t in request.topics]


def leader_of(ctx, replicas, live) -> int:
    """The partition's leader as clients are told it: its first replica while that node is live,
    and for this node's own partitions only once it serves them as leader (-1 otherwise)."""
    if not replicas or replicas[0] not in live:
        return -1
    return replicas[0] if replicas[0] != ctx.node.config.node_id or ctx.node.logs.leading else -1


def _topic_entry(ctx, record, live):
    cls = ctx.response_class.MetadataResponseTopic
    partition = cls.MetadataResponsePartition

    def entry(p, nodes):
        up = [n for n in nodes if n in live]
        leader = leader_of(ctx, nodes, live)
        return partition(error_code=0 if leader >= 0 else ErrorCode.LEADER_NOT_AVAILABLE, partition_index=p,
                         leader_id=leader, leader_epoch=record.leader_epoch(p), replica_nodes=list(nodes), isr_nodes=up,
                         offline_replicas=[n for n in nodes if n not in live])

    return cls(
        error_code=0,
        name=record.name,
        topic_id=uuid.UUID(record.topic_id),
        is_internal=False,
        partitions=[entry(p, nodes) for p, nodes in sorted(record.replicas.items())],
    )


def _error_entry(ctx, name, topic_id, code):
    return ctx.response_class.MetadataResponseTopic(
        error_code=code, name=name, topic_id=topic_id or ZERO_UUID, is_internal=False, partitions=[],
    )


def _names_required(ctx, request):
    """INVALID_REQUEST for every topic when v10/v11 names a topic by id or not at all, as Kafka
    answers ("Topic name can not be null", "Topic IDs are not supported"); None when fine."""
    if not (10 <= ctx.version < 12 and request.topics
            and any(t.name is None or t.topic_id not in (None, ZERO_UUID) for t in request.topics)):
        return None
    return ctx.respond(throttle_time_ms=0, brokers=[], cluster_id=ctx.node.config.cluster_id, controller_id=-1,
                       topics=[_error_entry(ctx, t.name or "", t.topic_id, ErrorCode.INVALID_REQUEST)
                               for t in request.topics], error_code=0)


@api(key=3, versions=(0, 13))
async def handle_metadata(ctx, request):
    refused = _names_required(ctx, request)
    if refused is not None:
        return refused
    node = ctx.node
    live = node.live_brokers(ctx.listener)
    requested = _requested(ctx, request)
    allow_create = node.config.auto_create_topics and (ctx.version < 4 or request.allow_auto_topic_creation)
    if requested is None:
        topics = [_topic_entry(ctx, record, live) for record in node.topics.all()
                  if allowed(ctx, Operation.DESCRIBE, TOPIC, record.name)]
    else:
        topics = []
        for name, topic_id in requested:
            if name is None and topic_id is not None and topic_id != ZERO_UUID:
                record = node.topics.by_id(str(topic_id))
                if record is not None and not allowed(ctx, Operation.DESCRIBE, TOPIC, record.name):
                    topics.append(_error_entry(ctx, None, topic_id, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
                    continue
                topics.append(_topic_entry(ctx, record, live) if record else
                              _error_entry(ctx, None, topic_id, ErrorCode.UNKNOWN_TOPIC_ID))
                continue
            if not allowed(ctx, Operation.DESCRIBE, TOPIC, name):
                topics.append(_error_entry(ctx, name, None, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
                continue
            record = node.topics.get(name)
            if record is None and topic_name_error(name):
                topics.append(_error_entry(ctx, name, None, ErrorCode.INVALID_TOPIC_EXCEPTION))
                continue
            if record is None and allow_create:
                if not (cluster_allowed(ctx, Operation.CREATE) or allowed(ctx, Operation.CREATE, TOPIC, name)):
                    topics.append(_error_entry(ctx, name, None, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
                    continue
                try:
                    record = await node.topics.get_or_create(name, node.config.default_partitions)
                except TopicError as exc:
                    topics.append(_error_entry(ctx, name, None, exc.code))
                    continue
            topics.append(_topic_entry(ctx, record, live) if record else
                          _error_entry(ctx, name, None, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
    broker = ctx.response_class.MetadataResponseBroker
    return ctx.respond(
        throttle_time_ms=0,
        brokers=[broker(node_id=n, host=host, port=port, rack=None) for n, (host, port) in sorted(live.items())],
        cluster_id=node.config.cluster_id,
        controller_id=min(live),
        topics=topics,
        error_code=0,
    )
