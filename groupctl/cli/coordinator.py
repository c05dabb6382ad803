"""`groupctl coordinator ...`: run an embedded coordinator node, find a group's coordinator,
show the coordinator cluster."""

from __future__ import annotations

import re
from pathlib import Path
from typing import List, Optional

import typer

from groupctl import defaults
from groupctl.cli import render
from groupctl.cli.context import env, guard
from groupctl.cli.errors import BadInput, CliError
from groupctl.coordinator.consumer.config import ConsumerGroupConfig, MigrationPolicy
from groupctl.layout.coordinators import MAX_GROUP_PARTITIONS

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
    host: str = typer.Option(defaults.HOST, help="Address to bind."),
    port: int = typer.Option(defaults.PORT, min=0, max=65535, help="Port to bind (0: any free port)."),
    data_dir: Optional[Path] = typer.Option(
        None, help="Where partition logs (and, without --zk, the embedded store) are kept. "
        "Without it everything lives in memory."),
    zk: Optional[str] = typer.Option(
        None, envvar="GROUPCTL_ZK", help="ZooKeeper connect string HOST:PORT\\[,HOST:PORT]\\[/chroot] "
        "for group metadata; without it the embedded store is used."),
    node_id: int = typer.Option(
        defaults.NODE_ID, min=0, max=1023, help="This node's broker id (0-1023), unique in the cluster."),
    topic: List[str] = typer.Option([], help="Create topic NAME:PARTITIONS at start if missing (repeatable)."),
    advertised_host: Optional[str] = typer.Option(None, help="Host clients are told to connect to."),
    min_session_timeout_ms: int = typer.Option(
        defaults.MIN_SESSION_TIMEOUT_MS, help="Smallest session timeout a member may ask for."),
    max_session_timeout_ms: int = typer.Option(
        defaults.MAX_SESSION_TIMEOUT_MS, help="Largest session timeout a member may ask for."),
    initial_rebalance_delay_ms: int = typer.Option(
        defaults.INITIAL_REBALANCE_DELAY_MS,
        help="How long a group starting from Empty waits for more members (0: no wait)."),
    max_group_size: Optional[int] = typer.Option(
        defaults.MAX_GROUP_SIZE, min=1, metavar="N",
        help="Most members a classic group may have: a join past it gets GROUP_MAX_SIZE_REACHED "
        "(Kafka's group.max.size; default: no limit)."),
    consumer_session_timeout_ms: int = typer.Option(
        defaults.CONSUMER_SESSION_TIMEOUT_MS, min=1, help="Consumer groups (KIP-848): how long a member may go "
        "without a heartbeat before it is fenced (Kafka's group.consumer.session.timeout.ms)."),
    consumer_heartbeat_interval_ms: int = typer.Option(
        defaults.CONSUMER_HEARTBEAT_INTERVAL_MS, min=1, help="Consumer groups: how often members are told to "
        "heartbeat (Kafka's group.consumer.heartbeat.interval.ms)."),
    consumer_assignors: str = typer.Option(
        ",".join(defaults.CONSUMER_ASSIGNORS), help="Consumer groups: the server assignors members may ask for, "
        "the first the default (uniform, range)."),
    consumer_max_size: Optional[int] = typer.Option(
        defaults.CONSUMER_MAX_SIZE, min=1, metavar="N", help="Most members a consumer group may have: a join "
        "past it gets GROUP_MAX_SIZE_REACHED (Kafka's group.consumer.max.size; default: no limit)."),
    consumer_migration_policy: MigrationPolicy = typer.Option(
        defaults.CONSUMER_MIGRATION_POLICY, case_sensitive=False, help="Online migration between the group "
        "protocols: upgrade lets a consumer-protocol member join a live classic group, downgrade turns a "
        "consumer group whose last consumer-protocol member left back into a classic group "
        "(Kafka's group.consumer.migration.policy)."),
    auto_create_topics: bool = typer.Option(
        defaults.AUTO_CREATE_TOPICS, help="Create unknown topics named in Metadata requests."),
    default_partitions: int = typer.Option(defaults.DEFAULT_PARTITIONS, help="Partitions of auto-created topics."),
    max_frame_bytes: int = typer.Option(defaults.MAX_FRAME_BYTES, help="Largest request accepted, in bytes."),
    zk_session_timeout_s: float = typer.Option(
        defaults.ZK_SESSION_TIMEOUT_S, help="ZooKeeper session timeout, in seconds: how long a dead node keeps "
        "its groups before another node takes them over."),
    group_partitions: int = typer.Option(
        defaults.GROUP_PARTITIONS, min=1, max=MAX_GROUP_PARTITIONS,
        help="Group partitions of a new cluster (the first node's choice stands)."),
    handback_delay_s: float = typer.Option(
        defaults.HANDBACK_DELAY_S, min=0.0, help="Seconds a (re)started node must be live before other nodes "
        "hand its preferred group partitions back."),
    journal_dir: Optional[Path] = typer.Option(
        None, help="Where to write the event journal (rebalances, joins, leaves, commits; JSON Lines). "
        "Default: DATA_DIR/journal; no journal without either."),
    journal_segment_bytes: int = typer.Option(
        defaults.JOURNAL_SEGMENT_BYTES, min=1,
        help="Start a new journal file when the current one reaches this size (bytes)."),
    journal_keep_segments: int = typer.Option(
        defaults.JOURNAL_KEEP_SEGMENTS, min=0,
        help="Journal files kept, the current one included; the oldest go first (0: keep all)."),
    log_level: str = typer.Option(defaults.LOG_LEVEL, help="debug, info, warning or error."),
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
    assignors = tuple(name.strip() for name in consumer_assignors.split(",") if name.strip())
    unknown = [name for name in assignors if name not in defaults.CONSUMER_ASSIGNORS]
    if not assignors or unknown:
        raise BadInput(f"--consumer-assignors {consumer_assignors!r}: expected a list of "
                       f"{', '.join(defaults.CONSUMER_ASSIGNORS)}")
    from groupctl.coordinator.classic.config import GroupConfig
    from groupctl.server.config import NodeConfig
    from groupctl.server.journal import JournalError
    from groupctl.server.main import NodeFailed, run_node

    config = NodeConfig(
        host=host, port=port, node_id=node_id, advertised_host=advertised_host, data_dir=data_dir,
        zk=zk, zk_session_timeout_s=zk_session_timeout_s, topics=topics,
        group_partitions=group_partitions, handback_delay_s=handback_delay_s,
        auto_create_topics=auto_create_topics, default_partitions=default_partitions,
        max_frame_bytes=max_frame_bytes, journal_dir=journal_dir,
        journal_segment_bytes=journal_segment_bytes, journal_keep_segments=journal_keep_segments,
        groups=GroupConfig(
            min_session_timeout_ms=min_session_timeout_ms,
            max_session_timeout_ms=max_session_timeout_ms,
            initial_rebalance_delay_ms=initial_rebalance_delay_ms,
            max_group_size=max_group_size,
        ),
        consumer_groups=ConsumerGroupConfig(
            session_timeout_ms=consumer_session_timeout_ms, heartbeat_interval_ms=consumer_heartbeat_interval_ms,
            assignors=assignors, max_size=consumer_max_size, migration_policy=consumer_migration_policy,
        ),
    )
    try:
        run_node(config, log_level=log_level)
    except JournalError as exc:
        raise CliError(f"journal: {exc}") from exc
    except NodeFailed as exc:
        raise CliError(str(exc)) from exc


