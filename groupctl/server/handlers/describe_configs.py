"""DescribeConfigs (API 32), versions 1-4: the configs of topics, of this broker and of groups.

Version notes: v1 carries include_synonyms and each entry's source and synonyms (v0 is not
served: Apache Kafka 4 dropped it; librdkafka sends v1, kafka-python v4); v3 adds include_documentation
and each entry's ConfigType; v4 is flexible.

Semantics, as Kafka's ConfigHelper (`groupctl.configs` resolves the values):
- TOPIC: every LogConfig key with its value in force and its source (DYNAMIC_TOPIC_CONFIG,
  else the broker synonym's DYNAMIC_BROKER/DYNAMIC_DEFAULT_BROKER/STATIC_BROKER/DEFAULT); an
  illegal name is INVALID_TOPIC_EXCEPTION, an unknown topic UNKNOWN_TOPIC_OR_PARTITION.
- BROKER: this node's id describes its options and dynamic configs; "" describes the cluster-wide
  dynamic defaults (`/config/brokers/<default>`) only; another id is INVALID_REQUEST (clients
  send a broker's resource to that broker).
- GROUP: consumer.session.timeout.ms and consumer.heartbeat.interval.ms, GROUP_CONFIG when the
  group has its own value, else DEFAULT_CONFIG with the broker's; a group need not exist.
- configuration_keys limits the entries (unknown names are left out); synonyms only with
  include_synonyms, documentation only with include_documentation.

Authorization (`--authorizer`), as Kafka: DescribeConfigs on the topic, the Cluster (brokers) or
the group, else TOPIC_/CLUSTER_/GROUP_AUTHORIZATION_FAILED for that resource.

Deliberate differences from Apache Kafka: BROKER_LOGGER and CLIENT_METRICS resources are
INVALID_REQUEST ("Unsupported resource type"); every topic key is writable as in Kafka, but the
partition logs act only on `configs.catalog.HONOURED_TOPIC_KEYS`; Kafka 4's share-group keys are
not described (groupctl runs no share groups).
"""

from __future__ import annotations

from typing import Any

from groupctl.configs.catalog import ResourceType
from groupctl.configs.resolve import (
    Entry,
    broker_entries,
    default_broker_entries,
    group_entries,
    topic_entries,
)
from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.context import RequestContext
from groupctl.server.handlers.config_resources import (
    ResourceError,
    authorize,
    broker_id,
    existing_topic,
    resource_type,
)

def entries_of(ctx: RequestContext, kind: ResourceType, name: str) -> list[Entry]:
    node = ctx.node
    stored = node.configs.stored
    if kind is ResourceType.TOPIC:
        existing_topic(ctx, name)
        return topic_entries(node.config, stored, name)
    if kind is ResourceType.BROKER:
        return broker_entries(node.config, stored) if broker_id(ctx, name) is not None \
            else default_broker_entries(stored)
    if not name:
        raise ResourceError(ErrorCode.INVALID_REQUEST, "Group name must not be empty")
    return group_entries(node.config, stored, name)


@api(key=32, versions=(1, 4))
async def handle_describe_configs(ctx: RequestContext, request: Any) -> Any:
    result_class = ctx.response_class.DescribeConfigsResult
    entry_class = result_class.DescribeConfigsResourceResult
    synonym_class = entry_class.DescribeConfigsSynonym
    with_docs = ctx.version >= 3 and request.include_documentation

    def entry(e: Entry) -> Any:
        return entry_class(
            name=e.name, value=e.value, read_only=e.read_only, config_source=int(e.source), is_sensitive=False,
            synonyms=[synonym_class(name=s.name, value=s.value, source=int(s.source)) for s in e.synonyms]
            if request.include_synonyms else [],
            config_type=int(e.key.type), documentation=e.key.doc if with_docs else None)

    results = []
    for resource in request.resources:
        wanted = resource.configuration_keys
        try:
            kind = resource_type(resource.resource_type)
            authorize(ctx, kind, resource.resource_name, Operation.DESCRIBE_CONFIGS)
            entries = [entry(e) for e in entries_of(ctx, kind, resource.resource_name)
                       if wanted is None or e.name in wanted]
            results.append(result_class(error_code=0, error_message=None, resource_type=resource.resource_type,
                                        resource_name=resource.resource_name, configs=entries))
        except ResourceError as exc:
            results.append(result_class(error_code=int(exc.code), error_message=str(exc),
                                        resource_type=resource.resource_type, resource_name=resource.resource_name,
                                        configs=[]))
    return ctx.respond(throttle_time_ms=0, results=results)
