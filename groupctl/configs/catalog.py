"""Every config key groupctl describes, under Apache Kafka's names: its type (DescribeConfigs v3+
ConfigType), default, documentation, whether it may be altered and how a value is checked.

Three resource types, as Kafka's ConfigResource numbers them:
- TOPIC (2): the keys of Kafka's LogConfig, every one writable as in Kafka and checked with its
  LogConfig validator (type, range, choices). A partition log acts on HONOURED_TOPIC_KEYS
  (`groupctl.log.config`); the others are stored and described only (a deliberate difference:
  groupctl has no compaction, flushing policy, replicas or tiered storage to apply them to, and
  refuses `cleanup.policy=compact` and `remote.storage.enable=true`, which would promise those).
  Each has the broker keys that serve as its default, Kafka's synonyms (`retention.ms` <-
  `log.retention.ms`, `log.retention.minutes`, `log.retention.hours`).
- BROKER (4): the node's own options under Kafka's names (`groupctl coordinator run` sets them;
  STATIC_BROKER_CONFIG when an option differs from its default; the defaults are groupctl's,
  `groupctl.defaults`, where they differ from Kafka's). Only the `log.*` defaults of
  topic configs and `message.max.bytes` may be altered, as Kafka's dynamic broker configs: the
  node applies them at run time through the topics' effective configs.
- GROUP (32): Apache Kafka 4's GroupConfig keys of consumer groups; their defaults are the
  broker's `group.consumer.*` values. Kafka 4 also describes share-group keys
  (`share.session.timeout.ms`, ...); groupctl runs no share groups and leaves them out.

No key is sensitive: groupctl describes no passwords (`--zk-auth` and TLS material are not keys).

Invariants: a value that `parse` accepts is stored in its canonical text (`" 100 "` -> `"100"`);
every refusal is an `InvalidConfig` whose message Kafka's would match in substance.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Callable, Optional

from groupctl import defaults
from groupctl.log.config import CREATE_TIME, DEFAULT_SEGMENT_BYTES, LOG_APPEND_TIME

INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1
HOUR_MS = 3_600_000
MIN_SEGMENT_BYTES = 1024 * 1024  # Kafka 4 (KIP-1030) refuses smaller segment.bytes and log.segment.bytes


class ResourceType(IntEnum):
    """Kafka's ConfigResource.Type."""

    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


class ConfigType(IntEnum):
    """DescribeConfigs v3+ ConfigType."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class Source(IntEnum):
    """DescribeConfigs v1+ ConfigSource."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


class InvalidConfig(ValueError):
    """A value or key refused with INVALID_CONFIG; the message says why."""


@dataclass(frozen=True)
class ConfigKey:
    name: str
    type: ConfigType
    default: Optional[str]  # Kafka's (or groupctl's) default as text; None: no default
    doc: str
    alterable: bool = False  # honoured by groupctl and dynamically changeable in Kafka
    minimum: Optional[float] = None
    maximum: Optional[float] = None
    choices: tuple[str, ...] = ()
    synonyms: tuple[str, ...] = ()  # TOPIC: the broker keys that serve as its default, in Kafka's order

    def parse(self, value: Optional[str]) -> str:
        """`value` in canonical text; InvalidConfig when the type, range or choices refuse it."""
        if value is None:
            raise InvalidConfig(f"Invalid value null for configuration {self.name}: a value is required")
        text = value.strip()
        bad = f"Invalid value {value} for configuration {self.name}"
        if self.type in (ConfigType.INT, ConfigType.LONG, ConfigType.SHORT):
            try:
                number = int(text)
            except ValueError:
                raise InvalidConfig(f"{bad}: Not a number of type {self.type.name}") from None
            limit = {ConfigType.INT: INT_MAX, ConfigType.LONG: LONG_MAX, ConfigType.SHORT: 2**15 - 1}[self.type]
            if not -limit - 1 <= number <= limit:
                raise InvalidConfig(f"{bad}: Not a number of type {self.type.name}")
            self._check_range(bad, number)
            return str(number)
        if self.type is ConfigType.DOUBLE:
            try:
                real = float(text)
            except ValueError:
                raise InvalidConfig(f"{bad}: Not a number of type DOUBLE") from None
            self._check_range(bad, real)
            return str(real)
        if self.type is ConfigType.BOOLEAN:
            if text.lower() not in ("true", "false"):
                raise InvalidConfig(f"{bad}: Expected value to be either true or false")
            return text.lower()
        if self.type is ConfigType.LIST:
            items = [item.strip() for item in text.split(",") if item.strip()]
            for item in items:
                self._check_choice(bad, item)
            return ",".join(items)
        self._check_choice(bad, text)
        return text

    def _check_range(self, bad: str, number: float) -> None:
        if self.minimum is not None and number < self.minimum:
            raise InvalidConfig(f"{bad}: Value must be at least {_number(self.minimum)}")
        if self.maximum is not None and number > self.maximum:
            raise InvalidConfig(f"{bad}: Value must be no more than {_number(self.maximum)}")

    def _check_choice(self, bad: str, item: str) -> None:
        if self.choices and item not in self.choices:
            raise InvalidConfig(f"{bad}: String must be one of: {', '.join(self.choices)}")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _key(name: str, type_: ConfigType, default: object, doc: str, **kw: object) -> ConfigKey:
    text = None if default is None else (str(default).lower() if isinstance(default, bool) else str(default))
    return ConfigKey(name, type_, text, doc, **kw)  # type: ignore[arg-type]


