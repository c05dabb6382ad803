"""Idempotent-producer state: Kafka's sequence and epoch rules per partition
(`groupctl.log.producers`), the partition log acting on them, and producer-id allocation
(`groupctl.log.producer_ids`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import pytest
from kafka.record.memory_records import MemoryRecords, MemoryRecordsBuilder

from groupctl.log import (
    CorruptBatchError,
    InvalidProducerEpochError,
    OutOfOrderSequenceError,
    PartitionLog,
    ProducerIdAllocator,
    ProducerStateManager,
)
from groupctl.log.batches import BatchHeader
from groupctl.log.config import LogConfig
from groupctl.log.producer_ids import MAX_EPOCH, MAX_NODE_ID, NODE_BITS
from groupctl.log.producers import BATCHES_TO_RETAIN, INT32_MAX, last_sequence

PID = 7


class Harness:
    """A producer state plus the offsets a log would assign, so tests speak in batches."""

    def __init__(self, max_producers: int = 10_000) -> None:
        self.state = ProducerStateManager(max_producers)
        self.next_offset = 0

    def header(self, pid: int, epoch: int, seq: int, count: int = 1, base_offset: Optional[int] = None) -> BatchHeader:
        base = self.next_offset if base_offset is None else base_offset
        return BatchHeader(position=0, size=100, base_offset=base, attributes=0, last_offset_delta=count - 1,
                           max_timestamp=0, records_count=count, producer_id=pid, producer_epoch=epoch,
                           base_sequence=seq)

    def append(self, *batches: tuple[int, int, int, int]) -> Optional[tuple[int, int]]:
        """Append batches given as (pid, epoch, seq, count); the duplicate's offsets or None."""
        headers = []
        offset = self.next_offset
        for pid, epoch, seq, count in batches:
            headers.append(self.header(pid, epoch, seq, count, base_offset=offset))
            offset += count
        prepared = self.state.prepare(headers)
        if prepared.duplicate is not None:
            return prepared.duplicate
        self.state.commit(prepared)
        self.next_offset = offset
        return None


@pytest.fixture
def h() -> Harness:
    return Harness()


# -- sequences ------------------------------------------------------------------------------


def test_an_unknown_producer_is_accepted_at_any_first_sequence(h):
    assert h.append((PID, 0, 0, 1)) is None
    assert h.append((8, 3, 42, 2)) is None
    assert h.state.entry(8).epoch == 3
    assert h.state.entry(8).last_sequence == 43


def test_batches_in_sequence_are_appended_and_the_last_sequence_advances(h):
    h.append((PID, 0, 0, 3))
    h.append((PID, 0, 3, 2))
    assert h.state.entry(PID).last_sequence == 4
    assert h.next_offset == 5


def test_a_gap_in_sequence_is_refused_and_leaves_the_state_unchanged(h):
    h.append((PID, 0, 0, 3))
    before = h.state.entry(PID)
    with pytest.raises(OutOfOrderSequenceError):
        h.append((PID, 0, 4, 1))
    assert h.state.entry(PID) == before


def test_a_sequence_below_the_expected_one_that_is_no_remembered_batch_is_out_of_order(h):
    h.append((PID, 0, 0, 3))
    with pytest.raises(OutOfOrderSequenceError):
        h.append((PID, 0, 1, 2))  # overlaps batch 0-2 but is not the same batch


def test_sequences_wrap_from_int32_max_to_zero(h):
    h.append((PID, 0, INT32_MAX - 1, 2))
    assert h.state.entry(PID).last_sequence == INT32_MAX
    assert h.append((PID, 0, 0, 1)) is None
    assert last_sequence(INT32_MAX - 1, 3) == 1


def test_batches_without_a_producer_id_are_never_checked(h):
    h.append((PID, 0, 0, 1))
    assert h.append((-1, -1, -1, 4)) is None
    assert h.append((-1, -1, -1, 4)) is None
    assert h.state.entry(-1) is None
    assert h.next_offset == 9


# -- duplicates -----------------------------------------------------------------------------


def test_a_retry_of_the_last_batch_is_a_duplicate_answered_with_its_original_offsets(h):
    h.append((PID, 0, 0, 2))
    h.append((PID, 0, 2, 3))
    before = h.state.entry(PID)
    assert h.append((PID, 0, 2, 3)) == (2, 4)
    assert h.next_offset == 5  # nothing appended
    assert h.state.entry(PID) == before


