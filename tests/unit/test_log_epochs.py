"""The leader-epoch cache (groupctl/log/epochs.py) answers as Kafka's LeaderEpochFileCache and
survives restarts through its `leader-epoch-checkpoint` file, and a partition log stamps its
epoch on every batch it appends and keeps the cache in step when it reopens."""

from __future__ import annotations

import asyncio
import os
import threading

import pytest
from kafka.record.memory_records import MemoryRecordsBuilder

from groupctl.log import epochs as epochs_module
from groupctl.log.batches import parse_header
from groupctl.log.config import LogConfig
from groupctl.log.epochs import CHECKPOINT_FILE, LeaderEpochCache, open_cache
from groupctl.log.manager import LogManager
from groupctl.log.partition import PartitionLog


def cache(*entries):
    return LeaderEpochCache(None, entries)


def records(count: int = 1) -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    for i in range(count):
        builder.append(1_000 + i, None, b"v")
    builder.close()
    return bytes(builder.buffer())


def log_at(directory, epoch: int = 0) -> PartitionLog:
    return PartitionLog("orders", 0, directory, config=LogConfig(segment_bytes=1 << 20), index_interval_bytes=4096,
                        leader_epoch=epoch)


# --- Kafka's endOffsetFor ---------------------------------------------------------------------


def test_the_latest_epoch_ends_at_the_log_end():
    assert cache((0, 0), (2, 10)).end_offset_for(2, 25) == (2, 25)


def test_an_older_epoch_ends_where_the_next_begins():
    assert cache((0, 0), (2, 10), (5, 30)).end_offset_for(2, 40) == (2, 30)


def test_an_unknown_epoch_between_two_is_answered_under_the_one_below_it():
    assert cache((0, 0), (2, 10), (5, 30)).end_offset_for(3, 40) == (2, 30)


def test_an_epoch_before_every_entry_ends_at_the_first_entry():
    assert cache((3, 10), (5, 30)).end_offset_for(1, 40) == (1, 10)


def test_an_epoch_above_every_entry_and_epoch_minus_one_are_undefined():
    assert cache((0, 0), (2, 10)).end_offset_for(3, 40) == (-1, -1)
    assert cache((0, 0)).end_offset_for(-1, 40) == (-1, -1)
    assert cache().end_offset_for(0, 40) == (-1, -1)


def test_the_epoch_of_an_offset_is_the_last_entry_starting_at_or_before_it():
    epochs = cache((1, 5), (2, 10))
    assert [epochs.epoch_for_offset(o) for o in (4, 5, 9, 10, 99)] == [-1, 1, 1, 2, 2]


# --- assign and truncation -------------------------------------------------------------------


def test_assigning_the_latest_epoch_again_changes_nothing():
    epochs = cache((0, 0), (1, 10))
    epochs.assign(1, 20)
    assert epochs.entries == [(0, 0), (1, 10)]


def test_assigning_a_new_epoch_drops_entries_that_break_monotonicity():
    epochs = cache((0, 0), (1, 10), (2, 20))
    epochs.assign(3, 15)
    assert epochs.entries == [(0, 0), (1, 10), (3, 15)]


def test_assigning_a_negative_epoch_is_refused():
    with pytest.raises(ValueError):
        cache().assign(-1, 0)


def test_truncating_from_the_start_moves_the_epoch_holding_the_new_start():
    epochs = cache((0, 0), (1, 10), (2, 20))
    epochs.truncate_from_start(15)
    assert epochs.entries == [(1, 15), (2, 20)]
    epochs.truncate_from_start(20)
    assert epochs.entries == [(2, 20)]


def test_truncating_from_the_end_drops_epochs_that_start_past_it():
    epochs = cache((0, 0), (1, 10), (2, 20))
    epochs.truncate_from_end(20)
    assert epochs.entries == [(0, 0), (1, 10), (2, 20)]
    epochs.truncate_from_end(12)
    assert epochs.entries == [(0, 0), (1, 10)]


# --- the checkpoint file ---------------------------------------------------------------------


def test_the_checkpoint_is_kafkas_format_and_reloads(tmp_path):
    epochs = LeaderEpochCache.rebuild(tmp_path, [])
    epochs.assign(0, 0)
    epochs.assign(3, 42)
    assert (tmp_path / CHECKPOINT_FILE).read_text() == "0\n2\n0 0\n3 42\n"
    assert not (tmp_path / (CHECKPOINT_FILE + ".tmp")).exists()
    assert LeaderEpochCache.load(tmp_path).entries == [(0, 0), (3, 42)]