I, L, S, B, D, LST = (ConfigType.INT, ConfigType.LONG, ConfigType.STRING, ConfigType.BOOLEAN, ConfigType.DOUBLE,
                      ConfigType.LIST)
CLEANUP_POLICIES = ("delete", "compact")
TIMESTAMP_TYPES = (CREATE_TIME, LOG_APPEND_TIME)
COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")


def _topic(name: str, type_: ConfigType, default: object, doc: str, **kw: object) -> ConfigKey:
    """A topic key: every one may be altered, as in Kafka (its LogConfig keys are all dynamic)."""
    return _key(name, type_, default, doc, alterable=True, **kw)

TOPIC_KEYS: dict[str, ConfigKey] = {k.name: k for k in (
    _topic("cleanup.policy", LST, "delete", "The retention policy of old log segments: only 'delete' (segments "
           "older than retention.ms or beyond retention.bytes are deleted); groupctl does not compact.",
           choices=CLEANUP_POLICIES, synonyms=("log.cleanup.policy",)),
    _topic("compression.type", S, "producer", "The final compression type of the topic (stored and described; "
           "groupctl keeps what the producer sent).", choices=COMPRESSION_TYPES, synonyms=("compression.type",)),
    _topic("delete.retention.ms", L, 86_400_000, "How long delete tombstones are kept for compacted topics "
           "(not acted on: groupctl does not compact).", minimum=0, synonyms=("log.cleaner.delete.retention.ms",)),
    _topic("file.delete.delay.ms", L, 60_000, "The time to wait before deleting a file from the filesystem "
           "(not acted on).", minimum=0, synonyms=("log.segment.delete.delay.ms",)),
    _topic("flush.messages", L, LONG_MAX, "Messages written before the log is forced to disk (not acted on).",
           minimum=1, synonyms=("log.flush.interval.messages",)),
    _topic("flush.ms", L, LONG_MAX, "Time after which the log is forced to disk (not acted on).", minimum=0,
           synonyms=("log.flush.interval.ms",)),
    _topic("index.interval.bytes", I, 4096, "How often an offset index entry is added (not acted on).",
           minimum=0, synonyms=("log.index.interval.bytes",)),
    _topic("local.retention.bytes", L, -2, "Local log size kept with tiered storage (-2: retention.bytes; not "
           "acted on).", minimum=-2, synonyms=("log.local.retention.bytes",)),
    _topic("local.retention.ms", L, -2, "Local log age kept with tiered storage (-2: retention.ms; not acted "
           "on).", minimum=-2, synonyms=("log.local.retention.ms",)),
    _topic("max.compaction.lag.ms", L, LONG_MAX, "The longest a message stays uncompacted (not acted on).",
           minimum=1, synonyms=("log.cleaner.max.compaction.lag.ms",)),
    _topic("max.message.bytes", I, 1_048_588, "The largest record batch size the topic accepts.",
           minimum=0, synonyms=("message.max.bytes",)),
    _topic("message.timestamp.after.max.ms", L, HOUR_MS, "How far a record's timestamp may be ahead of the "
           "broker's (not acted on; Kafka 4's default).", minimum=0, synonyms=("log.message.timestamp.after.max.ms",)),
    _topic("message.timestamp.before.max.ms", L, LONG_MAX, "How far a record's timestamp may be behind the "
           "broker's (not acted on).", minimum=0, synonyms=("log.message.timestamp.before.max.ms",)),
    _topic("message.timestamp.type", S, CREATE_TIME, "Whether record timestamps are the producer's "
           "(CreateTime) or the log's (LogAppendTime).", choices=TIMESTAMP_TYPES,
           synonyms=("log.message.timestamp.type",)),
    _topic("min.cleanable.dirty.ratio", D, 0.5, "How dirty a log must be to be compacted (not acted on).",
           minimum=0, maximum=1, synonyms=("log.cleaner.min.cleanable.ratio",)),
    _topic("min.compaction.lag.ms", L, 0, "The least time a message stays uncompacted (not acted on).",
           minimum=0, synonyms=("log.cleaner.min.compaction.lag.ms",)),
    _topic("min.insync.replicas", I, 1, "Replicas that must acknowledge a write with acks=all (not acted on: "
           "groupctl keeps one replica).", minimum=1, synonyms=("min.insync.replicas",)),
    _topic("preallocate", B, False, "Whether to preallocate a new segment's file (not acted on).",
           synonyms=("log.preallocate",)),
    _topic("remote.storage.enable", B, False, "Tiered storage, which groupctl does not have (only false is "
           "accepted)."),
    _topic("retention.bytes", L, -1, "The size a partition's log may grow to before its oldest segments "
           "are deleted; -1: no limit.", synonyms=("log.retention.bytes",)),
    _topic("retention.ms", L, 604_800_000, "How long a segment is kept after its newest record; -1: no "
           "limit.", minimum=-1, synonyms=("log.retention.ms", "log.retention.minutes", "log.retention.hours")),
    _topic("segment.bytes", I, DEFAULT_SEGMENT_BYTES, "The size at which a new segment is started.",
           minimum=MIN_SEGMENT_BYTES, synonyms=("log.segment.bytes",)),
    _topic("segment.index.bytes", I, 10_485_760, "The size of a segment's offset index (not acted on).",
           minimum=4, synonyms=("log.index.size.max.bytes",)),
    _topic("segment.jitter.ms", L, 0, "Random jitter subtracted from segment.ms (not acted on).", minimum=0,
           synonyms=("log.roll.jitter.ms", "log.roll.jitter.hours")),
    _topic("segment.ms", L, 604_800_000, "The age of a segment's first record at which a new segment is "
           "started.", minimum=1, synonyms=("log.roll.ms", "log.roll.hours")),
    _topic("unclean.leader.election.enable", B, False, "Whether an out-of-sync replica may become leader (not "
           "acted on: groupctl keeps one replica).", synonyms=("unclean.leader.election.enable",)),
)}
HONOURED_TOPIC_KEYS = ("cleanup.policy", "max.message.bytes", "message.timestamp.type", "retention.bytes",
                       "retention.ms", "segment.bytes", "segment.ms")
