"""The node's partition logs, one directory per partition under the data dir.

Layout: `<data_dir>/<topic>-<partition>/` holding `<base offset>.log` / `.index` segment pairs,
once the log start has moved a `log-start-offset` checkpoint (`checkpoints.py`), and, after a
clean close, a `.clean_shutdown` marker (Kafka's naming). `<data_dir>/.lock` is
held with flock while the manager is open, so two nodes cannot write the same logs.

Logs open on first use and recover from what is on disk then; a partition nobody touches costs
nothing. With `data_dir=None` every log lives in memory and is gone when the node stops.

Opening off the event loop: creating a log on disk (a directory and two files) takes ~2 ms on
the benchmark machine, and recovering one reads its active segment, so 900 new partitions
opened on the loop stopped it for seconds. The node therefore opens logs with `await open()`,
which builds the `PartitionLog` in one of OPEN_THREADS worker threads and registers it on the
loop's thread; an open log is still a dict lookup (`get`). Building a log touches only its own
directory (its files, a new producer state, the thread-safe `logging`), so it is safe off the
loop; once open, a log is read and written only on the loop (see `partition.py`). `open_soon`
opens logs in the background, at most BACKGROUND_OPENS at a time, for partitions about to be
asked for (a topic that grew). `partition` is the synchronous open, for callers without a loop.

Invariants:
- At most one PartitionLog per directory: concurrent opens of a partition share one attempt; an
  attempt whose topic is deleted meanwhile (abandoned) removes what it built, and a later attempt
  on the same partition starts only once it has.
- A failed open is not remembered: the next `open` tries again.
- `close` waits for the worker threads, so none touches the data dir once its lock is released.

Topic configs: every log honours its topic's `LogConfig` (`set_topic_config`, applied to open
logs at once and to logs opened later); a topic without one gets the manager's default, built
from its `segment_bytes`. Retention (`start_retention`) is a task on the loop that, every
log.retention.check.interval.ms, creates in worker threads the segments that logs whose every
segment expired roll to, lets each open log detach its expired segments (on the loop, so
no read can reach them afterwards) and then checkpoints the new start and unlinks them in a
worker thread (`finish_removal`). Logs nobody has opened since the node started are not looked
at (Kafka opens every log at start-up); they do not grow either, and are retained once opened.

Leader epochs: a log opens at the epoch `epoch_of(topic, partition)` gives then (the node's topic
registry), read on the loop's thread, unless its own cache holds a later one, and `lead` raises an
open log to a new epoch (`lead_all` for many, writing their checkpoints in worker threads); a log that
finishes opening after its epoch changed is moved on registration. `leading` is False while the
node raises the epochs of the partitions it leads (a start, a new ZooKeeper session): the
handlers then answer those partitions as a broker that is not their leader yet does.

The manager also owns the node's producer-id allocator (`producer_ids`, see `producer_ids.py`):
producer ids exist for the partition logs' producer state, and the allocator needs no files,
only the node's id (which keeps ids of different nodes apart).
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import re
import shutil
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Iterable, Optional

from groupctl.log.config import DEFAULT_SEGMENT_BYTES, LogConfig
from groupctl.log.epochs import checkpointed_latest_epoch
from groupctl.log.errors import LogDirLockedError, LogError, PartitionDeletedError
from groupctl.log.partition import Clock, PartitionLog, Removal, wall_clock_ms
from groupctl.log.producer_ids import ProducerIdAllocator
from groupctl.log.segment import Segment

log = logging.getLogger(__name__)

DEFAULT_INDEX_INTERVAL_BYTES = 4096
# Worker threads building logs. Creating one is almost all kernel time (file-system calls, which
# release the GIL: ~0.08 ms user and 1-2 ms system each on the benchmark machine, 2 cores), so
# threads overlap it only partly: 900 background opens took 2.4-2.8 s one at a time and 1.6-2.1 s
# two at a time (the machine busy with other work). Background opens use at most
# BACKGROUND_OPENS threads, so requests always have the others and queue behind at most that many.
OPEN_THREADS = 4
BACKGROUND_OPENS = 2

_TOPIC = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")

Key = tuple[str, int]


class _Attempt:
    """One attempt to open a partition's log in a worker thread."""

    __slots__ = ("directory", "task", "built", "abandoned", "discarding", "settled")

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.task: Optional[asyncio.Task[PartitionLog]] = None
        self.built: Optional[Future[PartitionLog]] = None  # the worker thread's job, once submitted
        self.abandoned = False  # its topic was deleted meanwhile: what it builds is removed, not served
        self.discarding = False  # the removal of what it built is under way
        self.settled = False  # `close` has dealt with what it built


