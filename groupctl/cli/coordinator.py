"""`groupctl coordinator ...`: run an embedded coordinator node."""

from __future__ import annotations

import re
from pathlib import Path
from typing import List, Optional

import typer

from groupctl.cli import render
from groupctl.cli.context import env, guard
from groupctl.cli.errors import BadInput, CliError

ZK_CONNECT = re.compile(r"^[^\s,/]+:\d{1,5}(,[^\s,/]+:\d{1,5})*(/\S*)?$")

app = typer.Typer(help="Run or locate group coordinators.", no_args_is_help=True)


def parse_topic_spec(spec: str) -> tuple[str, int]:
    """`NAME:PARTITIONS` -> (name, partitions)."""
    name, sep, count = spec.rpartition(":")
    if not sep or not name or not count.isdigit() or int(count) < 1:
        raise BadInput(f"--topic {spec!r}: expected NAME:PARTITIONS with PARTITIONS >= 1")
    return name, int(count)


@app.command("run")
@guard
def run(
    ctx: typer.Context,
    host: str = typer.Option("127.0.0.1", help="Address to bind."),
    port: int = typer.Option(9092, min=0, max=65535, help="Port to bind (0: any free port)."),
    data_dir: Optional[Path] = typer.Option(
        None, help="Where partition logs (and, without --zk, the embedded store) are kept. "
        "Without it everything lives in memory."),
    zk: Optional[str] = typer.Option(
        None, envvar="GROUPCTL_ZK", help="ZooKeeper connect string HOST:PORT\\[,HOST:PORT]\\[/chroot] "
        "for group metadata; without it the embedded store is used."),
    node_id: int = typer.Option(0, help="This node's broker id."),
    topic: List[str] = typer.Option([], help="Create topic NAME:PARTITIONS at start if missing (repeatable)."),
    advertised_host: Optional[str] = typer.Option(None, help="Host clients are told to connect to."),
    min_session_timeout_ms: int = typer.Option(6000, help="Smallest session timeout a member may ask for."),
    max_session_timeout_ms: int = typer.Option(1800000, help="Largest session timeout a member may ask for."),
    initial_rebalance_delay_ms: int = typer.Option(
        3000, help="How long a group starting from Empty waits for more members (0: no wait)."),
    auto_create_topics: bool = typer.Option(True, help="Create unknown topics named in Metadata requests."),
    default_partitions: int = typer.Option(1, help="Partitions of auto-created topics."),
    max_frame_bytes: int = typer.Option(100 * 1024 * 1024, help="Largest request accepted, in bytes."),
    zk_session_timeout_s: float = typer.Option(10.0, help="ZooKeeper session timeout, in seconds."),
    log_level: str = typer.Option("info", help="debug, info, warning or error."),
) -> None:
    """Start an embedded coordinator that Kafka clients can use for groups, producing and consuming."""
    zk = zk or env(ctx).zk  # `groupctl --zk X coordinator run` means the same as `run --zk X`
    if zk and not ZK_CONNECT.match(zk):
        raise BadInput(f"--zk {zk!r}: expected HOST:PORT[,HOST:PORT...][/chroot]")
    topics = tuple(parse_topic_spec(spec) for spec in topic)
    if min_session_timeout_ms > max_session_timeout_ms:
        raise BadInput("--min-session-timeout-ms is larger than --max-session-timeout-ms")
    if default_partitions < 1:
        raise BadInput("--default-partitions must be at least 1")
    if initial_rebalance_delay_ms < 0:
        raise BadInput("--initial-rebalance-delay-ms must not be negative")
    from groupctl.server.main import run_node

    from groupctl.coordinator.classic.coordinator import GroupConfig
    from groupctl.server.config import NodeConfig

    config = NodeConfig(
        host=host, port=port, node_id=node_id, advertised_host=advertised_host, data_dir=data_dir,
        zk=zk, zk_session_timeout_s=zk_session_timeout_s, topics=topics,
        auto_create_topics=auto_create_topics, default_partitions=default_partitions,
        max_frame_bytes=max_frame_bytes,
        groups=GroupConfig(
            min_session_timeout_ms=min_session_timeout_ms,
            max_session_timeout_ms=max_session_timeout_ms,
            initial_rebalance_delay_ms=initial_rebalance_delay_ms,
        ),
    )
    run_node(config, log_level=log_level)


@app.command("find")
@guard
def find(ctx: typer.Context, group: str = typer.Argument(..., help="Group id.")) -> None:
    """Show GROUP's coordinator: node id, host and port.

    From FindCoordinator with --bootstrap, from ZooKeeper with --zk; given both, the two must
    agree."""
    current = env(ctx)
    current.need_source()
    answers = {}
    if current.bootstrap:
        from groupctl.ops.groups import find_coordinator

        answers["bootstrap"] = find_coordinator(current.bootstrap, group).to_json()
    if current.zk:
        from groupctl.ops.zk import coordinator_from_zk

        answers["zk"] = coordinator_from_zk(current.zk, group).to_json()
    first, *others = answers.values()
    if any(other != first for other in others):
        raise CliError("the coordinator from FindCoordinator ({bootstrap}) and from ZooKeeper ({zk}) disagree"
                       .format(**{k: f"node {v['node_id']} at {v['host']}:{v['port']}" for k, v in answers.items()}))
    if current.json:
        render.emit_json(current, first)
    else:
        render.show(current, render.table(["NODE", "HOST", "PORT"], [(first["node_id"], first["host"], first["port"])]))
