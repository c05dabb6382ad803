"""LogManager.open: logs are built in worker threads, never on the event loop, one attempt per
partition at a time, failures not remembered; open_soon opens in the background, a bounded
number at a time; deletion and close while logs are being built.

A `Gate` (tests/support/log_builds.py) stands in for the PartitionLog constructor the manager
calls. Nothing here sleeps to observe behaviour: tests wait (bounded) for a build or a state."""

from __future__ import annotations

import asyncio
import threading

import pytest

from groupctl.log import LogCorruptionError, LogError, LogManager, PartitionDeletedError
from groupctl.log.manager import BACKGROUND_OPENS
from tests.support.log_builds import Gate, until


@pytest.fixture
def gate(monkeypatch):
    gate = Gate.install(monkeypatch)
    yield gate
    gate.released.set()  # never leave a worker thread waiting


@pytest.fixture
def manager(tmp_path, gate):
    logs = LogManager(tmp_path / "logs")
    yield logs
    gate.released.set()
    logs.close()


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, timeout=20))


def test_a_log_is_built_in_a_worker_thread_while_the_loop_runs_on(manager, gate):
    async def scenario():
        opening = asyncio.create_task(manager.open("orders", 0))
        await until(lambda: gate.calls, "the build to start")
        ticks = 0
        for _ in range(20):  # the loop keeps running other work while the build waits
            await asyncio.sleep(0)
            ticks += 1
        assert ticks == 20 and not opening.done()
        assert manager.get("orders", 0) is None
        gate.released.set()
        opened = await opening
        assert gate.calls[0][2] is not threading.current_thread()
        assert manager.get("orders", 0) is opened
        assert await manager.open("orders", 0) is opened  # open now: no second build
        assert gate.builds() == 1
        opened.append(_records())
        assert opened.log_end_offset == 1

    run(scenario())


def test_concurrent_opens_of_one_partition_share_one_build(manager, gate):
    async def scenario():
        openings = [asyncio.create_task(manager.open("orders", 0)) for _ in range(5)]
        await until(lambda: gate.calls, "the build to start")
        await asyncio.sleep(0.01)
        gate.released.set()
        opened = await asyncio.gather(*openings)
        assert len({id(log) for log in opened}) == 1
        assert gate.builds() == 1

    run(scenario())


def test_a_cancelled_waiter_does_not_cancel_the_others_open(manager, gate):
    async def scenario():
        first = asyncio.create_task(manager.open("orders", 0))
        second = asyncio.create_task(manager.open("orders", 0))
        await until(lambda: gate.calls, "the build to start")
        first.cancel()
        gate.released.set()
        opened = await second
        assert manager.get("orders", 0) is opened
        assert first.cancelled()

    run(scenario())


def test_a_failed_open_is_not_remembered_and_the_next_one_tries_again(manager, gate):
    async def scenario():
        gate.failures = 1
        gate.released.set()
        with pytest.raises(LogCorruptionError):
            await manager.open("orders", 0)
        assert manager.get("orders", 0) is None
        opened = await manager.open("orders", 0)
        assert manager.get("orders", 0) is opened
        assert gate.builds() == 2

    run(scenario())


def test_different_partitions_open_concurrently_and_each_once(manager, gate):
    async def scenario():
        gate.released.set()
        opened = await asyncio.gather(*(manager.open("orders", p) for p in range(20) for _ in range(2)))
        assert {(log.topic, log.partition) for log in opened} == {("orders", p) for p in range(20)}
        assert all(gate.builds("orders", p) == 1 for p in range(20))

    run(scenario())


def test_a_topic_deleted_while_its_log_is_built_is_not_served_and_its_directory_is_removed(manager, gate):
    async def scenario():
        doomed = asyncio.create_task(manager.open("orders", 0))
        await until(lambda: gate.calls, "the build to start")
        manager.delete_topic("orders")
        again = asyncio.create_task(manager.open("orders", 0))  # the topic, created again
        await asyncio.sleep(0.01)
        assert gate.builds() == 1  # the new attempt waits for the abandoned one to finish
        gate.released.set()
        with pytest.raises(PartitionDeletedError):
            await doomed
        fresh = await again
        assert gate.builds() == 2
        assert manager.get("orders", 0) is fresh
        assert fresh.directory.is_dir()  # the abandoned attempt's clean-up came before the new build

    run(scenario())


def test_the_synchronous_open_refuses_a_partition_being_built(manager, gate):
    async def scenario():
        opening = asyncio.create_task(manager.open("orders", 0))
        await until(lambda: gate.calls, "the build to start")
        with pytest.raises(LogError):
            manager.partition("orders", 0)
        gate.released.set()
        opened = await opening
        assert manager.partition("orders", 0) is opened

    run(scenario())


def test_open_soon_opens_in_the_background_a_bounded_number_at_a_time(manager, gate):
    async def scenario():
        partitions = [("orders", p) for p in range(12)]
        manager.open_soon(partitions)
        manager.open_soon(partitions)  # asked twice: still one build each
        await until(lambda: gate.calls, "the first background build")
        await asyncio.sleep(0.01)
        assert len(gate.calls) <= BACKGROUND_OPENS
        gate.released.set()
        await until(lambda: all(manager.get(*key) is not None for key in partitions), "every background open")
        assert all(gate.builds(*key) == 1 for key in partitions)
        assert gate.most_active <= BACKGROUND_OPENS

    run(scenario())


def test_a_request_does_not_wait_behind_the_background_queue(manager, gate):
    async def scenario():
        manager.open_soon([("orders", p) for p in range(50)])
        await until(lambda: gate.calls, "the first background build")
        wanted = asyncio.create_task(manager.open("orders", 49))  # last in the queue
        await until(lambda: gate.builds("orders", 49), "the request's own build")
        assert len(gate.calls) <= BACKGROUND_OPENS + 1
        gate.released.set()
        assert (await wanted).partition == 49

    run(scenario())


def test_background_opens_of_a_deleted_topic_are_dropped(manager, gate):
    async def scenario():
        manager.open_soon([("orders", p) for p in range(10)])
        await until(lambda: gate.calls, "the first background build")
        manager.delete_topic("orders")
        gate.released.set()
        await until(lambda: not manager._background, "the background opens to end")
        assert len(gate.calls) <= BACKGROUND_OPENS
        assert not (manager.data_dir / "orders-0").exists()
        assert all(manager.get("orders", p) is None for p in range(10))

    run(scenario())


def test_close_waits_for_the_worker_threads_and_closes_what_they_built(tmp_path, gate):
    async def scenario():
        logs = LogManager(tmp_path / "logs")
        opening = asyncio.create_task(logs.open("orders", 0))
        await until(lambda: gate.calls, "the build to start")
        threading.Timer(0.05, gate.released.set).start()
        logs.close()  # returns once the build has finished
        with pytest.raises(LogError):
            await opening
        assert (tmp_path / "logs" / "orders-0" / ".clean_shutdown").exists()
        LogManager(tmp_path / "logs").close()  # the data dir's lock was released

    run(scenario())


def test_in_memory_logs_open_at_once_without_threads(gate):
    async def scenario():
        logs = LogManager(None)
        gate.released.set()
        opened = await logs.open("orders", 0)
        assert gate.calls[0][2] is threading.current_thread()
        assert logs.get("orders", 0) is opened
        logs.open_soon([("orders", 1)])  # nothing to do in memory
        assert logs.get("orders", 1) is None
        logs.close()

    run(scenario())


def _records() -> bytes:
    from kafka.record.memory_records import MemoryRecordsBuilder

    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    builder.append(1_000, None, b"v")
    builder.close()
    return bytes(builder.buffer())
