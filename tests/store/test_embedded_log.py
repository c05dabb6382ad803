"""EmbeddedStore durability: acknowledged writes survive SIGKILL, a torn tail is discarded,
compaction keeps data, fsyncs are shared and run off the event loop."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from groupctl.store.base import Node, StoreUnavailable
from groupctl.store.embedded import SNAPSHOT_NAME, WAL_NAME, EmbeddedStore

REPO = Path(__file__).resolve().parents[2]

WRITER = textwrap.dedent("""
    import asyncio, sys, time
    from pathlib import Path
    from groupctl.store.embedded import EmbeddedStore

    async def main():
        store = EmbeddedStore(Path(sys.argv[1]))
        await store.start()
        await store.create("/acked", b"first")
        await asyncio.gather(*(store.create(f"/many{i}", str(i).encode()) for i in range(50)))
        await store.set_if_version("/acked", b"second", 0)
        print("acked", flush=True)
        time.sleep(60)  # killed long before this ends

    asyncio.run(main())
""")


async def opened(directory: Path, **options) -> EmbeddedStore:
    store = EmbeddedStore(directory, **options)
    await store.start()
    return store


def test_acknowledged_writes_survive_sigkill(tmp_path, run):
    directory = tmp_path / "store"
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(directory)], cwd=REPO,
                             env={**os.environ, "PYTHONPATH": str(REPO)},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        ready, _, _ = select.select([child.stdout], [], [], 30)
        assert ready, "the writer did not acknowledge within 30 s"
        line = child.stdout.readline()
        assert line == b"acked\n", child.stderr.read() if not line else line
        child.send_signal(signal.SIGKILL)
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(10)
        child.stdout.close()
        child.stderr.close()
    assert child.returncode == -signal.SIGKILL

    async def scenario():
        store = await opened(directory)
        assert await store.get("/acked") == Node(b"second", 1)
        assert all([await store.get(f"/many{i}") == Node(str(i).encode(), 0) for i in range(50)])
        await store.close()

    run(scenario())


def test_a_torn_last_record_is_discarded_and_the_log_stays_appendable(tmp_path, run):
    directory = tmp_path / "store"

    async def write_three():
        store = await opened(directory)
        for name in ("a", "b", "c"):
            await store.create(f"/{name}", name.encode())
        await store.close()

    async def reopen_and_append():
        store = await opened(directory)
        assert await store.children("/") == ["a", "b"]
        await store.create("/d", b"d")
        await store.close()

    async def reopen_again():
        store = await opened(directory)
        assert await store.children("/") == ["a", "b", "d"]
        await store.close()

    run(write_three())
    wal = directory / WAL_NAME
    os.truncate(wal, wal.stat().st_size - 3)  # the crash cut the last record short
    run(reopen_and_append())
    run(reopen_again())


def test_garbage_after_the_last_record_is_discarded(tmp_path, run):
    directory = tmp_path / "store"

    async def write_one():
        store = await opened(directory)
        await store.create("/a", b"a")
        await store.close()

    async def check():
        store = await opened(directory)
        assert await store.get("/a") == Node(b"a", 0)
        assert await store.children("/") == ["a"]
        await store.close()

    run(write_one())
    with open(directory / WAL_NAME, "ab") as wal:
        wal.write(b"\x00\x00\x00\x10\xde\xad\xbe\xefnot a record")
    run(check())
    assert (directory / WAL_NAME).stat().st_size < 100


def test_compaction_folds_the_log_into_a_snapshot_without_losing_data(tmp_path, run):
    directory = tmp_path / "store"

    async def write():
        store = await opened(directory, compact_bytes=2048)
        await store.create("/counter", b"0")
        await store.create("/doomed", b"x")
        for version in range(100):
            await store.set_if_version("/counter", str(version + 1).encode(), version)
        await store.delete_if_version("/doomed")
        await store.create("/eph", b"e", ephemeral=True)
        await store.close()

    async def check():
        store = await opened(directory)
        assert await store.get("/counter") == Node(b"100", 100)
        assert await store.get("/doomed") is None
        assert await store.get("/eph") is None
        await store.close()

    run(write())
    assert (directory / SNAPSHOT_NAME).exists()
    assert (directory / WAL_NAME).stat().st_size <= 2048
    run(check())


def test_log_records_already_in_the_snapshot_are_not_replayed(tmp_path, run):
    directory = tmp_path / "store"

    async def write(options, values, version):
        store = await opened(directory, **options)
        for value in values:
            version = await store.set_if_version("/x", value, version)
        await store.close()

    async def create():
        store = await opened(directory)
        await store.create("/x", b"0")
        await store.close()

    async def check():
        store = await opened(directory)
        assert await store.get("/x") == Node(b"6", 6)
        await store.close()

    run(create())
    run(write({}, [b"1", b"2", b"3", b"4", b"5"], 0))
    old_log = (directory / WAL_NAME).read_bytes()
    run(write({"compact_bytes": 1}, [b"6"], 5))
    assert (directory / WAL_NAME).stat().st_size == 0
    # A crash between writing the snapshot and restarting the log leaves the old log behind.
    (directory / WAL_NAME).write_bytes(old_log)
    run(check())


def test_concurrent_writes_share_fsyncs_which_run_off_the_event_loop(tmp_path, run, monkeypatch):
    fsync_threads: list[str] = []
    real_fsync = os.fsync

    def counting_fsync(fd):
        fsync_threads.append(threading.current_thread().name)
        real_fsync(fd)

    async def scenario():
        store = await opened(tmp_path / "store")
        monkeypatch.setattr(os, "fsync", counting_fsync)
        await asyncio.gather(*(store.create(f"/n{i}") for i in range(50)))
        monkeypatch.setattr(os, "fsync", real_fsync)
        assert len(await store.children("/")) == 50
        await store.close()
        return threading.current_thread().name

    loop_thread = run(scenario())
    assert 1 <= len(fsync_threads) < 50
    assert loop_thread not in fsync_threads


def test_a_data_dir_is_used_by_one_store_at_a_time(tmp_path, run):
    async def scenario():
        first = await opened(tmp_path / "store")
        with pytest.raises(StoreUnavailable, match="in use"):
            await opened(tmp_path / "store")
        await first.close()
        second = await opened(tmp_path / "store")
        await second.close()

    run(scenario())
