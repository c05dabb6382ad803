"""The log start offset: DeleteRecords moves it, every read follows it, whole segments below it
are deleted, and it is checkpointed so it survives a reopen or a crash."""

from __future__ import annotations

import asyncio

import pytest

from groupctl.log import HIGH_WATERMARK, LogCorruptionError, LogManager, OffsetOutOfRangeError, PartitionLog
from groupctl.log.checkpoints import LOG_START_FILE
from groupctl.log.config import LogConfig
from tests.unit.test_log_partition import batch, batches_in

SEGMENT_BYTES = 1_000  # a 10-record batch of 10-byte values is ~250 bytes: 3 batches a segment
CONFIG = LogConfig(segment_bytes=SEGMENT_BYTES)


@pytest.fixture(params=["memory", "files"])
def manager(request, tmp_path):
    opened = LogManager(tmp_path / "logs" if request.param == "files" else None, segment_bytes=SEGMENT_BYTES)
    yield opened
    opened.close()


def fill(log: PartitionLog, batches: int, first_timestamp: int = 1_000) -> None:
    """`batches` batches of 10 records, timestamps counting up by 1 ms per record."""
    for i in range(batches):
        log.append(batch(10, first_timestamp=first_timestamp + 10 * i))


def delete_records(manager: LogManager, log: PartitionLog, offset: int) -> int:
    async def run() -> int:
        await manager.finish_removal(log, log.delete_records_before(offset))
        return log.log_start_offset
    return asyncio.run(run())


def test_delete_records_moves_the_start_and_reads_below_it_are_out_of_range(manager):
    log = manager.partition("orders", 0)
    fill(log, 2)
    assert delete_records(manager, log, 15) == 15
    with pytest.raises(OffsetOutOfRangeError):
        log.read(14, 10_000)
    assert [b.base_offset for b in batches_in(log.read(15, 10_000))] == [10]  # the batch holding 15
    assert log.log_end_offset == 20


def test_minus_one_deletes_up_to_the_high_watermark(manager):
    log = manager.partition("orders", 0)
    fill(log, 2)
    assert delete_records(manager, log, HIGH_WATERMARK) == 20
    assert log.read(20, 10_000) == b""
    assert log.append(batch(1)).base_offset == 20


@pytest.mark.parametrize("offset", [21, -2])
def test_an_offset_above_the_high_watermark_or_negative_is_out_of_range(manager, offset):
    log = manager.partition("orders", 0)
    fill(log, 2)
    with pytest.raises(OffsetOutOfRangeError):
        log.delete_records_before(offset)
    assert log.log_start_offset == 0


def test_an_offset_below_the_start_changes_nothing(manager):
    log = manager.partition("orders", 0)
    fill(log, 2)
    delete_records(manager, log, 12)
    assert delete_records(manager, log, 5) == 12


def test_timestamp_lookups_never_answer_an_offset_below_the_start(manager):
    log = manager.partition("orders", 0)
    fill(log, 2)  # offset o has timestamp 1000 + o
    delete_records(manager, log, 13)
    assert log.offset_for_timestamp(0) == (13, 1013)
    assert log.offset_for_timestamp(1005) == (13, 1013)
    assert log.offset_for_timestamp(1017) == (17, 1017)


def test_segments_entirely_below_the_start_are_deleted_and_the_active_one_never(manager):
    log = manager.partition("orders", 0)
    fill(log, 7)
    bases = log.segment_base_offsets
    assert len(bases) >= 3
    delete_records(manager, log, bases[2])
    assert log.segment_base_offsets == bases[2:]
    delete_records(manager, log, HIGH_WATERMARK)
    assert log.segment_base_offsets == bases[-1:]
    assert log.log_start_offset == log.log_end_offset == 70
    if manager.data_dir is not None:
        files = sorted(p.name for p in log.directory.glob("*.log"))
        assert files == [f"{bases[-1]:020d}.log"]


def test_the_start_survives_a_clean_reopen(tmp_path):
    first = LogManager(tmp_path, segment_bytes=SEGMENT_BYTES)
    log = first.partition("orders", 0)
    fill(log, 7)
    delete_records(first, log, 45)
    first.close()
    second = LogManager(tmp_path, segment_bytes=SEGMENT_BYTES)
    try:
        reopened = second.partition("orders", 0)
        assert (reopened.log_start_offset, reopened.log_end_offset) == (45, 70)
        with pytest.raises(OffsetOutOfRangeError):
            reopened.read(44, 10_000)
    finally:
        second.close()


