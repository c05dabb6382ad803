"""What a resource's configs are, given the node's options and the stored dynamic configs: the
entries DescribeConfigs answers (value, source, synonyms), a topic's `LogConfig`, a group's
session timeout and heartbeat interval, and the checks an alteration must pass. Pure functions.

Precedence, as Kafka's: a topic's own value (DYNAMIC_TOPIC_CONFIG), else for each broker synonym
in order this node's dynamic value (DYNAMIC_BROKER_CONFIG), the cluster-wide dynamic default
(DYNAMIC_DEFAULT_BROKER_CONFIG) and the node's option (STATIC_BROKER_CONFIG), else the first
synonym's default (DEFAULT_CONFIG). A group's own value (GROUP_CONFIG), else the broker's
`group.consumer.*` value (DEFAULT_CONFIG). The first entry of the synonyms is the value in force.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from groupctl.configs.catalog import (
    BROKER_KEYS,
    GROUP_KEYS,
    TOPIC_KEYS,
    ConfigKey,
    InvalidConfig,
    ResourceType,
    Source,
)
from groupctl.layout.paths import DEFAULT_CONFIG_ENTITY
from groupctl.log.config import LogConfig

DEFAULT_BROKER = DEFAULT_CONFIG_ENTITY
"""The stored name of the cluster-wide dynamic broker defaults (Kafka's `/config/brokers/<default>`)."""

Config = Mapping[str, str]


@dataclass(frozen=True)
class StoredConfigs:
    """The dynamic configs in the metadata store: resource name -> key -> value. Brokers are named
    by id ("0") or DEFAULT_BROKER."""

    topics: Mapping[str, Config] = field(default_factory=dict)
    brokers: Mapping[str, Config] = field(default_factory=dict)
    groups: Mapping[str, Config] = field(default_factory=dict)

    def of(self, resource: ResourceType, name: str) -> Config:
        table = {ResourceType.TOPIC: self.topics, ResourceType.BROKER: self.brokers,
                 ResourceType.GROUP: self.groups}[resource]
        return table.get(name, {})


@dataclass(frozen=True)
class Synonym:
    name: str
    value: Optional[str]
    source: Source


@dataclass(frozen=True)
class Entry:
    """One DescribeConfigs entry."""

    key: ConfigKey
    value: Optional[str]
    source: Source
    read_only: bool
    synonyms: tuple[Synonym, ...]

    @property
    def name(self) -> str:
        return self.key.name


def _broker_chain(node: Any, stored: StoredConfigs, name: str) -> list[Synonym]:
    """The values of broker key `name` on this node, highest precedence first, default excluded."""
    own = stored.brokers.get(str(node.node_id), {})
    chain = []
    if name in own:
        chain.append(Synonym(name, own[name], Source.DYNAMIC_BROKER_CONFIG))
    default = stored.brokers.get(DEFAULT_BROKER, {})
    if name in default:
        chain.append(Synonym(name, default[name], Source.DYNAMIC_DEFAULT_BROKER_CONFIG))
    broker = BROKER_KEYS.get(name)
    if broker is not None and broker.option is not None:
        static = broker.option(node)
        if static is not None and static != broker.key.default:
            chain.append(Synonym(name, static, Source.STATIC_BROKER_CONFIG))
    return chain


def broker_entries(node: Any, stored: StoredConfigs) -> list[Entry]:
    """This node's broker configs (`node`: its NodeConfig)."""
    entries = []
    for name, broker in BROKER_KEYS.items():
        chain = _broker_chain(node, stored, name)
        if broker.key.default is not None:
            chain.append(Synonym(name, broker.key.default, Source.DEFAULT_CONFIG))
        first = chain[0] if chain else Synonym(name, None, Source.DEFAULT_CONFIG)
        entries.append(Entry(broker.key, first.value, first.source, not broker.key.alterable, tuple(chain)))
    return entries


def default_broker_entries(stored: StoredConfigs) -> list[Entry]:
    """The cluster-wide dynamic defaults (the BROKER resource named "")."""
    return [Entry(BROKER_KEYS[name].key, value, Source.DYNAMIC_DEFAULT_BROKER_CONFIG, False,
                  (Synonym(name, value, Source.DYNAMIC_DEFAULT_BROKER_CONFIG),))
            for name, value in sorted(stored.brokers.get(DEFAULT_BROKER, {}).items()) if name in BROKER_KEYS]


def topic_entries(node: Any, stored: StoredConfigs, topic: str) -> list[Entry]:
    own = stored.topics.get(topic, {})
    entries = []
    for name, key in TOPIC_KEYS.items():
        chain = [Synonym(name, own[name], Source.DYNAMIC_TOPIC_CONFIG)] if name in own else []
        defaults = []
        for synonym in key.synonyms:
            broker = BROKER_KEYS.get(synonym)
            if broker is None:
                continue
            chain.extend(Synonym(s.name, broker.to_topic(s.value), s.source)
                         for s in _broker_chain(node, stored, synonym) if s.value is not None)
            if broker.key.default is not None:
                defaults.append(Synonym(synonym, broker.to_topic(broker.key.default), Source.DEFAULT_CONFIG))
        if not defaults and key.default is not None:  # a key groupctl has no broker key for
            defaults.append(Synonym(key.synonyms[0] if key.synonyms else name, key.default, Source.DEFAULT_CONFIG))
        chain.extend(defaults)
        first = chain[0] if chain else Synonym(name, None, Source.DEFAULT_CONFIG)
        entries.append(Entry(key, first.value, first.source, not key.alterable, tuple(chain)))
    return entries


def group_entries(node: Any, stored: StoredConfigs, group: str) -> list[Entry]:
    own = stored.groups.get(group, {})
    entries = []
    for name, key in GROUP_KEYS.items():
        if name in own:
            entries.append(Entry(key, own[name], Source.GROUP_CONFIG, False,
                                 (Synonym(name, own[name], Source.GROUP_CONFIG),)))
        else:
            broker = BROKER_KEYS[key.synonyms[0]]
            entries.append(Entry(key, broker.option(node) if broker.option else key.default,  # type: ignore[misc]
                                 Source.DEFAULT_CONFIG, False, ()))
    return entries


def effective(entries: list[Entry]) -> dict[str, Optional[str]]:
    return {e.name: e.value for e in entries}


def log_config(node: Any, stored: StoredConfigs, topic: str) -> LogConfig:
    """The LogConfig the topic's partition logs honour now."""
    values = effective(topic_entries(node, stored, topic))
    return LogConfig(
        segment_bytes=int(values["segment.bytes"]),  # type: ignore[arg-type]
        segment_ms=int(values["segment.ms"]),  # type: ignore[arg-type]
        retention_ms=int(values["retention.ms"]),  # type: ignore[arg-type]
        retention_bytes=int(values["retention.bytes"]),  # type: ignore[arg-type]
        max_message_bytes=int(values["max.message.bytes"]),  # type: ignore[arg-type]
        message_timestamp_type=values["message.timestamp.type"],  # type: ignore[arg-type]
    )


def group_timeouts(node: Any, stored: StoredConfigs, group: str) -> tuple[int, int]:
    """(session timeout ms, heartbeat interval ms) of a consumer group."""
    values = effective(group_entries(node, stored, group))
    return int(values["consumer.session.timeout.ms"]), int(values["consumer.heartbeat.interval.ms"])  # type: ignore[arg-type]


# -- checking an alteration ----------------------------------------------------------------------

def checked(node: Any, resource: ResourceType, config: Mapping[str, Optional[str]],
            context: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    """`config`, the keys a change sets, in canonical text; InvalidConfig (naming the key) for an
    unknown or read-only key or a bad value. `context`: the whole config the resource is to have
    (default: `config`), which a group's values are checked together in. `node`: the NodeConfig
    whose bounds a group's values must respect."""
    if resource is ResourceType.TOPIC:
        keys = TOPIC_KEYS
        unknown = sorted(k for k in config if k not in keys)
        if unknown:
            raise InvalidConfig(f"Unknown topic config name: {unknown[0]}")
    elif resource is ResourceType.GROUP:
        keys = GROUP_KEYS
        unknown = sorted(k for k in config if k not in keys)
        if unknown:
            raise InvalidConfig(f"Unknown group config name: {unknown[0]}")
    else:
        keys = {name: b.key for name, b in BROKER_KEYS.items()}
    fixed = sorted(k for k in config if k not in keys or not keys[k].alterable)
    if fixed:
        raise InvalidConfig(f"Cannot update these configs dynamically: {', '.join(fixed)}")
    values = {name: keys[name].parse(value) for name, value in config.items()}
    for name in ("cleanup.policy", "log.cleanup.policy"):
        if name in values and set(values[name].split(",")) != {"delete"}:
            raise InvalidConfig(f"Invalid value {values[name]} for configuration {name}: groupctl deletes old "
                                "segments and does not compact, so only 'delete' is supported")
    if resource is ResourceType.TOPIC and values.get("remote.storage.enable") == "true":
        raise InvalidConfig("Tiered Storage functionality is disabled in the broker. Topic cannot be configured "
                            "with remote log storage.")
    if resource is ResourceType.GROUP:
        _check_group(node, {**(context or {}), **values})
    return values


def _check_group(node: Any, values: Mapping[str, str]) -> None:
    """Kafka's GroupConfig.validateValues against the broker's group.consumer.* bounds."""
    bounds = node.consumer_groups
    session = int(values.get("consumer.session.timeout.ms", bounds.session_timeout_ms))
    heartbeat = int(values.get("consumer.heartbeat.interval.ms", bounds.heartbeat_interval_ms))
    if heartbeat < bounds.min_heartbeat_interval_ms:
        raise InvalidConfig("consumer.heartbeat.interval.ms must be greater than or equal to "
                            f"group.consumer.min.heartbeat.interval.ms ({bounds.min_heartbeat_interval_ms})")
    if heartbeat > bounds.max_heartbeat_interval_ms:
        raise InvalidConfig("consumer.heartbeat.interval.ms must be less than or equal to "
                            f"group.consumer.max.heartbeat.interval.ms ({bounds.max_heartbeat_interval_ms})")
    if session < bounds.min_session_timeout_ms:
        raise InvalidConfig("consumer.session.timeout.ms must be greater than or equal to "
                            f"group.consumer.min.session.timeout.ms ({bounds.min_session_timeout_ms})")
    if session > bounds.max_session_timeout_ms:
        raise InvalidConfig("consumer.session.timeout.ms must be less than or equal to "
                            f"group.consumer.max.session.timeout.ms ({bounds.max_session_timeout_ms})")
    if session <= heartbeat:
        raise InvalidConfig("consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms")

