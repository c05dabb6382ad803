"""message.timestamp.type=LogAppendTime: the log, not the producer, stamps the batches.

As Kafka's LogValidator does for v2 batches, the batch's MaxTimestamp becomes the append time
and attribute bit 3 (timestamp type) is set; the records keep their timestamp deltas, and every
reader takes the batch's MaxTimestamp as each record's timestamp when the bit is set. The CRC
covers the attributes and the timestamps, so it is recomputed (CRC-32C, kafka-python's
`calc_crc32c`). This is the one place the log re-encodes bytes a producer sent.
"""

from __future__ import annotations

import struct
from dataclasses import replace

from kafka.record.default_records import DefaultRecordBatch
from kafka.record.util import calc_crc32c

from groupctl.log.batches import BatchHeader

ATTRIBUTES_OFFSET = DefaultRecordBatch.ATTRIBUTES_OFFSET  # 21: where the CRC'ed bytes begin
CRC_OFFSET = DefaultRecordBatch.CRC_OFFSET  # 17
MAX_TIMESTAMP_OFFSET = 35  # after attributes (2), last offset delta (4) and first timestamp (8)
LOG_APPEND_TIME_FLAG = DefaultRecordBatch.TIMESTAMP_TYPE_MASK  # attribute bit 3

_INT16 = struct.Struct(">h")
_INT64 = struct.Struct(">q")
_UINT32 = struct.Struct(">I")


def stamp_log_append_time(data: bytearray, headers: list[BatchHeader], now_ms: int) -> list[BatchHeader]:
    """Rewrite every batch of `data` (at its header's position) as appended at `now_ms` with
    timestamp type LogAppendTime, recomputing its CRC; return the headers as they now read."""
    view = memoryview(data)
    stamped = []
    for header in headers:
        start = header.position
        attributes = header.attributes | LOG_APPEND_TIME_FLAG
        _INT16.pack_into(data, start + ATTRIBUTES_OFFSET, attributes)
        _INT64.pack_into(data, start + MAX_TIMESTAMP_OFFSET, now_ms)
        crc = calc_crc32c(view[start + ATTRIBUTES_OFFSET : start + header.size])
        _UINT32.pack_into(data, start + CRC_OFFSET, crc)
        stamped.append(replace(header, attributes=attributes, max_timestamp=now_ms))
    view.release()
    return stamped
