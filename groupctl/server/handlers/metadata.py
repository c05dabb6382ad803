"""Metadata (3), v0-13.

Version notes: v1 makes an empty topic list mean "none" (v0: "all") and adds controller/rack;
v2 cluster id; v4 allow_auto_topic_creation; v7 leader epochs; v8 authorized operations;
v10 topic ids (request topics may be named by id from v10; names nullable from v12); v13 adds a
top-level error code.

Semantics: brokers are the live nodes (`/brokers/ids`) at their advertised addresses, the
controller the lowest live node id. A partition is led by its first replica; while that node is
down the partition has no leader (LEADER_NOT_AVAILABLE, leader -1): partition logs are not
replicated. Leader epoch is always -1 (there are no leader epochs, which also keeps clients from
sending OffsetForLeaderEpoch). A named topic
that does not exist is created when auto-creation is on and the request allows it (v4+; always
for older versions, as Kafka does), with the node's default partition count. Concurrent
requests that auto-create one name share one creation: the first writes the topic, the others
wait for that write and answer with the same topic id. Authorized operations are left at the
schema default (unknown, -2147483648): there is no authorization.
"""

import uuid

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.server.topics import TopicError, topic_name_error

ZERO_UUID = uuid.UUID(int=0)


def _requested(ctx, request):
    """(names, ids) asked for, or None for every topic."""
    if request.topics is None or (ctx.version == 0 and not request.topics):
        return None
    return [(t.name, getattr(t, "topic_id", None)) for t in request.topics]


def _topic_entry(ctx, record, live):
    cls = ctx.response_class.MetadataResponseTopic
    partition = cls.MetadataResponsePartition

    def entry(p, nodes):
        up = [n for n in nodes if n in live]
        leader = nodes[0] if nodes and nodes[0] in live else -1
        return partition(error_code=0 if leader >= 0 else ErrorCode.LEADER_NOT_AVAILABLE, partition_index=p,
                         leader_id=leader, leader_epoch=-1, replica_nodes=list(nodes), isr_nodes=up,
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


@api(key=3, versions=(0, 13))
async def handle_metadata(ctx, request):
    node = ctx.node
    live = node.live_brokers()
    requested = _requested(ctx, request)
    allow_create = node.config.auto_create_topics and (ctx.version < 4 or request.allow_auto_topic_creation)
    if requested is None:
        topics = [_topic_entry(ctx, record, live) for record in node.topics.all()]
    else:
        topics = []
        for name, topic_id in requested:
            if name is None and topic_id is not None and topic_id != ZERO_UUID:
                record = node.topics.by_id(str(topic_id))
                topics.append(_topic_entry(ctx, record, live) if record else
                              _error_entry(ctx, None, topic_id, ErrorCode.UNKNOWN_TOPIC_ID))
                continue
            record = node.topics.get(name)
            if record is None and topic_name_error(name):
                topics.append(_error_entry(ctx, name, None, ErrorCode.INVALID_TOPIC_EXCEPTION))
                continue
            if record is None and allow_create:
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
