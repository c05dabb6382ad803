"""Topic configs a partition log honours, on a manual clock: segment.bytes and segment.ms rolls,
max.message.bytes, LogAppendTime stamps, and retention by bytes and by time (whole segments, the
log start following, the active segment rolled first when it expires too)."""

from __future__ import annotations

import asyncio
import os
import threading

import pytest
from kafka.record.default_records import DefaultRecordBatch

from groupctl.log import LogConfig, LogManager, OffsetOutOfRangeError, RecordTooLargeError
from groupctl.log.checkpoints import LOG_START_FILE
from groupctl.log.config import LOG_APPEND_TIME
from groupctl.log.segment import STAGED_SUFFIX
from tests.unit.test_log_partition import batch, batches_in

HOUR_MS = 3_600_000
BATCH = len(batch(10))  # 10 records of 10-byte values


class ManualClock:
    def __init__(self, now_ms: int) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms


@pytest.fixture(params=["memory", "files"])
def manager(request, tmp_path):
    clock = ManualClock(10 * HOUR_MS)
    opened = LogManager(tmp_path / "logs" if request.param == "files" else None, clock=clock)
    opened.test_clock = clock
    yield opened
    opened.close()


def retain(manager: LogManager) -> None:
    asyncio.run(manager.enforce_retention())


def test_a_segment_rolls_once_a_batch_is_newer_than_its_first_by_more_than_segment_ms(manager):
    manager.set_topic_config("orders", LogConfig(segment_ms=1_000))
    log = manager.partition("orders", 0)
    log.append(batch(1, first_timestamp=5_000))
    log.append(batch(1, first_timestamp=6_000))  # exactly segment.ms later: same segment
    assert log.segment_base_offsets == [0]
    log.append(batch(1, first_timestamp=6_001))
    assert log.segment_base_offsets == [0, 2]


def test_segment_bytes_changed_at_run_time_applies_to_the_next_append(manager):
    log = manager.partition("orders", 0)
    log.append(batch(10))
    log.append(batch(10))
    assert log.segment_base_offsets == [0]
    manager.set_topic_config("orders", LogConfig(segment_bytes=BATCH * 2))
    log.append(batch(10))
    assert log.segment_base_offsets == [0, 20]


def test_a_batch_above_max_message_bytes_is_refused_and_nothing_is_written(manager):
    manager.set_topic_config("orders", LogConfig(max_message_bytes=BATCH - 1))
    log = manager.partition("orders", 0)
    with pytest.raises(RecordTooLargeError):
        log.append(batch(10))
    assert log.log_end_offset == 0
    log.append(batch(9))
    assert log.log_end_offset == 9


def test_log_append_time_stamps_the_batch_with_the_clock_and_keeps_a_valid_crc(manager):
    manager.set_topic_config("orders", LogConfig(message_timestamp_type=LOG_APPEND_TIME))
    log = manager.partition("orders", 0)
    appended = log.append(batch(3, first_timestamp=1_000))
    assert appended.log_append_time == manager.test_clock.now_ms
    (stored,) = batches_in(log.read(0, 10_000))
    assert isinstance(stored, DefaultRecordBatch) and stored.validate_crc()
    assert stored.timestamp_type == DefaultRecordBatch.LOG_APPEND_TIME
    assert [(r.offset, r.timestamp, r.timestamp_type) for r in stored] == [
        (o, manager.test_clock.now_ms, 1) for o in range(3)]
    assert log.offset_for_timestamp(2_000) == (0, manager.test_clock.now_ms)


def test_create_time_leaves_the_producers_timestamps_and_answers_no_append_time(manager):
    log = manager.partition("orders", 0)
    assert log.append(batch(2, first_timestamp=1_000)).log_append_time == -1
    (stored,) = batches_in(log.read(0, 10_000))
    assert [r.timestamp for r in stored] == [1_000, 1_001]


def fill_segments(manager: LogManager, config: LogConfig, timestamps: list[int]) -> object:
    """A log of one 10-record batch per segment, the batch at each of `timestamps`."""
    manager.set_topic_config("orders", config)
    log = manager.partition("orders", 0)
    for ts in timestamps:
        log.append(batch(10, first_timestamp=ts, step=0))
    return log


