"""The open incidents of `groupctl lag serve --out DIR`, and the notifications it could not post
before it stopped, kept beside its dataset in DIR/_lag_serve_incidents.json, so that a restarted
server goes on with them: a webhook receiver matches a `close` to its `open` by id, on either side
of a restart, and gets the notifications the stop cut short.

Invariants:
- The file holds `{"v": 1, "open": [...], "pending": [...]}`: each `open` entry is
  `Incidents.open_incidents`' (cluster, group, id, start, status), each `pending` one a
  notification document as posted. It is replaced whole (`lag_dataset.write_atomically`), so a
  reader sees it before a change or after it, never a mix.
- Its name starts with `_` and it sits at the top of the dataset, where no reader of rows looks
  (`lag_dataset.read_rows` reads date=*/hour=*/part-*.jsonl; Spark skips `_` and `.` files).
- No file: nothing is known (a dataset written before the server kept incidents, or by
  `lag record`). A file that cannot be read or is not this format is an `OpsError` naming it:
  guessing would notify a receiver wrongly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from groupctl.errors import OpsError
from groupctl.ops.lag_dataset import write_atomically

FILE_NAME = "_lag_serve_incidents.json"
VERSION = 1
FIELDS = {"cluster", "group", "id", "start", "status"}


@dataclass(frozen=True)
class Kept:
    open: list[dict]
    pending: list[dict] = field(default_factory=list)


def load_incidents(root: Path) -> Optional[Kept]:
    """What the server that wrote under `root` kept there; None when it kept nothing."""
    path = root / FILE_NAME
    try:
        document = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise OpsError(f"cannot read the open incidents in {path}: {getattr(exc, 'strerror', None) or exc}") from None
    ours = isinstance(document, dict) and document.get("v") == VERSION
    entries, pending = (document.get("open"), document.get("pending", [])) if ours else (None, None)
    if not (isinstance(entries, list) and all(isinstance(e, dict) and set(e) == FIELDS for e in entries)
            and isinstance(pending, list) and all(isinstance(p, dict) for p in pending)):
        raise OpsError(f"{path} does not hold lag serve's open incidents (version {VERSION}); "
                       "move it away to start without them")
    return Kept(entries, pending)


def save_incidents(root: Path, incidents: list[dict], pending: list[dict] = ()) -> None:
    """Replace what is kept under `root` (OSError when it cannot be)."""
    document = {"v": VERSION, "open": incidents, "pending": list(pending)}
    write_atomically(root / FILE_NAME, json.dumps(document, separators=(",", ":")).encode())
