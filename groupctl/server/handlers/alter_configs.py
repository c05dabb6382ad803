"""AlterConfigs (API 33), versions 0-2: replace the dynamic configs of topics, of this broker
(or the cluster-wide defaults, "") and of groups.

Version notes: v1 changes nothing on the wire; v2 is flexible. Kafka deprecates this API for
IncrementalAlterConfigs, yet librdkafka and kafka-python still send v2 from `alter_configs`.

Semantics, as Kafka's: each resource's entries become its whole dynamic config (keys left out
return to their defaults), in one compare-and-set write of its document
(`groupctl.server.dynamic_configs`), which every node then applies. An unknown key, a key
groupctl cannot change at run time ("Cannot update these configs dynamically") and a bad value are
INVALID_CONFIG with a message, as is `cleanup.policy=compact`; a null value is INVALID_REQUEST
("Null value not supported for : <keys>", before authorization, as Kafka's ConfigAdminManager
answers); a stored document that does not decode is overwritten, as Kafka's ZooKeeper mode writes
without reading it; an unknown topic is
UNKNOWN_TOPIC_OR_PARTITION; a broker other than this node INVALID_REQUEST. validate_only runs
every check and writes nothing. Results are per resource.

Authorization (`--authorizer`), as Kafka: AlterConfigs on the topic, the Cluster (brokers) or
the group, else TOPIC_/CLUSTER_/GROUP_AUTHORIZATION_FAILED for that resource.
"""

from __future__ import annotations

from typing import Any

from groupctl.protocol.registry import api
from groupctl.server.context import RequestContext
from groupctl.server.handlers.config_resources import ResourceError, alter, refuse_nulls


@api(key=33, versions=(0, 2))
async def handle_alter_configs(ctx: RequestContext, request: Any) -> Any:
    answer = ctx.response_class.AlterConfigsResourceResponse
    results = []
    for resource in request.resources:
        config = {c.name: c.value for c in resource.configs}
        try:
            refuse_nulls([c.name for c in resource.configs if c.value is None])
            await alter(ctx, resource.resource_type, resource.resource_name, lambda current, config=config: config,
                        request.validate_only, replaces=True)
            error, message = 0, None
        except ResourceError as exc:
            error, message = int(exc.code), str(exc)
        results.append(answer(error_code=error, error_message=message, resource_type=resource.resource_type,
                              resource_name=resource.resource_name))
    return ctx.respond(throttle_time_ms=0, responses=results)
