"""What every classic-core module works on: the groups, their committed offsets, the injected
timer, and settings.

The offsets are the group-type independent store's (`groupctl.coordinator.offsets`); it finds
the groups it asks for verdicts in `groups`, and a commit to a group that does not exist creates
it there, Empty (Kafka's "simple" group).

Timer keys are tuples that start with "classic-" so the classic core can share a `Timer` with
other cores. Invariants: at most one join timer and one sync timer per group, and at most one
session timer per member (or pending member) id; `offsets` holds offsets only of groups in
`groups` or `other_groups` (the consumer groups beside them; whatever removes a group, its
tombstone or an unload, drops its offsets too).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from groupctl.coordinator.classic.config import GroupConfig
from groupctl.coordinator.classic.group import ClassicGroup
from groupctl.coordinator.offsets import OffsetGroup, OffsetStore
from groupctl.coordinator.timers import Timer


@dataclass
class Core:
    timer: Timer
    config: GroupConfig
    node_id: int
    new_uuid: Callable[[], str]
    groups: dict[str, ClassicGroup] = field(default_factory=dict)
    other_groups: Callable[[str], Optional[OffsetGroup]] = lambda group_id: None  # groups of another type
    offsets: OffsetStore = field(init=False)

    def __post_init__(self) -> None:
        self.offsets = OffsetStore(self.node_id, group=self._group, create_group=self._simple_group)

    def _group(self, group_id: str) -> Optional[OffsetGroup]:
        group = self.groups.get(group_id)
        return group if group is not None else self.other_groups(group_id)

    def _simple_group(self, group_id: str) -> ClassicGroup:
        group = self.groups[group_id] = ClassicGroup(group_id)
        return group


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
