"""Transaction markers: the control batches that end a transaction in a partition log, in the
format of Kafka's EndTransactionMarker.

A marker is a v2 batch with the control and transactional attribute bits, the producer's id and
epoch, base sequence -1 and one record: key = control record key (version int16 0, type int16:
0 abort, 1 commit), value = version int16 0, coordinator epoch int32. kafka-python's
DefaultRecordBatchBuilder writes everything but the control bit ("control batches are only
created by the broker"), so `_ControlBatchBuilder` adds only that bit; kafka-python's reader
decodes the key (`ControlRecord`).

Only the transaction coordinator writes markers (through `PartitionLog.append_marker`); a
produced control batch is refused (`batches.validate_produced`).
"""

from __future__ import annotations

import struct

from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from groupctl.log.errors import CorruptBatchError

ABORT = 0
COMMIT = 1
_CONTROL_KEY = struct.Struct(">hh")  # version, type
_MARKER_VALUE = struct.Struct(">hi")  # version, coordinator epoch
_MAX_BATCH = 2**31 - 1


class _ControlBatchBuilder(DefaultRecordBatchBuilder):
    def _get_attributes(self, include_compression_type=True):
        return super()._get_attributes(include_compression_type) | self.CONTROL_MASK


def build_marker(producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int,
                 timestamp: int) -> bytes:
    """The marker batch at offset 0 (the log assigns its offset and leader epoch)."""
    builder = _ControlBatchBuilder(2, DefaultRecordBatch.CODEC_NONE, True, producer_id, producer_epoch, -1,
                                   _MAX_BATCH)
    builder.append(0, timestamp, _CONTROL_KEY.pack(0, COMMIT if commit else ABORT),
                   _MARKER_VALUE.pack(0, coordinator_epoch), [])
    return bytes(builder.build())


def parse_marker(batch: bytes) -> tuple[bool, int]:
    """(commit, coordinator epoch) of a marker batch. As Kafka, a value version above 0 is read
    as version 0; a negative one is corrupt."""
    records = list(DefaultRecordBatch(batch))
    if len(records) != 1:
        raise CorruptBatchError(f"a transaction marker batch holds {len(records)} records")
    record = records[0]
    if record.type not in (ABORT, COMMIT) or record.value is None or len(record.value) < _MARKER_VALUE.size:
        raise CorruptBatchError(f"control record type {record.type} is not a transaction marker")
    version, coordinator_epoch = _MARKER_VALUE.unpack_from(record.value)
    if version < 0:
        raise CorruptBatchError(f"transaction marker value version {version}")
    return record.commit, coordinator_epoch
