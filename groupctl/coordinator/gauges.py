"""What the node's metrics report about the groups a core holds, read at scrape time.

Invariants:
- Pure and read-only: a snapshot of the core's groups as they are now; nothing is cached, so a
  group that left the core (deleted, expired, its partition lost) is in no later snapshot.
- One row per group: classic groups with their generation, consumer groups (KIP-848) with their
  group epoch and how many members are not yet at the target assignment epoch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

from groupctl.coordinator.coordinator import Coordinator

CLASSIC = "classic"
CONSUMER = "consumer"


@dataclass(frozen=True)
class GroupGauge:
    group: str
    type: str  # CLASSIC | CONSUMER
    state: str  # the group's state as ListGroups names it ("Stable", "PreparingRebalance", ...)
    members: int
    epoch: Optional[int] = None  # consumer groups: the group epoch
    members_behind: Optional[int] = None  # consumer groups: members not at the target assignment epoch


def group_gauges(core: Coordinator) -> Iterator[GroupGauge]:
    """One `GroupGauge` per group the core holds now. Safe to call from another thread than the
    core's (the metrics endpoint's): it iterates copies of the core's dicts."""
    for group_id, group in list(core.classic.groups().items()):
        yield GroupGauge(group_id, CLASSIC, group.state.value, len(group.members))
    for group_id, consumer in list(core.consumer.groups.items()):
        target = consumer.assignment_epoch
        behind = sum(1 for member in list(consumer.members.values()) if not member.reconciled_to(target))
        yield GroupGauge(group_id, CONSUMER, consumer.state.value, len(consumer.members),
                         consumer.group_epoch, behind)
