"""`groupctl group ...`: list, describe and delete consumer groups (Kafka protocol, any cluster);
`group config` (`cli.group_config`) shows and changes a group's configs.

describe and delete take their groups as kafka-consumer-groups.sh does too (`--group G`
repeatable, `--all-groups`; `cli.group_selection`). Over several groups, each group that cannot
be described or deleted is one error line on stderr, the others are still shown, and the exit
status is then that of the worst failure (1), after everything was printed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Sequence

import typer

from groupctl.cli import group_config, render
from groupctl.cli.context import CliEnv, env, guard
from groupctl.cli.errors import BadInput
from groupctl.cli.group_selection import all_groups_option, choose_groups, group_option

if TYPE_CHECKING:
    from groupctl.errors import OpsError

app = typer.Typer(help="List, describe and delete consumer groups; show and change their configs.",
                  no_args_is_help=True)
app.add_typer(group_config.app, name="config")

STATES = "Empty, PreparingRebalance, CompletingRebalance, Stable, Dead, Assigning, Reconciling"
TYPES = "classic, consumer (KIP-848)"


@app.command("list")
@guard
def list_(
    ctx: typer.Context,
    state: List[str] = typer.Option(
        [], help=f"Only groups in these states: a comma list, repeatable, any case (stable,empty): {STATES}."),
    type_: List[str] = typer.Option(
        [], "--type", help=f"Only groups of these types: a comma list, repeatable, any case: {TYPES}."),
    topic: List[str] = typer.Option(
        [], "--topic", help="Only groups with committed offsets on this topic (repeatable: on any of them)."),
) -> None:
    """List the groups the cluster knows, with their state, protocol type and group type."""
    from groupctl.ops.groups import list_groups

    current = env(ctx)
    bootstrap = current.need_bootstrap()
    with current.status("listing groups"):
        groups = list_groups(bootstrap, state, type_, topic)
    if current.json:
        render.emit_json(current, [g.to_json() for g in groups])
        return
    render.show(current, render.table(
        ["GROUP", "STATE", "PROTOCOL-TYPE", "COORDINATOR", "TYPE"],
        [(g.group, g.state, g.protocol_type or None, f"{g.coordinator.node_id} ({g.coordinator.host}:{g.coordinator.port})",
          g.group_type) for g in groups]))


@app.command("describe")
@guard
def describe(
    ctx: typer.Context,
    group: Optional[str] = typer.Argument(None, help="Group id (or --group, --all-groups).", show_default=False),
    groups: List[str] = group_option(),
    all_groups: bool = all_groups_option(),
    members: bool = typer.Option(False, "--members", help="Show the members and their assignments."),
    offsets: bool = typer.Option(False, "--offsets", help="Show committed offsets, log end and lag."),
    state: bool = typer.Option(False, "--state", help="Show the group's state, protocol and generation."),
    configs: bool = typer.Option(False, "--configs", help="Show the group's configs (consumer.session.timeout.ms, "
                                 "...; not among the sections shown by default)."),
    verbose: bool = typer.Option(False, "--verbose", help="State, members and offsets as kafka-consumer-groups.sh "
                                 "4.x --verbose shows them: epochs, current and target assignments, committed "
                                 "leader epochs."),
    only_with_lag: bool = typer.Option(
        False, "--only-with-lag", help="Leave out the partitions without lag (the offsets table and the JSON "
        "offsets): kept are those with lag above 0 or an unknown lag."),
) -> None:
    """Describe groups: state, protocol, generation, coordinator, members and per-partition lag.

    The section flags combine (--members --offsets shows both); without any, every section is
    shown. Tables have kafka-consumer-groups.sh's columns first (--offsets alone is its
    --describe table), groupctl's after them. With --output json one GROUP is one object that
    always carries every key (group, group_type, state, protocol_type, protocol, generation: null
    when the cluster cannot tell, group_epoch, assignment_epoch and assignor: null for a classic
    group, coordinator, members, offsets, configs: null when the cluster has no group configs);
    --group or --all-groups give a list of such objects.
    A group that does not exist among several is an error line; the others are shown; exit 1."""
    from groupctl.cli.group_render import DEFAULT_SECTIONS, SECTIONS
    from groupctl.ops import groups as ops

    choice = choose_groups(group, groups, all_groups)
    current = env(ctx)
    flags = {"state": state, "members": members, "offsets": offsets, "configs": configs}
    sections = [name for name in SECTIONS if flags[name] or (not any(flags.values()) and name in DEFAULT_SECTIONS)]
    include_offsets = current.json or "offsets" in sections
    include_configs = current.json or "configs" in sections
    bootstrap = current.need_bootstrap()
    failures = ()
    if choice.many:
        with current.status("describing groups"):
            named = ops.all_group_ids(bootstrap) if choice.every_group else choice.named
            answer = ops.describe_groups(bootstrap, named, include_offsets=include_offsets,
                                         include_configs=include_configs)
        described, failures = list(answer.described), answer.failures
    else:
        [name] = choice.named
        with current.status(f"describing {name}"):
            described = [ops.describe_group(bootstrap, name, include_offsets=include_offsets,
                                            include_configs=include_configs)]
    if only_with_lag:
        described = [ops.only_with_lag(d) for d in described]
    if current.json:
        documents = [d.to_json() for d in described]
        render.emit_json(current, documents if choice.many else documents[0])
    elif described:
        for index, section in enumerate(sections):
            if index:
                current.out.print()
            SECTIONS[section](current, described, verbose)
    _report(current, failures)


def _report(current: CliEnv, failures: Sequence[OpsError]) -> None:
    """One error line per failed group, then the worst failure's exit status (none: return)."""
    for failure in failures:
        current.err.print(f"groupctl: error: {failure}", markup=False, highlight=False)
    if failures:
        raise typer.Exit(max(f.exit_status for f in failures))


@app.command("delete")
@guard
def delete(
    ctx: typer.Context,
    group: Optional[List[str]] = typer.Argument(None, metavar="[GROUP]...", help="Group ids.", show_default=False),
    groups: List[str] = group_option(),
    all_groups: bool = typer.Option(
        False, "--all-groups", help="Every group of the cluster: those without members are deleted, each other is "
        "an error line (kafka-consumer-groups.sh --all-groups). Needs --force."),
    force: bool = typer.Option(False, "--force", help="Confirm --all-groups (not needed for named groups)."),
) -> None:
    """Delete groups and their committed offsets; only groups without members can go.

    Each group is deleted or not on its own: the others' errors are one line each on stderr, and
    the exit status is 1 when any group was not deleted. --all-groups deletes every group that
    can go only with --force (kafka-consumer-groups.sh does not ask; groupctl will not delete a
    whole cluster's groups on a mistyped line)."""
    from groupctl.ops.groups import all_group_ids, delete_groups

    choice = choose_groups(group, groups, all_groups)
    if choice.every_group and not force:
        raise BadInput("--all-groups deletes every group without members: add --force to do it")
    current = env(ctx)
    bootstrap = current.need_bootstrap()
    named = all_group_ids(bootstrap) if choice.every_group else choice.named
    results = delete_groups(bootstrap, named) if named else ()
    if current.json:
        render.emit_json(current, [r.to_json() for r in results])
    else:
        for result in results:
            if result.deleted:
                current.out.print(f"deleted group {result.group}", markup=False, highlight=False)
    _report(current, [r.error for r in results if not r.deleted])
