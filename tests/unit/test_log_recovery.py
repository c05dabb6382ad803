"""The partition log on disk: what survives a clean close, what a crash leaves and how reopening
repairs it, and the data directory's layout, lock and topic deletion.

A crash is modelled by copying a partition's files while its log is still open: the copy holds
exactly what the OS had when the process died."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest
from kafka.record.memory_records import MemoryRecords, MemoryRecordsBuilder

from groupctl.log import LogCorruptionError, LogDirLockedError, LogManager

SEGMENT_BYTES = 2_000
INTERVAL = 300


def batch(count: int = 2, first_timestamp: int = 1_000, value_size: int = 40) -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    for i in range(count):
        builder.append(first_timestamp + i, None, bytes([i]) * value_size)
    builder.close()
    return bytes(builder.buffer())


def offsets_in(data: bytes) -> list[int]:
    records = MemoryRecords(data)
    found = []
    while records.has_next():
        found.extend(record.offset for record in records.next_batch())
    return found


def open_manager(data_dir: Path) -> LogManager:
    return LogManager(data_dir, segment_bytes=SEGMENT_BYTES, index_interval_bytes=INTERVAL)


def fill(manager: LogManager, batches: int, topic: str = "orders", partition: int = 0):
    log = manager.partition(topic, partition)
    for i in range(batches):
        log.append(batch(first_timestamp=1_000 + 10 * i))
    return log


def crash_copy(data_dir: Path, target: Path) -> Path:
    shutil.copytree(data_dir, target, ignore=shutil.ignore_patterns(".lock"))
    return target


def all_offsets(log) -> list[int]:
    found = []
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        chunk = offsets_in(log.read(offset, 100_000))
        found.extend(o for o in chunk if o >= offset)
        offset = chunk[-1] + 1
    return found


def test_the_layout_is_one_directory_per_partition_with_segment_and_index_pairs(tmp_path):
    manager = open_manager(tmp_path)
    fill(manager, 40)
    manager.close()
    files = sorted(p.name for p in (tmp_path / "orders-0").iterdir())
    assert "00000000000000000000.log" in files and "00000000000000000000.index" in files
    assert ".clean_shutdown" in files
    assert len([f for f in files if f.endswith(".log")]) == len([f for f in files if f.endswith(".index")]) > 1


def test_a_clean_reopen_restores_offsets_segments_index_and_timestamps(tmp_path):
    manager = open_manager(tmp_path)
    before = fill(manager, 40)
    state = (before.log_end_offset, before.segment_base_offsets, before.index_entries, before.max_timestamp)
    lookup = before.offset_for_timestamp(1_255)
    manager.close()

    reopened = open_manager(tmp_path).partition("orders", 0)
    assert (reopened.log_end_offset, reopened.segment_base_offsets, reopened.index_entries,
            reopened.max_timestamp) == state
    assert reopened.offset_for_timestamp(1_255) == lookup == (52, 1_260)
    assert all_offsets(reopened) == list(range(80))
    assert reopened.append(batch()).base_offset == 80


def test_after_a_crash_everything_written_to_the_os_is_recovered(tmp_path):
    manager = open_manager(tmp_path / "live")
    fill(manager, 40)
    copy = crash_copy(tmp_path / "live", tmp_path / "crashed")
    manager.close()

    recovered = open_manager(copy).partition("orders", 0)
    assert recovered.log_end_offset == 80
    assert all_offsets(recovered) == list(range(80))


@pytest.mark.parametrize("damage", [
    lambda data: data[:-7],  # the last batch was half written
    lambda data: data + b"\x00" * 30,  # preallocated zeros after the last batch
    lambda data: data + batch()[:40],  # a header cut short
])
def test_a_torn_tail_is_truncated_back_to_the_last_whole_batch(tmp_path, damage):
    manager = open_manager(tmp_path / "live")
    log = fill(manager, 3)
    whole = log.size_bytes
    last_batch = len(batch())
    copy = crash_copy(tmp_path / "live", tmp_path / "crashed")
    manager.close()
    segment = copy / "orders-0" / "00000000000000000000.log"
    segment.write_bytes(damage(segment.read_bytes()))

    recovered = open_manager(copy).partition("orders", 0)
    expected_end = 4 if segment.stat().st_size < whole else 6
    assert recovered.log_end_offset == expected_end
    assert segment.stat().st_size == (whole - last_batch if expected_end == 4 else whole)
    assert recovered.append(batch()).base_offset == expected_end
    assert all_offsets(recovered) == list(range(expected_end + 2))


def test_after_a_crash_a_batch_failing_its_crc_ends_the_log(tmp_path):
    manager = open_manager(tmp_path / "live")
    fill(manager, 3)
    copy = crash_copy(tmp_path / "live", tmp_path / "crashed")
    manager.close()
    segment = copy / "orders-0" / "00000000000000000000.log"
    data = bytearray(segment.read_bytes())
    second = len(batch())
    data[second + 70] ^= 0xFF  # inside the second batch's records
    segment.write_bytes(bytes(data))

    recovered = open_manager(copy).partition("orders", 0)
    assert recovered.log_end_offset == 2
    assert segment.stat().st_size == second


def test_batches_that_do_not_chain_offsets_end_the_recovered_log(tmp_path):
    manager = open_manager(tmp_path / "live")
    fill(manager, 3)
    copy = crash_copy(tmp_path / "live", tmp_path / "crashed")
    manager.close()
    segment = copy / "orders-0" / "00000000000000000000.log"
    data = bytearray(segment.read_bytes())
    struct.pack_into(">q", data, 2 * len(batch()), 99)  # third batch claims offset 99
    segment.write_bytes(bytes(data))

    assert open_manager(copy).partition("orders", 0).log_end_offset == 4


def test_a_missing_index_of_a_closed_segment_is_rebuilt(tmp_path):
    manager = open_manager(tmp_path)
    before = fill(manager, 40)
    entries = before.index_entries
    manager.close()
    (tmp_path / "orders-0" / "00000000000000000000.index").unlink()

    reopened = open_manager(tmp_path).partition("orders", 0)
    assert reopened.index_entries == entries
    assert all_offsets(reopened) == list(range(80))
    assert reopened.offset_for_timestamp(1_001) == (1, 1_001)


def test_damage_inside_a_closed_segment_is_refused_loudly(tmp_path):
    manager = open_manager(tmp_path)
    fill(manager, 40)
    manager.close()
    first = tmp_path / "orders-0" / "00000000000000000000.log"
    first.write_bytes(first.read_bytes()[:-5])

    with pytest.raises(LogCorruptionError):
        open_manager(tmp_path).partition("orders", 0)


def test_a_data_dir_is_locked_while_a_manager_has_it_open(tmp_path):
    manager = open_manager(tmp_path)
    with pytest.raises(LogDirLockedError):
        open_manager(tmp_path)
    manager.close()
    open_manager(tmp_path).close()


def test_deleting_a_topic_removes_its_partitions_open_or_not_and_spares_similar_names(tmp_path):
    manager = open_manager(tmp_path)
    fill(manager, 2, "orders", 0)
    fill(manager, 2, "orders", 1)
    fill(manager, 2, "orders-eu", 0)
    manager.close()
    manager = open_manager(tmp_path)
    woken = []
    manager.partition("orders", 0).add_listener(lambda: woken.append(True))

    manager.delete_topic("orders")
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["orders-eu-0"]
    assert woken == [True]
    assert manager.partition("orders", 0).log_end_offset == 0
    assert manager.partition("orders-eu", 0).log_end_offset == 4
    manager.close()


def test_a_memory_only_manager_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    manager = LogManager(None, segment_bytes=SEGMENT_BYTES, index_interval_bytes=INTERVAL)
    log = fill(manager, 40)
    assert log.log_end_offset == 80 and len(log.segment_base_offsets) > 1
    manager.delete_topic("orders")
    manager.close()
    assert list(tmp_path.iterdir()) == []


def test_illegal_topic_names_never_become_paths(tmp_path):
    manager = open_manager(tmp_path)
    for bad in ("../escape", "a/b", "", ".."):
        with pytest.raises(ValueError):
            manager.partition(bad, 0)
    manager.close()