"""The topic keys a partition log acts on (`groupctl.log.config.LogConfig`); the others are stored
and described only."""


@dataclass(frozen=True)
class BrokerKey:
    """A broker key: its description, and the node option it reports (None: Kafka's default only)."""

    key: ConfigKey
    option: Optional[Callable[[object], Optional[str]]] = None  # NodeConfig -> its value as text
    to_topic: Callable[[str], str] = str  # this key's value in the unit of the topic key it serves


def _opt(attribute: str) -> Callable[[object], Optional[str]]:
    def read(config: object) -> Optional[str]:
        value: object = config
        for part in attribute.split("."):
            value = getattr(value, part)
        if value is None or value == ():
            return None
        if isinstance(value, bool):
            return str(value).lower()
        if isinstance(value, (tuple, list)):
            return ",".join(str(v) for v in value)
        return str(getattr(value, "value", value))
    return read


def _listeners(config: object) -> str:
    return ",".join(f"{l.protocol}://{l.host}:{l.port}" for l in config.all_listeners())  # type: ignore[attr-defined]


def _log_dirs(config: object) -> Optional[str]:
    data_dir = config.data_dir  # type: ignore[attr-defined]
    return str(data_dir / "log") if data_dir is not None else None


def _hours(value: str) -> str:
    return str(int(value) * HOUR_MS)


def _minutes(value: str) -> str:
    return str(int(value) * 60_000)