def test_a_missing_checkpoint_is_rebuilt_from_the_batch_epochs(tmp_path):
    rebuilt = open_cache(tmp_path, lambda: [(-1, 0), (-1, 3), (0, 5), (0, 7), (2, 9)], 12)
    assert rebuilt.entries == [(0, 5), (2, 9)]
    assert (tmp_path / CHECKPOINT_FILE).read_text() == "0\n2\n0 5\n2 9\n"


def test_a_damaged_checkpoint_is_rebuilt_from_the_batch_epochs(tmp_path):
    (tmp_path / CHECKPOINT_FILE).write_text("0\n3\n0 0\n")
    assert open_cache(tmp_path, lambda: [(4, 0)], 1).entries == [(4, 0)]


def test_recovery_drops_checkpointed_epochs_past_the_log_end(tmp_path):
    (tmp_path / CHECKPOINT_FILE).write_text("0\n3\n0 0\n1 10\n2 30\n")
    assert open_cache(tmp_path, lambda: [], 20).entries == [(0, 0), (1, 10)]
    assert LeaderEpochCache.load(tmp_path).entries == [(0, 0), (1, 10)]


# --- a partition log -------------------------------------------------------------------------


def batch_epochs(log: PartitionLog) -> list[int]:
    data = log.read(0, 1 << 20)
    epochs, pos = [], 0
    while pos < len(data):
        header = parse_header(data, pos, pos)
        epochs.append(header.leader_epoch)
        pos += header.size
    return epochs


def test_appended_batches_carry_the_logs_leader_epoch(tmp_path):
    log = log_at(tmp_path, epoch=0)
    log.append(records(2))
    log.become_leader(1)
    log.append(records(1))
    assert batch_epochs(log) == [0, 1]
    assert log.epochs.entries == [(0, 0), (1, 2)]
    log.close()


def test_a_reopened_log_keeps_its_epochs_and_starts_the_new_one_at_its_end(tmp_path):
    log = log_at(tmp_path, epoch=0)
    log.append(records(3))
    log.close()
    reopened = log_at(tmp_path, epoch=1)
    assert reopened.epochs.entries == [(0, 0), (1, 3)]
    assert reopened.epochs.end_offset_for(0, reopened.log_end_offset) == (0, 3)
    reopened.close()


def test_a_log_without_a_checkpoint_rebuilds_it_from_its_batches(tmp_path):
    log = log_at(tmp_path, epoch=2)
    log.append(records(3))
    log.close()
    (tmp_path / CHECKPOINT_FILE).unlink()
    reopened = log_at(tmp_path, epoch=3)
    assert reopened.epochs.entries == [(2, 0), (3, 3)]
    reopened.close()


def test_deleting_records_truncates_the_epochs_from_the_new_log_start(tmp_path):
    log = log_at(tmp_path, epoch=0)
    log.append(records(3))
    log.become_leader(1)
    log.append(records(3))
    log.finish_removal(log.delete_records_before(4))
    assert log.epochs.entries == [(1, 4)]
    log.close()


