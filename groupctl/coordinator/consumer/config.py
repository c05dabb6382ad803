"""Server-side settings of consumer groups (Apache Kafka's `group.consumer.*` broker configs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from groupctl import defaults


@dataclass(frozen=True)
class ConsumerGroupConfig:
    session_timeout_ms: int = defaults.CONSUMER_SESSION_TIMEOUT_MS  # group.consumer.session.timeout.ms
    heartbeat_interval_ms: int = defaults.CONSUMER_HEARTBEAT_INTERVAL_MS  # group.consumer.heartbeat.interval.ms
    assignors: tuple[str, ...] = defaults.CONSUMER_ASSIGNORS  # group.consumer.assignors: the first is the default
    max_size: Optional[int] = defaults.CONSUMER_MAX_SIZE  # group.consumer.max.size; None: unbounded
