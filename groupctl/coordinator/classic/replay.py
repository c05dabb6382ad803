"""Replaying records: the only way the classic core's hard state changes.

Operations build records and apply them here; loading from the store applies the same records.
Hard state is what the store keeps: committed offsets (applied to the core's offset store,
`groupctl.coordinator.offsets`, which creates the Empty group of a commit to an unknown group),
and the group document's state, assignments, protocol, leader and last completed rebalance. Soft
state (parked requests, the join and sync phases, pending members, the generation a rebalance in
progress is heading for, when and why it started) lives only in memory, exactly as in Kafka,
where a coordinator that takes over makes the members rejoin.

A `GroupMetadataRecord` is applied one of two ways:
- load: no such group in memory, or only a member-less Empty one (created by replayed offset
  commits) -> the group is constructed from the document (Stable, or Empty); its offsets stay;
- checkpoint: a live group -> the document must describe it exactly (same generation, same member
  ids, same protocol and leader); its state (through the legality table) and assignments are
  taken from the document.

A `GroupTombstone` removes the group and its offsets. Anything else (an offset tombstone for an
offset that is not committed, too) is an impossible sequence and raises `ReplayError`. The
runtime persists the records of a core operation and must not replay them into the core that
produced them (they are already applied); it replays only what it loads from the store.
"""

from __future__ import annotations

from typing import Optional

from groupctl.coordinator.classic.context import Core, cancel_group_timers
from groupctl.coordinator.classic.document import document_members, document_state
from groupctl.coordinator.classic.group import ClassicGroup
from groupctl.coordinator.classic.state import GroupState
from groupctl.coordinator.offsets import UnknownOffset
from groupctl.coordinator.records import (
    GroupMetadataRecord,
    GroupTombstone,
    OffsetCommitRecord,
    OffsetTombstone,
    PendingOffsetsRecord,
    PendingOffsetsTombstone,
    Record,
    TopicRecord,
    TopicTombstone,
)
from groupctl.layout.groups import GroupDocument


class ReplayError(RuntimeError):
    """A record that cannot follow the current state: the store or the core is corrupt."""


def apply_record(core: Core, record: Record) -> Optional[ClassicGroup]:
    """Apply one record. Returns the group a document load constructed (its members need fresh
    session timers from the caller), else None. Topic records belong to other parts of the node
    and are ignored."""
    if isinstance(record, GroupMetadataRecord):
        return _apply_document(core, record)
    if isinstance(record, (OffsetCommitRecord, OffsetTombstone, PendingOffsetsRecord, PendingOffsetsTombstone)):
        try:
            core.offsets.replay(record)
        except UnknownOffset as exc:
            raise ReplayError(str(exc)) from None
        return None
    if isinstance(record, GroupTombstone):
        group = core.groups.get(record.group)
        if group is None:
            raise ReplayError(f"tombstone for unknown group {record.group}")
        if group.members:
            raise ReplayError(f"tombstone for group {record.group}, which still has members")
        group.transition_to(GroupState.DEAD)
        cancel_group_timers(core, group)
        del core.groups[record.group]
        core.offsets.drop_group(record.group)
        return None
    if isinstance(record, (TopicRecord, TopicTombstone)):
        return None
    raise ReplayError(f"unknown record {record!r}")


def _apply_document(core: Core, record: GroupMetadataRecord) -> Optional[ClassicGroup]:
    doc = record.document
    if doc.group != record.group:
        raise ReplayError(f"document of group {doc.group!r} recorded for {record.group!r}")
    state = document_state(doc)
    live = core.groups.get(record.group)
    if live is None or (live.state is GroupState.EMPTY and not live.members and not live.pending_join):
        loaded = _load(core, record.group, doc, state, live)
        loaded.last_rebalance = doc.rebalance
        return loaded
    _checkpoint(live, doc, state)
    live.last_rebalance = doc.rebalance
    return None


def _load(core: Core, group_id: str, doc: GroupDocument, state: GroupState,
          live: Optional[ClassicGroup]) -> ClassicGroup:
    if live is not None and doc.generation < live.generation:
        raise ReplayError(f"group {group_id}: stored generation {doc.generation} is older than "
                          f"generation {live.generation} in memory")
    group = ClassicGroup(
        group_id=group_id, state=state, generation=doc.generation,
        protocol_type=doc.protocol_type, protocol=doc.protocol,
        updated_at_ms=doc.updated_at_ms,
    )
    for member in document_members(doc):
        group.add(member)
    group.leader = doc.leader if group.members else None
    group.subscribed_topics = group.compute_subscribed_topics()
    core.groups[group_id] = group
    return group


def _checkpoint(group: ClassicGroup, doc: GroupDocument, state: GroupState) -> None:
    ids = [m.member_id for m in doc.members]
    if doc.generation != group.generation or set(ids) != set(group.members):
        raise ReplayError(
            f"group {group.group_id}: document (generation {doc.generation}, members {sorted(ids)}) "
            f"does not describe the live group (generation {group.generation}, members {sorted(group.members)})"
        )
    if ids and (doc.protocol != group.protocol or doc.leader != group.leader):
        raise ReplayError(f"group {group.group_id}: document protocol/leader {doc.protocol}/{doc.leader} "
                          f"differ from the live group's {group.protocol}/{group.leader}")
    if state is not group.state:
        group.transition_to(state)
    for member in doc.members:
        group.members[member.member_id].assignment = member.assignment_bytes
    if not ids:
        group.protocol = None
    group.subscribed_topics = group.compute_subscribed_topics()
    group.updated_at_ms = doc.updated_at_ms
