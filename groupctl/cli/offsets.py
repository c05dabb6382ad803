"""`groupctl offsets ...`: show, commit, reset, export, import and delete committed offsets.

Resets follow kafka-consumer-groups.sh: one scope (--topic T[:P,...]... or --all-topics), one
target, a dry run unless --execute, --export to print the plan as CSV (`topic,partition,offset`,
what --from-file and `offsets import` read), one warning line on stderr per partition whose
offset was clamped to the log's range. Changing offsets is refused while the group has members,
naming its state.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from groupctl.cli import render
from groupctl.cli.context import env, guard
from groupctl.cli.errors import BadInput

app = typer.Typer(help="Show, commit, reset, export, import and delete committed offsets.", no_args_is_help=True)

TARGETS = "--to-earliest, --to-latest, --to-offset, --shift-by, --to-datetime, --by-duration, --to-current or --from-file"


def _show_plan(current, plan, export: bool) -> None:
    from groupctl.ops.reset import format_utc

    for p in plan.partitions:
        if p.clamped_from is not None:
            bound = "past the log end" if p.clamped_from > p.new_offset else "before the log start"
            current.err.print(f"warning: offset {p.clamped_from} of {p.topic}:{p.partition} is {bound} "
                              f"{p.new_offset}; resetting to {p.new_offset}", markup=False, highlight=False)
    if current.json:
        render.emit_json(current, plan.to_json())
    elif export:
        current.out.print(plan.to_csv(), end="", markup=False, highlight=False)
    else:
        title = None if plan.timestamp_ms is None else f"first offsets at or after {format_utc(plan.timestamp_ms)}"
        render.show(current, render.table(
            ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET"],
            [(plan.group, p.topic, p.partition, p.current_offset, p.new_offset) for p in plan.partitions],
            title=title))
    if not plan.executed:
        current.err.print("dry run: nothing was changed (add --execute to apply)", markup=False, highlight=False)


@app.command("show")
@guard
def show(ctx: typer.Context, group: str = typer.Argument(..., help="Group id.")) -> None:
    """Committed offset, log end offset and lag of every partition GROUP has committed.

    A committed offset past the log end has lag 0, shown as "0 (ahead)" (JSON: ahead_of_log_end)."""
    from groupctl.ops.offsets import show_offsets

    current = env(ctx)
    with current.status(f"reading offsets of {group}"):
        found = show_offsets(current.need_bootstrap(), group)
    if current.json:
        render.emit_json(current, found.to_json())
        return
    render.show(current, render.table(
        ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG"],
        [(group, o.topic, o.partition, o.committed_offset, o.log_end_offset, render.lag_cell(o))
         for o in found.offsets]))


@app.command("commit")
@guard
def commit(
    ctx: typer.Context,
    group: str = typer.Argument(..., help="Group id."),
    assignments: List[str] = typer.Argument(..., metavar="TOPIC:PARTITION=OFFSET...",
                                            help="Offsets to commit, e.g. orders:0=42 orders:1=7."),
) -> None:
    """Commit the given offsets for GROUP, a new group too (refused while the group has members)."""
    from groupctl.ops.offsets import commit_offsets
    from groupctl.ops.reset import parse_offset_assignments

    current = env(ctx)
    offsets = parse_offset_assignments(assignments)
    plan = commit_offsets(current.need_bootstrap(), group, offsets)
    _show_plan(current, plan, export=False)


def _target(to_earliest, to_latest, to_offset, shift_by, to_datetime, by_duration, to_current, from_file):
    from groupctl.ops import reset

    chosen = []
    if to_earliest:
        chosen.append(reset.ToEarliest())
    if to_latest:
        chosen.append(reset.ToLatest())
    if to_offset is not None:
        if to_offset < 0:
            raise BadInput(f"--to-offset {to_offset}: offsets are never negative")
        chosen.append(reset.ToOffset(to_offset))
    if shift_by is not None:
        chosen.append(reset.ShiftBy(shift_by))
    if to_datetime is not None:
        chosen.append(reset.ToDatetime(reset.parse_datetime(to_datetime)))
    if by_duration is not None:
        chosen.append(reset.ByDuration(reset.parse_duration(by_duration)))
    if to_current:
        chosen.append(reset.ToCurrent())
    if from_file is not None:
        from groupctl.ops.offsets import read_plan_file

        chosen.append(reset.FromFile(read_plan_file(from_file)))
    if not chosen:
        raise BadInput(f"offsets reset needs a target: one of {TARGETS}")
    if len(chosen) > 1:
        raise BadInput(f"offsets reset takes exactly one target ({TARGETS})")
    return chosen[0]


@app.command("reset")
@guard
def reset_(
    ctx: typer.Context,
    group: str = typer.Argument(..., help="Group id."),
    topic: List[str] = typer.Option([], help="Scope: topic T or T:P,P... (repeatable)."),
    all_topics: bool = typer.Option(False, "--all-topics", help="Scope: every topic the group has offsets for."),
    to_earliest: bool = typer.Option(False, "--to-earliest", help="Target: the log start offset."),
    to_latest: bool = typer.Option(False, "--to-latest", help="Target: the log end offset."),
    to_offset: Optional[int] = typer.Option(
        None, help="Target: this offset (clamped to the log's range, with a warning per clamped partition)."),
    shift_by: Optional[int] = typer.Option(
        None, help="Target: current offset +/- N (clamped to the log's range, with a warning per clamped partition)."),
    to_datetime: Optional[str] = typer.Option(
        None, help="Target: the first offset at or after YYYY-MM-DDTHH:mm:SS[.sss][Z|+hh:mm] (UTC without a zone, as in Kafka)."),
    by_duration: Optional[str] = typer.Option(None, help="Target: the first offset at or after now minus PnDTnHnMnS."),
    to_current: bool = typer.Option(False, "--to-current", help="Target: the committed offsets (useful with --export)."),
    from_file: Optional[Path] = typer.Option(
        None, help="Target: offsets from a CSV file topic,partition,offset (clamped to the log's range)."),
    execute: bool = typer.Option(False, "--execute", help="Commit the plan (without it: a dry run)."),
    export: bool = typer.Option(False, "--export", help="Print the plan as CSV (topic,partition,offset)."),
) -> None:
    """Plan (and with --execute, commit) new offsets for an existing, inactive GROUP.

    Like kafka-consumer-groups.sh --reset-offsets: one scope, one target, a dry run unless
    --execute. A time target's table is titled with the instant it resolved to, in UTC."""
    from groupctl.ops.offsets import reset_offsets
    from groupctl.ops.reset import FromFile, make_scope

    current = env(ctx)
    target = _target(to_earliest, to_latest, to_offset, shift_by, to_datetime, by_duration, to_current, from_file)
    scope = None if isinstance(target, FromFile) and not (topic or all_topics) else make_scope(topic, all_topics)
    with current.status(f"planning the reset of {group}"):
        plan = reset_offsets(current.need_bootstrap(), group, scope, target, execute=execute)
    _show_plan(current, plan, export)


