"""`groupctl offsets ...`: show, commit, reset, export, import, delete and copy committed offsets.

Resets follow kafka-consumer-groups.sh: one scope (--topic T[:P,...]... or --all-topics), one
target, a dry run unless --execute (--dry-run says so explicitly), --export to print the plan as
CSV (what --from-file and `offsets import` read), one warning line on stderr per partition whose
offset was clamped to the log's range. Changing offsets is refused while the group has members,
naming its state.

Groups: the positional GROUP, or kafka-consumer-groups.sh's repeatable --group and --all-groups
(`group_selection`) on show, reset, export and delete; several groups print as a list
(`offsets_render`). A 4-column plan file (`group,topic,partition,offset`) names its own groups.
Plan files are read before anything is contacted, from stdin when the path is `-`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional

import typer

from groupctl.cli import offsets_render
from groupctl.cli.context import CliEnv, env, guard
from groupctl.cli.errors import BadInput
from groupctl.cli.group_selection import GroupChoice, all_groups_option, choose_groups, group_option

if TYPE_CHECKING:
    from groupctl.client.kafka import Bootstrap
    from groupctl.ops.plan_csv import CsvPlan
    from groupctl.ops.reset import Target

app = typer.Typer(help="Show, commit, reset, export, import, delete and copy committed offsets.", no_args_is_help=True)

TARGETS = "--to-earliest, --to-latest, --to-offset, --shift-by, --to-datetime, --by-duration, --to-current or --from-file"
GROUP_ARGUMENT_HELP = "Group id (or use --group / --all-groups)."
DRY_RUN_HELP = "Only show the plan (the default; kafka-consumer-groups.sh's spelling)."


def _check_mode(execute: bool, dry_run: bool) -> None:
    if execute and dry_run:
        raise BadInput("give --dry-run or --execute, not both")


def _group_names(current: CliEnv, choice: GroupChoice) -> tuple[str, ...]:
    """The chosen groups: the named ones, or every group of the cluster."""
    if not choice.every_group:
        return choice.named
    from groupctl.ops.groups import all_group_ids

    with current.status("listing the groups"):
        return all_group_ids(current.need_bootstrap())


def _exit(status: int) -> None:
    if status:
        raise typer.Exit(status)


def _read_plan(path: Path) -> "CsvPlan":
    from groupctl.ops.offsets import read_plan_file

    return read_plan_file(path, sys.stdin)


@app.command("show")
@guard
def show(
    ctx: typer.Context,
    group: Optional[str] = typer.Argument(None, help=GROUP_ARGUMENT_HELP, show_default=False),
    groups: List[str] = group_option(),
    all_groups: bool = all_groups_option(),
) -> None:
    """Committed offset, log end offset and lag of every partition a group has committed.

    A committed offset past the log end has lag 0, shown as "0 (ahead)" (JSON: ahead_of_log_end)."""
    current = env(ctx)
    choice = choose_groups(group, groups, all_groups)
    bootstrap = current.need_bootstrap()
    if not choice.many:
        from groupctl.ops.offsets import show_offsets

        with current.status(f"reading offsets of {group}"):
            found = show_offsets(bootstrap, choice.named[0])
        offsets_render.show_offsets(current, [found], many=False)
        return
    from groupctl.ops.offsets_many import show_offsets_of

    names = _group_names(current, choice)
    with current.status(f"reading offsets of {len(names)} group(s)"):
        outcomes = show_offsets_of(bootstrap, names)
    if offsets_render.anything_to_show(outcomes):
        offsets_render.show_offsets(current, [o.result for o in outcomes if o.result is not None], many=True)
    _exit(offsets_render.failures_status(current, outcomes))


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
    offsets_render.show_plans(current, [plan], many=False, export=False, execute=True)


def _target(to_earliest, to_latest, to_offset, shift_by, to_datetime, by_duration, to_current,
            plan: Optional["CsvPlan"]) -> "Target | CsvPlan":
    """The one target given: a reset target, or the plan file (whose offsets differ per group)."""
    from groupctl.ops import reset
    from groupctl.ops.durations import parse_duration_ms

    chosen: list = []
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
        chosen.append(reset.ByDuration(parse_duration_ms(by_duration, "--by-duration")))
    if to_current:
        chosen.append(reset.ToCurrent())
    if plan is not None:
        chosen.append(plan)
    if not chosen:
        raise BadInput(f"offsets reset needs a target: one of {TARGETS}")
    if len(chosen) > 1:
        raise BadInput(f"offsets reset takes exactly one target ({TARGETS})")
    return chosen[0]


def _reset_groups(current: CliEnv, targets: dict, scope, *, execute: bool, export: bool,
                  csv_groups: bool = True) -> None:
    """Plan (and apply) several groups together; exits with the status of any failure."""
    from groupctl.ops.offsets_many import reset_groups

    with current.status(f"planning the reset of {len(targets)} group(s)"):
        result = reset_groups(current.need_bootstrap(), targets, scope, execute=execute)
    _exit(offsets_render.show_groups_reset(current, result, export=export, execute=execute, csv_groups=csv_groups))


@app.command("reset")
@guard
def reset_(
    ctx: typer.Context,
    group: Optional[str] = typer.Argument(None, help=GROUP_ARGUMENT_HELP, show_default=False),
    groups: List[str] = group_option(),
    all_groups: bool = all_groups_option(),
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
    by_duration: Optional[str] = typer.Option(
        None, help="Target: the first offset at or after now minus a duration: 30m, 1h, 2d, 1h30m, 90s, 500ms, "
                   "or ISO-8601 PT1H / PnDTnHnMnS."),
    to_current: bool = typer.Option(False, "--to-current", help="Target: the committed offsets (useful with --export)."),
    from_file: Optional[Path] = typer.Option(
        None, help="Target: offsets from a CSV file (- reads stdin): topic,partition,offset for the group(s) "
                   "named, or group,topic,partition,offset naming its own groups. Clamped to the log's range."),
    execute: bool = typer.Option(False, "--execute", help="Commit the plan (without it: a dry run)."),
    dry_run: bool = typer.Option(False, "--dry-run", help=DRY_RUN_HELP),
    export: bool = typer.Option(False, "--export", help="Print the plan as CSV (group,topic,partition,offset for several groups)."),
) -> None:
    """Plan (and with --execute, commit) new offsets for existing, inactive groups.

    Like kafka-consumer-groups.sh --reset-offsets: one scope, one target, a dry run unless
    --execute. Several groups (--group..., --all-groups, or a 4-column --from-file without a
    group) go group by group, as in kafka-consumer-groups.sh: a group with members (or missing) is
    an error line and left alone, the others are planned and applied (exit 1 if any was left). A
    time target's table is titled with the instant it resolved to, in UTC."""
    from groupctl.ops.plan_csv import CsvPlan
    from groupctl.ops.reset import FromFile, make_scope

    current = env(ctx)
    _check_mode(execute, dry_run)
    plan = _read_plan(from_file) if from_file is not None else None
    file_names_groups = plan is not None and plan.columns == 4 and not (group or groups)
    choice = None if file_names_groups else choose_groups(group, groups, all_groups)
    target = _target(to_earliest, to_latest, to_offset, shift_by, to_datetime, by_duration, to_current, plan)
    scope = None if plan is not None and not (topic or all_topics) else make_scope(topic, all_topics)
    if choice is None:
        names, many = plan.groups, True  # the file names its groups (also what --all-groups means with it)
    else:
        if plan is not None and plan.columns == 3 and (choice.every_group or len(choice.named) > 1):
            # As kafka-consumer-groups.sh: one plan for several groups must say which rows are whose.
            raise BadInput(f"{from_file}: a topic,partition,offset plan is for one group; give several groups "
                           "a group,topic,partition,offset plan")
        names, many = _group_names(current, choice), choice.many
    targets = {g: FromFile(target.offsets_for(g)) if isinstance(target, CsvPlan) else target for g in names}
    if many:
        several = choice.several if choice is not None else len(names) > 1
        _reset_groups(current, targets, scope, execute=execute, export=export, csv_groups=several)
        return
    from groupctl.ops.offsets import reset_offsets

    [(name, single)] = targets.items()
    with current.status(f"planning the reset of {name}"):
        planned = reset_offsets(current.need_bootstrap(), name, scope, single, execute=execute)
    offsets_render.show_plans(current, [planned], many=False, export=export, execute=execute)