@app.command("find")
@guard
def find(ctx: typer.Context, group: str = typer.Argument(..., help="Group id.")) -> None:
    """Show GROUP's coordinator: node id, host and port.

    From FindCoordinator with --bootstrap; from ZooKeeper with --zk (the leader of the group's
    partition, also shown with its election epoch). Given both, the two must agree on the node."""
    current = env(ctx)
    current.need_source()
    answers = {}
    if current.bootstrap:
        from groupctl.ops.groups import find_coordinator

        answers["bootstrap"] = find_coordinator(current.bootstrap, group).to_json()
    if current.zk:
        from groupctl.ops.zk import coordinator_from_zk

        answers["zk"] = coordinator_from_zk(current.zk, group).to_json()
    node = {source: (a["node_id"], a["host"], a["port"]) for source, a in answers.items()}
    if len(set(node.values())) > 1:
        raise CliError("the coordinator from FindCoordinator ({bootstrap}) and from ZooKeeper ({zk}) disagree"
                       .format(**{k: f"node {n} at {h}:{p}" for k, (n, h, p) in node.items()}))
    found = answers.get("zk") or answers["bootstrap"]
    if current.json:
        render.emit_json(current, found)
    elif "partition" in found:
        render.show(current, render.table(
            ["NODE", "HOST", "PORT", "PARTITION", "EPOCH"],
            [(found["node_id"], found["host"], found["port"], found["partition"], found["epoch"])]))
    else:
        render.show(current, render.table(["NODE", "HOST", "PORT"], [(found["node_id"], found["host"], found["port"])]))


@app.command("status")
@guard
def status(ctx: typer.Context) -> None:
    """Show the coordinator cluster in ZooKeeper (--zk): live nodes, the group partitions each
    leads with their groups and members, and partitions without a leader.

    With --output json: group_partitions, groups, members, nodes[{node_id, host, port,
    started_at_ms, registered, partitions, groups, members}], leaderless_partitions,
    partitions[{partition, leader, epoch, groups, members}]."""
    from groupctl.coordinator.placement import partition_ranges
    from groupctl.ops.cluster import cluster_status

    current = env(ctx)
    connect = current.need_zk()
    with current.status("reading the cluster from ZooKeeper"):
        cluster = cluster_status(connect)
    if current.json:
        render.emit_json(current, cluster.to_json())
        return
    render.show(current, render.table(
        ["GROUP-PARTITIONS", "LEADERLESS", "NODES", "GROUPS", "MEMBERS"],
        [(cluster.group_partitions, partition_ranges(cluster.leaderless) or "none", len(cluster.nodes),
          cluster.groups, cluster.members)]))
    current.out.print()
    render.show(current, render.table(
        ["NODE", "HOST", "PORT", "STARTED", "PARTITIONS", "GROUPS", "MEMBERS"],
        [(n.node_id, n.host if n.registered else "(not registered)", n.port, render.utc_time(n.started_at_ms),
          partition_ranges(n.partitions) or None, n.groups, n.members) for n in cluster.nodes]))