def test_each_of_the_last_five_batches_is_recognised_as_a_duplicate(h):
    for seq in range(7):
        h.append((PID, 0, seq, 1))
    for seq in range(7 - BATCHES_TO_RETAIN, 7):
        assert h.append((PID, 0, seq, 1)) == (seq, seq)


def test_a_retry_older_than_the_last_five_batches_is_out_of_order(h):
    for seq in range(BATCHES_TO_RETAIN + 1):
        h.append((PID, 0, seq, 1))
    with pytest.raises(OutOfOrderSequenceError):
        h.append((PID, 0, 0, 1))


def test_the_same_sequences_under_another_epoch_are_not_a_duplicate(h):
    h.append((PID, 0, 0, 1))
    assert h.append((PID, 1, 0, 1)) is None
    assert h.next_offset == 2


def test_a_batch_repeated_inside_one_append_is_out_of_order_not_a_duplicate(h):
    with pytest.raises(OutOfOrderSequenceError):
        h.append((PID, 0, 0, 1), (PID, 0, 0, 1))
    assert h.state.entry(PID) is None


def test_an_append_mixing_duplicate_and_new_batches_is_refused(h):
    h.append((PID, 0, 0, 1))
    with pytest.raises(OutOfOrderSequenceError):
        h.append((PID, 0, 0, 1), (PID, 0, 1, 1))


def test_an_append_of_only_duplicates_spans_their_original_offsets(h):
    h.append((PID, 0, 0, 2))
    h.append((PID, 0, 2, 2))
    assert h.append((PID, 0, 0, 2), (PID, 0, 2, 2)) == (0, 3)


def test_several_batches_of_one_append_are_checked_in_order(h):
    assert h.append((PID, 0, 0, 2), (PID, 0, 2, 1), (9, 0, 5, 1)) is None
    assert h.state.entry(PID).last_sequence == 2
    assert [b.first_offset for b in h.state.entry(PID).batches] == [0, 2]
    assert h.state.entry(9).batches[0].first_offset == 3


def test_prepare_changes_nothing_until_commit(h):
    prepared = h.state.prepare([h.header(PID, 0, 0)])
    assert h.state.entry(PID) is None
    h.state.commit(prepared)
    assert h.state.entry(PID).last_sequence == 0


# -- epochs ---------------------------------------------------------------------------------


def test_a_lower_epoch_is_refused(h):
    h.append((PID, 2, 0, 1))
    with pytest.raises(InvalidProducerEpochError):
        h.append((PID, 1, 1, 1))


def test_a_new_epoch_starting_at_sequence_zero_restarts_the_window(h):
    h.append((PID, 0, 0, 1))
    h.append((PID, 0, 1, 1))
    assert h.append((PID, 1, 0, 1)) is None
    entry = h.state.entry(PID)
    assert (entry.epoch, len(entry.batches), entry.last_sequence) == (1, 1, 0)
    with pytest.raises(InvalidProducerEpochError):
        h.append((PID, 0, 1, 1))  # the old epoch's retry is a zombie now


def test_a_new_epoch_not_starting_at_sequence_zero_is_out_of_order(h):
    h.append((PID, 0, 0, 1))
    with pytest.raises(OutOfOrderSequenceError):
        h.append((PID, 1, 5, 1))


# -- bounds and rebuild ---------------------------------------------------------------------


def test_the_least_recently_appended_producer_is_evicted_and_then_counts_as_unknown():
    h = Harness(max_producers=2)
    h.append((1, 0, 0, 1))
    h.append((2, 0, 0, 1))
    h.append((1, 0, 1, 1))  # producer 1 is now the most recent
    h.append((3, 0, 0, 1))
    assert h.state.entry(2) is None and len(h.state) == 2
    assert h.append((2, 0, 9, 1)) is None  # any sequence, as for an unknown producer


def test_replay_rebuilds_the_window_and_a_new_epoch_resets_it(h):
    for seq, offset in ((0, 0), (1, 1), (0, 2)):
        epoch = 0 if offset < 2 else 1
        h.state.replay(h.header(PID, epoch, seq, base_offset=offset))
    h.state.replay(h.header(-1, -1, -1, base_offset=3))
    entry = h.state.entry(PID)
    assert (entry.epoch, [b.first_offset for b in entry.batches]) == (1, [2])
    assert len(h.state) == 1