@pytest.mark.parametrize(("retention_bytes", "left"), [
    (2 * BATCH, [30, 40]),
    (2 * BATCH - 1, [30, 40]),
    (2 * BATCH + 1, [20, 30, 40]),  # a segment goes only while the excess covers all of it (Kafka)
])
def test_retention_bytes_deletes_the_oldest_segments_while_the_log_is_too_large(manager, retention_bytes, left):
    log = fill_segments(manager, LogConfig(segment_bytes=BATCH, retention_bytes=retention_bytes),
                        [manager.test_clock.now_ms] * 5)
    assert log.segment_base_offsets == [0, 10, 20, 30, 40]
    retain(manager)
    assert (log.segment_base_offsets, log.log_start_offset) == (left, left[0])
    with pytest.raises(OffsetOutOfRangeError):
        log.read(left[0] - 1, 10_000)
    if manager.data_dir is not None:
        assert sorted(p.name for p in log.directory.glob("*.log")) == [f"{b:020d}.log" for b in left]
        assert (log.directory / LOG_START_FILE).read_text() == f"0\n{left[0]}\n"


def test_retention_ms_deletes_segments_whose_newest_record_is_older(manager):
    now = manager.test_clock.now_ms
    log = fill_segments(manager, LogConfig(segment_bytes=BATCH, retention_ms=HOUR_MS),
                        [now - 3 * HOUR_MS, now - 2 * HOUR_MS, now - HOUR_MS, now])
    retain(manager)
    assert log.segment_base_offsets == [20, 30]  # exactly retention.ms old stays, as Kafka
    manager.test_clock.now_ms += 1
    retain(manager)
    assert (log.segment_base_offsets, log.log_start_offset) == ([30], 30)


def test_an_entirely_expired_log_rolls_and_deletes_its_active_segment_too(manager):
    now = manager.test_clock.now_ms
    log = fill_segments(manager, LogConfig(segment_bytes=BATCH, retention_ms=HOUR_MS),
                        [now - 3 * HOUR_MS, now - 2 * HOUR_MS])
    retain(manager)
    assert (log.segment_base_offsets, log.log_start_offset, log.log_end_offset) == ([20], 20, 20)
    retain(manager)  # an empty active segment stays
    assert log.segment_base_offsets == [20]
    assert log.append(batch(1)).base_offset == 20


def test_retention_ms_minus_one_keeps_everything(manager):
    now = manager.test_clock.now_ms
    log = fill_segments(manager, LogConfig(segment_bytes=BATCH, retention_ms=-1), [0, now - 9 * HOUR_MS])
    retain(manager)
    assert log.segment_base_offsets == [0, 10]


def test_retention_after_delete_records_keeps_the_later_start(manager):
    now = manager.test_clock.now_ms
    log = fill_segments(manager, LogConfig(segment_bytes=BATCH, retention_ms=HOUR_MS),
                        [now - 2 * HOUR_MS, now, now])
    asyncio.run(manager.finish_removal(log, log.delete_records_before(25)))
    retain(manager)
    assert (log.segment_base_offsets, log.log_start_offset) == ([20], 25)


def test_topic_configs_reach_logs_opened_later_and_a_deleted_topic_forgets_its_config(manager):
    manager.set_topic_config("orders", LogConfig(segment_ms=5))
    assert manager.partition("orders", 1).config == LogConfig(segment_ms=5)
    assert manager.partition("payments", 0).config == manager.default_config
    manager.delete_topic("orders")
    assert manager.partition("orders", 1).config == manager.default_config


def test_the_managers_segment_bytes_is_the_default_config(tmp_path):
    manager = LogManager(None, segment_bytes=4096)
    try:
        assert manager.partition("orders", 0).config == LogConfig(segment_bytes=4096)
    finally:
        manager.close()


