"""`groupctl rebalance ...`: ask for a rebalance, and follow rebalances as they complete.

Mechanism (also in docs/commands.md): with --bootstrap, groupctl's extension APIs 32001 (trigger) and
32000 (long-polled group document); with --zk alone, a request znode under
/coordinators/rebalance-requests and a watch on /groups/<group>.
"""

from __future__ import annotations

from typing import Optional

import typer

from groupctl.cli import render
from groupctl.cli.context import WATCH_TIMEOUT_HELP, env, guard
from groupctl.layout.consumer_groups import CONSUMER

app = typer.Typer(help="Trigger and watch rebalances.", no_args_is_help=True)


@app.command("trigger")
@guard
def trigger(
    ctx: typer.Context,
    group: str = typer.Argument(..., help="Group id."),
    reason: Optional[str] = typer.Option(None, help="Recorded in the group document's rebalance block."),
) -> None:
    """Make GROUP's coordinator start a rebalance (the next generation)."""
    from groupctl.ops.rebalance import trigger as request

    current = env(ctx)
    current.need_source()
    result = request(group, bootstrap=current.kafka(), zk=current.zk, zk_auth=current.zk_auth, reason=reason,
                     zk_timeout_s=current.timeout_s)
    if current.json:
        render.emit_json(current, result.to_json())
        return
    note = f" ({result.message})" if result.message else ""
    pending = " (a request was already pending)" if result.already_pending else ""
    current.out.print(f"rebalance of {group} requested via {result.source}{pending}{note}",
                      markup=False, highlight=False)


def _describe(event) -> str:
    """One line per event; a consumer group's names its epoch and state (two lines per epoch:
    when it moves, and when the group is Stable at it)."""
    consumer = event.group_type == CONSUMER
    word = "epoch" if consumer else "generation"
    moved = event.previous_generation is not None and event.previous_generation != event.generation
    parts = [f"{word} {event.previous_generation} -> {event.generation}" if moved else f"{word} {event.generation}"]
    if consumer:
        parts.append(str(event.state))
    parts.append(f"{event.members} member(s)")
    if event.reason:
        parts.append(f"reason: {event.reason}")
    if event.members_joined:
        parts.append("joined: " + ", ".join(m.client_id or m.member_id or "?" for m in event.members_joined))
    if event.members_left:
        parts.append("left: " + ", ".join(m.client_id or m.member_id or "?" for m in event.members_left))
    parts.append(f"{len(event.partitions_moved)} partition(s) moved")
    if event.duration_ms is not None:
        parts.append(f"took {event.duration_ms} ms")
    return "; ".join(parts)


@app.command("watch")
@guard
def watch(
    ctx: typer.Context,
    group: str = typer.Argument(..., help="Group id."),
    count: Optional[int] = typer.Option(None, help="Exit 0 after this many completed rebalances."),
    timeout: Optional[float] = typer.Option(None, metavar="SECONDS", help=WATCH_TIMEOUT_HELP),
) -> None:
    """Follow GROUP's rebalances as they complete (a consumer group's epochs: each new one, and
    the group becoming Stable at it).

    A live view on a terminal; one line per rebalance when piped; one JSON object per line with
    --output json. Here --timeout is how long to watch, in seconds; the global timeout (given
    before the command, in milliseconds) bounds each network wait."""
    from groupctl.ops.rebalance import watch as follow

    current = env(ctx)
    current.need_source()
    events = follow(group, bootstrap=current.kafka(), zk=current.zk, zk_auth=current.zk_auth, count=count,
                    timeout_s=timeout, zk_timeout_s=current.timeout_s)
    if current.json or not current.out.is_terminal:
        for event in events:
            if current.json:
                render.emit_json_line(current, event.to_json())
            else:
                current.out.print(_describe(event), markup=False, highlight=False)
        return
    _live(current, group, events)


def _live(current, group: str, events) -> None:
    """The terminal view: a table of the rebalances seen so far, updated as they complete."""
    from rich.live import Live

    rows: list[tuple] = []

    def view():
        return render.table(
            ["GENERATION", "STATE", "MEMBERS", "REASON", "JOINED", "LEFT", "MOVED", "DURATION-MS"],
            rows, title=f"rebalances of {group} (Ctrl-C to stop)")

    with Live(view(), console=current.out, refresh_per_second=4) as live:
        for event in events:
            rows.append((event.generation, event.state, event.members, event.reason,
                         ", ".join(m.client_id or m.member_id or "?" for m in event.members_joined) or None,
                         ", ".join(m.client_id or m.member_id or "?" for m in event.members_left) or None,
                         len(event.partitions_moved), event.duration_ms))
            live.update(view())
