"""The open incidents of `groupctl lag serve --out DIR`, kept beside its dataset in
DIR/_lag_serve_incidents.json, so that a restarted server goes on with them under their own ids:
a webhook receiver matches a `close` to its `open` by id, on either side of a restart.

Invariants:
- The file holds `{"v": 1, "open": [...]}`, each entry `Incidents.open_incidents`' (cluster, group,
  id, start, status), and is replaced whole: written to a dot-file, fsynced, renamed over the old
  one, so a reader sees the incidents before a change or after it, never a mix.
- Its name starts with `_` and it sits at the top of the dataset, where no reader of rows looks
  (`lag_dataset.read_rows` reads date=*/hour=*/part-*.jsonl; Spark skips `_` and `.` files).
- No file: nothing is known (a dataset written before the server kept incidents, or by
  `lag record`). A file that cannot be read or is not this format is an `OpsError` naming it:
  guessing would notify a receiver wrongly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from groupctl.errors import OpsError
from groupctl.ops.lag_dataset import write_atomically

FILE_NAME = "_lag_serve_incidents.json"
VERSION = 1
FIELDS = {"cluster", "group", "id", "start", "status"}


def load_incidents(root: Path) -> Optional[list[dict]]:
    """The incidents open when the server that wrote under `root` last changed one; None when it
    kept none there."""
    path = root / FILE_NAME
    try:
        document = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise OpsError(f"cannot read the open incidents in {path}: {getattr(exc, 'strerror', None) or exc}") from None
    entries = document.get("open") if isinstance(document, dict) and document.get("v") == VERSION else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) and set(e) == FIELDS for e in entries):
        raise OpsError(f"{path} does not hold lag serve's open incidents (version {VERSION}); "
                       "move it away to start without them")
    return entries


def save_incidents(root: Path, incidents: list[dict]) -> None:
    """Replace the open incidents under `root` with `incidents` (OSError when it cannot)."""
    write_atomically(root / FILE_NAME, json.dumps({"v": VERSION, "open": incidents}, separators=(",", ":")).encode())
