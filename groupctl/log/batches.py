"""Record batches (magic v2) as the log handles them: header parsing, produce-time validation,
offset assignment and the record-level timestamp search.

The log keeps the producer's bytes and rewrites two header fields when it appends: BaseOffset
(bytes 0-7) and PartitionLeaderEpoch (bytes 12-15). The CRC covers bytes 21 to the end only, so
the producer's CRC stays valid and Fetch serves the stored bytes as they are. The one exception
is a topic with message.timestamp.type=LogAppendTime, whose batches `timestamps.py` restamps
(and re-CRCs).

Header layout and the CRC check come from kafka-python's `DefaultRecordBatch`; nothing here
decodes records except `first_record_at_or_after`, which ListOffsets by timestamp needs.

PartitionLeaderEpoch is the partition's leader epoch when the batch was appended (KIP-101), as
Kafka's leader stamps it; consumers read it as the record's leader epoch. Batches appended before
this node stamped epochs carry -1 ("no epoch"), which clients treat as unknown.

Deliberate differences from Apache Kafka:
- A produced control batch is refused as corrupt (only the transaction coordinator writes them,
  through `PartitionLog.append_marker`); Kafka answers INVALID_RECORD for malformed produce batches, which
  this node reports as CORRUPT_MESSAGE (see `errors.py`).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Optional

from kafka.errors import CorruptRecordError, UnsupportedCodecError
from kafka.record.default_records import DefaultRecordBatch

from groupctl.log.errors import CorruptBatchError, UnsupportedMagicError

HEADER = DefaultRecordBatch.HEADER_STRUCT
HEADER_SIZE = HEADER.size  # 61 bytes: BaseOffset .. RecordsCount
LOG_OVERHEAD = DefaultRecordBatch.AFTER_LEN_OFFSET  # 12: BaseOffset + Length precede the counted bytes
LENGTH_OFFSET = 8
LEADER_EPOCH_OFFSET = 12
MAGIC_OFFSET = 16
MAGIC = 2
NO_PARTITION_LEADER_EPOCH = -1

_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")


@dataclass(frozen=True, slots=True)
class BatchHeader:
    """The header fields the log uses; `position` is where the batch starts in the buffer (or
    file) it was parsed from."""

    position: int
    size: int
    base_offset: int
    attributes: int
    last_offset_delta: int
    max_timestamp: int
    records_count: int
    producer_id: int  # -1 when the producer is not idempotent
    producer_epoch: int
    base_sequence: int  # -1 when the producer is not idempotent
    leader_epoch: int = NO_PARTITION_LEADER_EPOCH  # the partition leader epoch stamped at append

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & DefaultRecordBatch.TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & DefaultRecordBatch.CONTROL_MASK)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1


def batch_size_at(buf: bytes | bytearray | memoryview, pos: int) -> int:
    """The total size of the batch starting at `pos` (needs 12 bytes there)."""
    return LOG_OVERHEAD + _INT32.unpack_from(buf, pos + LENGTH_OFFSET)[0]


def parse_header(buf: bytes | bytearray | memoryview, pos: int, position: int) -> BatchHeader:
    """Parse the v2 header at `buf[pos:]` (HEADER_SIZE bytes must be there), recording it as
    starting at `position`. Raises CorruptBatchError for a non-v2 magic or an impossible length."""
    (base_offset, length, leader_epoch, magic, _crc, attributes, last_offset_delta, _first_ts,
     max_timestamp, producer_id, producer_epoch, base_sequence, count) = HEADER.unpack_from(buf, pos)
    if magic != MAGIC:
        raise CorruptBatchError(f"batch at {position} has magic {magic}, expected {MAGIC}")
    if length < HEADER_SIZE - LOG_OVERHEAD:
        raise CorruptBatchError(f"batch at {position} has impossible length {length}")
    return BatchHeader(position, LOG_OVERHEAD + length, base_offset, attributes,
                       last_offset_delta, max_timestamp, count, producer_id, producer_epoch, base_sequence,
                       leader_epoch)


def validate_produced(data: bytes | bytearray | memoryview) -> list[BatchHeader]:
    """Check produced bytes batch by batch and return their headers (positions within `data`).

    One or more whole v2 batches, each with a valid CRC, at least one record, consecutive
    record offsets (count == last offset delta + 1), no control flag, and a base sequence
    when the batch carries a producer id (as Kafka's LogValidator requires).
    """
    view = memoryview(data)
    if len(view) == 0:
        raise CorruptBatchError("no record batch")
    headers = []
    pos = 0
    while pos < len(view):
        remaining = len(view) - pos
        if remaining <= MAGIC_OFFSET:
            raise CorruptBatchError(f"{remaining} trailing bytes are not a record batch")
        magic = view[pos + MAGIC_OFFSET]
        if magic < MAGIC:
            raise UnsupportedMagicError(f"message format v{magic} is not supported; use v2 record batches")
        if remaining < HEADER_SIZE:
            raise CorruptBatchError(f"batch at {pos} is truncated ({remaining} bytes)")
        header = parse_header(view, pos, pos)
        if header.size > remaining:
            raise CorruptBatchError(f"batch at {pos} declares {header.size} bytes, {remaining} present")
        batch = DefaultRecordBatch(view[pos : pos + header.size])
        if not batch.validate_crc():
            raise CorruptBatchError(f"batch at {pos} fails its CRC check")
        if header.records_count < 1 or header.last_offset_delta != header.records_count - 1:
            raise CorruptBatchError(
                f"batch at {pos} has {header.records_count} records but last offset delta "
                f"{header.last_offset_delta}"
            )
        if batch.is_control_batch:
            raise CorruptBatchError(f"batch at {pos} is a control batch")
        if header.producer_id >= 0 and header.base_sequence < 0:
            raise CorruptBatchError(
                f"batch at {pos} has producer id {header.producer_id} but no base sequence"
            )
        headers.append(header)
        pos += header.size
    return headers


def assign_offsets(
    data: bytes | bytearray | memoryview, headers: list[BatchHeader], base_offset: int, leader_epoch: int
) -> tuple[bytearray, list[BatchHeader]]:
    """A copy of `data` with consecutive offsets from `base_offset` and `leader_epoch` written
    into each batch header, and the headers as they now read."""
    out = bytearray(data)
    assigned = []
    offset = base_offset
    for header in headers:
        _INT64.pack_into(out, header.position, offset)
        _INT32.pack_into(out, header.position + LEADER_EPOCH_OFFSET, leader_epoch)
        assigned.append(
            BatchHeader(header.position, header.size, offset, header.attributes,
                        header.last_offset_delta, header.max_timestamp, header.records_count,
                        header.producer_id, header.producer_epoch, header.base_sequence, leader_epoch)
        )
        offset += header.last_offset_delta + 1
    return out, assigned


def next_offset_after(data: bytes | bytearray | memoryview) -> Optional[int]:
    """One past the last offset of the whole batches in `data` (as a read returns them), None
    when there is none: the upper bound of the aborted transactions a read_committed fetch of
    `data` needs."""
    pos = 0
    end = None
    while pos < len(data):
        header = parse_header(data, pos, pos)
        end = header.next_offset
        pos += header.size
    return end


def first_record_at_or_after(batch: bytes, timestamp: int, min_offset: int = 0) -> Optional[tuple[int, int]]:
    """(offset, timestamp) of the first record in `batch` at or after `min_offset` (the log
    start) whose timestamp is >= `timestamp`.

    When the batch is compressed with a codec this Python lacks (kafka-python decodes gzip
    natively; snappy, lz4 and zstd need optional libraries), the batch's base offset (or
    `min_offset` when later) and max timestamp are returned instead: an offset at or before the
    exact answer, never after it.
    """
    records = DefaultRecordBatch(batch)
    try:
        for record in records:
            if record.offset >= min_offset and record.timestamp >= timestamp:
                return record.offset, record.timestamp
    except UnsupportedCodecError:
        return max(records.base_offset, min_offset), records.max_timestamp
    except CorruptRecordError as exc:
        raise CorruptBatchError(str(exc)) from exc
    return None
