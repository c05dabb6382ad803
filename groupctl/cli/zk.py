"""`groupctl zk ...`: what groupctl's coordinators keep in ZooKeeper, and the legacy 0.8 layout."""

from __future__ import annotations

from typing import Optional

import typer

from groupctl.cli import render
from groupctl.cli.context import WATCH_TIMEOUT_HELP, env, guard
from groupctl.layout.consumer_groups import CONSUMER

app = typer.Typer(help="Inspect the group documents and znodes in ZooKeeper.", no_args_is_help=True)


@app.command("show")
@guard
def show(ctx: typer.Context, group: str = typer.Argument(..., help="Group id.")) -> None:
    """Show GROUP's stored document (generation, members, ownership) and its committed offsets."""
    from groupctl.ops.zk import zk_show

    current = env(ctx)
    with current.status(f"reading group {group} from ZooKeeper"):
        stored = zk_show(current.need_zk(), group, auth=current.zk_auth, timeout_s=current.timeout_s)
    if current.json:
        render.emit_json(current, stored.to_json())
        return
    stat = stored.stat
    current.out.print(f"[bold]{stored.path}[/bold]  layout={stored.layout}  znode version={stat.version}"
                      if stat else f"[bold]{stored.path}[/bold]  layout={stored.layout}")
    render.show_json_document(current, stored.document)
    if stored.offsets:
        rows = [(topic, partition, entry.get("offset"))
                for topic, partitions in sorted(stored.offsets.items())
                for partition, entry in sorted(partitions.items(), key=lambda kv: int(kv[0]))]
        render.show(current, render.table(["TOPIC", "PARTITION", "COMMITTED-OFFSET"], rows, title="offsets"))


@app.command("ls")
@guard
def ls(ctx: typer.Context, path: str = typer.Argument("/", help="Znode path (under the chroot).")) -> None:
    """List the children of PATH."""
    from groupctl.ops.zk import zk_ls

    current = env(ctx)
    listing = zk_ls(current.need_zk(), path, auth=current.zk_auth, timeout_s=current.timeout_s)
    if current.json:
        render.emit_json(current, listing.to_json())
    else:
        for child in listing.children:
            current.out.print(child, markup=False, highlight=False)


@app.command("get")
@guard
def get(ctx: typer.Context, path: str = typer.Argument(..., help="Znode path (under the chroot).")) -> None:
    """Print PATH's data (JSON highlighted on a terminal) and its stat."""
    from groupctl.ops.zk import zk_get

    current = env(ctx)
    node = zk_get(current.need_zk(), path, auth=current.zk_auth, timeout_s=current.timeout_s)
    if current.json:
        render.emit_json(current, node.to_json())
        return
    if node.document is not None:
        render.show_json_document(current, node.document)
    else:
        current.out.print(node.text if node.text is not None else f"<{len(node.data)} bytes of binary data>",
                          markup=False, highlight=False)
    stat = node.stat
    current.err.print(f"version={stat.version} data_length={stat.data_length} children={stat.num_children}"
                      + (f" ephemeral_owner=0x{stat.ephemeral_owner:x}" if stat.ephemeral_owner else ""),
                      markup=False, highlight=False)


@app.command("tree")
@guard
def tree(
    ctx: typer.Context,
    path: str = typer.Argument("/", help="Znode path to start from (under the chroot)."),
    max_depth: int = typer.Option(8, help="Deepest level shown."),
    max_nodes: int = typer.Option(1000, help="Most znodes shown."),
) -> None:
    """Show the znodes below PATH as a tree (bounded by --max-depth and --max-nodes)."""
    from groupctl.ops.zk import zk_tree

    current = env(ctx)
    with current.status(f"walking {path}"):
        found = zk_tree(current.need_zk(), path, max_depth=max_depth, max_nodes=max_nodes, auth=current.zk_auth,
                        timeout_s=current.timeout_s)
    if current.json:
        render.emit_json(current, found.to_json())
        return
    for entry in found.entries:
        name = entry.path if entry.depth == 0 else entry.path.rsplit("/", 1)[-1]
        current.out.print("  " * entry.depth + name, markup=False, highlight=False)
    if found.truncated:
        current.err.print(f"(truncated at depth {max_depth} / {max_nodes} znodes)", markup=False)


@app.command("watch")
@guard
def watch(
    ctx: typer.Context,
    group: str = typer.Argument(..., help="Group id."),
    count: Optional[int] = typer.Option(None, help="Exit 0 after this many new documents."),
    timeout: Optional[float] = typer.Option(None, metavar="SECONDS", help=WATCH_TIMEOUT_HELP),
) -> None:
    """Print GROUP's document each time a new generation is stored (a consumer group's: each
    new group epoch, and the group becoming Stable at it).

    One JSON object per line with --output json. Here --timeout is how long to watch, in seconds;
    the global timeout (given before the command, in milliseconds) bounds each ZooKeeper wait."""
    from groupctl.ops.zk import zk_watch

    current = env(ctx)
    for stored in zk_watch(current.need_zk(), group, count=count, timeout_s=timeout, auth=current.zk_auth,
                           connect_timeout_s=current.timeout_s):
        if current.json:
            render.emit_json_line(current, stored.stored)
        else:
            current.out.print(_watch_line(stored.document), markup=False, highlight=False)


def _watch_line(document) -> str:
    """`zk watch`'s line for a document of either type."""
    if document.TYPE == CONSUMER:
        return (f"group epoch {document.group_epoch}  assignment epoch {document.assignment_epoch}  "
                f"state={document.state}  members={len(document.members)}  assignor={document.assignor}")
    return (f"generation {document.generation}  state={document.state}  members={len(document.members)}  "
            f"leader={document.leader}")
