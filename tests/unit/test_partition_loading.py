"""Loading won group partitions: batches, one at a time after a failure, and the retry back-off."""

from __future__ import annotations

from groupctl.coordinator.backoff import Backoff
from groupctl.coordinator.loading import LoadQueue


def queue() -> LoadQueue:
    return LoadQueue(Backoff(initial_ms=100, maximum_ms=800))


def test_the_partitions_won_load_in_one_batch():
    loads = queue()
    loads.add({3, 1})
    loads.add({2})
    assert loads.next_batch() == {1, 2, 3}
    assert not loads


def test_after_a_failed_batch_the_partitions_load_one_at_a_time_until_one_succeeds():
    loads = queue()
    loads.add({1, 2, 3})
    batch = loads.next_batch()
    assert loads.failed(batch, still_wanted={1, 2, 3}) == 100
    assert loads.next_batch() == {1}
    assert loads.failed({1}, still_wanted={1, 2, 3}) == 200  # partition 1 holds a corrupt document
    assert loads.next_batch() == {1}
    loads.loaded()  # ... and it was repaired
    assert loads.next_batch() == {2, 3}


def test_a_failed_partition_that_was_lost_meanwhile_is_not_retried():
    loads = queue()
    loads.add({1, 2})
    loads.failed(loads.next_batch(), still_wanted={2})
    assert loads.next_batch() == {2}
    assert not loads


def test_a_partition_won_again_while_its_read_is_under_way_is_queued_anew_and_a_lost_one_is_dropped():
    loads = queue()
    loads.add({1, 2})
    assert loads.next_batch() == {1, 2}
    loads.add({1})
    loads.add({5})
    loads.discard({5})
    assert loads.next_batch() == {1}


def test_retry_delays_double_up_to_the_maximum_and_start_over_after_a_success():
    backoff = Backoff(initial_ms=100, maximum_ms=500)
    assert [backoff.failed() for _ in range(5)] == [100, 200, 400, 500, 500]
    backoff.succeeded()
    assert backoff.failed() == 100
