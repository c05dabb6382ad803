"""The partition log: offsets assigned on append, whole-batch reads, segment rolls, timestamp
lookups and bounded index memory. Batches are real ones built with kafka-python's
MemoryRecordsBuilder, as a producer sends them."""

from __future__ import annotations

import struct

import pytest
from kafka.record.memory_records import MemoryRecords, MemoryRecordsBuilder

from groupctl.log import (
    CorruptBatchError,
    LogManager,
    OffsetOutOfRangeError,
    PartitionLog,
    RecordBatchTooLargeError,
    UnsupportedMagicError,
)


def batch(count: int = 1, first_timestamp: int = 1_000, step: int = 1, value_size: int = 10,
          compression: int = 0, timestamps: list[int] | None = None) -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=compression, batch_size=1 << 24)
    stamps = timestamps or [first_timestamp + i * step for i in range(count)]
    for i, ts in enumerate(stamps):
        builder.append(ts, f"k{i}".encode(), bytes([i % 256]) * value_size)
    builder.close()
    return bytes(builder.buffer())


def batches_in(data: bytes) -> list:
    records = MemoryRecords(data)
    found = []
    while records.has_next():
        found.append(records.next_batch())
    return found


def memory_log(segment_bytes: int = 64 << 20, index_interval_bytes: int = 4096) -> PartitionLog:
    return LogManager(None, segment_bytes=segment_bytes, index_interval_bytes=index_interval_bytes).partition("t", 0)


@pytest.fixture(params=["memory", "files"])
def make_log(request, tmp_path):
    """Both storage kinds behave the same; every test runs against each."""
    managers = []

    def make(segment_bytes: int = 64 << 20, index_interval_bytes: int = 4096) -> PartitionLog:
        data_dir = tmp_path / "logs" if request.param == "files" else None
        manager = LogManager(data_dir, segment_bytes=segment_bytes, index_interval_bytes=index_interval_bytes)
        managers.append(manager)
        return manager.partition("orders", 0)

    yield make
    for manager in managers:
        manager.close()


def test_empty_log_starts_and_ends_at_zero(make_log):
    log = make_log()
    assert (log.log_start_offset, log.log_end_offset, log.max_timestamp) == (0, 0, -1)
    assert log.read(0, 1_000) == b""
    assert log.offset_for_timestamp(0) is None


def test_appends_assign_consecutive_offsets_per_record(make_log):
    log = make_log()
    first = log.append(batch(3))
    second = log.append(batch(2))
    assert (first.base_offset, first.last_offset) == (0, 2)
    assert (second.base_offset, second.last_offset) == (3, 4)
    assert log.log_end_offset == 5


def test_a_request_with_several_batches_gets_offsets_across_them(make_log):
    log = make_log()
    result = log.append(batch(2) + batch(3))
    assert (result.base_offset, result.last_offset) == (0, 4)
    assert [(b.base_offset, b.last_offset) for b in batches_in(log.read(0, 10_000))] == [(0, 1), (2, 4)]


def test_stored_batches_carry_their_offsets_the_leader_epoch_and_a_valid_crc(make_log):
    log = make_log()
    log.append(batch(2))
    log.append(batch(2, value_size=3))
    served = batches_in(log.read(0, 10_000))
    assert [b.base_offset for b in served] == [0, 2]
    assert all(b.leader_epoch == 0 for b in served)
    assert all(b.validate_crc() for b in served)
    assert [r.offset for b in batches_in(log.read(0, 10_000)) for r in b] == [0, 1, 2, 3]


def test_a_read_inside_a_batch_returns_that_whole_batch(make_log):
    log = make_log()
    log.append(batch(5))
    log.append(batch(5))
    served = batches_in(log.read(7, 10_000))
    assert [(b.base_offset, b.last_offset) for b in served] == [(5, 9)]