class LogManager:
    def __init__(
        self,
        data_dir: Optional[Path],
        *,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
        node_id: int = 0,
        clock: Clock = wall_clock_ms,
        epoch_of: Callable[[str, int], int] = lambda topic, partition: 0,
    ) -> None:
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self.default_config = LogConfig(segment_bytes=segment_bytes)
        self.index_interval_bytes = index_interval_bytes
        self.clock = clock
        self._configs: dict[str, LogConfig] = {}  # topics with their own config
        self._retention: Optional[asyncio.Task[None]] = None
        self._epoch_of = epoch_of
        self.leading = True  # False while the node's leader epochs are being raised
        self._logs: dict[Key, PartitionLog] = {}
        self._opening: dict[Key, _Attempt] = {}  # attempts in flight
        self._abandoned: dict[Key, _Attempt] = {}  # attempts in flight whose topic was deleted
        self._executor: Optional[ThreadPoolExecutor] = None  # started by the first `open`
        self._queue: deque[Key] = deque()  # `open_soon`'s partitions not yet started
        self._queued: set[Key] = set()
        self._background: set[asyncio.Task[None]] = set()
        self._closed = False
        self.producer_ids = ProducerIdAllocator(node_id=node_id)
        self._lock_fd: Optional[int] = None
        if self.data_dir is not None:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.data_dir / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise LogDirLockedError(f"{self.data_dir} is in use by another process") from None
            self._lock_fd = fd

    def get(self, topic: str, partition: int) -> Optional[PartitionLog]:
        """The log of `topic`/`partition` if it is open, else None (never opens one)."""
        return self._logs.get((topic, partition))

    def partition(self, topic: str, partition: int) -> PartitionLog:
        """The log of `topic`/`partition`, opened (and recovered) or created on first use, on
        the caller's thread. The node uses `open`, which does that work in a worker thread."""
        key = (topic, partition)
        existing = self._logs.get(key)
        if existing is not None:
            return existing
        directory = self._directory(topic, partition)
        if key in self._opening or key in self._abandoned:
            raise LogError(f"the log of {topic}-{partition} is being opened by a worker thread")
        opened = self._new_log(topic, partition, directory, self._epoch_of(topic, partition))
        self._logs[key] = opened
        return opened

    def lead(self, topic: str, partition: int, leader_epoch: int) -> None:
        """Move the open log of `topic`/`partition` (if any) up to `leader_epoch`: later appends
        carry it and its epoch cache records where it began (a checkpoint write and fsync on
        this thread). A lower epoch changes nothing (`PartitionLog.raise_epoch`)."""
        opened = self._logs.get((topic, partition))
        if opened is not None:
            opened.become_leader(leader_epoch)

    async def lead_all(self, epochs: Iterable[tuple[str, int, int]]) -> None:
        """`lead` for each (topic, partition, epoch), with the epoch caches' checkpoint writes
        done in worker threads, returning once all of them are. For the node's own leadership
        changes while `leading` is False: no append is served then, so none can be acknowledged
        at an epoch whose checkpoint is not written yet. Raises what a write of a log still
        open raises (a log deleted meanwhile writes nothing: its cache is retired)."""
        raised = []
        for topic, partition, leader_epoch in epochs:
            opened = self._logs.get((topic, partition))
            if opened is not None and opened.raise_epoch(leader_epoch):
                raised.append(opened)
        if not raised or self.data_dir is None:
            return
        if self._closed:
            raise LogError("the log manager is closed")
        await asyncio.gather(*(asyncio.wrap_future(self._pool().submit(opened.epochs.checkpoint))
                               for opened in raised))

    async def latest_epochs(self, partitions: Iterable[Key]) -> dict[Key, int]:
        """(topic, partition) -> the latest leader epoch its log on this node has led at, -1 when
        none is known: an open log's epoch from memory, another's from the last entry of its
        epoch checkpoint file, read in a worker thread (a log opening meanwhile opens at no
        less). Reading the file rather than opening the log keeps an untouched partition free."""
        epochs: dict[Key, int] = {}
        unopened: list[tuple[Key, Path]] = []
        for key in partitions:
            opened = self._logs.get(key)
            if opened is not None:
                epochs[key] = opened.leader_epoch
            elif self.data_dir is not None and not self._closed:
                directory = self._directory(*key)
                assert directory is not None
                unopened.append((key, directory))
        if unopened:
            latest = await asyncio.wrap_future(self._pool().submit(
                lambda: [checkpointed_latest_epoch(directory) for _, directory in unopened]))
            epochs.update((key, epoch) for (key, _), epoch in zip(unopened, latest))
        return epochs

    async def sizes(self, partitions: Iterable[Key]) -> dict[Key, int]:
        """(topic, partition) -> the bytes of its log's segments, without opening a log: an open
        log's from memory, another's by stat'ing its segment files in a worker thread (0 when it
        has none yet; a torn tail or segments below a checkpointed start, which opening would
        remove, are counted)."""
        sizes: dict[Key, int] = {}
        unopened: list[tuple[Key, Path]] = []
        for key in partitions:
            opened = self._logs.get(key)
            if opened is not None:
                sizes[key] = opened.size_bytes
            elif self.data_dir is not None:
                directory = self._directory(*key)
                assert directory is not None
                unopened.append((key, directory))
            else:
                sizes[key] = 0
        if unopened:
            if self._closed:
                raise LogError("the log manager is closed")
            stated = await asyncio.wrap_future(self._pool().submit(
                lambda: [segment_files_size(directory) for _, directory in unopened]))
            sizes.update((key, size) for (key, _), size in zip(unopened, stated))
        return sizes

    def _directory(self, topic: str, partition: int) -> Optional[Path]:
        if not _TOPIC.match(topic) or topic in (".", "..") or partition < 0:
            raise ValueError(f"not a partition: {topic!r}/{partition}")
        return self.data_dir / f"{topic}-{partition}" if self.data_dir is not None else None

    # -- opening in worker threads ---------------------------------------------------------

    async def open(self, topic: str, partition: int) -> PartitionLog:
        """The log of `topic`/`partition` as `partition` gives it, without blocking the event
        loop: an open log at once, else one built (created, or opened and recovered) in a worker
        thread and registered here on the loop's thread. Concurrent calls for one partition
        share one attempt. Raises what building raises (LogError, OSError; not remembered, the
        next call tries again), and PartitionDeletedError when the topic is deleted meanwhile.
        In memory (no data dir) a log is built at once, on the loop: there is nothing to wait for."""
        key = (topic, partition)
        existing = self._logs.get(key)
        if existing is not None:
            return existing
        if self.data_dir is None:
            return self.partition(topic, partition)
        attempt = self._opening.get(key)
        if attempt is None:
            attempt = self._start(key)
        assert attempt.task is not None
        # Shielded: one waiter cancelled (its connection closed) must not cancel the others' open.
        return await asyncio.shield(attempt.task)

    def open_soon(self, partitions: Iterable[Key]) -> None:
        """Start opening the logs of `partitions` (topic, partition) in the background, at most
        BACKGROUND_OPENS at a time, so that the first request for one finds it open (a request
        that comes first opens it itself and the background open shares its attempt). A failure
        is logged and forgotten: a request tries again. Nothing to do in memory."""
        if self.data_dir is None or self._closed:
            return
        for key in partitions:
            if key not in self._logs and key not in self._queued:
                self._directory(*key)  # refuse a bad name here, not in the background
                self._queued.add(key)
                self._queue.append(key)
        loop = asyncio.get_running_loop()
        while self._queue and len(self._background) < BACKGROUND_OPENS:
            task = loop.create_task(self._open_queued())
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _open_queued(self) -> None:
        while self._queue and not self._closed:
            key = self._queue.popleft()
            self._queued.discard(key)
            if key in self._logs:
                continue
            try:
                await self.open(*key)
            except PartitionDeletedError:
                pass
            except Exception:  # noqa: BLE001 - a request for it answers KAFKA_STORAGE_ERROR and retries
                log.warning("opening the log of %s-%d in the background failed", *key, exc_info=True)

    def _start(self, key: Key) -> _Attempt:
        directory = self._directory(*key)
        assert directory is not None
        if self._closed:
            raise LogError("the log manager is closed")
        attempt = _Attempt(directory)
        attempt.task = asyncio.get_running_loop().create_task(self._run(key, attempt, self._abandoned.get(key)))
        attempt.task.add_done_callback(_retrieve)
        self._opening[key] = attempt
        return attempt

    async def _run(self, key: Key, attempt: _Attempt, after: Optional[_Attempt]) -> PartitionLog:
        try:
            return await self._build_and_register(key, attempt, after)
        finally:
            if self._opening.get(key) is attempt:
                del self._opening[key]
            if self._abandoned.get(key) is attempt:
                del self._abandoned[key]

    async def _build_and_register(self, key: Key, attempt: _Attempt, after: Optional[_Attempt]) -> PartitionLog:
        if after is not None and after.task is not None:
            await asyncio.wait([after.task])  # an abandoned attempt on the same directory ends first
        if self._closed:
            raise LogError("the log manager is closed")
        attempt.built = self._pool().submit(self._build, key, attempt.directory, self._epoch_of(*key))
        try:
            opened: Optional[PartitionLog] = await asyncio.wrap_future(attempt.built)
        except (LogError, OSError):
            if not attempt.abandoned:
                raise
            opened = None  # the deletion may have removed the directory under it
        if attempt.settled:
            raise LogError("the log manager is closed")
        if attempt.abandoned:
            attempt.discarding = True
            await asyncio.wrap_future(self._pool().submit(_discard, opened, attempt.directory))
            raise PartitionDeletedError(f"{key[0]}-{key[1]} was deleted while its log was being opened")
        assert opened is not None
        opened.configure(self.config_for(key[0]))  # the topic's config may have changed meanwhile
        self._logs[key] = opened
        self.lead(*key, self._epoch_of(*key))  # the epoch rose while it was being opened
        return opened

    def _build(self, key: Key, directory: Path, leader_epoch: int) -> PartitionLog:
        """Runs in a worker thread."""
        if self._closed:
            raise LogError("the log manager is closed")
        return self._new_log(key[0], key[1], directory, leader_epoch)

    def _new_log(self, topic: str, partition: int, directory: Optional[Path], leader_epoch: int) -> PartitionLog:
        return PartitionLog(topic, partition, directory, config=self.config_for(topic),
                            index_interval_bytes=self.index_interval_bytes, clock=self.clock,
                            leader_epoch=leader_epoch)

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(OPEN_THREADS, thread_name_prefix="log-open")
        return self._executor

    # -- topic configs ---------------------------------------------------------------------

    def config_for(self, topic: str) -> LogConfig:
        return self._configs.get(topic, self.default_config)

    def set_topic_config(self, topic: str, config: LogConfig) -> None:
        """Make every log of `topic` honour `config`: the open ones from their next append and
        retention pass, the others when they open. On the loop's thread."""
        self._configs[topic] = config
        for (name, _), opened in self._logs.items():
            if name == topic:
                opened.configure(config)

    # -- retention --------------------------------------------------------------------------

    def start_retention(self, interval_ms: int) -> None:
        """Run `enforce_retention` every `interval_ms` on the running loop until `close`."""
        async def every_interval() -> None:
            while True:
                await asyncio.sleep(interval_ms / 1000)
                try:
                    await self.enforce_retention()
                except Exception:  # noqa: BLE001 - e.g. a roll's fsync failed; the next pass tries again
                    log.exception("a retention pass failed")

        self._retention = asyncio.get_running_loop().create_task(every_interval())

    async def enforce_retention(self) -> None:
        """One retention pass over the open logs (`PartitionLog.retention_removal`). A log whose
        checkpoint fails is logged: its start has moved in memory, and the detached segments'
        files are removed at its next open once a later checkpoint has been written."""
        candidates = list(self._logs.values())
        staged = await self._stage_rolls(candidates)
        moved = []
        for opened in candidates:
            segment = staged.get(id(opened))
            if self._logs.get((opened.topic, opened.partition)) is not opened:
                if segment is not None:
                    segment.close()  # deleted or closed meanwhile: the next open removes the files
                continue
            removal = opened.retention_removal(segment)
            if removal.segments:
                moved.append((opened, removal))
        outcomes = await asyncio.gather(*(self.finish_removal(opened, removal) for opened, removal in moved),
                                        return_exceptions=True)
        for (opened, removal), outcome in zip(moved, outcomes):
            if isinstance(outcome, BaseException):
                log.error("retention of %s-%d failed", opened.topic, opened.partition, exc_info=outcome)
            else:
                log.info("retention deleted %d segment(s) of %s-%d; the log now starts at %d",
                         len(removal.segments), opened.topic, opened.partition, removal.log_start_offset)

    async def _stage_rolls(self, logs: list[PartitionLog]) -> dict[int, Segment]:
        """id(log) -> the segment staged in a worker thread for each of `logs` whose every
        segment expired (`PartitionLog.stage_segment`); a failure is logged and that log keeps
        its active segment this pass."""
        if self.data_dir is None or self._closed:
            return {}
        wanted = [(opened, base) for opened in logs if (base := opened.retention_roll_base()) is not None]
        outcomes = await asyncio.gather(
            *(asyncio.wrap_future(self._pool().submit(opened.stage_segment, base)) for opened, base in wanted),
            return_exceptions=True)
        staged = {}
        for (opened, _), outcome in zip(wanted, outcomes):
            if isinstance(outcome, BaseException):
                if self._logs.get((opened.topic, opened.partition)) is not opened:
                    continue  # deleted meanwhile, with its directory
                log.error("staging a segment for %s-%d failed", opened.topic, opened.partition, exc_info=outcome)
            else:
                staged[id(opened)] = outcome
        return staged

    # -- moving log starts ------------------------------------------------------------------

    async def finish_removal(self, opened: PartitionLog, removal: Removal) -> None:
        """Finish moving an open log's start (`PartitionLog.delete_records_before`, retention):
        a worker thread checkpoints the new start and then removes the segments below it
        (`PartitionLog.finish_removal`); in memory that is done at once. Raises OSError when
        the checkpoint cannot be written (the start has moved in memory all the same, as
        Kafka's does before its periodic checkpoint), LogError once the manager is closed."""
        if self.data_dir is None:
            opened.finish_removal(removal)
            return
        if self._closed:
            for segment in removal.segments:
                segment.close()  # not checkpointed: the next open reads them again
            raise LogError("the log manager is closed")
        await asyncio.wrap_future(self._pool().submit(opened.finish_removal, removal))

    # -- deleting and closing --------------------------------------------------------------

    def delete_topic(self, topic: str) -> None:
        """Remove every partition log of `topic`, open or only on disk, and its config."""
        self._configs.pop(topic, None)
        for key in [key for key in self._logs if key[0] == topic]:
            self._logs.pop(key).delete()
        for key in [key for key in self._opening if key[0] == topic]:
            attempt = self._opening.pop(key)
            attempt.abandoned = True
            self._abandoned[key] = attempt
        if self._queued:
            self._queue = deque(key for key in self._queue if key[0] != topic)
            self._queued = set(self._queue)
        if self.data_dir is None:
            return
        for entry in self.data_dir.iterdir():
            name, _, number = entry.name.rpartition("-")
            if name == topic and number.isdigit() and entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)

    def flush(self) -> None:
        for opened in self._logs.values():
            opened.flush()

    def close(self) -> None:
        """Sync and close every log and release the data dir; the manager is unusable after.
        Waits for the worker threads (each finishes the log it is building, at most
        OPEN_THREADS of them; queued ones give up at once) and closes what they built."""
        self._closed = True
        if self._retention is not None:
            self._retention.cancel()
        for task in list(self._background):
            task.cancel()
        self._queue.clear()
        self._queued.clear()
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        for attempt in [*self._opening.values(), *self._abandoned.values()]:
            attempt.settled = True
            built = attempt.built
            if built is None or not built.done() or built.cancelled() or built.exception() is not None:
                continue
            if attempt.discarding:
                continue  # removed by its own job, which the shutdown above waited for
            if attempt.abandoned:
                _discard(built.result(), attempt.directory)
            else:
                built.result().close()
        for opened in self._logs.values():
            opened.close()
        self._logs.clear()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


def segment_files_size(directory: Path) -> int:
    """The bytes of the segment (`<base offset>.log`) files in `directory`, 0 when it is missing."""
    try:
        return sum(entry.stat().st_size for entry in os.scandir(directory)
                   if entry.name.endswith(".log") and entry.name[:-4].isdigit())
    except FileNotFoundError:
        return 0


def _discard(opened: Optional[PartitionLog], directory: Path) -> None:
    """Remove what an abandoned attempt built (a log, or whatever a failed build left)."""
    if opened is not None:
        opened.delete()  # nobody was given it, so no listener hears of this
    shutil.rmtree(directory, ignore_errors=True)


def _retrieve(task: asyncio.Task) -> None:
    """Mark an attempt's failure as seen: its waiters may all have gone (they log their own)."""
    if not task.cancelled():
        task.exception()
