"""Server-side settings of classic groups (Kafka's `group.*` broker configs of the same names)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from groupctl import defaults


@dataclass(frozen=True)
class GroupConfig:
    min_session_timeout_ms: int = defaults.MIN_SESSION_TIMEOUT_MS  # group.min.session.timeout.ms
    max_session_timeout_ms: int = defaults.MAX_SESSION_TIMEOUT_MS  # group.max.session.timeout.ms
    initial_rebalance_delay_ms: int = defaults.INITIAL_REBALANCE_DELAY_MS  # group.initial.rebalance.delay.ms
    max_group_size: Optional[int] = defaults.MAX_GROUP_SIZE  # group.max.size; None: unbounded


NEW_MEMBER_JOIN_TIMEOUT_MS = 300_000
"""How long a new member's first JoinGroup may stay parked before the member is dropped (Kafka's
fixed 5 minutes): a parked request cannot heartbeat, and a client that timed out and retried
would otherwise leave a defunct member in the rebalance forever."""