_BROKER = (
    BrokerKey(_key("broker.id", I, -1, "The node's id (`--node-id`)."), _opt("node_id")),
    BrokerKey(_key("listeners", S, None, "The listeners the node binds (`--listener`, `--host`/`--port`)."),
              _listeners),
    BrokerKey(_key("log.dirs", S, None, "Where partition logs live (`--data-dir`/log)."), _log_dirs),
    BrokerKey(_key("zookeeper.connect", S, None, "The ZooKeeper connect string (`--zk`)."), _opt("zk")),
    BrokerKey(_key("cluster.id", S, None, "The cluster id the node reports."), _opt("cluster_id")),
    BrokerKey(_key("num.partitions", I, defaults.DEFAULT_PARTITIONS, "Partitions of an auto-created topic (`--default-partitions`).",
                   minimum=1), _opt("default_partitions")),
    BrokerKey(_key("auto.create.topics.enable", B, defaults.AUTO_CREATE_TOPICS, "Whether Metadata creates a missing topic "
                   "(`--auto-create-topics`)."), _opt("auto_create_topics")),
    BrokerKey(_key("socket.request.max.bytes", I, defaults.MAX_FRAME_BYTES, "The largest request accepted "
                   "(`--max-frame-bytes`)."), _opt("max_frame_bytes")),
    BrokerKey(_key("offsets.topic.num.partitions", I, defaults.GROUP_PARTITIONS, "Group partitions of the cluster "
                   "(`--group-partitions`)."), _opt("group_partitions")),
    BrokerKey(_key("sasl.enabled.mechanisms", LST, ",".join(defaults.SASL_ENABLED_MECHANISMS), "The SASL mechanisms the node offers."),
              _opt("sasl_enabled_mechanisms")),
    BrokerKey(_key("super.users", LST, None, "Principals allowed everything (`--super-user`)."),
              _opt("super_users")),
    BrokerKey(_key("allow.everyone.if.no.acl.found", B, False, "Whether a resource without ACLs is open to all."),
              _opt("allow_everyone_if_no_acl_found")),
    BrokerKey(_key("group.min.session.timeout.ms", I, defaults.MIN_SESSION_TIMEOUT_MS, "The least session timeout a classic member may "
                   "ask for."), _opt("groups.min_session_timeout_ms")),
    BrokerKey(_key("group.max.session.timeout.ms", I, defaults.MAX_SESSION_TIMEOUT_MS, "The greatest session timeout a classic "
                   "member may ask for."), _opt("groups.max_session_timeout_ms")),
    BrokerKey(_key("group.initial.rebalance.delay.ms", I, defaults.INITIAL_REBALANCE_DELAY_MS, "How long a new classic group waits for more "
                   "members before its first rebalance."), _opt("groups.initial_rebalance_delay_ms")),
    BrokerKey(_key("group.max.size", I, INT_MAX, "The most members a classic group may have."),
              lambda c: str(c.groups.max_group_size or INT_MAX)),  # type: ignore[attr-defined]
    BrokerKey(_key("group.consumer.session.timeout.ms", I, defaults.CONSUMER_SESSION_TIMEOUT_MS, "The session timeout of consumer-protocol "
                   "members (a group's consumer.session.timeout.ms overrides it)."),
              _opt("consumer_groups.session_timeout_ms")),
    BrokerKey(_key("group.consumer.heartbeat.interval.ms", I, defaults.CONSUMER_HEARTBEAT_INTERVAL_MS, "The heartbeat interval of "
                   "consumer-protocol members (a group's consumer.heartbeat.interval.ms overrides it)."),
              _opt("consumer_groups.heartbeat_interval_ms")),
    BrokerKey(_key("group.consumer.min.session.timeout.ms", I, defaults.CONSUMER_MIN_SESSION_TIMEOUT_MS, "The least consumer.session.timeout.ms "
                   "a group may set."), _opt("consumer_groups.min_session_timeout_ms")),
    BrokerKey(_key("group.consumer.max.session.timeout.ms", I, defaults.CONSUMER_MAX_SESSION_TIMEOUT_MS, "The greatest "
                   "consumer.session.timeout.ms a group may set."), _opt("consumer_groups.max_session_timeout_ms")),
    BrokerKey(_key("group.consumer.min.heartbeat.interval.ms", I, defaults.CONSUMER_MIN_HEARTBEAT_INTERVAL_MS, "The least "
                   "consumer.heartbeat.interval.ms a group may set."),
              _opt("consumer_groups.min_heartbeat_interval_ms")),
    BrokerKey(_key("group.consumer.max.heartbeat.interval.ms", I, defaults.CONSUMER_MAX_HEARTBEAT_INTERVAL_MS, "The greatest "
                   "consumer.heartbeat.interval.ms a group may set."),
              _opt("consumer_groups.max_heartbeat_interval_ms")),
    BrokerKey(_key("group.consumer.max.size", I, INT_MAX, "The most members a consumer group may have."),
              lambda c: str(c.consumer_groups.max_size or INT_MAX)),  # type: ignore[attr-defined]
    BrokerKey(_key("group.consumer.assignors", LST, ",".join(defaults.CONSUMER_ASSIGNORS), "The server-side assignors; the first "
                   "is the default."), _opt("consumer_groups.assignors")),
    BrokerKey(_key("group.consumer.migration.policy", S, defaults.CONSUMER_MIGRATION_POLICY, "Which online migrations between "
                   "the classic and the consumer protocol a group may make."),
              _opt("consumer_groups.migration_policy")),
    # The broker defaults of topic configs: dynamic in Kafka, applied by groupctl through each
    # topic's effective config.
    BrokerKey(_key("log.cleanup.policy", LST, "delete", "The default cleanup.policy of topics.",
                   alterable=True, choices=CLEANUP_POLICIES)),
    BrokerKey(_key("log.retention.ms", L, None, "The default retention.ms of topics (over "
                   "log.retention.minutes and log.retention.hours).", alterable=True, minimum=-1)),
    BrokerKey(_key("log.retention.minutes", I, None, "The default retention of topics in minutes."),
              to_topic=_minutes),
    BrokerKey(_key("log.retention.hours", I, 168, "The default retention of topics in hours."),
              to_topic=_hours),
    BrokerKey(_key("log.retention.bytes", L, -1, "The default retention.bytes of topics.", alterable=True)),
    BrokerKey(_key("log.segment.bytes", I, DEFAULT_SEGMENT_BYTES, "The default segment.bytes of topics.",
                   alterable=True, minimum=MIN_SEGMENT_BYTES)),
    BrokerKey(_key("log.roll.ms", L, None, "The default segment.ms of topics (over log.roll.hours).",
                   alterable=True, minimum=1)),
    BrokerKey(_key("log.roll.hours", I, 168, "The default segment age in hours."), to_topic=_hours),
    BrokerKey(_key("message.max.bytes", I, 1_048_588, "The default max.message.bytes of topics.",
                   alterable=True, minimum=0)),
    BrokerKey(_key("log.message.timestamp.type", S, CREATE_TIME, "The default message.timestamp.type of "
                   "topics.", alterable=True, choices=TIMESTAMP_TYPES)),
    BrokerKey(_key("log.retention.check.interval.ms", L, defaults.LOG_RETENTION_CHECK_INTERVAL_MS, "How often "
                   "segments are checked for deletion (`--log-retention-check-interval-ms`)."),
              _opt("log_retention_check_interval_ms")),
    BrokerKey(_key("default.replication.factor", I, 1, "The replication factor of an auto-created topic "
                   "(groupctl keeps one replica of every partition).")),
    BrokerKey(_key("min.insync.replicas", I, 1, "The default min.insync.replicas of topics (not acted on: "
                   "one replica).", minimum=1)),
)
BROKER_KEYS: dict[str, BrokerKey] = {b.key.name: b for b in _BROKER}

GROUP_KEYS: dict[str, ConfigKey] = {k.name: k for k in (
    _key("consumer.session.timeout.ms", I, defaults.CONSUMER_SESSION_TIMEOUT_MS, "The timeout to detect client failures when using the "
         "consumer group protocol.", alterable=True, synonyms=("group.consumer.session.timeout.ms",)),
    _key("consumer.heartbeat.interval.ms", I, defaults.CONSUMER_HEARTBEAT_INTERVAL_MS, "The heartbeat interval given to the members of a "
         "consumer group.", alterable=True, synonyms=("group.consumer.heartbeat.interval.ms",)),
)}


def keys_of(resource: ResourceType) -> dict[str, ConfigKey]:
    """The keys described for a resource type ({} for the types groupctl has no configs of)."""
    if resource is ResourceType.TOPIC:
        return TOPIC_KEYS
    if resource is ResourceType.BROKER:
        return {name: b.key for name, b in BROKER_KEYS.items()}
    if resource is ResourceType.GROUP:
        return GROUP_KEYS
    return {}
