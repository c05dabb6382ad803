"""The lag dataset on disk (docs/lag-and-rebalances.md, "Recording lag"), as `groupctl lag record`
appends to it: `DIR/date=YYYY-MM-DD/hour=HH/part-<first ts ms>-<pid>-<n>.jsonl`, where date and
hour are the UTC date and hour of the round's first sample time and `n` counts this writer's
files (1, 2, ...), so names never collide within a process and the pid keeps two recorders apart.

Invariants:
- One new file per round with rows (a round without rows writes nothing); a file is never
  appended to or rewritten.
- A reader never sees a partial file: the rows go to `.part-....jsonl.tmp` (a dot-file, which
  Spark ignores) in the final directory, are flushed and fsynced, and the file is renamed to
  its final name; the directory is fsynced after the rename, and a new partition directory's
  parent after creating it, so a file `write_round` returned survives a crash of the machine.
- A failure before the rename removes the temp file and is raised; only a crash can leave a
  dot-file behind (ignored by readers).
- Rows are JSON Lines: one compact JSON object per line, newline-terminated, ASCII (non-ASCII
  characters escaped), hence valid UTF-8.
- Reading back (`read_rows`, for `lag serve` rebuilding its windows) skips what it cannot use, as
  `analyze lag` does: lines that are not JSON objects of schema version 1 with every field, and
  dot-files; whole `date=`/`hour=` directories before the time asked for are not opened.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator, Optional, Sequence

from groupctl.errors import BadInput, OpsError
from groupctl.ops.lag_record import SCHEMA_VERSION, LagRow


@dataclass(frozen=True)
class WrittenFile:
    path: Path
    rows: int
    first_ts: int


def partition_dir(root: Path, ts_ms: int) -> Path:
    """`root/date=YYYY-MM-DD/hour=HH` of the UTC time `ts_ms`."""
    moment = datetime.fromtimestamp(ts_ms / 1000, tz=timezone.utc)
    return root / f"date={moment:%Y-%m-%d}" / f"hour={moment:%H}"


def encode_rows(rows: Sequence[LagRow]) -> bytes:
    return b"".join(json.dumps(r.to_json(), separators=(",", ":")).encode("ascii") + b"\n" for r in rows)


def prepare_dataset_dir(root: Path) -> Path:
    """`root`, created if missing; BadInput when it is not a directory, OpsError when it cannot
    be created or written to."""
    if root.exists() and not root.is_dir():
        raise BadInput(f"{root} exists and is not a directory")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OpsError(f"cannot create {root}: {exc.strerror or exc}") from None
    if not os.access(root, os.W_OK | os.X_OK):
        raise OpsError(f"cannot write to {root}: permission denied")
    return root


def write_atomically(final: Path, data: bytes) -> None:
    """`data` as the file `final`, whole or not at all: written to a dot-file beside it, fsynced,
    renamed over it, then its directory fsynced. OSError when it cannot be; nothing of it is left."""
    temp = final.parent / f".{final.name}.tmp"
    try:
        with open(temp, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.rename(temp, final)  # replaces `final` atomically (POSIX)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _fsync_dir(final.parent)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class LagDatasetWriter:
    """Writes each round's rows to a new file under `root` (see the module docstring)."""

    def __init__(self, root: Path, *, pid: Optional[int] = None) -> None:
        self.root = root
        self.pid = os.getpid() if pid is None else pid
        self._files = 0
        self._known_dirs: set[Path] = set()

    def write_round(self, rows: Sequence[LagRow]) -> Optional[WrittenFile]:
        """The file holding `rows` (None for no rows); OSError when it could not be written,
        in which case nothing of it is left."""
        if not rows:
            return None
        data = encode_rows(rows)
        first_ts = min(r.ts for r in rows)
        directory = partition_dir(self.root, first_ts)
        self._ensure_dir(directory)
        self._files += 1
        final = directory / f"part-{first_ts}-{self.pid}-{self._files}.jsonl"
        write_atomically(final, data)
        return WrittenFile(final, len(rows), first_ts)

    def _ensure_dir(self, directory: Path) -> None:
        """Create the partition directory (and its date directory), fsyncing the parents of
        what was created; directories seen before are not looked at again."""
        if directory in self._known_dirs:
            return
        for level in (directory.parent, directory):
            if not level.is_dir():
                level.mkdir(exist_ok=True)
                _fsync_dir(level.parent)
        self._known_dirs.add(directory)


def newest_round_ts(root: Path) -> Optional[int]:
    """The first sample time of the newest round file under `root` (None: there is none), read
    from the file names of the newest hour directory that has one."""
    for hour_dir in sorted(root.glob("date=*/hour=*"), key=lambda d: (d.parent.name, d.name), reverse=True):
        starts = [int(match.group(1)) for path in hour_dir.glob("part-*.jsonl")
                  if (match := _PART_NAME.fullmatch(path.name))]
        if starts:
            return max(starts)
    return None


_PART_NAME = re.compile(r"part-(\d+)-\d+-\d+\.jsonl")


def read_rows(root: Path, *, since_ms: int) -> Iterator[LagRow]:
    """The rows under `root` sampled at or after `since_ms` (see the module docstring)."""
    first_hour = partition_dir(Path(), since_ms)
    for date_dir in sorted(root.glob("date=*")):
        if date_dir.name < first_hour.parent.name:
            continue
        for hour_dir in sorted(date_dir.glob("hour=*")):
            if (date_dir.name, hour_dir.name) < (first_hour.parent.name, first_hour.name):
                continue
            for path in sorted(hour_dir.glob("part-*.jsonl")):
                yield from (row for row in _rows_of(path) if row.ts >= since_ms)


def _rows_of(path: Path) -> Iterator[LagRow]:
    try:
        lines = path.read_bytes().splitlines()
    except OSError:
        return
    for line in lines:
        try:
            fields = json.loads(line)
            if not isinstance(fields, dict) or fields.pop("v", None) != SCHEMA_VERSION:
                continue
            row = LagRow(**fields)
        except (ValueError, TypeError):
            continue
        if _well_typed(row):
            yield row


_TYPES = {"ts": (int,), "cluster": (str,), "group": (str,), "topic": (str,), "partition": (int,),
          "committed": (int, type(None)), "log_end": (int, type(None)), "state": (str, type(None)),
          "members": (int, type(None)), "owner": (str, type(None))}


def _well_typed(row: LagRow) -> bool:
    return all(isinstance(getattr(row, name), kinds) and not isinstance(getattr(row, name), bool)
               for name, kinds in _TYPES.items())
