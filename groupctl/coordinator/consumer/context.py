"""What every consumer-core module works on: the groups, the topics, the injected timer, settings.

Timer keys start with "consumer-" so the consumer core shares a `Timer` with the classic one.
Invariants: at most one session timer and one rebalance timer per member; a member's timers go
with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from groupctl.coordinator.consumer.config import ConsumerGroupConfig
from groupctl.coordinator.consumer.group import ConsumerGroup
from groupctl.coordinator.consumer.topics import TopicImage
from groupctl.coordinator.timers import Timer


@dataclass
class ConsumerCore:
    timer: Timer
    config: ConsumerGroupConfig
    node_id: int
    topics: TopicImage = field(default_factory=TopicImage)
    groups: dict[str, ConsumerGroup] = field(default_factory=dict)
    regex_matches: dict[str, frozenset[str]] = field(default_factory=dict)  # pattern -> topic names, for `topics`
    topics_version: int = 0  # bumped with every new `topics`


def session_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    """The member's session: it is fenced when no heartbeat arrives within the session timeout."""
    return ("consumer-session", group_id, member_id)


def rebalance_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    """The member's revocation deadline: fenced if still at the epoch it had to leave."""
    return ("consumer-rebalance", group_id, member_id)


def cancel_member_timers(core: ConsumerCore, group_id: str, member_id: str) -> None:
    core.timer.cancel(session_key(group_id, member_id))
    core.timer.cancel(rebalance_key(group_id, member_id))
