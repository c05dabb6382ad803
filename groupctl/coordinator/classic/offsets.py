"""Committed offsets: OffsetCommit, OffsetFetch, OffsetDelete, and offsets of deleted topics.

OffsetCommit (Kafka's ClassicGroup.validateOffsetCommit):
- generation < 0 on an Empty group, or on a group that does not exist yet (which the commit then
  creates, Empty): a "simple" commit (admin tools, manual assignment), accepted;
- otherwise, with a generation, a member id or an instance id: identity (UNKNOWN_MEMBER_ID /
  FENCED_INSTANCE_ID) then generation (ILLEGAL_GENERATION) must match; in PreparingRebalance the
  generation is still the previous one, so its members may commit;
- no generation, no member id on a group with members: UNKNOWN_MEMBER_ID;
- CompletingRebalance: REBALANCE_IN_PROGRESS;
- a group that does not exist with generation >= 0: ILLEGAL_GENERATION (what Kafka answers
  OffsetCommit before v9; v9+ would say GROUP_ID_NOT_FOUND, and the core does not see versions);
- metadata over OFFSET_METADATA_MAX_CHARS characters: OFFSET_METADATA_TOO_LARGE for that partition.
One OffsetCommitRecord and one `offset_commit` journal event per accepted partition; the event
names the request's member id and generation as given (a simple commit's are "" and -1).

OffsetFetch works in every state and for unknown groups (-1 offsets, error NONE).
OffsetDelete: GROUP_ID_NOT_FOUND for an unknown group; NON_EMPTY_GROUP for a group with members
that does not use protocol type "consumer"; per partition GROUP_SUBSCRIBED_TO_TOPIC when the
group is subscribed to the topic; deleting an uncommitted partition is a no-op success.
Each committed offset deleted (by OffsetDelete or with its topic) is an `offset_delete` event.
"""

from __future__ import annotations

from typing import Hashable

from groupctl.coordinator.classic.config import OFFSET_METADATA_MAX_CHARS
from groupctl.coordinator.classic.context import Core
from groupctl.coordinator.classic.group import ClassicGroup
from groupctl.coordinator.classic.messages import (
    CommitOffsets,
    CommitOffsetsResult,
    CommittedOffset,
    DeleteOffsets,
    DeleteOffsetsResult,
    FetchOffsets,
    FetchOffsetsResult,
    PartitionError,
)
from groupctl.coordinator.classic.replay import apply_record
from groupctl.coordinator.classic.state import GroupState
from groupctl.coordinator.consumer_protocol import CONSUMER_PROTOCOL_TYPE
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.journal import offset_commit, offset_delete
from groupctl.coordinator.records import OffsetCommitRecord, OffsetTombstone
from groupctl.coordinator.results import Result


def _commit_error(group: ClassicGroup | None, req: CommitOffsets) -> ErrorCode:
    if group is None:
        return ErrorCode.NONE if req.generation_id < 0 else ErrorCode.ILLEGAL_GENERATION
    if req.generation_id < 0 and group.state is GroupState.EMPTY:
        return ErrorCode.NONE
    if req.generation_id >= 0 or req.member_id or req.group_instance_id is not None:
        error = group.validate_member(req.member_id, req.group_instance_id)
        if error is not ErrorCode.NONE:
            return error
        if req.generation_id != group.generation:
            return ErrorCode.ILLEGAL_GENERATION
    elif group.state is not GroupState.EMPTY:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if group.state is GroupState.COMPLETING_REBALANCE:
        return ErrorCode.REBALANCE_IN_PROGRESS
    return ErrorCode.NONE


def commit_offsets(core: Core, token: Hashable, req: CommitOffsets, now_ms: int) -> Result:
    out = Result()
    error = _commit_error(core.groups.get(req.group_id), req)
    answers = []
    for p in req.offsets:
        partition_error = error
        if error is ErrorCode.NONE and len(p.metadata or "") > OFFSET_METADATA_MAX_CHARS:
            partition_error = ErrorCode.OFFSET_METADATA_TOO_LARGE
        if partition_error is ErrorCode.NONE:
            out.records.append(OffsetCommitRecord(
                group=req.group_id, topic=p.topic, partition=p.partition, offset=p.offset,
                leader_epoch=p.leader_epoch, metadata=p.metadata or "", commit_timestamp_ms=now_ms,
            ))
            out.events.append(offset_commit(
                core.node_id, now_ms, req.group_id, member_id=req.member_id, generation=req.generation_id,
                topic=p.topic, partition=p.partition, offset=p.offset))
        answers.append(PartitionError(p.topic, p.partition, partition_error))
    for record in out.records:
        apply_record(core, record)
    return out.reply(token, CommitOffsetsResult(tuple(answers)))


def _committed(record: OffsetCommitRecord) -> CommittedOffset:
    return CommittedOffset(record.topic, record.partition, record.offset, record.leader_epoch, record.metadata)


def fetch_offsets(core: Core, token: Hashable, req: FetchOffsets, now_ms: int) -> Result:
    group = core.groups.get(req.group_id)
    offsets = group.offsets if group is not None else {}
    if req.partitions is None:
        answers = tuple(_committed(offsets[key]) for key in sorted(offsets))
    else:
        answers = tuple(
            _committed(offsets[(topic, partition)]) if (topic, partition) in offsets
            else CommittedOffset(topic, partition, -1)
            for topic, partition in req.partitions
        )
    return Result().reply(token, FetchOffsetsResult(ErrorCode.NONE, answers))


def delete_offsets(core: Core, token: Hashable, req: DeleteOffsets, now_ms: int) -> Result:
    out = Result()
    group = core.groups.get(req.group_id)
    if group is None:
        return out.reply(token, DeleteOffsetsResult(ErrorCode.GROUP_ID_NOT_FOUND))
    if group.state is not GroupState.EMPTY and group.protocol_type != CONSUMER_PROTOCOL_TYPE:
        return out.reply(token, DeleteOffsetsResult(ErrorCode.NON_EMPTY_GROUP))
    answers = []
    for topic, partition in req.partitions:
        if group.is_subscribed_to(topic):
            answers.append(PartitionError(topic, partition, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC))
            continue
        tombstone = OffsetTombstone(req.group_id, topic, partition)
        if (topic, partition) in group.offsets and tombstone not in out.records:
            out.records.append(tombstone)
            out.events.append(offset_delete(core.node_id, now_ms, req.group_id, topic=topic, partition=partition))
        answers.append(PartitionError(topic, partition, ErrorCode.NONE))
    for record in out.records:
        apply_record(core, record)
    return out.reply(token, DeleteOffsetsResult(ErrorCode.NONE, tuple(answers)))


def delete_topic_offsets(core: Core, topics: tuple[str, ...], now_ms: int) -> Result:
    """The topics were deleted: every group's committed offsets for them go."""
    out = Result()
    doomed = set(topics)
    records: list[OffsetTombstone] = [
        OffsetTombstone(group_id, topic, partition)
        for group_id, group in sorted(core.groups.items())
        for topic, partition in sorted(group.offsets)
        if topic in doomed
    ]
    for record in records:
        apply_record(core, record)
        out.events.append(offset_delete(core.node_id, now_ms, record.group, topic=record.topic,
                                        partition=record.partition))
    out.records.extend(records)
    return out
