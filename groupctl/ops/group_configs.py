"""A consumer group's configs (Kafka 4's GROUP config resources: `consumer.session.timeout.ms`,
`consumer.heartbeat.interval.ms`): shown, set and deleted through any Kafka 4 cluster or groupctl
node with DescribeConfigs and IncrementalAlterConfigs (`groupctl group config`, `group describe`).

Invariants:
- A change is one IncrementalAlterConfigs request (all of its keys or none, as the broker checks
  them together); what is returned is the group's configs described after it.
- The broker's refusals (INVALID_CONFIG with Kafka's message, authorization) are `Refused` naming
  the group; `key=value` arguments that do not parse are `BadInput` before anything is sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from groupctl.client.config_apis import (
    DELETE,
    GROUP_RESOURCE,
    SET,
    ConfigValue,
    describe_configs,
    incremental_alter_configs,
)
from groupctl.client.kafka import BootstrapLike, KafkaClient, error_name
from groupctl.errors import BadInput, OpsError, Refused
from groupctl.ops.groups import check_group_id


@dataclass(frozen=True)
class GroupConfigs:
    group: str
    configs: tuple[ConfigValue, ...]

    def to_json(self) -> dict[str, Any]:
        return {"group": self.group, "configs": [
            {"name": c.name, "value": c.value, "source": c.source} for c in self.configs]}


def parse_assignments(pairs: Sequence[str]) -> dict[str, str]:
    """`key=value` arguments as a dict; BadInput for one without '=' or a key given twice."""
    parsed: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise BadInput(f"expected key=value, got {pair!r}")
        if key.strip() in parsed:
            raise BadInput(f"{key.strip()} is given twice")
        parsed[key.strip()] = value.strip()
    return parsed


def describe_group_configs(client: KafkaClient, groups: Sequence[str]) -> dict[str, tuple[ConfigValue, ...]]:
    """Each group's configs, by group (over an open client: `group describe` shares it)."""
    found = {}
    for described in describe_configs(client, GROUP_RESOURCE, groups):
        if described.error_code:
            raise OpsError(f"cannot describe the configs of group {described.name!r}: "
                           f"{_error(described.error_code, described.error_message)}")
        found[described.name] = described.configs
    return found


def show_group_configs(bootstrap: BootstrapLike, group: str) -> GroupConfigs:
    check_group_id(group)
    with KafkaClient(bootstrap) as client:
        return GroupConfigs(group, describe_group_configs(client, [group])[group])


def set_group_configs(bootstrap: BootstrapLike, group: str, values: dict[str, str]) -> GroupConfigs:
    """Give the group these values (the others stay); its configs after."""
    if not values:
        raise BadInput("give at least one key=value")
    return _alter(bootstrap, group, [(key, SET, value) for key, value in values.items()])


def delete_group_configs(bootstrap: BootstrapLike, group: str, keys: Sequence[str]) -> GroupConfigs:
    """Return these keys to the broker's defaults; the group's configs after."""
    if not keys:
        raise BadInput("give at least one key")
    return _alter(bootstrap, group, [(key, DELETE, None) for key in dict.fromkeys(keys)])


def _alter(bootstrap: BootstrapLike, group: str, operations: list[tuple[str, int, Optional[str]]]) -> GroupConfigs:
    check_group_id(group)
    with KafkaClient(bootstrap) as client:
        code, message = incremental_alter_configs(client, GROUP_RESOURCE, group, operations)
        if code:
            raise Refused(f"cannot change the configs of group {group!r}: {_error(code, message)}")
        return GroupConfigs(group, describe_group_configs(client, [group])[group])


def _error(code: int, message: Optional[str]) -> str:
    return f"{error_name(code)} ({message})" if message else error_name(code)
