"""One partition's leader-epoch cache (KIP-101): which leader epoch began at which offset, kept in
Kafka's `leader-epoch-checkpoint` file in the partition's directory.

File format (Kafka's LeaderEpochCheckpointFile): a version line `0`, a count line, then one
`<epoch> <start offset>` line per entry, oldest first. It is replaced whole (write to `.tmp`,
fsync, rename, fsync the directory) whenever an epoch is assigned, so a crash leaves the old or
the new file, never a torn one. Moving the log start truncates the cache in memory only: the file
keeps the entries below the log start, which the log drops again when it opens (after reading
its log-start checkpoint), so whatever the order of a crash, a failed log-start checkpoint and
an epoch written meanwhile, the file never starts later than the durable log start. An empty log's file is written without the fsyncs: it holds one
entry at offset 0, and losing it loses nothing (the log's next open assigns its epoch again),
while two fsyncs would triple the cost of creating a partition.

Invariants:
- Entries are strictly increasing in both epoch and start offset; epochs and offsets are >= 0.
- The answers use the entries truncated from the log start (`truncate_from_start`); the file
  holds them untruncated from the start.
- The latest entry's epoch is the partition's current leader epoch once the log is led
  (`PartitionLog` assigns (epoch, log end offset) when it opens or its epoch rises), and every
  batch appended after that carries it, so appends never add entries.
- Epochs only rise: `PartitionLog` never assigns an epoch below the latest entry (a lower one
  would wipe the entries above it, and with them the epochs clients still validate against).
- The log's owner (the node's event loop) changes it, except while the log is being built in a
  worker thread. `checkpoint` may run in a worker thread: every change replaces the entry list
  whole, and writes take a lock, so a write holds the entries of one moment and two writes
  never share the temporary file. Once `retire`d (the log is being deleted) nothing is written.

Semantics follow Kafka's LeaderEpochFileCache: `assign`, `end_offset_for`, `epoch_for_offset`,
`truncate_from_start` (the log start moved) and `truncate_from_end` (the log end moved back).
Deliberate differences: recovery drops only entries that start past the log end; Kafka also drops
an epoch that starts exactly at it (a leader that wrote nothing), which would forget the epoch a
consumer may still validate against. Kafka's file is truncated from the start too (asynchronously
flushed); here it keeps the entries below the start (a few lines: one per epoch), see above.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Callable, Iterable, Optional

log = logging.getLogger(__name__)

CHECKPOINT_FILE = "leader-epoch-checkpoint"
CHECKPOINT_VERSION = 0
UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1

Entry = tuple[int, int]  # (epoch, start offset)


class LeaderEpochCache:
    def __init__(self, path: Optional[Path], entries: Iterable[Entry] = ()) -> None:
        """A cache holding `entries` (already monotonic), written to `path` on change (None:
        kept in memory only)."""
        self.path = path
        self._lock = threading.Lock()
        self._retired = False
        self._recorded: list[Entry] = []  # what the file holds: not truncated from the start
        self._start = -1  # the log start the entries are truncated from in memory
        self._entries: list[Entry] = []  # `_recorded` truncated from `_start`: what is answered
        self._set(list(entries), -1)

    def _set(self, recorded: list[Entry], start: int) -> None:
        """Replace the entries whole (a `checkpoint` in another thread reads `_recorded` once)."""
        removed = [entry for entry in recorded if entry[1] <= start]
        self._entries = [(removed[-1][0], start)] + recorded[len(removed):] if removed else recorded
        self._start = start
        self._recorded = recorded

    @classmethod
    def load(cls, directory: Optional[Path]) -> Optional["LeaderEpochCache"]:
        """The cache checkpointed in `directory`, or None when there is no checkpoint file (the
        caller rebuilds it from the batch headers). A damaged file raises ValueError."""
        if directory is None:
            return cls(None)
        path = directory / CHECKPOINT_FILE
        try:
            text = path.read_text()
        except FileNotFoundError:
            return None
        return cls(path, _parse(path, text))

    @classmethod
    def rebuild(cls, directory: Optional[Path], batch_epochs: Iterable[Entry]) -> "LeaderEpochCache":
        """A cache rebuilt from (partition leader epoch, base offset) of every batch in offset
        order, as Kafka's log recovery does; batches without an epoch (-1) add nothing."""
        entries: list[Entry] = []
        for epoch, offset in batch_epochs:
            if epoch >= 0 and (not entries or epoch > entries[-1][0]):
                entries.append((epoch, offset))
        cache = cls(directory / CHECKPOINT_FILE if directory is not None else None, entries)
        if entries:
            cache.checkpoint()
        return cache

    @property
    def entries(self) -> list[Entry]:
        return list(self._entries)

    @property
    def latest_epoch(self) -> int:
        return self._entries[-1][0] if self._entries else UNDEFINED_EPOCH

    @property
    def earliest(self) -> Optional[Entry]:
        return self._entries[0] if self._entries else None

    # -- changes ---------------------------------------------------------------------------

    def assign(self, epoch: int, start_offset: int) -> None:
        """`advance`, then `checkpoint` when that changed anything, before returning."""
        if self.advance(epoch, start_offset):
            self.checkpoint()

    def advance(self, epoch: int, start_offset: int) -> bool:
        """Record in memory that `epoch` begins at `start_offset`; True when that changed the
        cache (then `checkpoint` it). A no-op when `epoch` is already the latest and starts no
        later; entries that would break monotonicity (an epoch >= it, or a start >= its start)
        are dropped first."""
        if epoch < 0 or start_offset < 0:
            raise ValueError(f"invalid leader epoch entry ({epoch}, {start_offset})")
        recorded = self._recorded
        if recorded:
            latest_epoch, latest_start = recorded[-1]
            if epoch == latest_epoch and start_offset >= latest_start:
                return False
        kept = [entry for entry in recorded if entry[0] < epoch and entry[1] < start_offset]
        self._set(kept + [(epoch, start_offset)], self._start)
        return True

    def truncate_from_end(self, end_offset: int) -> None:
        """Drop the entries that start past `end_offset` (the log was cut back to it)."""
        kept = [entry for entry in self._recorded if entry[1] <= end_offset]
        if len(kept) != len(self._recorded):
            self._set(kept, self._start)
            self.checkpoint()

    def truncate_from_start(self, start_offset: int) -> None:
        """The log now starts at `start_offset`: drop the entries that start at or before it
        and let the last of them start there instead (Kafka's truncateFromStart; an entry
        starting exactly there is kept). In memory only: the file keeps what it recorded (see
        the module docstring)."""
        if start_offset > self._start:
            self._set(self._recorded, start_offset)

    # -- questions -------------------------------------------------------------------------

    def end_offset_for(self, epoch: int, log_end_offset: int) -> Entry:
        """(epoch, end offset) as Kafka's LeaderEpochFileCache.endOffsetFor answers for a
        requested epoch: the latest epoch ends at the log end; an older one at the start of the
        next epoch, reported under the largest known epoch <= it (or itself when it predates
        every entry); -1, -1 for epoch -1 or one above every entry."""
        if epoch == UNDEFINED_EPOCH:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if self._entries and self._entries[-1][0] == epoch:
            return epoch, log_end_offset
        higher = next((entry for entry in self._entries if entry[0] > epoch), None)
        if higher is None:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        floor = [entry for entry in self._entries if entry[0] <= epoch]
        return (floor[-1][0] if floor else epoch), higher[1]

    def epoch_for_offset(self, offset: int) -> int:
        """The epoch of the batch holding `offset` (the last entry starting at or before it),
        -1 when it predates every entry."""
        found = UNDEFINED_EPOCH
        for epoch, start in self._entries:
            if start > offset:
                break
            found = epoch
        return found

    # -- the checkpoint file ---------------------------------------------------------------

    def checkpoint(self) -> None:
        """Write the entries, not truncated from the start, to the file: durably, unless the
        only entry starts at 0.
        Thread-safe; nothing once retired."""
        if self.path is None:
            return
        with self._lock:
            if not self._retired:
                entries = self._recorded
                self._write(entries, durable=len(entries) != 1 or entries[0][1] != 0)

    def retire(self) -> None:
        """Write nothing more: the log is being deleted (waits for a write under way)."""
        with self._lock:
            self._retired = True

    def _write(self, entries: list[Entry], durable: bool) -> None:
        assert self.path is not None
        lines = [str(CHECKPOINT_VERSION), str(len(entries))]
        lines += [f"{epoch} {start}" for epoch, start in entries]
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, ("\n".join(lines) + "\n").encode())
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.path)
        if not durable:
            return
        dir_fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _parse(path: Path, text: str) -> list[Entry]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    try:
        if int(lines[0]) != CHECKPOINT_VERSION:
            raise ValueError(f"{path}: unsupported checkpoint version {lines[0]!r}")
        count = int(lines[1])
        entries = [(int(epoch), int(start)) for epoch, start in (line.split() for line in lines[2:])]
    except (IndexError, ValueError) as exc:
        raise ValueError(f"{path}: not a leader-epoch checkpoint ({exc})") from None
    if count != len(entries):
        raise ValueError(f"{path}: declares {count} entries but holds {len(entries)}")
    for before, after in zip(entries, entries[1:]):
        if not (after[0] > before[0] and after[1] > before[1]):
            raise ValueError(f"{path}: entries {before} and {after} are not increasing")
    return entries


def open_cache(directory: Optional[Path], batch_epochs: Callable[[], Iterable[Entry]],
               log_end_offset: int) -> LeaderEpochCache:
    """The cache of a log being opened: its checkpoint, or one rebuilt from
    `batch_epochs()` ((epoch, base offset) of every batch) when the file is missing or damaged,
    less the entries past `log_end_offset` (a crash can leave the checkpoint ahead of a torn
    log tail)."""
    try:
        cache = LeaderEpochCache.load(directory)
    except ValueError as exc:
        log.warning("%s; rebuilding it from the batch headers", exc)
        cache = None
    if cache is None:
        cache = LeaderEpochCache.rebuild(directory, batch_epochs())
    cache.truncate_from_end(log_end_offset)
    return cache


def checkpointed_latest_epoch(directory: Path) -> int:
    """The latest epoch in `directory`'s checkpoint file without opening the log; -1 when the
    file is missing or damaged (opening the log would rebuild it from the batch headers)."""
    try:
        entries = _parse(directory / CHECKPOINT_FILE, (directory / CHECKPOINT_FILE).read_text())
    except (OSError, ValueError):
        return UNDEFINED_EPOCH
    return entries[-1][0] if entries else UNDEFINED_EPOCH
