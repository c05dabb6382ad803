"""What `groupctl members simulate` shows while the rehearsal runs and when it ends.

Two outputs, each a context manager around the run offering the command the same four calls:
`transition` (every member state change, or None when the output does not want them), `check` (a
`Snapshot` every 250 ms), `stopping` (Ctrl-C or SIGTERM: the members are leaving) and `finish`
(the `Summary`):

- `JsonLinesOutput` (--output json): one object per line on stdout, a transition line per state
  change (`Transition.to_json()`), then the summary line (`Summary.to_json()`), nothing else.
  Lines are kept in memory and written in one go at each check and at the end, because a
  rehearsal of thousands of members changes state thousands of times a second.
- `TableOutput` (the default): on a terminal, a rich Live view redrawn at each check (members per
  state in the member lifecycle order, group epoch, partitions moved, unowned now / total,
  heartbeats, elapsed time, stable yes/no); piped, nothing until the end. Then the summary as a
  two-column table.

Everything that names a number comes from the engine's `Snapshot` and `Summary`
(docs/simulate.md says what each measures); this module only lays them out.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Callable, Optional

from groupctl.cli import closed_pipe, render
from groupctl.cli.context import CliEnv

if TYPE_CHECKING:
    from groupctl.simulate.ledger import Transition
    from groupctl.simulate.simulation import Snapshot, Summary

_ENCODE = json.JSONEncoder(separators=(",", ":")).encode  # compact, as every JSON Lines stream of groupctl


def lifecycle_order(states: dict[str, int]) -> list[tuple[str, int]]:
    """The non-zero counts of `states`, in the member lifecycle order (`MemberState`: UNSUBSCRIBED,
    JOINING, RECONCILING, ACKNOWLEDGING, STABLE, FENCED, PREPARE_LEAVING, LEAVING, STALE, FATAL);
    a name outside it goes last."""
    from groupctl.member.states import MemberState

    rank = {state.value: i for i, state in enumerate(MemberState)}
    return sorted(((s, n) for s, n in states.items() if n), key=lambda item: (rank.get(item[0], len(rank)), item[0]))


def states_cell(states: dict[str, int]) -> Optional[str]:
    """`JOINING 2, STABLE 198` (lifecycle order); None ("-") when no member is counted."""
    return ", ".join(f"{state} {n}" for state, n in lifecycle_order(states)) or None


def not_stable_message(duration_s: float, last: Optional["Snapshot"]) -> str:
    """The stderr line of an --until-stable run that ran out of time: what was not stable at the
    last check."""
    if last is None:
        return f"the group was not stable within {duration_s:g}s (no check completed)"
    return (f"the group was not stable within {duration_s:g}s: members {states_cell(last.states) or 'none'}; "
            f"group epoch {'-' if last.group_epoch is None else last.group_epoch}; "
            f"{last.unowned} of {last.partitions} partition(s) unowned")


class JsonLinesOutput:
    """--output json: transition lines, then the summary line; stdout carries nothing else.

    A reader that goes away (`| head`) calls `on_closed` once, which stops the rehearsal as Ctrl-C
    does; what is left to write is dropped and stdout is pointed at /dev/null, so the interpreter's
    last flush does not fail loudly."""

    def __init__(self, current: CliEnv, on_closed: Callable[[], None]) -> None:
        self._file = current.out.file
        self._pending: list["Transition"] = []
        self._on_closed = on_closed
        self._closed = False

    def __enter__(self) -> "JsonLinesOutput":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def transition(self, transition: "Transition") -> None:
        self._pending.append(transition)

    def check(self, snapshot: "Snapshot") -> None:
        self._write()

    def stopping(self) -> None:
        self._write()

    def finish(self, summary: "Summary") -> None:
        self._write(_ENCODE(summary.to_json()) + "\n")

    def _write(self, tail: str = "") -> None:
        pending, self._pending = self._pending, []
        if self._closed:
            return
        try:
            self._file.write("".join([_ENCODE(t.to_json()) + "\n" for t in pending]) + tail)
            self._file.flush()
        except BrokenPipeError:  # unlike other commands (`closed_pipe.reader_gone`), go on to stop the members
            self._closed = True
            closed_pipe.detach(self._file)
            self._on_closed()


class TableOutput:
    """The default output: a Live view on a terminal (`live`), the summary table at the end.

    Use it as a context manager around the run: the Live view starts and stops with the block."""

    transition = None  # the view counts states from the snapshots; no per-transition work

    def __init__(self, current: CliEnv, group: str, protocol: str, count: int, *, live: bool) -> None:
        self._current = current
        self._title = f"members simulate {group}: {count} {protocol} member(s)"
        self._live = None
        self._last: Optional["Snapshot"] = None
        if live:
            from rich.live import Live

            # Redrawn only at checks (auto_refresh off): no thread of rich's beside the event loop.
            self._live = Live(self._view(None, stopping=False), console=current.out, auto_refresh=False)

    def __enter__(self) -> "TableOutput":
        if self._live is not None:
            self._live.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.stop()

    def check(self, snapshot: "Snapshot") -> None:
        self._last = snapshot
        if self._live is not None:
            self._live.update(self._view(snapshot, stopping=False), refresh=True)

    def stopping(self) -> None:
        if self._live is not None:
            self._live.update(self._view(self._last, stopping=True), refresh=True)

    def finish(self, summary: "Summary") -> None:
        render.show(self._current, summary_table(summary))

    def _view(self, snapshot: Optional["Snapshot"], *, stopping: bool) -> Any:
        from rich.console import Group
        from rich.text import Text

        if stopping:
            note = "stopping: every member is leaving the group (Ctrl-C again to abort at once)"
        elif snapshot is None:
            note = "starting: finding the coordinator, starting the members"
        else:
            note = "Ctrl-C to stop (every member leaves the group first)"
        title = Group(Text(self._title, style="bold"), Text(note, style="dim"))
        if snapshot is None:
            return title
        figures = render.table(
            ["ELAPSED-S", "GROUP-EPOCH", "STABLE", "MOVED", "UNOWNED/TOTAL", "HEARTBEATS"],
            [(f"{snapshot.elapsed_s:.1f}", snapshot.group_epoch, "yes" if snapshot.stable else "no",
              snapshot.partitions_moved, f"{snapshot.unowned}/{snapshot.partitions}", snapshot.heartbeats)])
        states = render.table(["STATE", "MEMBERS"], lifecycle_order(snapshot.states))
        return Group(title, figures, Text(""), states)


def summary_table(summary: "Summary") -> Any:
    """The summary for people: one measure per row (the JSON summary line's keys, docs/simulate.md)."""
    commits = ", ".join(f"{outcome} {n}" for outcome, n in sorted(summary.commits.items())) or None
    rows = [
        ("protocol", summary.protocol),
        ("ended by", summary.ended_by),
        ("elapsed s", f"{summary.elapsed_s:.3f}"),
        ("time to stable s", "not stable" if summary.time_to_stable_s is None else f"{summary.time_to_stable_s:.3f}"),
        ("group epoch", summary.group_epoch),
        ("states", states_cell(summary.states)),
        ("partitions moved", summary.partitions_moved),
        ("max unowned ms", summary.max_unowned_ms),
        ("heartbeats", summary.heartbeats),
        ("churned", summary.churned),
        ("commits", commits),
        ("overlaps", summary.overlaps),
        ("left", f"{summary.left} of {summary.members}"),
    ]
    rows += [(f"fatal: {reason}", n) for reason, n in sorted(summary.fatal.items())]
    return render.table(["SUMMARY", "VALUE"], rows)


def not_all_left_message(summary: "Summary") -> str:
    """The stderr warning when members were still in the group after the leave bound."""
    return (f"{summary.members - summary.left} of {summary.members} member(s) had not left the group when the "
            "rehearsal ended; the coordinator removes them after their session timeout")