def test_the_retention_task_runs_every_interval_until_close(tmp_path):
    clock = ManualClock(10 * HOUR_MS)
    manager = LogManager(tmp_path, clock=clock)
    manager.set_topic_config("orders", LogConfig(segment_bytes=BATCH, retention_ms=HOUR_MS))
    log = manager.partition("orders", 0)
    log.append(batch(10, first_timestamp=0, step=0))
    log.append(batch(10, first_timestamp=clock.now_ms, step=0))

    async def run() -> None:
        manager.start_retention(interval_ms=10)
        for _ in range(500):
            if log.log_start_offset == 10:
                break
            await asyncio.sleep(0.01)
        manager.close()

    asyncio.run(run())
    assert log.log_start_offset == 10


def test_without_a_first_timestamp_segment_ms_counts_from_the_segments_creation(manager):
    manager.set_topic_config("orders", LogConfig(segment_ms=1_000))
    log = manager.partition("orders", 0)
    log.append(batch(1, timestamps=[-1]))
    manager.test_clock.now_ms += 1_000
    log.append(batch(1, timestamps=[-1]))
    assert log.segment_base_offsets == [0]
    manager.test_clock.now_ms += 1
    log.append(batch(1, timestamps=[-1]))
    assert log.segment_base_offsets == [0, 2]


def test_retention_of_an_entirely_expired_log_does_no_fsync_and_creates_no_file_on_the_loop(tmp_path, monkeypatch):
    clock = ManualClock(10 * HOUR_MS)
    manager = LogManager(tmp_path / "logs", clock=clock)
    on_loop: list[str] = []
    loop_thread = threading.current_thread()
    real_fsync, real_open = os.fsync, os.open

    def fsync(fd):
        if threading.current_thread() is loop_thread:
            on_loop.append(f"fsync {fd}")
        return real_fsync(fd)

    def open_(path, flags, *args):
        if threading.current_thread() is loop_thread and flags & os.O_CREAT:
            on_loop.append(f"create {path}")
        return real_open(path, flags, *args)

    try:
        log = fill_segments(manager, LogConfig(segment_bytes=BATCH, retention_ms=HOUR_MS),
                            [clock.now_ms - 3 * HOUR_MS, clock.now_ms - 2 * HOUR_MS])
        monkeypatch.setattr(os, "fsync", fsync)
        monkeypatch.setattr(os, "open", open_)
        retain(manager)
        monkeypatch.undo()
        assert on_loop == []
        assert (log.segment_base_offsets, log.log_start_offset) == ([20], 20)
        assert sorted(path.name for path in log.directory.iterdir() if path.suffix in (".log", ".index")) == [
            f"{20:020d}.index", f"{20:020d}.log"]
        assert log.append(batch(1)).base_offset == 20
    finally:
        manager.close()


def test_an_append_racing_a_staged_roll_keeps_the_active_segment_until_the_next_pass(tmp_path):
    clock = ManualClock(10 * HOUR_MS)
    manager = LogManager(tmp_path / "logs", clock=clock)
    try:
        log = fill_segments(manager, LogConfig(segment_bytes=BATCH * 2, retention_ms=HOUR_MS),
                            [clock.now_ms - 3 * HOUR_MS])
        staged = log.stage_segment(log.retention_roll_base())
        log.append(batch(1, first_timestamp=clock.now_ms - 3 * HOUR_MS))  # still expired, log end moved
        removal = log.retention_removal(staged)
        assert (removal.log_start_offset, log.segment_base_offsets) == (0, [0])
        assert not list(log.directory.glob("*" + STAGED_SUFFIX))
        retain(manager)
        assert (log.segment_base_offsets, log.log_start_offset, log.log_end_offset) == ([11], 11, 11)
    finally:
        manager.close()


def test_a_segment_staged_before_a_crash_is_removed_when_the_log_opens(tmp_path):
    manager = LogManager(tmp_path / "logs")
    log = manager.partition("orders", 0)
    log.append(batch(1))
    log.stage_segment(1).close()
    manager.close()
    reopened = LogManager(tmp_path / "logs")
    try:
        log = reopened.partition("orders", 0)
        assert not list(log.directory.glob("*" + STAGED_SUFFIX))
        assert (log.segment_base_offsets, log.log_end_offset) == ([0], 1)
    finally:
        reopened.close()
