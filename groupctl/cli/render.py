"""Rendering helpers: rich tables for people, JSON for scripts.

JSON output is one document per command (`emit_json`), or one object per line for streams
(`emit_json_line`), built from the ops dataclasses' `to_json()` — the documented, stable keys.
Everything goes through the `CliEnv` consoles, so tests capture it.

Tables (`table`) fit the terminal: one line per row, whatever the width. When a table is wider
than the terminal, the headers of its numbers and `WHOLE` columns break after their last hyphen
(two header lines), and its text columns (ids, hosts, names, assignments) are cut with an
ellipsis, the widest first; numbers (offsets, lag, epochs, counts) and `WHOLE` columns (states,
types, times) never are. Piped, the console is `context.PIPED_WIDTH` wide: every value prints whole, for
the scripts reading it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Collection, Iterable, Optional, Sequence

from groupctl.cli import closed_pipe
from groupctl.cli.context import PIPED_WIDTH, CliEnv

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text

    from groupctl.ops.lag import PartitionOffsets


def emit_json(env: CliEnv, document: Any) -> None:
    _write_plain(env, json.dumps(document, indent=2, sort_keys=False))


def emit_json_line(env: CliEnv, document: Any) -> None:
    _write_plain(env, json.dumps(document, separators=(",", ":")))
    with closed_pipe.writing(env.out.file):
        env.out.file.flush()


def _write_plain(env: CliEnv, text: str) -> None:
    """`text` and a newline, as they are, straight to the console's file: what `print` with
    markup, highlighting and wrapping off would write, without rich measuring every line on the
    way (bench/many_groups.py: 70 ms of a 430 ms `--all-groups` describe of 200 groups)."""
    with closed_pipe.writing(env.out.file):
        env.out.file.write(text + "\n")


RIGHT_ALIGNED = ("OFFSET", "LAG", "PARTITION", "GENERATION", "PORT", "NODE", "MEMBERS", "MS", "GROUPS",
                 "EPOCH", "NODES", "ITERATIONS")
"""Columns of numbers (by the end of their name; "#PARTITIONS" too): right-aligned, never cut."""
WHOLE = ("STATE", "STATUS", "TYPE", "MECHANISM", "OPERATION", "PERMISSION", "STARTED", "COMPLETED", "LAST")
"""Columns of words from a short list and of times (by the end of their name), never cut: a
state or a time means nothing once cut, and they are short."""


def table(columns: Sequence[str], rows: Iterable[Sequence[Any]], *, title: Optional[str] = None,
          numeric: Collection[str] = ()) -> "Table":
    """A borderless table in the style of kafka-consumer-groups.sh; None cells print as "-".

    Columns named in `numeric` are numbers too (right-aligned, never cut). A cell may be a rich
    `Text` (its style is kept); any other value prints as plain text, never as rich markup (a
    group named "x[/y]"). On a terminal too narrow for it, `show` prints its `narrower()` form:
    the headers of the columns never cut broken after their last hyphen ("CURRENT-" over
    "OFFSET"), so the columns cut keep more of their text. (rich.table is imported here, not at
    start-up: JSON output never needs it.)"""
    cells = [[_one_line(cell) for cell in row] for row in rows]
    return _fitting_table(columns, cells, title, numeric, split_headers=False)


def _fitting_table(columns: Sequence[str], cells: list, title: Optional[str], numeric: Collection[str], *,
                   split_headers: bool) -> "Table":
    from rich.table import Table

    class FittingTable(Table):
        def narrower(self) -> "Table":
            return _fitting_table(columns, cells, title, numeric, split_headers=True)

    result = FittingTable(title=title, box=None, header_style="bold", pad_edge=False, title_justify="left")
    for index, column in enumerate(columns):
        number = column.endswith(RIGHT_ALIGNED) or column.startswith("#") or column in numeric
        whole = number or column.endswith(WHOLE)
        name = _split_after_last_hyphen(column) if split_headers and whole else column
        header = _one_line(name) if "\n" not in name else _lines(name)
        # Cut columns: rich may narrow them ("no_wrap" off) and their cells never wrap, they are cut.
        # Whole ones keep their widest cell even past the terminal's width (a cut number misleads).
        widest = max([*(len(line) for line in name.split("\n")), *(row[index].cell_len for row in cells)])
        result.add_column(header, justify="right" if number else "left", overflow="ellipsis",
                          no_wrap=whole, min_width=widest if whole else None, vertical="bottom")
    for row in cells:
        result.add_row(*row)
    return result


def _split_after_last_hyphen(name: str) -> str:
    head, hyphen, tail = name.rpartition("-")
    return f"{head}-\n{tail}" if hyphen and head and tail else name


def _lines(name: str) -> "Text":
    from rich.text import Text

    return Text(name, no_wrap=True, overflow="ellipsis")


def _one_line(cell: Any) -> "Text":
    """A cell that is cut with an ellipsis rather than wrapped when its column is narrowed."""
    from rich.text import Text

    if isinstance(cell, Text):
        cell = cell.copy()
        cell.no_wrap, cell.overflow = True, "ellipsis"
        return cell
    return Text("-" if cell is None else str(cell), no_wrap=True, overflow="ellipsis")


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
            narrower = getattr(renderable, "narrower", None)
            unbounded = env.out.options.update_width(PIPED_WIDTH)
            if narrower is not None and env.out.measure(renderable, options=unbounded).maximum > env.out.width:
                renderable = narrower()
            env.out.print(renderable)
            continue
        with env.out.capture() as captured:
            env.out.print(renderable)
        with closed_pipe.writing(env.out.file):
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
