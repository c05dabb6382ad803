"""CreateTopics (19), v2-7.

Version notes: v1+ validate_only; v4 lets num_partitions/replication_factor be -1 (defaults);
v5 is flexible and returns partitions, replication factor and configs; v7 returns topic ids.

Semantics: partitions are spread over live nodes, or placed exactly as a manual assignment says
(assignments' node ids must be distinct live nodes, partitions numbered 0..n-1 once each, every
partition with as many replicas; num_partitions and replication_factor must then be -1, as Kafka
requires). A name that appears more than once in one request gets INVALID_REQUEST for each
entry and is not created, as in Kafka. A name whose creation is still being written for another
request gets TOPIC_ALREADY_EXISTS (exactly one concurrent request creates a name). validate_only
runs every check (including "already exists") and creates nothing; its results carry the zero
topic id. Topic configs are checked as AlterConfigs checks them (INVALID_CONFIG with a message,
nothing created) and stored in the topic's config document (`/config/topics/<t>`; deleted when
there are none) before the topic itself, as Kafka does, so its logs run on its configs from the
start and never on a document a deleted topic of its name left; a store failure in either write
is UNKNOWN_SERVER_ERROR for that topic. The response (v5+) reports every config in force, with
validate_only too. The logs of the
partitions this node leads start opening in the background once the topic is created, as a
Kafka broker creates them when it becomes their leader (a request that comes first opens its own).

Authorization (`--authorizer`), as Kafka: Create on the Cluster, or else on each topic, else
TOPIC_AUTHORIZATION_FAILED ("Authorization failed."; a duplicated name is INVALID_REQUEST first).
Without DescribeConfigs on the topic the configs are left out and topic_config_error_code is
TOPIC_AUTHORIZATION_FAILED, as Kafka answers.
"""

import uuid
from dataclasses import replace

from groupctl.configs.catalog import InvalidConfig, ResourceType
from groupctl.configs.resolve import checked, topic_entries
from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import TOPIC, allowed, cluster_allowed
from groupctl.server.topics import TopicError, each_topic
from groupctl.store.base import StoreError

ZERO_UUID = uuid.UUID(int=0)


def _plan(ctx, topic):
    node = ctx.node
    if topic.assignments:
        if topic.num_partitions != -1 or topic.replication_factor != -1:
            raise TopicError(ErrorCode.INVALID_REQUEST,
                             "with manual assignments, partitions and replication factor must be -1")
        manual = {a.partition_index: list(a.broker_ids) for a in topic.assignments}
        if len(manual) != len(topic.assignments):
            raise TopicError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                             "a partition appears more than once in the manual assignment")
        return node.topics.plan(topic.name, len(manual), assignments=manual)
    partitions = node.config.default_partitions if topic.num_partitions == -1 else topic.num_partitions
    factor = 1 if topic.replication_factor == -1 else topic.replication_factor
    return node.topics.plan(topic.name, partitions, factor)


@api(key=19, versions=(2, 7))
async def handle_create_topics(ctx, request):
    entry = ctx.response_class.CreatableTopicResult
    config_entry = entry.CreatableTopicConfigs
    configs = {}  # topic name -> its checked configs

    may_create_any = cluster_allowed(ctx, Operation.CREATE)

    async def create(topic):
        if not (may_create_any or allowed(ctx, Operation.CREATE, TOPIC, topic.name)):
            raise TopicError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.")
        record = _plan(ctx, topic)
        try:
            configs[topic.name] = checked(ctx.node.config, ResourceType.TOPIC, {c.name: c.value for c in topic.configs})
        except InvalidConfig as exc:
            raise TopicError(ErrorCode.INVALID_CONFIG, str(exc)) from None
        if request.validate_only:
            return record
        try:
            created = await ctx.node.topics.create(record, configs[topic.name])
        except StoreError as exc:
            raise TopicError(ErrorCode.UNKNOWN_SERVER_ERROR, f"the topic could not be stored: {exc}") from None
        ctx.node.open_new_logs(created, created.replicas)
        return created

    def described(name):
        """(topic_config_error_code, configs) of the response, v5+."""
        if not allowed(ctx, Operation.DESCRIBE_CONFIGS, TOPIC, name):
            return int(ErrorCode.TOPIC_AUTHORIZATION_FAILED), []
        stored = ctx.node.configs.stored
        stored = replace(stored, topics={**stored.topics, name: configs.get(name, {})})
        return 0, [config_entry(name=e.name, value=e.value, read_only=e.read_only, config_source=int(e.source),
                                is_sensitive=False) for e in topic_entries(ctx.node.config, stored, name)]

    results = []
    for topic, outcome in await each_topic(request.topics, create):
        if isinstance(outcome, TopicError):
            results.append(entry(name=topic.name, topic_id=ZERO_UUID, error_code=outcome.code,
                                 error_message=str(outcome), num_partitions=-1, replication_factor=-1,
                                 configs=None))
            continue
        config_error, described_configs = described(outcome.name)
        results.append(entry(
            name=outcome.name,
            topic_id=uuid.UUID(outcome.topic_id) if not request.validate_only else ZERO_UUID,
            error_code=0, error_message=None,
            num_partitions=len(outcome.replicas),
            replication_factor=len(outcome.replicas[0]),
            topic_config_error_code=config_error,
            configs=described_configs,
        ))
    return ctx.respond(throttle_time_ms=0, topics=results)
