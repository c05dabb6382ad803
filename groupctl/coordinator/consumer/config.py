"""Server-side settings of consumer groups (Apache Kafka's `group.consumer.*` broker configs)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Optional

from groupctl import defaults


class MigrationPolicy(str, Enum):
    """group.consumer.migration.policy: which online migrations between the classic and the
    consumer protocol a group may make (Apache Kafka 4.0's default is bidirectional)."""

    BIDIRECTIONAL = "bidirectional"
    UPGRADE = "upgrade"  # a consumer-protocol member may join a live classic group
    DOWNGRADE = "downgrade"  # a consumer group whose last consumer-protocol member left becomes classic
    DISABLED = "disabled"

    @property
    def upgrades(self) -> bool:
        return self in (MigrationPolicy.BIDIRECTIONAL, MigrationPolicy.UPGRADE)

    @property
    def downgrades(self) -> bool:
        return self in (MigrationPolicy.BIDIRECTIONAL, MigrationPolicy.DOWNGRADE)


@dataclass(frozen=True)
class ConsumerGroupConfig:
    session_timeout_ms: int = defaults.CONSUMER_SESSION_TIMEOUT_MS  # group.consumer.session.timeout.ms
    heartbeat_interval_ms: int = defaults.CONSUMER_HEARTBEAT_INTERVAL_MS  # group.consumer.heartbeat.interval.ms
    # The bounds of a group's own consumer.session.timeout.ms / consumer.heartbeat.interval.ms.
    min_session_timeout_ms: int = defaults.CONSUMER_MIN_SESSION_TIMEOUT_MS  # group.consumer.min.session.timeout.ms
    max_session_timeout_ms: int = defaults.CONSUMER_MAX_SESSION_TIMEOUT_MS  # group.consumer.max.session.timeout.ms
    min_heartbeat_interval_ms: int = defaults.CONSUMER_MIN_HEARTBEAT_INTERVAL_MS  # group.consumer.min.heartbeat.interval.ms
    max_heartbeat_interval_ms: int = defaults.CONSUMER_MAX_HEARTBEAT_INTERVAL_MS  # group.consumer.max.heartbeat.interval.ms
    assignors: tuple[str, ...] = defaults.CONSUMER_ASSIGNORS  # group.consumer.assignors: the first is the default
    max_size: Optional[int] = defaults.CONSUMER_MAX_SIZE  # group.consumer.max.size; None: unbounded
    migration_policy: MigrationPolicy = MigrationPolicy(defaults.CONSUMER_MIGRATION_POLICY)
