"""`groupctl group ...`: list, describe and delete consumer groups (Kafka protocol, any cluster)."""

from __future__ import annotations

from typing import List

import typer

from groupctl.cli import render
from groupctl.cli.context import env, guard

app = typer.Typer(help="List, describe and delete consumer groups.", no_args_is_help=True)

STATES = "Empty, PreparingRebalance, CompletingRebalance, Stable, Dead (also KIP-848 states)"


@app.command("list")
@guard
def list_(
    ctx: typer.Context,
    state: List[str] = typer.Option([], help=f"Only groups in this state (repeatable): {STATES}."),
) -> None:
    """List the groups the cluster knows, with their state and protocol type."""
    from groupctl.ops.groups import list_groups

    current = env(ctx)
    with current.status("listing groups"):
        groups = list_groups(current.need_bootstrap(), state)
    if current.json:
        render.emit_json(current, [g.to_json() for g in groups])
        return
    render.show(current, render.table(
        ["GROUP", "STATE", "PROTOCOL-TYPE", "COORDINATOR"],
        [(g.group, g.state, g.protocol_type or None, f"{g.coordinator.node_id} ({g.coordinator.host}:{g.coordinator.port})")
         for g in groups]))


@app.command("describe")
@guard
def describe(
    ctx: typer.Context,
    group: str = typer.Argument(..., help="Group id."),
    members: bool = typer.Option(False, "--members", help="Show the members and their assignments."),
    offsets: bool = typer.Option(False, "--offsets", help="Show committed offsets, log end and lag."),
    state: bool = typer.Option(False, "--state", help="Show the group's state, protocol and generation."),
) -> None:
    """Describe GROUP: state, protocol, generation, coordinator, members and per-partition lag.

    The section flags combine (--members --offsets shows both); without any, every section is
    shown. With --output json the document always carries every key (group, state,
    protocol_type, protocol, generation: null when the cluster cannot tell, coordinator,
    members, offsets)."""
    from groupctl.ops.groups import describe_group

    current = env(ctx)
    flags = {"state": state, "members": members, "offsets": offsets}
    sections = [name for name in _DESCRIBE_SECTIONS if flags[name] or not any(flags.values())]
    with current.status(f"describing {group}"):
        described = describe_group(current.need_bootstrap(), group,
                                   include_offsets=current.json or "offsets" in sections)
    if current.json:
        render.emit_json(current, described.to_json())
        return
    for index, section in enumerate(sections):
        if index:
            current.out.print()
        _DESCRIBE_SECTIONS[section](current, described)


def _state_section(current, described) -> None:
    coordinator = described.coordinator
    render.show(current, render.table(
        ["GROUP", "STATE", "PROTOCOL-TYPE", "PROTOCOL", "GENERATION", "MEMBERS", "COORDINATOR"],
        [(described.group, described.state, described.protocol_type or None, described.protocol or None,
          described.generation, len(described.members),
          f"{coordinator.node_id} ({coordinator.host}:{coordinator.port})")]))


def _members_section(current, described) -> None:
    if not described.members:
        current.out.print(f"{described.group} has no active members.", markup=False, highlight=False)
        return
    render.show(current, render.table(
        ["MEMBER-ID", "CLIENT-ID", "HOST", "ASSIGNMENT"],
        [(m.member_id, m.client_id, m.client_host,
          " ".join(f"{t}:{','.join(map(str, ps))}" for t, ps in sorted(m.assignment.items())) or None)
         for m in described.members]))


def _offsets_section(current, described) -> None:
    rows = []
    for o in described.offsets:
        owner = described.owner(o.topic, o.partition)
        rows.append((o.topic, o.partition, o.committed_offset, o.log_end_offset, render.lag_cell(o),
                     owner.member_id if owner else None))
    render.show(current, render.table(
        ["TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID"], rows))


_DESCRIBE_SECTIONS = {"state": _state_section, "members": _members_section, "offsets": _offsets_section}
"""`group describe`'s sections, shown in this order."""


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
