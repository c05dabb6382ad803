"""DescribeConfigs (32, v1-4) and IncrementalAlterConfigs (44, v0-1), for `groupctl group config`
and `group describe`: any Kafka 4 cluster and groupctl's coordinator serve them for GROUP
resources (type 32).

Requests go to any broker (Kafka forwards alterations to its controller). Per-resource errors are
returned, not raised.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from groupctl.client.kafka import KafkaClient

DESCRIBE_CONFIGS = 32
INCREMENTAL_ALTER_CONFIGS = 44
GROUP_RESOURCE = 32
SET, DELETE = 0, 1
SOURCES = {1: "DYNAMIC_TOPIC_CONFIG", 2: "DYNAMIC_BROKER_CONFIG", 3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
           4: "STATIC_BROKER_CONFIG", 5: "DEFAULT_CONFIG", 6: "DYNAMIC_BROKER_LOGGER_CONFIG",
           7: "CLIENT_METRICS_CONFIG", 8: "GROUP_CONFIG"}


@dataclass(frozen=True)
class ConfigValue:
    name: str
    value: Optional[str]
    source: str  # Kafka's ConfigSource name, e.g. GROUP_CONFIG
    read_only: bool


@dataclass(frozen=True)
class DescribedResource:
    name: str
    error_code: int
    error_message: Optional[str]
    configs: tuple[ConfigValue, ...]


def describe_configs(client: KafkaClient, resource_type: int, names: Sequence[str]) -> list[DescribedResource]:
    """Every config of each named resource of `resource_type`, in the broker's order."""

    def build(cls: type, version: int) -> Any:
        return cls(resources=[cls.DescribeConfigsResource(resource_type=resource_type, resource_name=name,
                                                          configuration_keys=None) for name in names],
                   include_synonyms=False, include_documentation=False)

    response = client.call(None, DESCRIBE_CONFIGS, (1, 4), build)
    return [DescribedResource(r.resource_name, r.error_code, r.error_message, tuple(
        ConfigValue(c.name, c.value, SOURCES.get(c.config_source, str(c.config_source)), c.read_only)
        for c in r.configs)) for r in response.results]


def incremental_alter_configs(client: KafkaClient, resource_type: int, name: str,
                              operations: Sequence[tuple[str, int, Optional[str]]],
                              validate_only: bool = False) -> tuple[int, Optional[str]]:
    """Apply (key, SET|DELETE, value) operations to one resource: its (error code, message)."""

    def build(cls: type, version: int) -> Any:
        resource = cls.AlterConfigsResource
        return cls(resources=[resource(resource_type=resource_type, resource_name=name, configs=[
            resource.AlterableConfig(name=key, config_operation=op, value=value) for key, op, value in operations])],
            validate_only=validate_only)

    response = client.call(None, INCREMENTAL_ALTER_CONFIGS, (0, 1), build)
    [result] = response.responses
    return result.error_code, result.error_message