@app.command("export")
@guard
def export(
    ctx: typer.Context,
    group: Optional[str] = typer.Argument(None, help=GROUP_ARGUMENT_HELP, show_default=False),
    groups: List[str] = group_option(),
    all_groups: bool = all_groups_option(),
) -> None:
    """Print committed offsets as CSV for `offsets import`: topic,partition,offset for one group,
    group,topic,partition,offset for several or --all-groups (as kafka-consumer-groups.sh).
    With --output json: {group, offsets: [{topic, partition, offset}]} (a list for several)."""
    current = env(ctx)
    choice = choose_groups(group, groups, all_groups)
    bootstrap = current.need_bootstrap()
    if not choice.many:
        from groupctl.ops.offsets import export_offsets

        offsets_render.show_committed(current, [export_offsets(bootstrap, choice.named[0])], many=False)
        return
    from groupctl.ops.offsets_many import committed_offsets_of

    outcomes = committed_offsets_of(bootstrap, _group_names(current, choice))
    if offsets_render.anything_to_show(outcomes):
        offsets_render.show_committed(current, [o.result for o in outcomes if o.result is not None], many=True,
                                      csv_groups=choice.several)
    _exit(offsets_render.failures_status(current, outcomes))


@app.command("import")
@guard
def import_(
    ctx: typer.Context,
    arguments: List[str] = typer.Argument(
        ..., metavar="[GROUP] FILE", show_default=False,
        help="The group to import into (optional when FILE has 4 columns: group,topic,partition,offset), "
             "then the CSV file as `offsets export` writes it; - reads stdin."),
    execute: bool = typer.Option(False, "--execute", help="Commit the offsets (without it: a dry run)."),
    dry_run: bool = typer.Option(False, "--dry-run", help=DRY_RUN_HELP),
) -> None:
    """Commit the offsets in FILE for existing, inactive groups (a dry run unless --execute).

    A 3-column FILE (topic,partition,offset) goes to GROUP; a 4-column one names its groups, which
    go group by group as a reset of several groups does (with GROUP, all its rows must be
    GROUP's). Offsets outside a partition's range are clamped to it, with a warning per partition."""
    from groupctl.ops.reset import FromFile

    current = env(ctx)
    _check_mode(execute, dry_run)
    if len(arguments) > 2:
        raise BadInput(f"offsets import takes [GROUP] FILE, not {len(arguments)} arguments")
    group, path = (None, arguments[0]) if len(arguments) == 1 else arguments
    plan = _read_plan(Path(path))
    if group is None:
        if plan.columns == 3:
            raise BadInput(f"{plan.source} has 3 columns (topic,partition,offset): give the GROUP to import it into")
        _reset_groups(current, {g: FromFile(plan.offsets_for(g)) for g in plan.groups}, None,
                      execute=execute, export=False)
        return
    others = [g for g in plan.groups if g != group]
    if others:
        raise BadInput(f"{plan.source} also holds offsets of group(s) {', '.join(repr(g) for g in others[:5])}, "
                       f"not only of '{group}' (drop GROUP to import every group of the file)")
    from groupctl.ops.offsets import import_offsets

    planned = import_offsets(current.need_bootstrap(), group, plan.offsets_for(group), execute=execute)
    offsets_render.show_plans(current, [planned], many=False, export=False, execute=execute)


