"""Why the log refused a write or a read. Handlers map these to Kafka error codes."""

from __future__ import annotations


class LogError(Exception):
    """Base of everything the partition log raises on purpose."""


class CorruptBatchError(LogError):
    """Produced bytes are not well-formed v2 record batches (truncated, bad CRC, bad counts).
    Answered as CORRUPT_MESSAGE."""


class UnsupportedMagicError(LogError):
    """A produced batch uses the legacy message format (magic 0 or 1), which this log does not
    store. Answered as UNSUPPORTED_FOR_MESSAGE_FORMAT."""


class OffsetOutOfRangeError(LogError):
    """A read asked for an offset below the log start or above the log end."""

    def __init__(self, offset: int, log_start_offset: int, log_end_offset: int) -> None:
        super().__init__(
            f"offset {offset} is outside the log's range {log_start_offset}..{log_end_offset}"
        )
        self.offset = offset
        self.log_start_offset = log_start_offset
        self.log_end_offset = log_end_offset


class LogCorruptionError(LogError):
    """Stored data that recovery must not silently drop is damaged: a segment other than the
    last one does not parse, or the segments do not chain offset to offset."""


class LogDirLockedError(LogError):
    """Another process holds the data directory's lock."""


class PartitionDeletedError(LogError):
    """The partition's topic was deleted while its log was being opened: the log is discarded,
    not served. Answered as UNKNOWN_TOPIC_OR_PARTITION."""


class OutOfOrderSequenceError(LogError):
    """An idempotent batch's first sequence does not follow the producer's last appended one
    (a gap, or a new epoch not starting at 0). Answered as OUT_OF_ORDER_SEQUENCE_NUMBER."""


class InvalidProducerEpochError(LogError):
    """An idempotent batch carries an epoch older than the producer's current one here (a
    zombie after an epoch bump). Answered as INVALID_PRODUCER_EPOCH."""


class RecordTooLargeError(LogError):
    """A produced batch is larger than the topic's max.message.bytes. Answered as
    MESSAGE_TOO_LARGE."""


class RecordBatchTooLargeError(LogError):
    """The batches of one produced partition together exceed the topic's segment.bytes, so no
    segment could hold them. Answered as RECORD_LIST_TOO_LARGE."""


class InvalidTxnStateError(LogError):
    """A producer with a transaction open on this partition sent a non-transactional batch
    (Kafka's InvalidTxnStateException). Answered as INVALID_TXN_STATE."""


class TransactionCoordinatorFencedError(LogError):
    """A transaction marker carries a coordinator epoch older than the one that last wrote a
    marker for the producer (a zombie coordinator; Kafka's TransactionCoordinatorFencedException)."""
