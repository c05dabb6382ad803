"""How the `offsets` commands print their results: plans, offsets, deletions, copies, and the
failures of single groups among several.

Shapes (docs/commands.md "Offsets"): one group named by the positional GROUP prints as it
always did (one JSON object, 3-column CSV); several (`--group`, `--all-groups`, a 4-column plan
file) print one table with the GROUP column first, a JSON array of the one-group objects, and
4-column CSV `group,topic,partition,offset`. A group that failed on its own account prints one
`groupctl: error:` line on stderr (naming the group) and the command exits with the worst
status once everything else is printed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Optional, Sequence

from groupctl.cli import render
from groupctl.cli.context import CliEnv

if TYPE_CHECKING:
    from groupctl.errors import OpsError
    from groupctl.ops.offsets import GroupCommitted, GroupOffsets, OffsetDeletion
    from groupctl.ops.offsets_copy import CopyPlan
    from groupctl.ops.offsets_many import GroupOutcome, GroupsReset
    from groupctl.ops.reset import ResetPlan

PLAN_COLUMNS = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET"]
DRY_RUN = "dry run: nothing was changed (add --execute to apply)"


def _note(current: CliEnv, line: str) -> None:
    current.err.print(line, markup=False, highlight=False)


def error_line(current: CliEnv, group: str, error: "OpsError | Exception") -> None:
    """One `groupctl: error:` line about `group`, naming it if the message does not."""
    message = str(error)
    if f"'{group}'" not in message:
        message = f"group '{group}': {message}"
    _note(current, f"groupctl: error: {message}")


def failures_status(current: CliEnv, outcomes: Iterable["GroupOutcome"]) -> int:
    """Print the failed groups' lines; the worst exit status among them (0: none failed)."""
    status = 0
    for outcome in outcomes:
        if outcome.error is not None:
            error_line(current, outcome.group, outcome.error)
            status = max(status, outcome.error.exit_status)
    return status


def anything_to_show(outcomes: Sequence["GroupOutcome"]) -> bool:
    """False when every group failed: then only their error lines are printed, as for one group
    (no groups at all, as `--all-groups` finds on an empty cluster, still prints an empty list)."""
    return not outcomes or any(o.error is None for o in outcomes)


def _warn_clamped(current: CliEnv, plan: "ResetPlan", many: bool) -> None:
    of_group = f" (group {plan.group})" if many else ""
    for p in plan.partitions:
        if p.clamped_from is not None:
            bound = "past the log end" if p.clamped_from > p.new_offset else "before the log start"
            _note(current, f"warning: offset {p.clamped_from} of {p.topic}:{p.partition}{of_group} is {bound} "
                           f"{p.new_offset}; resetting to {p.new_offset}")


def show_plans(current: CliEnv, plans: Sequence["ResetPlan"], *, many: bool, export: bool, execute: bool,
               csv_groups: Optional[bool] = None) -> None:
    """Reset plans: warnings for clamped offsets, then the table, JSON or CSV (`export`: with the
    group column when `csv_groups`, by default when `many`), then the dry-run note unless
    `execute`."""
    from groupctl.ops.plan_csv import format_csv
    from groupctl.ops.reset import format_utc

    for plan in plans:
        _warn_clamped(current, plan, many)
    if current.json:
        render.emit_json(current, [p.to_json() for p in plans] if many else plans[0].to_json())
    elif export:
        text = "".join(format_csv([(p.topic, p.partition, p.new_offset) for p in plan.partitions],
                                  plan.group if (many if csv_groups is None else csv_groups) else None)
                       for plan in plans)
        current.out.print(text, end="", markup=False, highlight=False)
    else:
        timestamp = next((p.timestamp_ms for p in plans if p.timestamp_ms is not None), None)
        title = None if timestamp is None else f"first offsets at or after {format_utc(timestamp)}"
        render.show(current, render.table(
            PLAN_COLUMNS, [(plan.group, p.topic, p.partition, p.current_offset, p.new_offset)
                           for plan in plans for p in plan.partitions], title=title))
    if not execute:
        _note(current, DRY_RUN)


def show_groups_reset(current: CliEnv, result: "GroupsReset", *, export: bool, execute: bool,
                      csv_groups: bool = True) -> int:
    """A reset of several groups; the exit status. The plans of the groups not refused, then a
    line for each group refused (it has members, or is missing) or failed while applying, and
    with `execute` one line saying which groups were applied and which not (exit 1 then)."""
    show_plans(current, result.plans, many=True, export=export, execute=execute, csv_groups=csv_groups)
    problems = (*result.refused, *result.failed)
    if not problems:
        return 0
    status = failures_status(current, problems)
    if execute:
        applied = ", ".join(result.applied) or "none"
        not_applied = ", ".join(f.group for f in problems)
        _note(current, f"groupctl: error: reset applied to {len(result.applied)} of "
                       f"{len(result.applied) + len(problems)} group(s) ({applied}); not applied to {not_applied}")
    return status


def show_offsets(current: CliEnv, found: Sequence["GroupOffsets"], many: bool) -> None:
    if current.json:
        render.emit_json(current, [f.to_json() for f in found] if many else found[0].to_json())
        return
    render.show(current, render.table(
        ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG"],
        [(f.group, o.topic, o.partition, o.committed_offset, o.log_end_offset, render.lag_cell(o))
         for f in found for o in f.offsets]))


def show_committed(current: CliEnv, found: Sequence["GroupCommitted"], many: bool,
                   csv_groups: Optional[bool] = None) -> None:
    """`offsets export`: CSV (4 columns when `csv_groups`, by default when `many`), or JSON
    {group, offsets} (an array when `many`)."""
    if current.json:
        render.emit_json(current, [f.to_json() for f in found] if many else found[0].to_json())
        return
    with_group = many if csv_groups is None else csv_groups
    current.out.print("".join(f.to_csv(with_group=with_group) for f in found), end="", markup=False, highlight=False)


def show_deletions(current: CliEnv, deleted: Sequence[tuple[str, Sequence["OffsetDeletion"]]], many: bool) -> int:
    """`offsets delete`: one row per partition; the exit status of the worst partition result."""
    if current.json:
        if many:
            render.emit_json(current, [{"group": group, "partitions": [r.to_json() for r in results]}
                                       for group, results in deleted])
        else:
            render.emit_json(current, [r.to_json() for r in deleted[0][1]])
    else:
        columns = ["TOPIC", "PARTITION", "RESULT"]
        rows = [((group,) if many else ()) + (r.topic, r.partition, "deleted" if r.error is None else str(r.error))
                for group, results in deleted for r in results]
        render.show(current, render.table(["GROUP", *columns] if many else columns, rows))
    return max((r.error.exit_status for _, results in deleted for r in results if r.error is not None), default=0)


def show_copy(current: CliEnv, copied: "CopyPlan", execute: bool) -> None:
    """`offsets copy`: a warning per skipped partition, then the target group's plan."""
    where: Optional[str] = copied.to_bootstrap
    for s in copied.skipped:
        _note(current, f"warning: {s.topic}:{s.partition} of group '{copied.from_group}' is not copied: {s.reason}")
    if current.json:
        render.emit_json(current, copied.to_json())
    else:
        title = (f"committed offsets of group {copied.from_group} for group {copied.plan.group}"
                 + (f" on {where}" if where else ""))
        render.show(current, render.table(
            PLAN_COLUMNS, [(copied.plan.group, p.topic, p.partition, p.current_offset, p.new_offset)
                           for p in copied.plan.partitions], title=title))
    if not execute:
        _note(current, DRY_RUN)
