"""The round loop of `lag record` (`groupctl.ops.lag_schedule`): cadence, failures, stopping.

Time is a fake clock that the fake `sleep` and the fake samplers advance, except in the one test
that stops the loop with a real signal.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from groupctl.errors import Unreachable
from groupctl.ops.lag_dataset import WrittenFile
from groupctl.ops.lag_record import LagRow, Problem, RoundSample
from groupctl.ops.lag_schedule import Recording


class FakeTime:
    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def row(ts: int = 1) -> LagRow:
    return LagRow(ts, "c", "g", "t", 0, 5, 9, "Stable", 1, "app")


def one_row_sample() -> RoundSample:
    return RoundSample((row(),), 1, ())


class Rounds:
    """A sampler taking `durations[i]` fake seconds in round i (the last one repeats), noting
    when each round began; and a writer noting what it wrote."""

    def __init__(self, fake: FakeTime, durations=(0.1,), sample=one_row_sample) -> None:
        self.fake = fake
        self.durations = list(durations)
        self.began: list[float] = []
        self.written: list[tuple] = []
        self._sample = sample

    def sample(self) -> RoundSample:
        self.began.append(self.fake.now)
        self.fake.now += self.durations[min(len(self.began), len(self.durations)) - 1]
        return self._sample()

    def write(self, rows):
        self.written.append(tuple(rows))
        return WrittenFile(Path(f"part-{len(self.written)}.jsonl"), len(rows), rows[0].ts) if rows else None


def recording(fake: FakeTime, rounds: Rounds, *, interval_s=1.0, duration_s=None) -> Recording:
    return Recording(rounds.sample, rounds.write, interval_s=interval_s, duration_s=duration_s,
                     clock=fake.clock, sleep=fake.sleep)


def test_rounds_start_on_a_fixed_cadence_that_does_not_drift_with_round_time():
    fake = FakeTime()
    rounds = Rounds(fake, durations=(0.3, 0.7, 0.05, 0.9))
    outcomes = list(recording(fake, rounds, duration_s=4).rounds())
    assert [b - 100.0 for b in rounds.began] == pytest.approx([0, 1, 2, 3])
    assert [o.number for o in outcomes] == [1, 2, 3, 4]
    assert all(o.overran_slots == 0 for o in outcomes)


def test_a_round_running_past_later_slots_skips_them_and_counts_them_missed():
    fake = FakeTime()
    rounds = Rounds(fake, durations=(2.5, 0.1))
    run = recording(fake, rounds, duration_s=6)
    outcomes = list(run.rounds())
    assert [b - 100.0 for b in rounds.began] == pytest.approx([0, 3, 4, 5])
    assert outcomes[0].overran_slots == 2
    assert run.totals.missed_slots == 2 and run.totals.rounds + run.totals.missed_slots == 6


def test_the_duration_ends_the_loop_after_its_last_slot_without_sleeping_out_the_rest():
    fake = FakeTime()
    rounds = Rounds(fake, durations=(0.1,))
    run = recording(fake, rounds, interval_s=10, duration_s=25)
    list(run.rounds())
    assert len(rounds.began) == 3  # slots at 0, 10 and 20 s fit in 25 s
    assert fake.now - 100.0 == pytest.approx(20.1)
    assert run.totals.ended_by == "duration"


def test_a_duration_shorter_than_the_interval_runs_one_round():
    fake = FakeTime()
    rounds = Rounds(fake)
    run = recording(fake, rounds, interval_s=10, duration_s=0.5)
    assert len(list(run.rounds())) == 1


def test_a_last_round_overrunning_the_duration_counts_the_slots_it_skipped():
    fake = FakeTime()
    rounds = Rounds(fake, durations=(0.1, 5.0))
    run = recording(fake, rounds, duration_s=4)
    list(run.rounds())
    assert run.totals.rounds == 2 and run.totals.missed_slots == 2


def test_a_failed_round_carries_its_error_and_the_next_round_runs_at_its_slot():
    fake = FakeTime()
    results = iter([one_row_sample, Unreachable("cannot reach bootstrap x: connection refused"), one_row_sample])

    def sample():
        result = next(results)
        if isinstance(result, Exception):
            raise result
        return result()

    rounds = Rounds(fake, sample=sample)
    run = recording(fake, rounds, duration_s=3)
    outcomes = list(run.rounds())
    assert [o.failed for o in outcomes] == [False, True, False]
    assert outcomes[1].error == "cannot reach bootstrap x: connection refused" and outcomes[1].written is None
    assert [b - 100.0 for b in rounds.began] == pytest.approx([0, 1, 2])
    assert run.totals.to_json() == {"rounds": 3, "failed_rounds": 1, "rows": 2, "files": 2, "skipped_groups": 0,
                                    "missed_slots": 0, "ended_by": "duration"}


def test_a_round_in_which_every_group_failed_is_a_failed_round_and_writes_nothing():
    fake = FakeTime()
    problems = (Problem("a", "coordinator for group 'a' is not available"), Problem("b", "lost connection"))
    rounds = Rounds(fake, sample=lambda: RoundSample((), 0, problems))
    run = recording(fake, rounds, duration_s=1)
    [outcome] = run.rounds()
    assert outcome.failed and outcome.error == "coordinator for group 'a' is not available (and 1 more problem(s))"
    assert rounds.written == []
    assert run.totals.skipped_groups == 2


def test_a_round_with_some_groups_skipped_is_written_and_not_failed():
    fake = FakeTime()
    rounds = Rounds(fake, sample=lambda: RoundSample((row(),), 1, (Problem("b", "lost connection"),)))
    run = recording(fake, rounds, duration_s=1)
    [outcome] = run.rounds()
    assert not outcome.failed and outcome.written is not None
    assert run.totals.skipped_groups == 1 and run.totals.failed_rounds == 0


def test_a_write_error_fails_the_round_and_recording_goes_on():
    fake = FakeTime()
    rounds = Rounds(fake)
    calls = []

    def write(rows):
        calls.append(rows)
        if len(calls) == 1:
            raise OSError(28, "No space left on device")
        return WrittenFile(Path("part.jsonl"), len(rows), 1)

    run = Recording(rounds.sample, write, interval_s=1, duration_s=2, clock=fake.clock, sleep=fake.sleep)
    outcomes = list(run.rounds())
    assert outcomes[0].error == "cannot write the round's file: [Errno 28] No space left on device"
    assert not outcomes[1].failed and run.totals.files == 1 and run.totals.rows == 1


def test_a_stop_while_waiting_for_the_next_slot_ends_the_loop_at_once():
    fake = FakeTime()
    rounds = Rounds(fake)
    run = None

    def sleep(seconds):  # the signal arrives during the wait
        if seconds > 0:
            run.request_stop()
        fake.sleep(seconds)

    run = Recording(rounds.sample, rounds.write, interval_s=5, clock=fake.clock, sleep=sleep)
    outcomes = list(run.rounds())
    assert len(outcomes) == 1 and len(rounds.began) == 1
    assert fake.now - 100.0 == pytest.approx(0.1)  # the wait was cut short
    assert run.totals.ended_by == "stop"


def test_a_stop_while_sampling_discards_the_round_in_flight():
    fake = FakeTime()
    run = None

    def sample():
        run.request_stop()
        raise AssertionError("request_stop() must interrupt the sample")

    written = []
    run = Recording(sample, written.append, interval_s=1, clock=fake.clock, sleep=fake.sleep)
    assert list(run.rounds()) == []
    assert written == [] and run.totals.rounds == 0 and run.totals.ended_by == "stop"


def test_a_stop_while_writing_finishes_the_file_and_then_ends_the_loop():
    fake = FakeTime()
    rounds = Rounds(fake)
    run = None

    def write(rows):
        run.request_stop()
        return rounds.write(rows)

    run = Recording(rounds.sample, write, interval_s=1, clock=fake.clock, sleep=fake.sleep)
    outcomes = list(run.rounds())
    assert len(outcomes) == 1 and outcomes[0].written is not None
    assert run.totals.files == 1 and run.totals.ended_by == "stop"


def test_a_real_signal_handler_calling_request_stop_interrupts_the_wait_at_once():
    run = Recording(one_row_sample, lambda rows: None, interval_s=30)
    previous = signal.signal(signal.SIGUSR1, lambda _s, _f: run.request_stop())
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGUSR1))
    try:
        started = time.monotonic()
        timer.start()
        outcomes = list(run.rounds())
        elapsed = time.monotonic() - started
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR1, previous)
    assert len(outcomes) == 1 and elapsed < 5
    assert run.totals.ended_by == "stop"


@pytest.mark.parametrize("interval_s, duration_s", [(0, None), (-1, None), (1, 0)])
def test_a_non_positive_interval_or_duration_is_refused(interval_s, duration_s):
    with pytest.raises(ValueError):
        Recording(one_row_sample, lambda rows: None, interval_s=interval_s, duration_s=duration_s)