@app.command("delete")
@guard
def delete(
    ctx: typer.Context,
    group: Optional[str] = typer.Argument(None, help=GROUP_ARGUMENT_HELP, show_default=False),
    groups: List[str] = group_option(),
    all_groups: bool = all_groups_option(),
    topic: List[str] = typer.Option([], help="Topic T or T:P,P... whose offsets go (repeatable)."),
    all_topics: bool = typer.Option(False, "--all-topics", help="Every topic the group has offsets for."),
) -> None:
    """Delete committed offsets of a group (or of several) for the given topics.

    Kafka's OffsetDelete: refused for topics the group is subscribed to. With --all-groups, the
    groups without offsets for the topics are left out."""
    from groupctl.ops.reset import make_scope

    current = env(ctx)
    choice = choose_groups(group, groups, all_groups)
    scope = make_scope(topic, all_topics)
    bootstrap = current.need_bootstrap()
    if not choice.many:
        from groupctl.ops.offsets import delete_offsets

        results = delete_offsets(bootstrap, choice.named[0], scope)
        _exit(offsets_render.show_deletions(current, [(choice.named[0], results)], many=False))
        return
    from groupctl.ops.offsets_many import delete_offsets_of

    outcomes = delete_offsets_of(bootstrap, _group_names(current, choice), scope, only_committed=choice.every_group)
    deleted = [(o.group, o.result) for o in outcomes if o.result is not None and (o.result or not choice.every_group)]
    status = offsets_render.show_deletions(current, deleted, many=True) if offsets_render.anything_to_show(outcomes) else 0
    _exit(max(status, offsets_render.failures_status(current, outcomes)))


