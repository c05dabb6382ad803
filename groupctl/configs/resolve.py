"""What a resource's configs are, given the node's options and the stored dynamic configs: the
entries DescribeConfigs answers (value, source, synonyms), a topic's `LogConfig`, a group's
session timeout and heartbeat interval, and the checks an alteration must pass. Pure functions.

Precedence, as Kafka's: a topic's own value (DYNAMIC_TOPIC_CONFIG), else for each broker synonym
in order (`log.retention.ms`, `log.retention.minutes`, `log.retention.hours`) this node's dynamic
value (DYNAMIC_BROKER_CONFIG), the cluster-wide dynamic default (DYNAMIC_DEFAULT_BROKER_CONFIG),
the node's option (STATIC_BROKER_CONFIG) or its default (DEFAULT_CONFIG), converted to the topic
key's unit. A group's own value (GROUP_CONFIG), else the broker's `group.consumer.*` value
(DEFAULT_CONFIG). The synonyms DescribeConfigs lists are Kafka's ConfigHelper's: each in its own
unit, ordered by source, and the entry's source is the first one's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import dropwhile
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

SOURCE_ORDER = (Source.DYNAMIC_BROKER_CONFIG, Source.DYNAMIC_DEFAULT_BROKER_CONFIG, Source.STATIC_BROKER_CONFIG,
                Source.DEFAULT_CONFIG)
BROKER_SYNONYMS = {name: key.synonyms for key in TOPIC_KEYS.values() if len(key.synonyms) > 1 for name in key.synonyms}
"""Kafka's brokerConfigSynonyms: `log.retention.ms`, `.minutes` and `.hours` are one setting, and
so are `log.roll.ms` and `.hours` (each other key is its own only synonym)."""

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


def _broker_values(node: Any, stored: StoredConfigs, name: str) -> list[Synonym]:
    """The values of broker key `name` on this node in its own unit, highest precedence first:
    this node's dynamic value, the cluster-wide dynamic default, the node's option (when it
    differs from the default), the default."""
    values = []
    for source, config in ((Source.DYNAMIC_BROKER_CONFIG, stored.brokers.get(str(node.node_id), {})),
                           (Source.DYNAMIC_DEFAULT_BROKER_CONFIG, stored.brokers.get(DEFAULT_BROKER, {}))):
        if name in config:
            values.append(Synonym(name, config[name], source))
    broker = BROKER_KEYS.get(name)
    if broker is not None and broker.option is not None:
        static = broker.option(node)
        if static is not None and static != broker.key.default:
            values.append(Synonym(name, static, Source.STATIC_BROKER_CONFIG))
    if broker is not None and broker.key.default is not None:
        values.append(Synonym(name, broker.key.default, Source.DEFAULT_CONFIG))
    return values


def _broker_synonyms(node: Any, stored: StoredConfigs, name: str, names: tuple[str, ...]) -> list[Synonym]:
    """Kafka's ConfigHelper.configSynonyms: the values of the broker keys `names` (Kafka's
    brokerConfigSynonyms of `name`), each in its own unit (`log.retention.hours` = 168), ordered
    by source, then as `names`; those ahead of the first one named `name` are left out, as Kafka
    leaves them out (a default topic's `retention.ms` lists no `log.retention.hours`)."""
    found = [synonym for name_ in names for synonym in _broker_values(node, stored, name_)]
    found.sort(key=lambda synonym: SOURCE_ORDER.index(synonym.source))  # stable: `names`' order within a source
    return list(dropwhile(lambda synonym: synonym.name != name, found))


def _broker_value(node: Any, stored: StoredConfigs, names: tuple[str, ...]) -> Optional[Synonym]:
    """The value in force of the first key of `names` that has one (Kafka's `log.retention.ms`
    over `log.retention.minutes` over `log.retention.hours`), in its own unit."""
    for name in names:
        values = _broker_values(node, stored, name)
        if values:
            return values[0]
    return None


def broker_entries(node: Any, stored: StoredConfigs) -> list[Entry]:
    """This node's broker configs (`node`: its NodeConfig)."""
    entries = []
    for name, broker in BROKER_KEYS.items():
        values = _broker_values(node, stored, name)
        synonyms = _broker_synonyms(node, stored, name, BROKER_SYNONYMS.get(name, (name,)))
        source = synonyms[0].source if synonyms else Source.DEFAULT_CONFIG
        entries.append(Entry(broker.key, values[0].value if values else None, source, not broker.key.alterable,
                             tuple(synonyms)))
    return entries


def default_broker_entries(stored: StoredConfigs) -> list[Entry]:
    """The cluster-wide dynamic defaults (the BROKER resource named "")."""
    return [Entry(BROKER_KEYS[name].key, value, Source.DYNAMIC_DEFAULT_BROKER_CONFIG, False,
                  (Synonym(name, value, Source.DYNAMIC_DEFAULT_BROKER_CONFIG),))
            for name, value in sorted(stored.brokers.get(DEFAULT_BROKER, {}).items()) if name in BROKER_KEYS]


def topic_entries(node: Any, stored: StoredConfigs, topic: str) -> list[Entry]:
    """A topic's configs: its own value (DYNAMIC_TOPIC_CONFIG), else its broker synonyms' value
    in force converted to the topic key's unit; the synonyms each in their own unit."""
    own = stored.topics.get(topic, {})
    entries = []
    for name, key in TOPIC_KEYS.items():
        chain = [Synonym(name, own[name], Source.DYNAMIC_TOPIC_CONFIG)] if name in own else []
        if key.synonyms and key.synonyms[0] in BROKER_KEYS:
            chain += _broker_synonyms(node, stored, key.synonyms[0], key.synonyms)
            inherited = _broker_value(node, stored, key.synonyms)
            value = BROKER_KEYS[inherited.name].to_topic(inherited.value) if inherited is not None else key.default
        else:  # a key groupctl has no broker key for: Kafka's default, under its broker synonym's name
            if key.synonyms and key.default is not None:
                chain.append(Synonym(key.synonyms[0], key.default, Source.DEFAULT_CONFIG))
            value = key.default
        source = chain[0].source if chain else Source.DEFAULT_CONFIG
        entries.append(Entry(key, own.get(name, value), source, not key.alterable, tuple(chain)))
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

