"""CreatePartitions (37), v0-3.

Version notes: v1 changes only throttling (the response is sent before any throttle); v2 is
flexible; v3 is v2 that may answer THROTTLING_QUOTA_EXCEEDED (never sent here: no quotas).

Semantics, as Kafka's: `count` is the topic's new total partition count. A topic that does not
exist (or whose creation or deletion is still being written) gets UNKNOWN_TOPIC_OR_PARTITION; a
count not above the current one, or above the maximum, INVALID_PARTITIONS. `assignments`, when
not null, lists the replicas of each new partition only (one entry per added partition, each
with the topic's replication factor, of distinct live nodes), else INVALID_REPLICA_ASSIGNMENT;
when null, new partitions are spread round-robin over the live nodes, continuing the topic's
placement (INVALID_REPLICATION_FACTOR when fewer nodes are live than the topic's replication
factor). A name that appears more than once in one request gets INVALID_REQUEST for each entry
and is not changed. validate_only runs every check and changes nothing. Additions to one topic
from concurrent requests are applied one after another, each checked against the topic as the
previous one left it. Existing partitions never move; groups subscribed to the topic rebalance
when the node sees the new partition count (the server's topic watch), not in this handler.
`timeout_ms` is not used: the answer is sent once the new placement is durable in the store.

Authorization (`--authorizer`), as Kafka: Alter on each topic, else TOPIC_AUTHORIZATION_FAILED
("The topic authorization is failed."; a duplicated name is INVALID_REQUEST first).
"""


from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import TOPIC, allowed
from groupctl.server.topics import TopicError, each_topic


def _assignments(topic):
    """The manual replica lists of the new partitions, or None for automatic placement."""
    if topic.assignments is None:
        return None
    return [list(a.broker_ids) for a in topic.assignments]


@api(key=37, versions=(0, 3))
async def handle_create_partitions(ctx, request):
    entry = ctx.response_class.CreatePartitionsTopicResult

    async def add(topic):
        if not allowed(ctx, Operation.ALTER, TOPIC, topic.name):
            raise TopicError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, "The topic authorization is failed.")
        return await ctx.node.topics.add_partitions(topic.name, topic.count, _assignments(topic),
                                                    validate_only=request.validate_only)

    results = [
        entry(name=topic.name, error_code=outcome.code, error_message=str(outcome))
        if isinstance(outcome, TopicError) else entry(name=topic.name, error_code=0, error_message=None)
        for topic, outcome in await each_topic(request.topics, add)
    ]
    return ctx.respond(throttle_time_ms=0, results=results)
