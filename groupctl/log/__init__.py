"""Partition logs for the embedded node: produced record batches stored as bytes, served by
Fetch and searched by ListOffsets. See `partition.py` for the invariants and durability."""

from groupctl.log.errors import (
    CorruptBatchError,
    InvalidProducerEpochError,
    InvalidTxnStateError,
    LogCorruptionError,
    LogDirLockedError,
    LogError,
    OffsetOutOfRangeError,
    OutOfOrderSequenceError,
    PartitionDeletedError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
    TransactionCoordinatorFencedError,
    UnsupportedMagicError,
)
from groupctl.log.batches import next_offset_after
from groupctl.log.config import LogConfig
from groupctl.log.manager import DEFAULT_INDEX_INTERVAL_BYTES, DEFAULT_SEGMENT_BYTES, LogManager
from groupctl.log.partition import HIGH_WATERMARK, AppendResult, PartitionLog, Removal
from groupctl.log.producer_ids import ProducerIdAllocator
from groupctl.log.producers import NO_GUARD, ProducerStateManager

__all__ = [
    "AppendResult",
    "CorruptBatchError",
    "DEFAULT_INDEX_INTERVAL_BYTES",
    "DEFAULT_SEGMENT_BYTES",
    "HIGH_WATERMARK",
    "InvalidProducerEpochError",
    "InvalidTxnStateError",
    "LogCorruptionError",
    "LogDirLockedError",
    "LogConfig",
    "LogError",
    "LogManager",
    "next_offset_after",
    "NO_GUARD",
    "OffsetOutOfRangeError",
    "OutOfOrderSequenceError",
    "PartitionDeletedError",
    "PartitionLog",
    "ProducerIdAllocator",
    "ProducerStateManager",
    "RecordBatchTooLargeError",
    "RecordTooLargeError",
    "Removal",
    "TransactionCoordinatorFencedError",
    "UnsupportedMagicError",
]
