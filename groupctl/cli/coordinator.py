"""`groupctl coordinator ...`: run an embedded coordinator node, find a group's coordinator,
show the coordinator cluster."""

from __future__ import annotations

import os
import re
from enum import Enum
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
LISTENER = re.compile(r"^(PLAINTEXT|SSL|SASL_PLAINTEXT|SASL_SSL)://(\[[^\]]*\]|[^:/\s]*):(\d{1,5})$")
PRINCIPAL = re.compile(r"^[A-Za-z]+:.+$")
LISTENER_PANEL = "Listener"
STORAGE_PANEL = "Storage and cluster"
TOPICS_PANEL = "Topics"
CLASSIC_PANEL = "Classic groups"
CONSUMER_PANEL = "Consumer groups (KIP-848)"
JOURNAL_PANEL = "Journal"
METRICS_PANEL = "Metrics"
SECURITY_PANEL = "Security"
"""The panels of `coordinator run --help`, by subject (docs/configuration.md has the same groups)."""


class ClientAuth(str, Enum):
    required = "required"
    requested = "requested"
    none = "none"

app = typer.Typer(help="Run or locate group coordinators.", no_args_is_help=True)


def parse_listeners(specs: List[str], advertised: List[str]) -> tuple:
    """`--listener`/`--advertised-listener` values -> the node's Listeners (empty: the default
    PLAINTEXT host:port). One listener per protocol, as Kafka's default protocol map allows."""
    from groupctl.server.config import Listener

    def parse(option: str, spec: str) -> tuple[str, str, int]:
        match = LISTENER.match(spec.strip())
        if not match or int(match.group(3)) > 65535:
            raise BadInput(f"{option} {spec!r}: expected PROTOCOL://HOST:PORT with PROTOCOL one of "
                           "PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL")
        return match.group(1), match.group(2).strip("[]"), int(match.group(3))

    bound = [parse("--listener", spec) for spec in specs]
    names = [name for name, _, _ in bound]
    if len(set(names)) < len(names):
        raise BadInput("--listener: one listener per protocol")
    told = {}
    for spec in advertised:
        name, host, port = parse("--advertised-listener", spec)
        if name not in names:
            raise BadInput(f"--advertised-listener {spec!r}: no --listener {name}://...")
        told[name] = (host, port)
    return tuple(Listener(name, host or "0.0.0.0", port, *told.get(name, (None, None)))
                 for name, host, port in bound)


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
    host: str = typer.Option(defaults.HOST, rich_help_panel=LISTENER_PANEL, help="Address to bind."),
    port: int = typer.Option(
        defaults.PORT, min=0, max=65535, rich_help_panel=LISTENER_PANEL, help="Port to bind (0: any free port)."),
    data_dir: Optional[Path] = typer.Option(
        None, rich_help_panel=STORAGE_PANEL,
        help="Where partition logs (and, without --zk, the embedded store) are kept. "
        "Without it everything lives in memory."),
    zk: Optional[str] = typer.Option(
        None, envvar="GROUPCTL_ZK", rich_help_panel=STORAGE_PANEL,
        help="ZooKeeper connect string HOST:PORT\\[,HOST:PORT]\\[/chroot] "
        "for group metadata; without it the embedded store is used."),
    node_id: int = typer.Option(
        defaults.NODE_ID, min=0, max=1023, rich_help_panel=STORAGE_PANEL,
        help="This node's broker id (0-1023), unique in the cluster."),
    topic: List[str] = typer.Option(
        [], rich_help_panel=TOPICS_PANEL, help="Create topic NAME:PARTITIONS at start if missing (repeatable)."),
    advertised_host: Optional[str] = typer.Option(
        None, rich_help_panel=LISTENER_PANEL, help="Host clients are told to connect to."),
    min_session_timeout_ms: int = typer.Option(
        defaults.MIN_SESSION_TIMEOUT_MS, rich_help_panel=CLASSIC_PANEL,
        help="Smallest session timeout a member may ask for."),
    max_session_timeout_ms: int = typer.Option(
        defaults.MAX_SESSION_TIMEOUT_MS, rich_help_panel=CLASSIC_PANEL,
        help="Largest session timeout a member may ask for."),
    initial_rebalance_delay_ms: int = typer.Option(
        defaults.INITIAL_REBALANCE_DELAY_MS, rich_help_panel=CLASSIC_PANEL,
        help="How long a group starting from Empty waits for more members (0: no wait)."),
    max_group_size: Optional[int] = typer.Option(
        defaults.MAX_GROUP_SIZE, min=1, metavar="N", rich_help_panel=CLASSIC_PANEL,
        help="Most members a classic group may have: a join past it gets GROUP_MAX_SIZE_REACHED "
        "(Kafka's group.max.size; default: no limit)."),
    consumer_session_timeout_ms: int = typer.Option(
        defaults.CONSUMER_SESSION_TIMEOUT_MS, min=1, rich_help_panel=CONSUMER_PANEL,
        help="Consumer groups (KIP-848): how long a member may go without a heartbeat before it is fenced "
        "(Kafka's group.consumer.session.timeout.ms)."),
    consumer_heartbeat_interval_ms: int = typer.Option(
        defaults.CONSUMER_HEARTBEAT_INTERVAL_MS, min=1, rich_help_panel=CONSUMER_PANEL,
        help="Consumer groups: how often members are told to heartbeat "
        "(Kafka's group.consumer.heartbeat.interval.ms)."),
    consumer_min_session_timeout_ms: int = typer.Option(
        defaults.CONSUMER_MIN_SESSION_TIMEOUT_MS, min=1, rich_help_panel=CONSUMER_PANEL,
        help="Consumer groups: the least consumer.session.timeout.ms a group's own config may set "
        "(Kafka's group.consumer.min.session.timeout.ms)."),
    consumer_max_session_timeout_ms: int = typer.Option(
        defaults.CONSUMER_MAX_SESSION_TIMEOUT_MS, min=1, rich_help_panel=CONSUMER_PANEL,
        help="Consumer groups: the greatest consumer.session.timeout.ms a group's own config may set "
        "(Kafka's group.consumer.max.session.timeout.ms)."),
    consumer_min_heartbeat_interval_ms: int = typer.Option(
        defaults.CONSUMER_MIN_HEARTBEAT_INTERVAL_MS, min=1, rich_help_panel=CONSUMER_PANEL,
        help="Consumer groups: the least consumer.heartbeat.interval.ms a group's own config may set "
        "(Kafka's group.consumer.min.heartbeat.interval.ms)."),
    consumer_max_heartbeat_interval_ms: int = typer.Option(
        defaults.CONSUMER_MAX_HEARTBEAT_INTERVAL_MS, min=1, rich_help_panel=CONSUMER_PANEL,
        help="Consumer groups: the greatest consumer.heartbeat.interval.ms a group's own config may set "
        "(Kafka's group.consumer.max.heartbeat.interval.ms)."),
    consumer_assignors: str = typer.Option(
        ",".join(defaults.CONSUMER_ASSIGNORS), rich_help_panel=CONSUMER_PANEL,
        help="Consumer groups: the server assignors members may ask for, "
        "the first the default (uniform, range)."),
    consumer_max_size: Optional[int] = typer.Option(
        defaults.CONSUMER_MAX_SIZE, min=1, metavar="N", rich_help_panel=CONSUMER_PANEL,
        help="Most members a consumer group may have: a join past it gets GROUP_MAX_SIZE_REACHED "
        "(Kafka's group.consumer.max.size; default: no limit)."),
    consumer_migration_policy: MigrationPolicy = typer.Option(
        defaults.CONSUMER_MIGRATION_POLICY, case_sensitive=False, rich_help_panel=CONSUMER_PANEL,
        help="Online migration between the group protocols: upgrade lets a consumer-protocol member "
        "join a live classic group, downgrade turns a consumer group whose last consumer-protocol member left "
        "back into a classic group "
        "(Kafka's group.consumer.migration.policy)."),
    auto_create_topics: bool = typer.Option(
        defaults.AUTO_CREATE_TOPICS, rich_help_panel=TOPICS_PANEL,
        help="Create unknown topics named in Metadata requests."),
    default_partitions: int = typer.Option(
        defaults.DEFAULT_PARTITIONS, rich_help_panel=TOPICS_PANEL, help="Partitions of auto-created topics."),
    log_retention_check_interval_ms: int = typer.Option(
        defaults.LOG_RETENTION_CHECK_INTERVAL_MS, min=1, rich_help_panel=TOPICS_PANEL,
        help="How often partition logs delete the segments their topic's retention.ms and retention.bytes "
        "expire (Kafka's log.retention.check.interval.ms)."),
    max_frame_bytes: int = typer.Option(
        defaults.MAX_FRAME_BYTES, rich_help_panel=LISTENER_PANEL, help="Largest request accepted, in bytes."),
    zk_session_timeout_s: float = typer.Option(
        defaults.ZK_SESSION_TIMEOUT_S, rich_help_panel=STORAGE_PANEL,
        help="ZooKeeper session timeout, in seconds: how long a dead node keeps its groups before another "
        "node takes them over."),
    group_partitions: int = typer.Option(
        defaults.GROUP_PARTITIONS, min=1, max=MAX_GROUP_PARTITIONS, rich_help_panel=STORAGE_PANEL,
        help="Group partitions of a new cluster (the first node's choice stands)."),
    handback_delay_s: float = typer.Option(
        defaults.HANDBACK_DELAY_S, min=0.0, rich_help_panel=STORAGE_PANEL,
        help="Seconds a (re)started node must be live before other nodes hand its preferred group partitions back."),
    journal_dir: Optional[Path] = typer.Option(
        None, rich_help_panel=JOURNAL_PANEL,
        help="Where to write the event journal (rebalances, joins, leaves, commits; JSON Lines). "
        "Default: DATA_DIR/journal; no journal without either."),
    journal_segment_bytes: int = typer.Option(
        defaults.JOURNAL_SEGMENT_BYTES, min=1, rich_help_panel=JOURNAL_PANEL,
        help="Start a new journal file when the current one reaches this size (bytes)."),
    journal_keep_segments: int = typer.Option(
        defaults.JOURNAL_KEEP_SEGMENTS, min=0, rich_help_panel=JOURNAL_PANEL,
        help="Journal files kept, the current one included; the oldest go first (0: keep all)."),
    log_level: str = typer.Option(defaults.LOG_LEVEL, help="debug, info, warning or error."),
    metrics_port: Optional[int] = typer.Option(
        None, min=0, max=65535, rich_help_panel=METRICS_PANEL,
        help="Serve Prometheus metrics at http://METRICS_HOST:PORT/metrics (0: any free port, shown when "
        "ready). Default: no metrics."),
    metrics_host: str = typer.Option(
        "127.0.0.1", rich_help_panel=METRICS_PANEL, help="The address the metrics endpoint binds."),
    metrics_per_group: bool = typer.Option(
        True, "--metrics-per-group/--no-metrics-per-group", rich_help_panel=METRICS_PANEL,
        help="Series per group (members, epochs, rebalances, commits); off: totals only, for nodes with very "
        "many groups."),
    listener: List[str] = typer.Option(
        [], metavar="PROTOCOL://HOST:PORT", rich_help_panel=SECURITY_PANEL,
        help="Open this listener (repeatable; PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL). Given, only the "
        "listed listeners open, replacing --host/--port."),
    advertised_listener: List[str] = typer.Option(
        [], metavar="PROTOCOL://HOST:PORT", rich_help_panel=SECURITY_PANEL,
        help="Where clients of that listener are told to connect (repeatable; default: its bound address)."),
    ssl_certfile: Optional[Path] = typer.Option(
        None, rich_help_panel=SECURITY_PANEL, help="PEM certificate (chain) of TLS listeners."),
    ssl_keyfile: Optional[Path] = typer.Option(
        None, rich_help_panel=SECURITY_PANEL, help="PEM private key of --ssl-certfile (default: in that file)."),
    ssl_cafile: Optional[Path] = typer.Option(
        None, rich_help_panel=SECURITY_PANEL, help="PEM CA certificates client certificates must chain to."),
    ssl_client_auth: ClientAuth = typer.Option(
        ClientAuth.none.value, case_sensitive=False, rich_help_panel=SECURITY_PANEL,
        help="Ask TLS clients for a certificate: required, requested or none (Kafka's ssl.client.auth)."),
    sasl_enabled_mechanisms: str = typer.Option(
        ",".join(defaults.SASL_ENABLED_MECHANISMS), rich_help_panel=SECURITY_PANEL,
        help="SASL mechanisms of SASL listeners, comma-separated."),
    authorizer: bool = typer.Option(
        False, "--authorizer", rich_help_panel=SECURITY_PANEL,
        help="Enforce ACLs (without it the ACL APIs answer SECURITY_DISABLED, as Kafka does)."),
    super_user: List[str] = typer.Option(
        [], metavar="User:NAME", rich_help_panel=SECURITY_PANEL,
        help="A principal allowed everything (repeatable; Kafka's super.users)."),
    allow_everyone_if_no_acl_found: bool = typer.Option(
        False, "--allow-everyone-if-no-acl-found", rich_help_panel=SECURITY_PANEL,
        help="With --authorizer, allow access to resources no ACL names (Kafka's allow.everyone.if.no.acl.found)."),
    inter_node_listener: Optional[str] = typer.Option(
        None, metavar="NAME", rich_help_panel=SECURITY_PANEL,
        help="The listener this node reaches the other nodes on, for transaction markers (Kafka's "
        "inter.broker.listener.name; default: the first listener)."),
    inter_node_config: Optional[Path] = typer.Option(
        None, metavar="FILE", rich_help_panel=SECURITY_PANEL,
        help="Kafka client properties of the connections to the other nodes (as --command-config: TLS trust, "
        "SASL credentials of a principal with ClusterAction)."),
    zk_auth: Optional[str] = typer.Option(
        None, envvar="GROUPCTL_ZK_AUTH", show_envvar=False, rich_help_panel=SECURITY_PANEL,
        metavar="digest:USER:PASSWORD|@FILE",
        help="ZooKeeper authentication; every znode created then carries digest ACLs (env GROUPCTL_ZK_AUTH)."),
    zk_world_readable: bool = typer.Option(
        False, "--zk-world-readable", rich_help_panel=SECURITY_PANEL,
        help="With --zk-auth, let anyone read (never write) the znodes groupctl creates."),
) -> None:
    """Start an embedded coordinator that Kafka clients can use for groups, producing and consuming."""
    # `groupctl --zk X coordinator run` means the same as `run --zk X`; so does `--context C`.
    zk = zk or env(ctx).for_server("zk")
    zk_auth = zk_auth or env(ctx).for_server("zk_auth")
    if zk_auth:
        from groupctl.store.zk_auth import BadZkAuth, parse_zk_auth

        try:
            parse_zk_auth(zk_auth)
        except BadZkAuth as exc:
            raise BadInput(str(exc)) from None
        if not zk:
            raise BadInput("--zk-auth needs --zk (the embedded store has no ZooKeeper to authenticate to)")
    if zk_world_readable and not zk_auth:
        raise BadInput("--zk-world-readable needs --zk-auth")
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

    listeners = parse_listeners(listener, advertised_listener)
    mechanisms = tuple(name.strip().upper() for name in sasl_enabled_mechanisms.split(",") if name.strip())
    unknown = [name for name in mechanisms if name not in defaults.SASL_ENABLED_MECHANISMS]
    if not mechanisms or unknown:
        raise BadInput(f"--sasl-enabled-mechanisms {sasl_enabled_mechanisms!r}: expected a list of "
                       f"{', '.join(defaults.SASL_ENABLED_MECHANISMS)}")
    if any(item.tls for item in listeners) and ssl_certfile is None:
        raise BadInput("an SSL or SASL_SSL listener needs --ssl-certfile")
    if ssl_client_auth is not ClientAuth.none and ssl_cafile is None:
        raise BadInput(f"--ssl-client-auth {ssl_client_auth.value} needs --ssl-cafile")
    names = [item.name for item in listeners] or ["PLAINTEXT"]
    if inter_node_listener is not None and inter_node_listener.upper() not in names:
        raise BadInput(f"--inter-node-listener {inter_node_listener!r}: expected one of the node's listeners "
                       f"({', '.join(names)})")
    if inter_node_config is not None:
        from groupctl.client.security import load_security

        if not inter_node_config.is_file():
            raise BadInput(f"--inter-node-config {inter_node_config}: no such file")
        load_security(inter_node_config, os.environ)  # a bad property is one error line now, not a failed start
    for principal in super_user:
        if not PRINCIPAL.match(principal):
            raise BadInput(f"--super-user {principal!r}: expected a principal such as User:admin")
    config = NodeConfig(
        host=host, port=port, node_id=node_id, advertised_host=advertised_host, data_dir=data_dir,
        zk=zk, zk_session_timeout_s=zk_session_timeout_s, topics=topics,
        group_partitions=group_partitions, handback_delay_s=handback_delay_s,
        auto_create_topics=auto_create_topics, default_partitions=default_partitions,
        log_retention_check_interval_ms=log_retention_check_interval_ms,
        max_frame_bytes=max_frame_bytes, journal_dir=journal_dir,
        journal_segment_bytes=journal_segment_bytes, journal_keep_segments=journal_keep_segments,
        listeners=listeners, ssl_certfile=ssl_certfile, ssl_keyfile=ssl_keyfile, ssl_cafile=ssl_cafile,
        ssl_client_auth=ssl_client_auth.value, sasl_enabled_mechanisms=mechanisms, authorizer=authorizer,
        super_users=tuple(super_user), allow_everyone_if_no_acl_found=allow_everyone_if_no_acl_found,
        zk_auth=zk_auth, zk_world_readable=zk_world_readable,
        metrics_port=metrics_port, metrics_host=metrics_host, metrics_per_group=metrics_per_group,
        inter_node_listener=inter_node_listener.upper() if inter_node_listener else None,
        inter_node_config=inter_node_config,
        groups=GroupConfig(
            min_session_timeout_ms=min_session_timeout_ms,
            max_session_timeout_ms=max_session_timeout_ms,
            initial_rebalance_delay_ms=initial_rebalance_delay_ms,
            max_group_size=max_group_size,
        ),
        consumer_groups=ConsumerGroupConfig(
            session_timeout_ms=consumer_session_timeout_ms, heartbeat_interval_ms=consumer_heartbeat_interval_ms,
            min_session_timeout_ms=consumer_min_session_timeout_ms,
            max_session_timeout_ms=consumer_max_session_timeout_ms,
            min_heartbeat_interval_ms=consumer_min_heartbeat_interval_ms,
            max_heartbeat_interval_ms=consumer_max_heartbeat_interval_ms,
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

        answers["bootstrap"] = find_coordinator(current.need_bootstrap(), group).to_json()
    if current.zk:
        from groupctl.ops.zk import coordinator_from_zk

        answers["zk"] = coordinator_from_zk(current.zk, group, auth=current.zk_auth,
                                            timeout_s=current.timeout_s).to_json()
    # Node ids only: FindCoordinator answers the address of the listener it was asked on, while
    # ZooKeeper's registration leads with the node's first listener.
    node = {source: (a["node_id"], a["host"], a["port"]) for source, a in answers.items()}
    if len({node_id for node_id, _, _ in node.values()}) > 1:
        raise CliError("the coordinator from FindCoordinator ({bootstrap}) and from ZooKeeper ({zk}) disagree"
                       .format(**{k: f"node {n} at {h}:{p}" for k, (n, h, p) in node.items()}))
    found = {**answers.get("zk", {}), **answers.get("bootstrap", {})}
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
        cluster = cluster_status(connect, auth=current.zk_auth, timeout_s=current.timeout_s)
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
