"""`groupctl group ...`: list, describe and delete consumer groups (Kafka protocol, any cluster)."""

from __future__ import annotations

from typing import List

import typer

from groupctl.cli import render
from groupctl.cli.context import env, guard

app = typer.Typer(help="List, describe and delete consumer groups.", no_args_is_help=True)

STATES = "Empty, PreparingRebalance, CompletingRebalance, Stable, Dead, Assigning, Reconciling"
TYPES = "classic, consumer (KIP-848)"


@app.command("list")
@guard
def list_(
    ctx: typer.Context,
    state: List[str] = typer.Option([], help=f"Only groups in this state (repeatable): {STATES}."),
    type_: List[str] = typer.Option([], "--type", help=f"Only groups of this type (repeatable): {TYPES}."),
) -> None:
    """List the groups the cluster knows, with their state, protocol type and group type."""
    from groupctl.ops.groups import list_groups

    current = env(ctx)
    with current.status("listing groups"):
        groups = list_groups(current.need_bootstrap(), state, type_)
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
    group: str = typer.Argument(..., help="Group id."),
    members: bool = typer.Option(False, "--members", help="Show the members and their assignments."),
    offsets: bool = typer.Option(False, "--offsets", help="Show committed offsets, log end and lag."),
    state: bool = typer.Option(False, "--state", help="Show the group's state, protocol and generation."),
    verbose: bool = typer.Option(False, "--verbose", help="State and members as kafka-consumer-groups.sh 4.x "
                                 "--verbose shows them: epochs, current and target assignments."),
) -> None:
    """Describe GROUP: state, protocol, generation, coordinator, members and per-partition lag.

    The section flags combine (--members --offsets shows both); without any, every section is
    shown. With --output json the document always carries every key (group, group_type, state,
    protocol_type, protocol, generation: null when the cluster cannot tell, group_epoch,
    assignment_epoch and assignor: null for a classic group, coordinator, members, offsets)."""
    from groupctl.cli.group_render import SECTIONS
    from groupctl.ops.groups import describe_group

    current = env(ctx)
    flags = {"state": state, "members": members, "offsets": offsets}
    sections = [name for name in SECTIONS if flags[name] or not any(flags.values())]
    with current.status(f"describing {group}"):
        described = describe_group(current.need_bootstrap(), group,
                                   include_offsets=current.json or "offsets" in sections)
    if current.json:
        render.emit_json(current, described.to_json())
        return
    for index, section in enumerate(sections):
        if index:
            current.out.print()
        SECTIONS[section](current, described, verbose)


@app.command("delete")
@guard
def delete(ctx: typer.Context, groups: List[str] = typer.Argument(..., help="Group ids.")) -> None:
    """Delete GROUP(s) and their committed offsets; only groups without members can go."""
    from groupctl.ops.groups import delete_groups

    current = env(ctx)
    results = delete_groups(current.need_bootstrap(), groups)
    if current.json:
        render.emit_json(current, [r.to_json() for r in results])
    else:
        for result in results:
            if result.deleted:
                current.out.print(f"deleted group {result.group}", markup=False, highlight=False)
    failures = [r for r in results if not r.deleted]
    for failure in failures:
        current.err.print(f"groupctl: error: {failure.error}", markup=False, highlight=False)
    if failures:
        raise typer.Exit(max(f.error.exit_status for f in failures))
