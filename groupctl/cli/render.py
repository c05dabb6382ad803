"""Rendering helpers: rich tables for people, JSON for scripts.

JSON output is one document per command (`emit_json`), or one object per line for streams
(`emit_json_line`), built from the ops dataclasses' `to_json()` — the documented, stable keys.
Everything goes through the `CliEnv` consoles, so tests capture it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence

from groupctl.cli.context import CliEnv

if TYPE_CHECKING:
    from rich.table import Table

    from groupctl.ops.lag import PartitionOffsets


def emit_json(env: CliEnv, document: Any) -> None:
    env.out.print(json.dumps(document, indent=2, sort_keys=False), markup=False, highlight=False,
                  soft_wrap=True)


def emit_json_line(env: CliEnv, document: Any) -> None:
    env.out.print(json.dumps(document, separators=(",", ":")), markup=False, highlight=False,
                  soft_wrap=True)
    env.out.file.flush()


RIGHT_ALIGNED = ("OFFSET", "LAG", "PARTITION", "GENERATION", "PORT", "NODE", "MEMBERS", "MS", "GROUPS",
                 "EPOCH", "NODES", "ITERATIONS")


def table(columns: Sequence[str], rows: Iterable[Sequence[Any]], *, title: Optional[str] = None) -> "Table":
    """A borderless table in the style of kafka-consumer-groups.sh; None cells print as "-".
    (rich.table is imported here, not at start-up: JSON output never needs it.)"""
    from rich.table import Table

    from rich.text import Text

    result = Table(title=title, box=None, header_style="bold", pad_edge=False, title_justify="left")
    for column in columns:
        # Ids are copied by operators: never cut them ("fold" wraps long cells instead).
        result.add_column(column, justify="right" if column.endswith(RIGHT_ALIGNED) else "left",
                          overflow="fold")
    for row in rows:
        # Cells are plain text: a group named "x[/y]" must not be read as rich markup.
        result.add_row(*(Text("-" if cell is None else str(cell)) for cell in row))
    return result


AHEAD_OF_LOG_END = "0 (ahead)"
"""The LAG cell of a committed offset past the log end: lag 0 by the one rule
(`groupctl.lag.offsets`), marked so that it does not pass for a consumer that has caught up."""


def lag_cell(offsets: "PartitionOffsets") -> Optional[Any]:
    """The LAG column of describe and `offsets show`: the lag, or `AHEAD_OF_LOG_END`."""
    return AHEAD_OF_LOG_END if offsets.ahead_of_log_end else offsets.lag


def show(env: CliEnv, *renderables: Any) -> None:
    """Print tables and other renderables; piped output loses the padding after the last column."""
    for renderable in renderables:
        if env.out.is_terminal:
            env.out.print(renderable)
            continue
        with env.out.capture() as captured:
            env.out.print(renderable)
        env.out.file.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))


def show_json_document(env: CliEnv, document: Any) -> None:
    """A JSON document for people: syntax-highlighted on a terminal, plain when piped."""
    from rich.json import JSON

    if env.out.is_terminal:
        env.out.print(JSON.from_data(document))
    else:
        emit_json(env, document)


def utc_time(ms: Optional[int]) -> Optional[str]:
    """Epoch milliseconds as "2025-11-21T18:03:12Z" (UTC, to the second); None stays None."""
    if ms is None:
        return None
    from datetime import datetime, timezone

    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