def test_without_a_checkpoint_the_log_starts_at_its_first_segment(tmp_path):
    log = PartitionLog("orders", 0, tmp_path / "orders-0", config=CONFIG, index_interval_bytes=4096)
    fill(log, 7)
    log.close()
    for base in log.segment_base_offsets[:2]:
        (tmp_path / "orders-0" / f"{base:020d}.log").unlink()
        (tmp_path / "orders-0" / f"{base:020d}.index").unlink()
    reopened = PartitionLog("orders", 0, tmp_path / "orders-0", config=CONFIG, index_interval_bytes=4096)
    assert reopened.log_start_offset == log.segment_base_offsets[2]


def test_a_crash_between_checkpoint_and_unlink_leaves_segments_that_the_next_open_deletes(tmp_path):
    directory = tmp_path / "orders-0"
    log = PartitionLog("orders", 0, directory, config=CONFIG, index_interval_bytes=4096)
    fill(log, 7)
    bases = log.segment_base_offsets
    removal = log.delete_records_before(bases[2] + 1)
    log._checkpoint.commit(removal.log_start_offset, lambda: None)  # the crash comes before the segments go
    reopened = PartitionLog("orders", 0, directory, config=CONFIG, index_interval_bytes=4096)
    assert reopened.log_start_offset == bases[2] + 1
    assert reopened.segment_base_offsets == bases[2:]
    assert sorted(p.name for p in directory.glob("*.log")) == [f"{b:020d}.log" for b in bases[2:]]


def test_a_checkpoint_past_the_log_end_restarts_the_log_empty_at_the_checkpoint(tmp_path):
    directory = tmp_path / "orders-0"
    log = PartitionLog("orders", 0, directory, config=CONFIG, index_interval_bytes=4096)
    fill(log, 2)
    log.close()
    (directory / LOG_START_FILE).write_text("0\n500\n")
    reopened = PartitionLog("orders", 0, directory, config=CONFIG, index_interval_bytes=4096)
    assert (reopened.log_start_offset, reopened.log_end_offset) == (500, 500)
    assert reopened.append(batch(1)).base_offset == 500


@pytest.mark.parametrize("text", ["", "0\n", "1\n5\n", "0\nfive\n", "0\n5\n6\n"])
def test_a_damaged_checkpoint_is_corruption(tmp_path, text):
    directory = tmp_path / "orders-0"
    directory.mkdir()
    (directory / LOG_START_FILE).write_text(text)
    with pytest.raises(LogCorruptionError):
        PartitionLog("orders", 0, directory, config=CONFIG, index_interval_bytes=4096)


def test_the_checkpoint_never_steps_back(tmp_path):
    directory = tmp_path / "orders-0"
    log = PartitionLog("orders", 0, directory, config=CONFIG, index_interval_bytes=4096)
    fill(log, 2)
    to_15 = log.delete_records_before(15)
    to_20 = log.delete_records_before(HIGH_WATERMARK)
    log.finish_removal(to_20)  # worker threads may finish them in either order
    log.finish_removal(to_15)
    assert (directory / LOG_START_FILE).read_text() == "0\n20\n"


def test_a_removal_finishing_after_its_log_was_deleted_touches_no_file_of_a_recreated_log(tmp_path):
    directory = tmp_path / "orders-0"
    log = PartitionLog("orders", 0, directory, config=CONFIG, index_interval_bytes=4096)
    fill(log, 7)
    removal = log.delete_records_before(45)
    log.delete()  # the topic is deleted while a worker thread has yet to finish the removal
    recreated = PartitionLog("orders", 0, directory, config=CONFIG, index_interval_bytes=4096)
    recreated.append(batch(1))
    log.finish_removal(removal)
    assert sorted(p.name for p in directory.iterdir()) == [f"{0:020d}.index", f"{0:020d}.log", "leader-epoch-checkpoint"]
    assert recreated.read(0, 10_000) != b""