# -- the partition log ----------------------------------------------------------------------


def batch(pid: int, epoch: int, seq: int, count: int = 1, value: bytes = b"v") -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    builder.set_producer_state(pid, epoch, seq, False)
    for i in range(count):
        builder.append(1_000 + i, None, value)
    builder.close()
    return bytes(builder.buffer())


def record_count(data: bytes) -> int:
    batches = MemoryRecords(data)
    count = 0
    while batches.has_next():
        count += len(list(batches.next_batch()))
    return count


def open_log(directory: Optional[Path], segment_bytes: int = 1 << 20) -> PartitionLog:
    return PartitionLog("orders", 0, directory, config=LogConfig(segment_bytes=segment_bytes), index_interval_bytes=4096)


def test_the_log_answers_a_duplicate_with_the_original_offsets_and_writes_nothing():
    log = open_log(None)
    calls = []
    log.add_listener(lambda: calls.append(1))
    first = log.append(batch(PID, 0, 0, 3))
    second = log.append(batch(PID, 0, 3, 2))
    retry = log.append(batch(PID, 0, 3, 2))
    assert (first.base_offset, second.base_offset) == (0, 3)
    assert (retry.base_offset, retry.last_offset, retry.duplicate) == (3, 4, True)
    assert log.log_end_offset == 5 and len(calls) == 2
    assert record_count(log.read(0, 1 << 20)) == 5


def test_the_log_writes_nothing_for_an_out_of_order_batch():
    log = open_log(None)
    log.append(batch(PID, 0, 0))
    with pytest.raises(OutOfOrderSequenceError):
        log.append(batch(PID, 0, 2))
    assert log.log_end_offset == 1


def test_a_batch_with_a_producer_id_but_no_sequence_is_corrupt():
    with pytest.raises(CorruptBatchError):
        open_log(None).append(batch(PID, 0, -5))  # kafka-python refuses to build -1


def test_reopening_the_log_rebuilds_producer_state_from_the_active_segment(tmp_path):
    log = open_log(tmp_path)
    for seq in range(3):
        log.append(batch(PID, 0, seq))
    log.close()
    reopened = open_log(tmp_path)
    retry = reopened.append(batch(PID, 0, 2))
    assert (retry.base_offset, retry.duplicate) == (2, True)
    with pytest.raises(OutOfOrderSequenceError):
        reopened.append(batch(PID, 0, 5))
    assert reopened.append(batch(PID, 0, 3)).base_offset == 3
    reopened.close()


def test_state_is_rebuilt_after_a_crash_without_a_clean_shutdown(tmp_path):
    log = open_log(tmp_path)
    log.append(batch(PID, 0, 0))
    log.flush()  # no close(): no clean-shutdown marker, as after kill -9
    reopened = open_log(tmp_path)
    assert reopened.append(batch(PID, 0, 0)).duplicate
    reopened.close()
    log.close()


def test_a_producer_whose_batches_are_only_in_older_segments_is_unknown_after_reopening(tmp_path):
    value = b"x" * 200
    log = open_log(tmp_path, segment_bytes=300)  # every batch rolls a new segment
    log.append(batch(PID, 0, 0, value=value))
    log.append(batch(8, 0, 0, value=value))
    assert len(log.segment_base_offsets) == 2
    log.close()
    reopened = open_log(tmp_path, segment_bytes=300)
    assert reopened.producers.entry(PID) is None
    assert reopened.producers.entry(8) is not None
    assert not reopened.append(batch(PID, 0, 0, value=value)).duplicate  # the bound: written again
    reopened.close()


# -- producer ids ---------------------------------------------------------------------------


def test_allocated_ids_are_distinct_and_start_at_epoch_zero():
    ids = ProducerIdAllocator()
    issued = [ids.allocate(1_000) for _ in range(5)]
    assert len({pid for pid, _ in issued}) == 5
    assert {epoch for _, epoch in issued} == {0}


def test_a_later_start_issues_ids_above_every_id_of_an_earlier_run():
    earlier = ProducerIdAllocator()
    first_run = [earlier.allocate(1_000)[0] for _ in range(1_000)]
    later = ProducerIdAllocator()
    assert later.allocate(1_001)[0] > max(first_run)


