"""One partition's leader-epoch cache (KIP-101): which leader epoch began at which offset, kept in
Kafka's `leader-epoch-checkpoint` file in the partition's directory.

File format (Kafka's LeaderEpochCheckpointFile): a version line `0`, a count line, then one
`<epoch> <start offset>` line per entry, oldest first. It is replaced whole (write to `.tmp`,
fsync, rename, fsync the directory) whenever an epoch is assigned, so a crash leaves the old or
the new file, never a torn one. An empty log's file is written without the fsyncs: it holds one
entry at offset 0, and losing it loses nothing (the log's next open assigns its epoch again),
while two fsyncs would triple the cost of creating a partition.

Invariants:
- Entries are strictly increasing in both epoch and start offset; epochs and offsets are >= 0.
- The latest entry's epoch is the partition's current leader epoch once the log is led
  (`PartitionLog` assigns (epoch, log end offset) when it opens or its epoch rises), and every
  batch appended after that carries it, so appends never add entries.
- Not thread-safe: the log's owner (the node's event loop) calls it, except while the log is
  being built in a worker thread.

Semantics follow Kafka's LeaderEpochFileCache: `assign`, `end_offset_for`, `epoch_for_offset`,
`truncate_from_start` (the log start moved) and `truncate_from_end` (the log end moved back).
Deliberate difference: recovery drops only entries that start past the log end; Kafka also drops
an epoch that starts exactly at it (a leader that wrote nothing), which would forget the epoch a
consumer may still validate against.
"""

from __future__ import annotations

import logging
import os
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
        self._entries: list[Entry] = list(entries)

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
        cache = cls(directory / CHECKPOINT_FILE if directory is not None else None)
        for epoch, offset in batch_epochs:
            if epoch >= 0 and (not cache._entries or epoch > cache._entries[-1][0]):
                cache._entries.append((epoch, offset))
        if cache._entries:
            cache._write()
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
        """Record that `epoch` begins at `start_offset` and checkpoint it (durably, unless it is
        the only entry and starts at 0) before returning. A no-op when `epoch` is already the
        latest and starts no later; entries that would break monotonicity (an epoch >= it, or a
        start >= its start) are dropped first."""
        if epoch < 0 or start_offset < 0:
            raise ValueError(f"invalid leader epoch entry ({epoch}, {start_offset})")
        if self._entries:
            latest_epoch, latest_start = self._entries[-1]
            if epoch == latest_epoch and start_offset >= latest_start:
                return
        while self._entries and (self._entries[-1][0] >= epoch or self._entries[-1][1] >= start_offset):
            self._entries.pop()
        self._entries.append((epoch, start_offset))
        self._write(durable=self._entries != [(epoch, 0)])

    def truncate_from_end(self, end_offset: int) -> None:
        """Drop the entries that start past `end_offset` (the log was cut back to it)."""
        kept = [entry for entry in self._entries if entry[1] <= end_offset]
        if len(kept) != len(self._entries):
            self._entries = kept
            self._write()

    def truncate_from_start(self, start_offset: int) -> None:
        """The log now starts at `start_offset`: drop the entries that start at or before it
        and let the last of them start there instead (Kafka's truncateFromStart; an entry
        starting exactly there is kept)."""
        removed = [entry for entry in self._entries if entry[1] <= start_offset]
        if not removed:
            return
        self._entries = [(removed[-1][0], start_offset)] + self._entries[len(removed):]
        self._write(durable=False)  # a log opening truncates its cache from its checkpointed start again

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

    def _write(self, durable: bool = True) -> None:
        if self.path is None:
            return
        lines = [str(CHECKPOINT_VERSION), str(len(self._entries))]
        lines += [f"{epoch} {start}" for epoch, start in self._entries]
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
