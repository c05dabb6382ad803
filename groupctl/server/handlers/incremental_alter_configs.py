"""IncrementalAlterConfigs (API 44), versions 0-1: change some dynamic configs of topics, of this
broker (or the cluster-wide defaults, "") and of groups.

Version notes: v1 is flexible. librdkafka and kafka-python send v1.

Semantics, as Kafka's: per resource, operations SET (0), DELETE (1: back to the default), APPEND
(2) and SUBTRACT (3; list keys only, else INVALID_CONFIG "Config value append is not allowed for
config key: <k>") apply to the stored config, and the result is written in one compare-and-set
write (`groupctl.server.dynamic_configs`), which every node then applies. A key named twice in one
resource is INVALID_REQUEST, and so is a null value for any operation but DELETE ("Null value not
supported for : <keys>"), both before authorization as Kafka's ConfigAdminManager.preprocess; a stored
document that does not decode is UNKNOWN_SERVER_ERROR (Kafka's read of it fails too).
Keys, values and errors are checked as AlterConfigs checks them
(INVALID_CONFIG for unknown, read-only and bad; UNKNOWN_TOPIC_OR_PARTITION; INVALID_REQUEST for
another broker). validate_only runs every check and writes nothing. Results are per resource.

Authorization (`--authorizer`), as Kafka: AlterConfigs on the topic, the Cluster (brokers) or
the group, else TOPIC_/CLUSTER_/GROUP_AUTHORIZATION_FAILED for that resource.
"""

from __future__ import annotations

from typing import Any

from groupctl.configs.catalog import ConfigType, keys_of
from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.server.context import RequestContext
from groupctl.server.handlers.config_resources import Config, ResourceError, alter, refuse_nulls, resource_type

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def _changed(kind_code: int, operations: list[Any], current: Config) -> Config:
    """`current` after the resource's operations."""
    keys = keys_of(resource_type(kind_code))
    config = dict(current)
    for op in operations:
        name, value = op.name, op.value
        if op.config_operation == SET:
            config[name] = value
        elif op.config_operation == DELETE:
            config.pop(name, None)
        elif op.config_operation in (APPEND, SUBTRACT):
            key = keys.get(name)
            if key is None or key.type is not ConfigType.LIST:
                verb = "append" if op.config_operation == APPEND else "subtract"
                raise ResourceError(ErrorCode.INVALID_CONFIG, f"Config value {verb} is not allowed for config key: {name}")
            items = [i for i in (config.get(name, key.default or "")).split(",") if i]
            given = [i.strip() for i in (value or "").split(",") if i.strip()]
            if op.config_operation == APPEND:
                items += [i for i in given if i not in items]
            else:
                items = [i for i in items if i not in given]
            config[name] = ",".join(items)
        else:
            raise ResourceError(ErrorCode.INVALID_REQUEST, f"Unknown config operation {op.config_operation} for {name}")
    return config


@api(key=44, versions=(0, 1))
async def handle_incremental_alter_configs(ctx: RequestContext, request: Any) -> Any:
    answer = ctx.response_class.AlterConfigsResourceResponse
    results = []
    for resource in request.resources:
        operations = list(resource.configs)
        try:
            names = [op.name for op in operations]
            if len(set(names)) != len(names):
                raise ResourceError(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
            refuse_nulls([op.name for op in operations if op.value is None and op.config_operation != DELETE])
            await alter(ctx, resource.resource_type, resource.resource_name,
                        lambda current, ops=operations, code=resource.resource_type: _changed(code, ops, current),
                        request.validate_only)
            error, message = 0, None
        except ResourceError as exc:
            error, message = int(exc.code), str(exc)
        results.append(answer(error_code=error, error_message=message, resource_type=resource.resource_type,
                              resource_name=resource.resource_name))
    return ctx.respond(throttle_time_ms=0, responses=results)
