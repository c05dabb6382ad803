"""ListConfigResources (API 74), versions 0-1: the resources that have configs (KIP-1142).

Version notes: v0 (Kafka's ListClientMetricsResources) lists client-metrics resources only,
which groupctl has none of, so its answer is empty; v1 takes resource_types and answers each
resource with its type. Both are flexible.

Semantics (v1): an empty resource_types means every type groupctl describes: every topic (TOPIC),
every live node (BROKER) and every group, those with stored offsets or state and those with
stored configs (GROUP). Client-metrics resources are asked for legally and there are none.

Authorization (`--authorizer`), as Kafka: DescribeConfigs on the Cluster, else
CLUSTER_AUTHORIZATION_FAILED.

Deliberate difference from Apache Kafka: BROKER_LOGGER (8) is INVALID_REQUEST rather than a list
of the brokers' loggers (groupctl describes no loggers); so is an unknown type.
"""

from __future__ import annotations

from typing import Any

from groupctl.configs.catalog import ResourceType
from groupctl.coordinator.errors import ErrorCode
from groupctl.layout.paths import GROUPS, decode_name
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import cluster_allowed
from groupctl.store.base import NoNode

LISTED = (ResourceType.TOPIC, ResourceType.BROKER, ResourceType.GROUP)
ASKABLE = {*LISTED, ResourceType.CLIENT_METRICS}


async def _names(ctx: RequestContext, kind: ResourceType) -> list[str]:
    node = ctx.node
    if kind is ResourceType.TOPIC:
        return sorted(t.name for t in node.topics.all())
    if kind is ResourceType.BROKER:
        return [str(n) for n in node.live_nodes()]
    if kind is ResourceType.GROUP:
        try:
            stored = {decode_name(child) for child in await node.store.children(GROUPS)}
        except NoNode:
            stored = set()
        return sorted(stored | set(node.configs.names(ResourceType.GROUP)))
    return []


@api(key=74, versions=(0, 1))
async def handle_list_config_resources(ctx: RequestContext, request: Any) -> Any:
    entry = ctx.response_class.ConfigResource

    def answer(error: ErrorCode, resources: list[Any]) -> Any:
        return ctx.respond(throttle_time_ms=0, error_code=int(error), config_resources=resources)

    if not cluster_allowed(ctx, Operation.DESCRIBE_CONFIGS):
        return answer(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, [])
    if ctx.version == 0:
        return answer(ErrorCode.NONE, [])  # client-metrics resources: groupctl has none
    asked = list(dict.fromkeys(request.resource_types)) or [int(k) for k in LISTED]
    if any(code not in {int(k) for k in ASKABLE} for code in asked):
        return answer(ErrorCode.INVALID_REQUEST, [])
    resources = []
    for code in asked:
        kind = ResourceType(code)
        resources.extend(entry(resource_name=name, resource_type=code) for name in await _names(ctx, kind))
    return answer(ErrorCode.NONE, resources)
