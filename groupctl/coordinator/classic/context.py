"""What every classic-core module works on: the groups, the injected timer, and settings.

Timer keys are tuples that start with "classic-" so the classic core can share a `Timer` with
other cores. Invariants: at most one join timer and one sync timer per group, and at most one
session timer per member (or pending member) id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from groupctl.coordinator.classic.config import GroupConfig
from groupctl.coordinator.classic.group import ClassicGroup
from groupctl.coordinator.timers import Timer


@dataclass
class Core:
    timer: Timer
    config: GroupConfig
    node_id: int
    new_uuid: Callable[[], str]
    groups: dict[str, ClassicGroup] = field(default_factory=dict)


def session_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    """The member's (or pending member's) session-expiry timer."""
    return ("classic-session", group_id, member_id)


def join_key(group_id: str) -> tuple[str, str]:
    """The join phase's deadline (initial delay, or the rebalance timeout)."""
    return ("classic-join", group_id)


def sync_key(group_id: str) -> tuple[str, str]:
    """The sync phase's deadline: members that did not SyncGroup by then are removed."""
    return ("classic-sync", group_id)


def cancel_group_timers(core: Core, group: ClassicGroup) -> None:
    """Cancel every timer of `group` (it is being deleted)."""
    core.timer.cancel(join_key(group.group_id))
    core.timer.cancel(sync_key(group.group_id))
    for member_id in [*group.members, *group.pending_join]:
        core.timer.cancel(session_key(group.group_id, member_id))