@app.command("export")
@guard
def export(ctx: typer.Context, group: str = typer.Argument(..., help="Group id.")) -> None:
    """Print GROUP's committed offsets as CSV (topic,partition,offset), for `offsets import`.
    With --output json: {group, offsets: [{topic, partition, offset}]}."""
    current = env(ctx)
    if current.json:
        from groupctl.ops.offsets import show_offsets

        found = show_offsets(current.need_bootstrap(), group)
        render.emit_json(current, {"group": group, "offsets": [
            {"topic": o.topic, "partition": o.partition, "offset": o.committed_offset}
            for o in found.offsets if o.committed_offset is not None]})
        return
    from groupctl.ops.offsets import export_offsets

    current.out.print(export_offsets(current.need_bootstrap(), group), end="", markup=False, highlight=False)


@app.command("import")
@guard
def import_(
    ctx: typer.Context,
    group: str = typer.Argument(..., help="Group id."),
    file: Path = typer.Argument(..., help="CSV file topic,partition,offset (as `offsets export` writes)."),
    execute: bool = typer.Option(False, "--execute", help="Commit the offsets (without it: a dry run)."),
) -> None:
    """Commit the offsets in FILE for an existing, inactive GROUP (a dry run unless --execute).

    Offsets outside a partition's range are clamped to it, with a warning per partition."""
    from groupctl.ops.offsets import import_offsets, read_plan_file

    current = env(ctx)
    plan = import_offsets(current.need_bootstrap(), group, read_plan_file(file), execute=execute)
    _show_plan(current, plan, export=False)


@app.command("delete")
@guard
def delete(
    ctx: typer.Context,
    group: str = typer.Argument(..., help="Group id."),
    topic: List[str] = typer.Option([], help="Topic T or T:P,P... whose offsets go (repeatable)."),
    all_topics: bool = typer.Option(False, "--all-topics", help="Every topic the group has offsets for."),
) -> None:
    """Delete GROUP's committed offsets for the given topics.

    Kafka's OffsetDelete: refused for topics the group is subscribed to."""
    from groupctl.ops.offsets import delete_offsets
    from groupctl.ops.reset import make_scope

    current = env(ctx)
    results = delete_offsets(current.need_bootstrap(), group, make_scope(topic, all_topics))
    if current.json:
        render.emit_json(current, [r.to_json() for r in results])
    else:
        render.show(current, render.table(
            ["TOPIC", "PARTITION", "RESULT"],
            [(r.topic, r.partition, "deleted" if r.error is None else str(r.error)) for r in results]))
    failures = [r.error for r in results if r.error is not None]
    if failures:
        raise typer.Exit(max(f.exit_status for f in failures))