def test_a_used_up_block_moves_to_the_next_millisecond_even_when_the_clock_has_not():
    ids = ProducerIdAllocator(sequence_bits=2)
    issued = [ids.allocate(1_000)[0] for _ in range(6)]
    block = 1 << (NODE_BITS + 2)
    assert issued == [1000 * block, 1000 * block + 1, 1000 * block + 2, 1000 * block + 3, 1001 * block,
                      1001 * block + 1]
    assert ids.allocate(5_000)[0] == 1001 * block + 2  # the block is not used up yet
    ids.allocate(5_000)
    assert ids.allocate(5_000)[0] == 5_000 * block


def test_an_id_is_the_block_millisecond_then_the_node_id_then_the_count():
    ids = ProducerIdAllocator(node_id=5)
    assert [ids.allocate(1_000)[0] for _ in range(2)] == [(1_000 << 20) | (5 << 10), (1_000 << 20) | (5 << 10) | 1]


def test_allocators_of_different_nodes_never_issue_the_same_id():
    # Same clock, blocks used up at different rates: the node bits still keep them apart.
    allocators = [ProducerIdAllocator(node_id=n, sequence_bits=3) for n in (0, 1, 2, MAX_NODE_ID)]
    issued = [ids.allocate(1_000)[0] for i, ids in enumerate(allocators) for _ in range(50 * (i + 1))]
    assert len(set(issued)) == len(issued)
    default = [ProducerIdAllocator(node_id=n) for n in (0, 1)]
    assert not {default[0].allocate(7)[0] for _ in range(3000)} & {default[1].allocate(7)[0] for _ in range(3000)}


@pytest.mark.parametrize("node_id", [-1, MAX_NODE_ID + 1])
def test_a_node_id_outside_the_id_bits_is_refused(node_id):
    with pytest.raises(ValueError):
        ProducerIdAllocator(node_id=node_id)


def test_ids_stay_below_two_to_the_63_until_the_year_2248():
    ids = ProducerIdAllocator(node_id=MAX_NODE_ID)
    year_2248_ms = (2**43) - 1
    assert year_2248_ms // (365.25 * 24 * 3600 * 1000) + 1970 >= 2248
    pid, _ = ids.allocate(year_2248_ms)
    assert pid < 2**63


def test_a_bump_of_the_latest_issued_pair_keeps_the_id_and_increments_the_epoch():
    ids = ProducerIdAllocator()
    pid, _ = ids.allocate(1_000)
    assert ids.bump(pid, 0, 1_000) == (pid, 1)
    assert ids.bump(pid, 1, 1_000) == (pid, 2)


def test_a_retried_bump_gets_the_same_answer_again():
    ids = ProducerIdAllocator()
    pid, _ = ids.allocate(1_000)
    ids.bump(pid, 0, 1_000)
    assert ids.bump(pid, 0, 1_000) == (pid, 1)


@pytest.mark.parametrize("case", ["unknown id", "stale epoch", "future epoch"])
def test_a_bump_that_does_not_match_gets_a_fresh_id(case):
    ids = ProducerIdAllocator()
    pid, _ = ids.allocate(1_000)
    ids.bump(pid, 0, 1_000)
    ids.bump(pid, 1, 1_000)
    held = {"unknown id": (12345, 0), "stale epoch": (pid, 0), "future epoch": (pid, 9)}[case]
    fresh, epoch = ids.bump(*held, 1_000)
    assert fresh not in (pid, 12345) and epoch == 0


def test_an_exhausted_epoch_gets_a_fresh_id():
    ids = ProducerIdAllocator()
    pid, _ = ids.allocate(1_000)
    for epoch in range(MAX_EPOCH):
        assert ids.bump(pid, epoch, 1_000) == (pid, epoch + 1)
    fresh, epoch = ids.bump(pid, MAX_EPOCH, 1_000)
    assert fresh != pid and epoch == 0


def test_a_forgotten_id_gets_a_fresh_id_on_bump():
    ids = ProducerIdAllocator(max_remembered=2)
    oldest, _ = ids.allocate(1_000)
    ids.allocate(1_000)
    ids.allocate(1_000)
    fresh, epoch = ids.bump(oldest, 0, 1_000)
    assert fresh != oldest and epoch == 0
