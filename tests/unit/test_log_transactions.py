"""Transactions in the partition log, as Apache Kafka's log keeps them: open transactions in the
producer state, commit/abort markers written by `PartitionLog.append_marker`, the last stable
offset, the per-segment transaction index (`.txnindex`) and the aborted transactions a
read_committed fetch gets. No client can open a transaction against the node until the
transaction coordinator exists, so markers are written here through the log API."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Optional

import pytest
from kafka.record.default_records import DefaultRecordBatch
from kafka.record.memory_records import MemoryRecords, MemoryRecordsBuilder

from groupctl.log import (
    NO_GUARD,
    InvalidProducerEpochError,
    InvalidTxnStateError,
    PartitionLog,
    TransactionCoordinatorFencedError,
)
from groupctl.log.config import LogConfig
from groupctl.log.txnindex import AbortedTxn

NOW = 1_700_000_000_000


def batch(pid: int, epoch: int, seq: int, count: int = 1, *, transactional: bool = True) -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    builder.set_producer_state(pid, epoch, seq, transactional)
    for i in range(count):
        builder.append(NOW + i, None, b"v")
    builder.close()
    return bytes(builder.buffer())


def plain(count: int = 1) -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    for i in range(count):
        builder.append(NOW + i, None, b"p")
    builder.close()
    return bytes(builder.buffer())


def open_log(directory: Optional[Path], segment_bytes: int = 1 << 20, leader_epoch: int = 0) -> PartitionLog:
    return PartitionLog("orders", 0, directory, config=LogConfig(segment_bytes=segment_bytes),
                        index_interval_bytes=4096, clock=lambda: NOW, leader_epoch=leader_epoch)


def batches(data: bytes) -> list[DefaultRecordBatch]:
    records = MemoryRecords(data)
    out = []
    while records.has_next():
        out.append(records.next_batch())
    return out


# -- open transactions and the last stable offset -------------------------------------------


def test_a_transactional_batch_opens_a_transaction_that_holds_the_last_stable_offset():
    log = open_log(None)
    log.append(plain(2))
    log.append(batch(7, 0, 0, 3))
    log.append(plain())
    assert log.log_end_offset == 6
    assert log.high_watermark == 6
    assert log.last_stable_offset == 2
    assert log.producers.ongoing == {7: 2}


def test_a_log_without_transactions_has_its_last_stable_offset_at_the_high_watermark():
    log = open_log(None)
    log.append(plain(2))
    log.append(batch(9, 0, 0, transactional=False))
    assert log.last_stable_offset == log.high_watermark == 3


def test_further_batches_of_an_open_transaction_keep_its_first_offset():
    log = open_log(None)
    log.append(batch(7, 0, 0, 2))
    log.append(batch(7, 0, 2, 2))
    assert log.last_stable_offset == 0


def test_the_earliest_open_transaction_decides_the_last_stable_offset():
    log = open_log(None)
    log.append(batch(7, 0, 0))
    log.append(batch(8, 0, 0))
    log.append_marker(7, 0, commit=True, coordinator_epoch=0)
    assert log.last_stable_offset == 1
    log.append_marker(8, 0, commit=True, coordinator_epoch=0)
    assert log.last_stable_offset == log.log_end_offset == 4


def test_a_non_transactional_batch_while_the_producer_has_a_transaction_open_is_refused():
    log = open_log(None)
    log.append(batch(7, 0, 0))
    with pytest.raises(InvalidTxnStateError):
        log.append(batch(7, 0, 1, transactional=False))
    assert log.log_end_offset == 1


# -- markers ---------------------------------------------------------------------------------


def test_a_commit_marker_is_a_control_batch_in_kafkas_end_transaction_marker_format():
    log = open_log(None, leader_epoch=4)
    log.append(batch(7, 2, 0, 2))
    offset = log.append_marker(7, 2, commit=True, coordinator_epoch=11)
    assert offset == 2
    (marker,) = batches(log.read(2, 1 << 20))
    assert marker.is_control_batch and marker.is_transactional
    assert (marker.base_offset, marker.producer_id, marker.producer_epoch, marker.base_sequence) == (2, 7, 2, -1)
    assert marker.validate_crc()
    raw = log.read(2, 1 << 20)
    assert struct.unpack_from(">i", raw, 12)[0] == 4  # PartitionLeaderEpoch
    (record,) = list(marker)
    assert (record.version, record.commit, record.timestamp) == (0, True, NOW)
    assert record.value == struct.pack(">hi", 0, 11)  # version 0, coordinator epoch
    assert log.last_stable_offset == log.log_end_offset == 3
    assert log.producers.ongoing == {}


def test_an_abort_marker_records_the_aborted_transaction_with_the_last_stable_offset_at_completion():
    log = open_log(None)
    log.append(batch(7, 0, 0, 2))  # 0-1
    log.append(batch(8, 0, 0))  # 2
    offset = log.append_marker(7, 0, commit=False, coordinator_epoch=0)  # 3
    assert offset == 3
    assert log.aborted_transactions(0, log.log_end_offset) == [AbortedTxn(7, 0, 3, 2)]
    assert log.last_stable_offset == 2


def test_a_commit_is_not_recorded_as_aborted():
    log = open_log(None)
    log.append(batch(7, 0, 0))
    log.append_marker(7, 0, commit=True, coordinator_epoch=0)
    assert log.aborted_transactions(0, log.log_end_offset) == []


def test_a_marker_for_a_producer_with_no_open_transaction_is_written_and_completes_nothing():
    log = open_log(None)
    assert log.append_marker(42, 0, commit=False, coordinator_epoch=0) == 0
    assert log.log_end_offset == 1
    assert log.aborted_transactions(0, 1) == []


def test_a_marker_from_an_older_producer_epoch_is_refused_and_nothing_is_written():
    log = open_log(None)
    log.append(batch(7, 3, 0))
    with pytest.raises(InvalidProducerEpochError):
        log.append_marker(7, 2, commit=True, coordinator_epoch=0)
    assert log.log_end_offset == 1
    assert log.last_stable_offset == 0


def test_a_marker_from_an_older_coordinator_epoch_is_refused():
    log = open_log(None)
    log.append(batch(7, 0, 0))
    log.append_marker(7, 0, commit=True, coordinator_epoch=5)
    log.append(batch(7, 0, 1))
    with pytest.raises(TransactionCoordinatorFencedError):
        log.append_marker(7, 0, commit=True, coordinator_epoch=4)
    assert log.last_stable_offset == 2


def test_a_marker_at_a_bumped_epoch_fences_the_producers_older_epoch():
    log = open_log(None)
    log.append(batch(7, 0, 0))
    log.append_marker(7, 1, commit=False, coordinator_epoch=0)
    with pytest.raises(InvalidProducerEpochError):
        log.append(batch(7, 0, 1))
    log.append(batch(7, 1, 0))  # the new epoch starts its sequences at 0
    assert log.last_stable_offset == 2


def test_sequences_continue_across_transactions_of_one_epoch():
    log = open_log(None)
    log.append(batch(7, 0, 0, 2))
    log.append_marker(7, 0, commit=True, coordinator_epoch=0)
    log.append(batch(7, 0, 2))
    assert log.producers.ongoing == {7: 3}


def test_a_marker_wakes_the_logs_listeners():
    log = open_log(None)
    calls = []
    log.add_listener(lambda: calls.append(log.log_end_offset))
    log.append_marker(7, 0, commit=True, coordinator_epoch=0)
    assert calls == [1]


# -- reading committed data ------------------------------------------------------------------


def test_a_read_up_to_the_last_stable_offset_stops_before_the_open_transaction():
    log = open_log(None)
    log.append(plain(2))  # 0-1
    log.append(batch(7, 0, 0))  # 2, open
    log.append(plain())  # 3
    data = log.read(0, 1 << 20, max_offset=log.last_stable_offset)
    assert [b.base_offset for b in batches(data)] == [0]
    assert log.read(2, 1 << 20, max_offset=log.last_stable_offset) == b""
    assert [b.base_offset for b in batches(log.read(0, 1 << 20))] == [0, 2, 3]


def test_aborted_transactions_are_those_overlapping_the_fetched_range():
    log = open_log(None)
    log.append(batch(7, 0, 0))  # 0
    log.append_marker(7, 0, commit=False, coordinator_epoch=0)  # 1
    log.append(batch(8, 0, 0))  # 2
    log.append_marker(8, 0, commit=False, coordinator_epoch=0)  # 3
    assert log.aborted_transactions(0, 4) == [AbortedTxn(7, 0, 1, 2), AbortedTxn(8, 2, 3, 4)]
    assert log.aborted_transactions(2, 4) == [AbortedTxn(8, 2, 3, 4)]
    assert log.aborted_transactions(0, 1) == [AbortedTxn(7, 0, 1, 2)]


def test_an_abort_whose_marker_is_in_a_later_segment_is_found_from_an_earlier_one():
    log = open_log(None, segment_bytes=200)
    log.append(batch(7, 0, 0))  # 0
    log.append(plain())  # 1
    log.append(plain())  # 2
    log.append_marker(7, 0, commit=False, coordinator_epoch=0)
    assert len(log.segment_base_offsets) > 1
    marker = log.log_end_offset - 1
    assert log.aborted_transactions(0, 1) == [AbortedTxn(7, 0, marker, marker + 1)]


# -- the transaction index on disk and recovery ----------------------------------------------


def test_the_transaction_index_file_has_kafkas_34_byte_entries(tmp_path):
    log = open_log(tmp_path)
    log.append(batch(7, 0, 0, 2))
    log.append_marker(7, 0, commit=False, coordinator_epoch=0)
    log.close()
    data = (tmp_path / f"{0:020d}.txnindex").read_bytes()
    assert data == struct.pack(">hqqqq", 0, 7, 0, 2, 3)


def test_a_log_without_aborts_has_no_transaction_index_file(tmp_path):
    log = open_log(tmp_path)
    log.append(batch(7, 0, 0))
    log.append_marker(7, 0, commit=True, coordinator_epoch=0)
    log.close()
    assert list(tmp_path.glob("*.txnindex")) == []


def test_reopening_reads_the_transaction_indexes_of_every_segment(tmp_path):
    log = open_log(tmp_path, segment_bytes=200)
    log.append(batch(7, 0, 0))
    log.append_marker(7, 0, commit=False, coordinator_epoch=0)
    log.append(plain(3))
    log.append(plain(3))
    assert len(log.segment_base_offsets) > 1
    log.close()
    reopened = open_log(tmp_path, segment_bytes=200)
    assert reopened.aborted_transactions(0, reopened.log_end_offset) == [AbortedTxn(7, 0, 1, 2)]


def test_a_missing_transaction_index_of_the_active_segment_is_rebuilt_from_its_batches(tmp_path):
    log = open_log(tmp_path)
    log.append(batch(7, 0, 0))
    log.append(batch(8, 0, 0))
    log.append_marker(7, 0, commit=False, coordinator_epoch=0)
    log.close()
    (tmp_path / f"{0:020d}.txnindex").unlink()
    reopened = open_log(tmp_path)
    assert reopened.aborted_transactions(0, reopened.log_end_offset) == [AbortedTxn(7, 0, 2, 1)]
    reopened.close()
    assert (tmp_path / f"{0:020d}.txnindex").read_bytes() == struct.pack(">hqqqq", 0, 7, 0, 2, 1)


def test_index_entries_past_a_truncated_tail_are_dropped_on_recovery(tmp_path):
    log = open_log(tmp_path)
    log.append(batch(7, 0, 0))
    log.append_marker(7, 0, commit=False, coordinator_epoch=0)
    log.flush()  # no clean shutdown marker: the active segment is recovered
    log_file = tmp_path / f"{0:020d}.log"
    marker_size = len(log.read(1, 1 << 20))
    with open(log_file, "r+b") as f:
        f.truncate(log_file.stat().st_size - marker_size + 5)  # the marker torn
    reopened = open_log(tmp_path)
    assert reopened.log_end_offset == 1
    assert reopened.aborted_transactions(0, 1) == []
    assert reopened.last_stable_offset == 0  # its transaction is open again
    assert (tmp_path / f"{0:020d}.txnindex").read_bytes() == b""


def test_reopening_rebuilds_open_transactions_from_the_active_segment(tmp_path):
    log = open_log(tmp_path)
    log.append(plain())
    log.append(batch(7, 0, 0))
    log.append(batch(8, 0, 0))
    log.append_marker(8, 0, commit=True, coordinator_epoch=3)
    log.close()
    reopened = open_log(tmp_path)
    assert reopened.producers.ongoing == {7: 1}
    assert reopened.last_stable_offset == 1
    with pytest.raises(TransactionCoordinatorFencedError):
        reopened.append_marker(8, 0, commit=True, coordinator_epoch=2)


def test_an_open_transaction_with_no_batch_in_the_active_segment_is_forgotten_on_reopening(tmp_path):
    """The documented limit of rebuilding from the active segment only (Kafka reads producer
    state snapshots): its records count as stable after the restart."""
    log = open_log(tmp_path, segment_bytes=200)
    log.append(batch(7, 0, 0))
    log.append(plain(3))
    log.append(plain(3))
    assert log.segment_base_offsets[-1] > 0
    log.close()
    reopened = open_log(tmp_path, segment_bytes=200)
    assert reopened.producers.ongoing == {}
    assert reopened.last_stable_offset == reopened.log_end_offset


# -- moving the log start --------------------------------------------------------------------


def test_delete_records_may_pass_the_last_stable_offset_up_to_the_high_watermark_and_the_lso_follows():
    log = open_log(None)
    log.append(batch(7, 0, 0))  # 0, open
    log.append(plain(2))  # 1-2
    removal = log.delete_records_before(2)
    log.finish_removal(removal)
    assert log.log_start_offset == 2
    assert log.last_stable_offset == 2


def test_an_abort_after_a_retention_roll_is_indexed_in_the_new_active_segment(tmp_path):
    now = [NOW]
    log = PartitionLog("orders", 0, tmp_path, config=LogConfig(retention_ms=1_000), index_interval_bytes=4096,
                       clock=lambda: now[0])
    log.append(plain())
    now[0] += 10_000
    removal = log.retention_removal(log.stage_segment(log.retention_roll_base()))
    log.finish_removal(removal)
    assert log.segment_base_offsets == [1]
    log.append(batch(8, 0, 0))
    log.append_marker(8, 0, commit=False, coordinator_epoch=0)
    log.close()
    assert (tmp_path / f"{1:020d}.txnindex").read_bytes() == struct.pack(">hqqqq", 0, 8, 1, 2, 3)


def test_an_unused_staged_segment_leaves_the_live_segment_of_its_base_alone(tmp_path):
    log = open_log(tmp_path, segment_bytes=100)
    log.append(batch(7, 0, 0))  # 69 bytes
    staged = log.stage_segment(log.log_end_offset)  # 1
    log.append_marker(7, 0, commit=False, coordinator_epoch=0)  # rolls to a live segment based at 1
    assert log.segment_base_offsets == [0, 1]
    staged.delete()
    assert (tmp_path / f"{1:020d}.txnindex").read_bytes() == struct.pack(">hqqqq", 0, 7, 0, 1, 2)


def test_a_torn_last_entry_of_a_transaction_index_is_dropped_when_it_is_loaded(tmp_path):
    log = open_log(tmp_path, segment_bytes=100)
    log.append(batch(7, 0, 0))
    log.append_marker(7, 0, commit=False, coordinator_epoch=0)  # rolls: the entry is in segment 1
    log.append(plain())  # rolls again: segment 1 is closed
    log.close()
    index = tmp_path / f"{1:020d}.txnindex"
    whole = index.read_bytes()
    index.write_bytes(whole + whole[:10])
    reopened = open_log(tmp_path, segment_bytes=100)
    assert reopened.aborted_transactions(0, reopened.log_end_offset) == [AbortedTxn(7, 0, 1, 2)]
    assert index.read_bytes() == whole


# -- verification guards (KIP-890 part 1) -----------------------------------------------------


def test_a_verified_batch_opens_the_transaction_with_the_guard_taken_before_the_verification():
    log = open_log(None)
    guard = log.start_verification(7)
    log.append(batch(7, 0, 0), guard)
    assert log.producers.ongoing == {7: 0}


def test_a_marker_written_during_the_verification_voids_its_guard():
    log = open_log(None)
    guard = log.start_verification(7)
    log.append_marker(7, 0, False, 0)  # the transaction aborted while the coordinator was asked
    with pytest.raises(InvalidTxnStateError):
        log.append(batch(7, 0, 0), guard)
    assert log.producers.ongoing == {} and log.log_end_offset == 1


def test_a_guard_taken_before_a_marker_does_not_match_the_next_verifications_guard():
    log = open_log(None)
    stale = log.start_verification(7)
    log.append_marker(7, 0, False, 0)
    fresh = log.start_verification(7)
    with pytest.raises(InvalidTxnStateError):
        log.append(batch(7, 0, 0), stale)
    log.append(batch(7, 0, 0), fresh)
    assert log.producers.ongoing == {7: 1}


def test_a_producer_with_an_open_transaction_appends_only_while_that_transaction_is_open():
    log = open_log(None)
    log.append(batch(7, 0, 0), log.start_verification(7))
    guard = log.start_verification(7)
    log.append(batch(7, 0, 1), guard)  # still open: no question needed
    log.append_marker(7, 0, True, 0)
    with pytest.raises(InvalidTxnStateError):
        log.append(batch(7, 0, 2), guard)  # the marker closed the transaction it was open in


def test_an_unverified_transactional_batch_cannot_open_a_transaction_when_verification_is_asked_for():
    log = open_log(None)
    with pytest.raises(InvalidTxnStateError):
        log.append(batch(7, 0, 0), NO_GUARD)
    log.append(plain(), NO_GUARD)  # non-transactional data needs no verification
    assert log.log_end_offset == 1
