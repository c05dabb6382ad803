"""The classic (JoinGroup/SyncGroup) consumer-group coordinator core; see `coordinator`."""

from groupctl.coordinator.classic.coordinator import GroupConfig, GroupCoordinator
from groupctl.coordinator.classic.state import GroupState, IllegalStateTransition

__all__ = ["GroupConfig", "GroupCoordinator", "GroupState", "IllegalStateTransition"]
