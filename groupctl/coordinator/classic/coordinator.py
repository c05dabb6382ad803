"""The classic consumer-group coordinator: the sans-IO core the runtime drives.

Every operation takes `(token, request, now_ms)` and returns a `Result`. The reply to `token` is
in that Result, or, for a parked JoinGroup or SyncGroup, in the Result of a later operation or
timer op (the injected `Timer` runs ops with `schedule(key, delay_ms, op)`). The runtime persists
a Result's records before it delivers its replies.

Records returned by an operation are already applied to this core (operations build records and
replay them through `replay.apply_record`); `replay` is only for records loaded from the store at
startup or takeover. The core never reads a clock, sleeps, or does I/O.

This module is a facade; the behaviour lives in: state (legality table), group (member and group
data), rebalance (join/sync phases, sessions), membership (JoinGroup), sync (SyncGroup),
heartbeat (Heartbeat, LeaveGroup), offsets, admin, document (DESIGN.md §4) and replay.
"""

from __future__ import annotations

import uuid
from typing import Any, Callable, Hashable, Optional

from groupctl.coordinator.classic import admin, heartbeat, membership, offsets, rebalance, replay, sync
from groupctl.coordinator.classic.config import GroupConfig
from groupctl.coordinator.classic.context import Core
from groupctl.coordinator.classic.document import build_document
from groupctl.coordinator.classic.messages import (
    CommitOffsets,
    DeleteOffsets,
    FetchOffsets,
    Heartbeat,
    JoinGroup,
    LeaveGroup,
    SyncGroup,
    TriggerRebalance,
)
from groupctl.coordinator.classic.state import GroupState
from groupctl.coordinator.records import Record
from groupctl.coordinator.results import Result
from groupctl.coordinator.timers import Timer

__all__ = ["GroupConfig", "GroupCoordinator", "GroupState"]


class GroupCoordinator:
    def __init__(
        self,
        *,
        timer: Timer,
        config: GroupConfig = GroupConfig(),
        node_id: int = 0,
        new_uuid: Callable[[], str] = lambda: str(uuid.uuid4()),
    ) -> None:
        self._core = Core(timer=timer, config=config, node_id=node_id, new_uuid=new_uuid)

    # --- member APIs -------------------------------------------------------------------------

    def join_group(self, token: Hashable, req: JoinGroup, now_ms: int) -> Result:
        """Reply: JoinGroupResult (possibly parked until the join phase completes)."""
        return membership.join_group(self._core, token, req, now_ms)

    def sync_group(self, token: Hashable, req: SyncGroup, now_ms: int) -> Result:
        """Reply: SyncGroupResult (a follower's is parked until the leader's SyncGroup)."""
        return sync.sync_group(self._core, token, req, now_ms)

    def heartbeat(self, token: Hashable, req: Heartbeat, now_ms: int) -> Result:
        """Reply: HeartbeatResult."""
        return heartbeat.heartbeat(self._core, token, req, now_ms)

    def leave_group(self, token: Hashable, req: LeaveGroup, now_ms: int) -> Result:
        """Reply: LeaveGroupResult (per-member errors; top-level error only for an unknown group)."""
        return heartbeat.leave_group(self._core, token, req, now_ms)

    # --- offsets -----------------------------------------------------------------------------

    def commit_offsets(self, token: Hashable, req: CommitOffsets, now_ms: int) -> Result:
        """Reply: CommitOffsetsResult; records: one OffsetCommitRecord per accepted partition."""
        return offsets.commit_offsets(self._core, token, req, now_ms)

    def fetch_offsets(self, token: Hashable, req: FetchOffsets, now_ms: int) -> Result:
        """Reply: FetchOffsetsResult."""
        return offsets.fetch_offsets(self._core, token, req, now_ms)

    def delete_offsets(self, token: Hashable, req: DeleteOffsets, now_ms: int) -> Result:
        """Reply: DeleteOffsetsResult; records: OffsetTombstones."""
        return offsets.delete_offsets(self._core, token, req, now_ms)

    def delete_topic_offsets(self, topics: tuple[str, ...], now_ms: int) -> Result:
        """No reply; records: OffsetTombstones for every group's offsets of the deleted topics."""
        return offsets.delete_topic_offsets(self._core, topics, now_ms)

    # --- admin -------------------------------------------------------------------------------

    def list_groups(self, token: Hashable, req: tuple[frozenset[str], frozenset[str]], now_ms: int) -> Result:
        """`req` is (states, types) filters, empty = all. Reply: tuple[ListedGroup, ...]."""
        return admin.list_groups(self._core, token, req, now_ms)

    def describe_groups(self, token: Hashable, req: tuple[str, ...], now_ms: int) -> Result:
        """Reply: tuple[GroupDescription, ...] (unknown group: state "Dead", error NONE)."""
        return admin.describe_groups(self._core, token, req, now_ms)

    def delete_groups(self, token: Hashable, req: tuple[str, ...], now_ms: int) -> Result:
        """Reply: tuple[DeletedGroup, ...]; records: a GroupTombstone per deleted group."""
        return admin.delete_groups(self._core, token, req, now_ms)

    def trigger_rebalance(self, token: Hashable, req: str | TriggerRebalance, now_ms: int) -> Result:
        """Start the group's next rebalance (reason "trigger"). Reply for a bare group id:
        ErrorCode (NONE, or GROUP_ID_NOT_FOUND); for a TriggerRebalance: TriggerRebalanceResult
        (the same error, the group's state, and whether a join phase was started)."""
        return admin.trigger_rebalance(self._core, token, req, now_ms)

    # --- persistence -------------------------------------------------------------------------

    def replay(self, record: Record, now_ms: int) -> None:
        """Apply a record loaded from the store; members of a loaded group get session timers
        starting at `now_ms`. Raises `ReplayError` for records that cannot follow the state."""
        loaded = replay.apply_record(self._core, record)
        if loaded is not None:
            rebalance.arm_loaded_group(self._core, loaded)

    def group_document(self, group_id: str) -> Optional[dict[str, Any]]:
        """The DESIGN.md §4 document of the group's current state (None if there is no group);
        `updated_at_ms` is when its document was last written or loaded."""
        group = self._core.groups.get(group_id)
        if group is None:
            return None
        return build_document(group, node_id=self._core.node_id, now_ms=group.updated_at_ms)