def test_a_reopened_log_truncates_its_epochs_from_its_checkpointed_start(tmp_path):
    log = log_at(tmp_path, epoch=0)
    log.append(records(3))
    log.become_leader(1)
    log.append(records(3))
    log.finish_removal(log.delete_records_before(2))
    (tmp_path / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n1 3\n")  # a stale cache
    log.close()
    reopened = log_at(tmp_path, epoch=1)
    assert reopened.epochs.entries == [(0, 2), (1, 3)]
    reopened.close()


def test_the_log_manager_opens_a_log_at_its_partitions_epoch_and_moves_it_when_it_rises(tmp_path):
    epochs = {("orders", 0): 3}
    manager = LogManager(tmp_path, epoch_of=lambda topic, partition: epochs[(topic, partition)])
    log = manager.partition("orders", 0)
    log.append(records(2))
    manager.lead("orders", 0, 4)
    assert (log.leader_epoch, log.epochs.entries) == (4, [(3, 0), (4, 2)])
    manager.close()


def test_only_an_empty_logs_checkpoint_is_written_without_fsync(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(epochs_module.os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    log = log_at(tmp_path, epoch=0)
    assert synced == [] and (tmp_path / CHECKPOINT_FILE).read_text() == "0\n1\n0 0\n"
    log.append(records(1))
    log.become_leader(1)
    assert len(synced) == 2  # the file, then the directory holding the renamed file
    log.close()


# --- epochs never go back -------------------------------------------------------------------


def test_a_log_is_never_moved_to_a_lower_epoch_and_keeps_the_entries_above_it(tmp_path):
    manager = LogManager(tmp_path, epoch_of=lambda topic, partition: 5)
    log = manager.partition("orders", 0)
    log.append(records(2))
    manager.lead("orders", 0, 6)
    manager.lead("orders", 0, 1)  # e.g. the topic document lost its leader_epochs field
    assert (log.leader_epoch, log.epochs.entries) == (6, [(5, 0), (6, 2)])
    assert log.epochs.end_offset_for(5, log.log_end_offset) == (5, 2)
    manager.close()


def test_a_log_opened_at_an_epoch_below_its_cache_leads_at_its_latest_epoch(tmp_path):
    log = log_at(tmp_path, epoch=3)
    log.append(records(2))
    log.close()
    reopened = log_at(tmp_path, epoch=0)  # e.g. ZooKeeper was wiped, the data dir kept
    assert (reopened.leader_epoch, reopened.epochs.entries) == (3, [(3, 0)])
    reopened.append(records(1))
    assert batch_epochs(reopened) == [3, 3]
    reopened.close()


def test_the_latest_epochs_of_logs_not_open_come_from_their_checkpoints_without_opening_them(tmp_path):
    async def scenario():
        manager = LogManager(tmp_path, epoch_of=lambda topic, partition: 7)
        try:
            (await manager.open("orders", 0)).append(records(1))
            manager.close()
            manager = LogManager(tmp_path)
            (await manager.open("orders", 1)).become_leader(2)
            latest = await manager.latest_epochs([("orders", 0), ("orders", 1), ("orders", 2)])
            assert latest == {("orders", 0): 7, ("orders", 1): 2, ("orders", 2): -1}
            assert manager.get("orders", 0) is None and manager.get("orders", 2) is None
        finally:
            manager.close()
    asyncio.run(scenario())


# --- checkpoint writes off the loop -----------------------------------------------------------


def test_raising_the_epochs_of_many_logs_writes_their_checkpoints_in_worker_threads(tmp_path, monkeypatch):
    async def scenario():
        manager = LogManager(tmp_path)
        try:
            logs = [await manager.open("orders", p) for p in range(3)]
            for log in logs:
                log.append(records(2))
            loop_thread = threading.current_thread()
            on_loop = []
            real_fsync = os.fsync
            monkeypatch.setattr(os, "fsync", lambda fd: (threading.current_thread() is loop_thread
                                                         and on_loop.append(fd)) or real_fsync(fd))
            await manager.lead_all([("orders", p, 1) for p in range(3)] + [("orders", 9, 1)])
            monkeypatch.undo()
            assert on_loop == []
            for log in logs:
                assert (log.leader_epoch, log.epochs.entries) == (1, [(0, 0), (1, 2)])
                assert (log.directory / CHECKPOINT_FILE).read_text() == "0\n2\n0 0\n1 2\n"
        finally:
            manager.close()
    asyncio.run(scenario())


def test_a_deleted_log_writes_no_epoch_checkpoint_into_its_removed_directory(tmp_path):
    log = log_at(tmp_path / "orders-0")
    log.append(records(1))
    assert log.raise_epoch(1)
    log.delete()
    log.epochs.checkpoint()  # a worker thread's write finishing late
    assert not (tmp_path / "orders-0").exists()


# --- the log start and the epoch checkpoint ---------------------------------------------------


def test_a_failed_log_start_checkpoint_leaves_the_epochs_of_the_old_start_on_disk(tmp_path, monkeypatch):
    log = log_at(tmp_path, epoch=0)
    log.append(records(3))
    log.become_leader(1)
    log.append(records(3))

    def fail(offset):
        raise OSError("disk full")

    monkeypatch.setattr(log._checkpoint, "_write", fail)
    with pytest.raises(OSError):
        log.finish_removal(log.delete_records_before(4))  # DeleteRecords answers KAFKA_STORAGE_ERROR
    assert log.epochs.entries == [(1, 4)]  # in memory the start moved, as Kafka's
    log.close()
    reopened = log_at(tmp_path, epoch=1)
    assert reopened.log_start_offset == 0
    assert reopened.epochs.epoch_for_offset(0) == 0
    reopened.close()


def test_an_epoch_raised_before_a_moved_log_start_is_checkpointed_keeps_the_old_start_s_epochs_on_disk(tmp_path):
    log = log_at(tmp_path, epoch=0)
    log.append(records(3))
    log.become_leader(1)
    log.append(records(3))
    log.delete_records_before(4)  # the node dies before `finish_removal` checkpoints the start
    log.become_leader(2)
    log.close()
    reopened = log_at(tmp_path, epoch=2)
    assert reopened.log_start_offset == 0
    assert reopened.epochs.entries == [(0, 0), (1, 3), (2, 6)]
    reopened.close()