def _target_cluster(current: CliEnv, to_bootstrap: Optional[str],
                    to_command_config: Optional[Path]) -> Optional["Bootstrap"]:
    """The other cluster of a copy, with only its own security settings (and the global
    --timeout); checked before any contact."""
    if to_bootstrap is None:
        if to_command_config is not None:
            raise BadInput("--to-command-config needs --to-bootstrap")
        return None
    from groupctl.client.kafka import Bootstrap, parse_bootstrap
    from groupctl.client.security import load_security

    parse_bootstrap(to_bootstrap)
    return Bootstrap(to_bootstrap, load_security(to_command_config, {}), timeout_s=current.timeout_s)


@app.command("copy")
@guard
def copy(
    ctx: typer.Context,
    from_group: str = typer.Option(..., "--from-group", help="The group whose committed offsets are copied.",
                                   show_default=False),
    to_group: str = typer.Option(..., "--to-group", help="The group that gets them (inactive or new).",
                                 show_default=False),
    topic: List[str] = typer.Option([], help="Copy only topic T or T:P,P... (repeatable; default: every topic)."),
    all_topics: bool = typer.Option(False, "--all-topics", help="Copy every topic --from-group has offsets for (the default)."),
    to_bootstrap: Optional[str] = typer.Option(
        None, "--to-bootstrap", metavar="HOST:PORT",
        help="Copy to this other cluster, by topic name and partition. Offsets are copied as they are: "
             "they are positions in each cluster's own log, right only where the logs match (a mirror "
             "that keeps offsets). Partitions missing there are reported and skipped."),
    to_command_config: Optional[Path] = typer.Option(
        None, "--to-command-config",
        help="Client properties (TLS, SASL) for --to-bootstrap; without it the target is plain, the "
             "source's --command-config is never sent to it."),
    execute: bool = typer.Option(False, "--execute", help="Commit the copied offsets (without it: a dry run)."),
    dry_run: bool = typer.Option(False, "--dry-run", help=DRY_RUN_HELP),
) -> None:
    """Copy --from-group's committed offsets to --to-group (a dry run unless --execute).

    The target group must be inactive (refused, naming its state, while it has members) and may
    be new; the source group may be active. Shows the plan as a reset does:
    GROUP TOPIC PARTITION CURRENT-OFFSET NEW-OFFSET (GROUP is --to-group)."""
    from groupctl.ops.offsets_copy import copy_offsets
    from groupctl.ops.reset import make_scope

    current = env(ctx)
    _check_mode(execute, dry_run)
    scope = make_scope(topic, all_topics) if topic or all_topics else None
    target = _target_cluster(current, to_bootstrap, to_command_config)
    with current.status(f"copying the offsets of {from_group} to {to_group}"):
        copied = copy_offsets(current.need_bootstrap(), from_group, to_group, scope, to_bootstrap=target,
                              execute=execute)
    offsets_render.show_copy(current, copied, execute)
