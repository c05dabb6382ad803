"""The classic consumer-group coordinator: the sans-IO core the runtime drives.

Invariants:
- Every operation takes `(token, request, now_ms)` and returns a `Result`. The reply to `token` is
  in that Result or, for a parked JoinGroup or SyncGroup, in the Result of a later operation or
  timer op (the injected `Timer` runs ops with `schedule(key, delay_ms, op)`). The runtime
  persists a Result's records before it delivers its replies.
- Records an operation returns are already applied to this core (operations build records and
  replay them through `replay.apply_record`); `replay` is only for records loaded from the store
  at startup or takeover. The core never reads a clock, sleeps, or does I/O.
- Every group-scoped operation first asks the injected `Placement` whether this node serves the
  group now; if not, it answers NOT_COORDINATOR (COORDINATOR_LOAD_IN_PROGRESS while the group's
  partition loads) without touching any group, in the same synchronous step, so no operation
  slips in between a partition being given up and its groups leaving the core.

This module is a facade; the behaviour lives in: state (legality table), group (member and group
data), rebalance (join/sync phases, sessions), membership (JoinGroup), sync (SyncGroup),
heartbeat (Heartbeat, LeaveGroup), offsets (a classic group's verdicts on commits and deletes;
the committed offsets are the core's `groupctl.coordinator.offsets` store), admin, document (the
stored group document), replay, takeover (loading and unloading group partitions) and
topic_changes.
"""

from __future__ import annotations

import uuid
from typing import Callable, Hashable, Iterable, Mapping, Optional

from groupctl.coordinator.classic import (
    admin,
    heartbeat,
    membership,
    rebalance,
    replay,
    sync,
    takeover,
    topic_changes,
)
from groupctl.coordinator.classic.causes import Reason, RebalanceCause
from groupctl.coordinator.classic.config import GroupConfig
from groupctl.coordinator.classic.context import Core, cancel_group_timers
from groupctl.coordinator.classic.document import build_document
from groupctl.coordinator.classic.group import ClassicGroup
from groupctl.coordinator.classic.messages import (
    DeletedGroup,
    GroupDescription,
    Heartbeat,
    HeartbeatResult,
    JoinGroup,
    JoinGroupResult,
    LeaveGroup,
    LeaveGroupResult,
    SyncGroup,
    SyncGroupResult,
    TriggerRebalance,
    TriggerRebalanceResult,
)
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.offsets import OffsetGroup
from groupctl.coordinator.offsets.messages import (
    CommitOffsets,
    CommitOffsetsResult,
    CompleteTxnPartition,
    DeleteOffsets,
    DeleteOffsetsResult,
    FetchOffsets,
    FetchOffsetsResult,
    PartitionError,
    StartTxnVerification,
    TxnCommitOffsets,
)
from groupctl.coordinator.classic.state import GroupState
from groupctl.coordinator.placement import Placement
from groupctl.coordinator.records import PendingOffsetsRecord, Record
from groupctl.coordinator.results import Result
from groupctl.coordinator.timers import Timer
from groupctl.layout.groups import GroupDocument

__all__ = ["GroupConfig", "GroupCoordinator", "GroupState"]


