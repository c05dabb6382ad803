"""What every consumer-core module works on: the groups, the topics, the injected timer, settings.

Timer keys start with "consumer-" so the consumer core shares a `Timer` with the classic one.
Invariants: at most one timer of each kind per member; a member's timers go with it. A
classic-protocol member (online migration) has a join and a sync deadline instead of a
revocation deadline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from groupctl.coordinator.consumer.config import ConsumerGroupConfig
from groupctl.coordinator.consumer.group import ConsumerGroup
from groupctl.coordinator.consumer.member import ConsumerMember
from groupctl.coordinator.consumer.topics import TopicImage
from groupctl.coordinator.results import Result
from groupctl.coordinator.timers import Timer

Downgrade = Callable[[ConsumerGroup, ConsumerMember, int], Optional[Result]]
"""(group, the last consumer-protocol member, leaving it or replaced in it, now) -> the group
handed to the classic protocol with every other member, or None if the classic side cannot take
it (see the facade)."""


@dataclass
class ConsumerCore:
    timer: Timer
    config: ConsumerGroupConfig
    node_id: int
    topics: TopicImage = field(default_factory=TopicImage)
    groups: dict[str, ConsumerGroup] = field(default_factory=dict)
    regex_matches: dict[str, frozenset[str]] = field(default_factory=dict)  # pattern -> topic names, for `topics`
    topics_version: int = 0  # bumped with every new `topics`
    downgrade: Downgrade = lambda group, leaving, now_ms: None
    # A group's own consumer.session.timeout.ms / consumer.heartbeat.interval.ms (its stored
    # GROUP configs), over `config`'s; kept for groups not loaded here too (they may come).
    group_timeouts: dict[str, tuple[int, int]] = field(default_factory=dict)

    def session_timeout_ms(self, group_id: str) -> int:
        own = self.group_timeouts.get(group_id)
        return own[0] if own is not None else self.config.session_timeout_ms

    def heartbeat_interval_ms(self, group_id: str) -> int:
        own = self.group_timeouts.get(group_id)
        return own[1] if own is not None else self.config.heartbeat_interval_ms


def session_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    """The member's session: it is fenced when no heartbeat arrives within the session timeout."""
    return ("consumer-session", group_id, member_id)


def rebalance_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    """The member's revocation deadline: fenced if still at the epoch it had to leave."""
    return ("consumer-rebalance", group_id, member_id)


def join_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    """A classic-protocol member told to rejoin: fenced if no JoinGroup comes within its
    rebalance timeout."""
    return ("consumer-join", group_id, member_id)


def sync_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    """A classic-protocol member that joined: fenced if no SyncGroup comes within its rebalance
    timeout."""
    return ("consumer-sync", group_id, member_id)


def pending_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    """A member id a classic-protocol JoinGroup was given with MEMBER_ID_REQUIRED: forgotten unless
    it joins with it within its session timeout."""
    return ("consumer-pending", group_id, member_id)


def cancel_member_timers(core: ConsumerCore, group_id: str, member_id: str) -> None:
    for key in (session_key, rebalance_key, join_key, sync_key):
        core.timer.cancel(key(group_id, member_id))
