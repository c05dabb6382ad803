"""Taking groups over and giving them up, one group partition at a time.

- Load: the runtime reads a partition's records from the store and the core replays them (which
  journals nothing: it rebuilds state, it is not new history). A group loaded with members then
  starts a rebalance with reason "coordinator load" (a `rebalance_started` event): its members
  learn of the new coordinator from REBALANCE_IN_PROGRESS, rejoin with their member ids, and the
  generation continues from the stored one, so the next document names this node. Members that
  do not come back within the rebalance timeout are removed, as in any rebalance.
- Unload (stepping down): the partition's groups and their committed offsets leave the core at
  once, writing nothing (the store keeps them for the next leader). Parked JoinGroup and
  SyncGroup requests are answered NOT_COORDINATOR (clients look the coordinator up again) and the
  groups' timers are cancelled.

Deliberate difference from Apache Kafka, which resumes a loaded Stable group without a rebalance:
here the document is the only record of ownership, and a fresh generation written by the new
coordinator is what tells every reader (and the members' next commits) who coordinates it now.
"""

from __future__ import annotations

from typing import Callable, Iterable

from groupctl.coordinator.classic import rebalance, replay
from groupctl.coordinator.classic.causes import Reason, RebalanceCause
from groupctl.coordinator.classic.context import Core, cancel_group_timers
from groupctl.coordinator.classic.messages import JoinGroupResult, SyncGroupResult
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.records import Record
from groupctl.coordinator.results import Result


def load(core: Core, records: Iterable[Record], now_ms: int, detail: str) -> Result:
    """Replay a partition's records (replay order, see `groupctl.store.loading.load_records`) and
    start the takeover rebalance of every loaded group that has members."""
    out = Result()
    loaded = []
    for record in records:
        group = replay.apply_record(core, record)
        if group is not None:
            loaded.append(group)
    for group in loaded:
        rebalance.arm_loaded_group(core, group)
        if group.members and group.can_rebalance():
            rebalance.prepare_rebalance(core, group, now_ms, out,
                                        RebalanceCause(Reason.COORDINATOR_LOAD, detail=detail))
    return out


def unload(core: Core, belongs: Callable[[str], bool]) -> Result:
    """Remove every group for which `belongs(group_id)` holds, and its offsets, answering its
    parked requests NOT_COORDINATOR. Writes nothing: the store keeps them for the next leader."""
    out = Result()
    for group_id in [g for g in core.groups if belongs(g)]:
        group = core.groups.pop(group_id)
        cancel_group_timers(core, group)
        for member in group.members.values():
            member.answer_join(out, JoinGroupResult(ErrorCode.NOT_COORDINATOR, member_id=member.member_id))
            member.answer_sync(out, SyncGroupResult(ErrorCode.NOT_COORDINATOR))
    core.offsets.unload(belongs)
    return out
