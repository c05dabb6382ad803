"""Leader-epoch answers shared by Fetch, ListOffsets and OffsetForLeaderEpoch (KIP-101, KIP-320),
as Kafka's Partition and UnifiedLog give them for a partition this node leads.

- `epoch_error`: a request's current_leader_epoch is checked against the log's epoch: -1 is
  no check, a lower one FENCED_LEADER_EPOCH (the client's metadata is stale), a higher one
  UNKNOWN_LEADER_EPOCH (this node's is).
- `list_offsets_epoch`: the leader_epoch ListOffsets returns with an offset.
- `divergence`: Fetch's divergence check of last_fetched_epoch (v12+).
"""

from __future__ import annotations

from typing import Any, Optional

from groupctl.coordinator.errors import ErrorCode
from groupctl.log.epochs import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET

NO_EPOCH = -1
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
EARLIEST_LOCAL_TIMESTAMP = -4


def epoch_error(log: Any, current_leader_epoch: int) -> ErrorCode:
    """NONE, FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH for a request's current_leader_epoch."""
    if current_leader_epoch == NO_EPOCH or current_leader_epoch == log.leader_epoch:
        return ErrorCode.NONE
    if current_leader_epoch < log.leader_epoch:
        return ErrorCode.FENCED_LEADER_EPOCH
    return ErrorCode.UNKNOWN_LEADER_EPOCH


def end_offset_for(log: Any, epoch: int) -> tuple[int, int]:
    """(epoch, end offset) OffsetForLeaderEpoch answers for `epoch` on this log."""
    return log.epochs.end_offset_for(epoch, log.log_end_offset)


def list_offsets_epoch(log: Any, timestamp: int, offset: int) -> int:
    """The leader epoch ListOffsets answers with `offset`, found for `timestamp`: the current
    epoch for latest; for earliest the first cached epoch when it starts at or before the log
    start (older batches carry none); else the epoch of the batch holding the offset (-1 when
    no offset was found)."""
    if timestamp == LATEST_TIMESTAMP:
        return log.leader_epoch
    if timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
        earliest = log.epochs.earliest
        return earliest[0] if earliest is not None and earliest[1] <= log.log_start_offset else NO_EPOCH
    if offset < 0:
        return NO_EPOCH
    return log.epochs.epoch_for_offset(offset)


def divergence(log: Any, last_fetched_epoch: int, fetch_offset: int) -> tuple[ErrorCode, Optional[tuple[int, int]]]:
    """Kafka's check of a fetch's last_fetched_epoch (Partition.readRecords): (NONE, None) when
    the fetcher sent no epoch or its log agrees with this one; (NONE, (epoch, end offset)) when
    its records diverge after that point, which Fetch answers instead of records;
    OFFSET_OUT_OF_RANGE when this log knows no end for the epoch or the offset is below the
    log start."""
    if last_fetched_epoch < 0:
        return ErrorCode.NONE, None
    epoch, end_offset = end_offset_for(log, last_fetched_epoch)
    if epoch == UNDEFINED_EPOCH or end_offset == UNDEFINED_EPOCH_OFFSET or fetch_offset < log.log_start_offset:
        return ErrorCode.OFFSET_OUT_OF_RANGE, None
    if epoch < last_fetched_epoch or end_offset < fetch_offset:
        return ErrorCode.NONE, (epoch, end_offset)
    return ErrorCode.NONE, None