class GroupCoordinator:
    def __init__(
        self,
        *,
        timer: Timer,
        config: GroupConfig = GroupConfig(),
        node_id: int = 0,
        new_uuid: Callable[[], str] = lambda: str(uuid.uuid4()),
        placement: Optional[Placement] = None,
        other_groups: Callable[[str], Optional[OffsetGroup]] = lambda group_id: None,
    ) -> None:
        """`other_groups` finds the groups of another type that share the offset store."""
        self._core = Core(timer=timer, config=config, node_id=node_id, new_uuid=new_uuid,
                          other_groups=other_groups)
        self.placement = placement if placement is not None else Placement.everything()

    # --- member APIs -------------------------------------------------------------------------

    def join_group(self, token: Hashable, req: JoinGroup, now_ms: int) -> Result:
        """Reply: JoinGroupResult (possibly parked until the join phase completes)."""
        error = self.placement.error(req.group_id)
        if error:
            return Result().reply(token, JoinGroupResult(error, member_id=req.member_id))
        return membership.join_group(self._core, token, req, now_ms)

    def sync_group(self, token: Hashable, req: SyncGroup, now_ms: int) -> Result:
        """Reply: SyncGroupResult (a follower's is parked until the leader's SyncGroup)."""
        error = self.placement.error(req.group_id)
        if error:
            return Result().reply(token, SyncGroupResult(error))
        return sync.sync_group(self._core, token, req, now_ms)

    def heartbeat(self, token: Hashable, req: Heartbeat, now_ms: int) -> Result:
        """Reply: HeartbeatResult."""
        error = self.placement.error(req.group_id)
        if error:
            return Result().reply(token, HeartbeatResult(error))
        return heartbeat.heartbeat(self._core, token, req, now_ms)

    def leave_group(self, token: Hashable, req: LeaveGroup, now_ms: int) -> Result:
        """Reply: LeaveGroupResult (per-member errors; top-level error only for an unknown group)."""
        error = self.placement.error(req.group_id)
        if error:
            return Result().reply(token, LeaveGroupResult(error))
        return heartbeat.leave_group(self._core, token, req, now_ms)

    # --- offsets -----------------------------------------------------------------------------

    def commit_offsets(self, token: Hashable, req: CommitOffsets, now_ms: int) -> Result:
        """Reply: CommitOffsetsResult; records: one OffsetCommitRecord per accepted partition."""
        error = self.placement.error(req.group_id)
        if error:
            return Result().reply(token, CommitOffsetsResult(
                tuple(PartitionError(o.topic, o.partition, error) for o in req.offsets)))
        return self._core.offsets.commit(token, req, now_ms)

    def txn_commit_offsets(self, token: Hashable, req: TxnCommitOffsets, now_ms: int) -> Result:
        """Reply: CommitOffsetsResult; records: the producer's PendingOffsetsRecord."""
        error = self.placement.error(req.group_id)
        if error:
            return Result().reply(token, CommitOffsetsResult(
                tuple(PartitionError(o.topic, o.partition, error) for o in req.offsets)))
        return self._core.offsets.txn_commit(token, req, self.placement.partition_of(req.group_id), now_ms)

    def start_txn_verification(self, token: Hashable, req: StartTxnVerification, now_ms: int) -> Result:
        """Reply: the guard the producer's TxnOffsetCommit is to carry (an int)."""
        return self._core.offsets.start_txn_verification(token, req)

    def complete_txn_partition(self, token: Hashable, req: CompleteTxnPartition, now_ms: int) -> Result:
        """Reply: ErrorCode (the placement's when this node does not serve the partition)."""
        error = self.placement.partition_error(req.partition)
        if error:
            return Result().reply(token, error)
        return self._core.offsets.complete_txn_partition(
            token, req, lambda group_id: self.placement.partition_of(group_id) == req.partition, now_ms)

    def pending_offsets(self, group_id: str) -> Mapping[int, PendingOffsetsRecord]:
        """The group's pending transactional offsets by producer id (read-only)."""
        return self._core.offsets.pending(group_id)

    def fetch_offsets(self, token: Hashable, req: FetchOffsets, now_ms: int) -> Result:
        """Reply: FetchOffsetsResult."""
        error = self.placement.error(req.group_id)
        if error:
            return Result().reply(token, FetchOffsetsResult(error))
        return self._core.offsets.fetch(token, req, now_ms)

    def delete_offsets(self, token: Hashable, req: DeleteOffsets, now_ms: int) -> Result:
        """Reply: DeleteOffsetsResult; records: OffsetTombstones."""
        error = self.placement.error(req.group_id)
        if error:
            return Result().reply(token, DeleteOffsetsResult(error))
        return self._core.offsets.delete(token, req, now_ms)

    def delete_topic_offsets(self, topics: tuple[str, ...], now_ms: int) -> Result:
        """No reply; records: OffsetTombstones for every group's offsets of the deleted topics."""
        return self._core.offsets.delete_topics(topics, now_ms)

    # --- admin -------------------------------------------------------------------------------

    def list_groups(self, token: Hashable, req: tuple[frozenset[str], frozenset[str]], now_ms: int) -> Result:
        """`req` is (states, types) filters, empty = all. Reply: tuple[ListedGroup, ...]."""
        return admin.list_groups(self._core, token, req, now_ms)

    def describe_groups(self, token: Hashable, req: tuple[str, ...], now_ms: int) -> Result:
        """Reply: tuple[GroupDescription, ...] (unknown group: state "Dead", error NONE; a group
        this node does not serve: its placement error)."""
        served = tuple(g for g in req if not self.placement.error(g))
        described = iter(admin.describe_groups(self._core, token, served, now_ms).replies.pop().response)
        return Result().reply(token, tuple(
            GroupDescription(g, self.placement.error(g)) if self.placement.error(g) else next(described)
            for g in req))

    def delete_groups(self, token: Hashable, req: tuple[str, ...], now_ms: int) -> Result:
        """Reply: tuple[DeletedGroup, ...]; records: a GroupTombstone per deleted group (a group
        this node does not serve: its placement error)."""
        served = tuple(g for g in req if not self.placement.error(g))
        out = admin.delete_groups(self._core, token, served, now_ms)
        deleted = iter(out.replies.pop().response)
        return out.reply(token, tuple(
            DeletedGroup(g, self.placement.error(g)) if self.placement.error(g) else next(deleted)
            for g in req))

    def trigger_rebalance(self, token: Hashable, req: str | TriggerRebalance, now_ms: int) -> Result:
        """Start the group's next rebalance (reason "trigger"). Reply for a bare group id:
        ErrorCode (NONE, or GROUP_ID_NOT_FOUND); for a TriggerRebalance: TriggerRebalanceResult
        (the same error, the group's state, and whether a join phase was started)."""
        error = self.placement.error(req.group_id if isinstance(req, TriggerRebalance) else req)
        if error:
            return Result().reply(token, TriggerRebalanceResult(error) if isinstance(req, TriggerRebalance) else error)
        return admin.trigger_rebalance(self._core, token, req, now_ms)

    # --- persistence -------------------------------------------------------------------------

    def replay(self, record: Record, now_ms: int) -> None:
        """Apply a record loaded from the store; members of a loaded group get session timers
        starting at `now_ms`. Raises `ReplayError` for records that cannot follow the state."""
        loaded = replay.apply_record(self._core, record)
        if loaded is not None:
            rebalance.arm_loaded_group(self._core, loaded)

    def load(self, records: Iterable[Record], now_ms: int, detail: str) -> Result:
        """Take over the groups in `records` (a partition's, in replay order): replay them and
        start the takeover rebalance of the groups with members (see `takeover`)."""
        return takeover.load(self._core, records, now_ms, detail)

    def unload(self, belongs: Callable[[str], bool]) -> Result:
        """Give up every group for which `belongs(group_id)` holds; parked requests are answered
        NOT_COORDINATOR. No records: the store keeps the groups for the next coordinator."""
        return takeover.unload(self._core, belongs)

    def topics_changed(self, topics: frozenset[str], now_ms: int, detail: str) -> Result:
        """Rebalance the settled groups subscribed to any of `topics` (reason "topic change")."""
        return topic_changes.topics_changed(self._core, topics, now_ms, detail)

    # --- beside another group type -------------------------------------------------------------

    def group(self, group_id: str) -> Optional[ClassicGroup]:
        """The classic group with this id, for the facade's migration decisions (read only)."""
        return self._core.groups.get(group_id)

    def groups(self) -> Mapping[str, ClassicGroup]:
        """The classic groups by id, read-only (the node's metrics read them at scrape time)."""
        return self._core.groups

    def state_of(self, group_id: str) -> Optional[GroupState]:
        """The classic group's state (None: no classic group has this id)."""
        group = self._core.groups.get(group_id)
        return group.state if group is not None else None

    def give_up(self, group_id: str) -> tuple[ClassicGroup, Result]:
        """The group's id passes to a group of another type (online migration, or an Empty
        group taken over): the group object leaves the core, its committed offsets stay (the new
        group's document replaces its document). Parked JoinGroup and SyncGroup requests are
        answered REBALANCE_IN_PROGRESS (the members rejoin the new group); timers are cancelled."""
        group = self._core.groups.pop(group_id)
        cancel_group_timers(self._core, group)
        out = Result()
        for member in group.members.values():
            member.answer_join(out, JoinGroupResult(ErrorCode.REBALANCE_IN_PROGRESS, member_id=member.member_id))
            member.answer_sync(out, SyncGroupResult(ErrorCode.REBALANCE_IN_PROGRESS))
        return group, out

    def adopt(self, group: ClassicGroup, now_ms: int, detail: str) -> Result:
        """A group of another type becomes this classic group (online migration): its document
        is written as it is (Stable), its members get fresh sessions, and a rebalance starts so
        they rejoin and a leader assigns (reason "migration")."""
        out = Result()
        self._core.groups[group.group_id] = group
        rebalance.arm_loaded_group(self._core, group)
        rebalance.write_document(self._core, group, group.state, now_ms, out)
        rebalance.prepare_rebalance(self._core, group, now_ms, out, RebalanceCause(Reason.MIGRATION, detail=detail))
        return out

    def empty_without_offsets(self) -> dict[str, int]:
        """The Empty classic groups that have no committed or pending offsets, nor a member told
        to rejoin with the id it was given (MEMBER_ID_REQUIRED): group id -> generation."""
        return {g: group.generation for g, group in self._core.groups.items()
                if group.state is GroupState.EMPTY and not group.pending_join and not self.has_offsets(g)}

    def has_offsets(self, group_id: str) -> bool:
        """Committed offsets, or transactional ones pending."""
        return bool(self._core.offsets.committed(group_id)) or bool(self._core.offsets.pending(group_id))

    def drop_offsets(self, group_id: str) -> None:
        """A group of another type was deleted: its committed offsets go with it."""
        self._core.offsets.drop_group(group_id)

    def group_document(self, group_id: str) -> Optional[GroupDocument]:
        """The document (`groupctl.layout.groups`) of the group's current state (None if there is no group);
        `updated_at_ms` is when its document was last written or loaded."""
        group = self._core.groups.get(group_id)
        if group is None:
            return None
        return build_document(group, node_id=self._core.node_id, now_ms=group.updated_at_ms)