def test_a_read_returns_whole_batches_within_max_bytes(make_log):
    log = make_log()
    one = batch(1, value_size=100)
    for _ in range(5):
        log.append(one)
    data = log.read(0, 2 * len(one) + len(one) // 2)
    assert len(data) == 2 * len(one)
    assert [b.base_offset for b in batches_in(data)] == [0, 1]


def test_a_batch_larger_than_max_bytes_still_comes_back_alone(make_log):
    log = make_log()
    big = batch(1, value_size=5_000)
    log.append(big)
    log.append(batch(1))
    data = log.read(0, 100)
    assert len(data) == len(big)
    assert [b.base_offset for b in batches_in(data)] == [0]


def test_without_at_least_one_an_oversized_first_batch_reads_as_nothing(make_log):
    log = make_log()
    log.append(batch(1, value_size=5_000))
    assert log.read(0, 100, at_least_one=False) == b""


def test_reading_outside_the_log_is_out_of_range_and_the_end_is_empty(make_log):
    log = make_log()
    log.append(batch(3))
    assert log.read(3, 1_000) == b""
    with pytest.raises(OffsetOutOfRangeError) as raised:
        log.read(4, 1_000)
    assert (raised.value.log_start_offset, raised.value.log_end_offset) == (0, 3)
    with pytest.raises(OffsetOutOfRangeError):
        log.read(-1, 1_000)


def test_the_log_rolls_a_new_segment_before_exceeding_segment_bytes(make_log):
    one = batch(2, value_size=200)
    log = make_log(segment_bytes=3 * len(one))
    for _ in range(7):
        log.append(one)
    assert log.segment_base_offsets == [0, 6, 12]
    assert log.log_end_offset == 14


def test_batches_larger_than_a_segment_are_refused_as_kafka_does(make_log):
    log = make_log(segment_bytes=500)
    log.append(batch(1))
    with pytest.raises(RecordBatchTooLargeError):
        log.append(batch(1, value_size=2_000))
    assert (log.log_end_offset, log.segment_base_offsets) == (1, [0])


def test_reads_find_every_offset_across_segment_rolls(make_log):
    log = make_log(segment_bytes=1_000, index_interval_bytes=150)
    for i in range(60):
        log.append(batch(3, first_timestamp=10_000 + 10 * i))
    assert len(log.segment_base_offsets) > 5
    for offset in range(0, 180):
        first = batches_in(log.read(offset, 1))[0]
        assert first.base_offset <= offset <= first.last_offset
        assert first.base_offset == offset - offset % 3


def test_a_read_stops_at_the_end_of_its_segment(make_log):
    one = batch(1, value_size=100)
    log = make_log(segment_bytes=2 * len(one))
    for _ in range(4):
        log.append(one)
    assert [b.base_offset for b in batches_in(log.read(0, 10_000))] == [0, 1]
    assert [b.base_offset for b in batches_in(log.read(2, 10_000))] == [2, 3]


def test_timestamp_lookup_returns_the_first_record_at_or_after_the_timestamp(make_log):
    log = make_log(segment_bytes=2_000, index_interval_bytes=200)
    for i in range(40):
        log.append(batch(4, first_timestamp=1_000 + 100 * i, step=10))  # batch i: 1000+100i .. +30
    assert log.offset_for_timestamp(0) == (0, 1_000)
    assert log.offset_for_timestamp(1_000) == (0, 1_000)
    assert log.offset_for_timestamp(1_015) == (2, 1_020)
    assert log.offset_for_timestamp(1_031) == (4, 1_100)
    assert log.offset_for_timestamp(4_925) == (159, 4_930)
    assert log.offset_for_timestamp(4_931) is None
    for i in range(0, 40, 7):
        assert log.offset_for_timestamp(1_000 + 100 * i + 5) == (4 * i + 1, 1_000 + 100 * i + 10)


def test_timestamp_lookup_takes_the_first_record_in_offset_order_not_the_smallest_timestamp(make_log):
    log = make_log()
    log.append(batch(timestamps=[5_000, 2_000, 3_000]))
    log.append(batch(timestamps=[2_500]))
    assert log.offset_for_timestamp(2_400) == (0, 5_000)
    assert log.max_timestamp == 5_000
    assert log.offset_for_timestamp(log.max_timestamp) == (0, 5_000)


def test_timestamp_lookup_decodes_gzip_batches(make_log):
    log = make_log()
    log.append(batch(50, first_timestamp=7_000, value_size=200, compression=1))
    assert log.offset_for_timestamp(7_020) == (20, 7_020)


def test_index_entries_grow_with_bytes_over_the_interval_not_with_batches(make_log):
    small = batch(1, value_size=1)
    large = batch(1, value_size=400 - len(small))
    many = make_log(index_interval_bytes=4_096)
    for _ in range(4_000):
        many.append(small)  # ~4000 batches
    few = memory_log(index_interval_bytes=4_096)
    for _ in range(4_000 * len(small) // len(large)):
        few.append(large)
    assert many.size_bytes == pytest.approx(few.size_bytes, rel=0.05)
    # An entry starts at least one interval after the previous one, and at most one batch later.
    for log, batch_size in ((many, len(small)), (few, len(large))):
        assert log.size_bytes // (4_096 + batch_size) <= log.index_entries <= log.size_bytes // 4_096 + 1
    assert many.index_entries < 4_000 // 50


def test_listeners_run_after_each_append_until_removed(make_log):
    log = make_log()
    seen = []

    def listener() -> None:
        seen.append(log.log_end_offset)

    log.add_listener(listener)
    log.append(batch(2))
    log.append(batch(1))
    log.remove_listener(listener)
    log.append(batch(1))
    assert seen == [2, 3]


@pytest.mark.parametrize("mangle, error", [
    (lambda b: b"", CorruptBatchError),
    (lambda b: b[:-1], CorruptBatchError),
    (lambda b: b + b[:20], CorruptBatchError),
    (lambda b: b[:30] + bytes([b[30] ^ 0xFF]) + b[31:], CorruptBatchError),  # inside the CRC
    (lambda b: b[:16] + b"\x01" + b[17:], UnsupportedMagicError),
    (lambda b: b[:16] + b"\x00" + b[17:], UnsupportedMagicError),
    (lambda b: b[:16] + b"\x03" + b[17:], CorruptBatchError),
], ids=["empty", "truncated", "trailing-bytes", "bad-crc", "magic-1", "magic-0", "magic-3"])
def test_malformed_produce_data_is_refused_and_nothing_is_written(make_log, mangle, error):
    log = make_log()
    log.append(batch(1))
    with pytest.raises(error):
        log.append(mangle(batch(2)))
    assert log.log_end_offset == 1
    assert [b.base_offset for b in batches_in(log.read(0, 10_000))] == [0]


def test_a_batch_whose_record_count_disagrees_with_its_last_offset_delta_is_refused(make_log):
    from kafka.record.util import calc_crc32c

    data = bytearray(batch(3))
    struct.pack_into(">i", data, 23, 5)  # LastOffsetDelta, inside the CRC: recompute it
    struct.pack_into(">I", data, 17, calc_crc32c(memoryview(data)[21:]))
    log = make_log()
    with pytest.raises(CorruptBatchError, match="last offset delta"):
        log.append(bytes(data))


def test_the_producer_base_offset_and_epoch_are_replaced(make_log):
    data = bytearray(batch(1))
    struct.pack_into(">q", data, 0, 12345)
    struct.pack_into(">i", data, 12, 77)
    log = make_log()
    log.append(batch(1))
    log.append(bytes(data))
    stored = batches_in(log.read(1, 1_000))[0]
    assert (stored.base_offset, stored.leader_epoch, stored.validate_crc()) == (1, 0, True)
