"""The node's configuration, as `groupctl coordinator run` options set it (defaults:
`groupctl.defaults`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from groupctl import defaults
from groupctl.coordinator.classic.config import GroupConfig
from groupctl.coordinator.consumer.config import ConsumerGroupConfig
from groupctl.security.protocols import uses_sasl, uses_tls


@dataclass(frozen=True)
class Listener:
    """One listener: `SASL_SSL://host:port`. The name is its security protocol (Kafka's default
    listener.security.protocol.map); the advertised address defaults to the bound one."""

    protocol: str  # PLAINTEXT | SSL | SASL_PLAINTEXT | SASL_SSL
    host: str
    port: int
    advertised_host: Optional[str] = None
    advertised_port: Optional[int] = None

    @property
    def name(self) -> str:
        return self.protocol

    @property
    def tls(self) -> bool:
        return uses_tls(self.protocol)

    @property
    def sasl(self) -> bool:
        return uses_sasl(self.protocol)


@dataclass(frozen=True)
class NodeConfig:
    host: str = defaults.HOST
    port: int = defaults.PORT
    node_id: int = defaults.NODE_ID
    advertised_host: Optional[str] = None  # default: host (127.0.0.1 when host is a wildcard)
    advertised_port: Optional[int] = None  # default: the bound port
    data_dir: Optional[Path] = None  # None: logs and embedded store live in memory only
    zk: Optional[str] = None  # ZooKeeper connect string with optional chroot
    zk_session_timeout_s: float = defaults.ZK_SESSION_TIMEOUT_S  # how long a dead node keeps its group partitions
    group_partitions: int = defaults.GROUP_PARTITIONS  # the first node of a cluster fixes it
    handback_delay_s: float = defaults.HANDBACK_DELAY_S  # a (re)started node gets its partitions back after this
    topics: tuple[tuple[str, int], ...] = ()  # created at start when missing
    auto_create_topics: bool = defaults.AUTO_CREATE_TOPICS
    default_partitions: int = defaults.DEFAULT_PARTITIONS
    log_retention_check_interval_ms: int = defaults.LOG_RETENTION_CHECK_INTERVAL_MS  # how often retention runs
    max_frame_bytes: int = defaults.MAX_FRAME_BYTES
    cluster_id: str = "groupctl"
    groups: GroupConfig = field(default_factory=GroupConfig)
    consumer_groups: ConsumerGroupConfig = field(default_factory=ConsumerGroupConfig)
    journal_dir: Optional[Path] = None  # the event journal; default: data_dir/journal (none without a data dir)
    journal_segment_bytes: int = defaults.JOURNAL_SEGMENT_BYTES  # rotate the active segment at this size
    journal_keep_segments: int = defaults.JOURNAL_KEEP_SEGMENTS  # segments kept, the active one included; 0: all
    # Security (docs/security.md). Listeners beyond the default PLAINTEXT host:port; TLS material.
    listeners: tuple["Listener", ...] = ()  # empty: one PLAINTEXT listener on host:port
    ssl_certfile: Optional[Path] = None
    ssl_keyfile: Optional[Path] = None
    ssl_cafile: Optional[Path] = None  # CAs that client certificates must chain to
    ssl_client_auth: str = "none"  # required | requested | none
    sasl_enabled_mechanisms: tuple[str, ...] = defaults.SASL_ENABLED_MECHANISMS
    # Between nodes (transaction markers, their verification): the listener peers are reached on
    # (None: the first) and the Kafka client properties of the connection (None: none).
    inter_node_listener: Optional[str] = None
    inter_node_config: Optional[Path] = None
    # Authorization: Kafka's ACLs, off unless asked (then the ACL APIs answer SECURITY_DISABLED).
    authorizer: bool = False
    super_users: tuple[str, ...] = ()  # principals such as "User:admin", allowed everything
    allow_everyone_if_no_acl_found: bool = False  # Kafka's allow.everyone.if.no.acl.found
    # ZooKeeper authentication: "digest:USER:PASSWORD"; every znode created then carries digest ACLs.
    zk_auth: Optional[str] = field(default=None, repr=False)
    zk_world_readable: bool = False  # with zk_auth: world may read (never write) groupctl's znodes
    # Prometheus metrics at http://metrics_host:metrics_port/metrics (None: not served; 0: any free port).
    metrics_port: Optional[int] = None
    metrics_host: str = "127.0.0.1"
    metrics_per_group: bool = True  # False: no series per group, aggregates only (very large nodes)

    def journal_path(self) -> Optional[Path]:
        """Where the event journal is written: `journal_dir`, else `data_dir/journal`, else none."""
        if self.journal_dir is not None:
            return self.journal_dir
        return self.data_dir / "journal" if self.data_dir is not None else None

    def all_listeners(self) -> tuple[Listener, ...]:
        """The listeners to open, in order: `listeners`, else PLAINTEXT on host:port."""
        return self.listeners or (Listener("PLAINTEXT", self.host, self.port, self.advertised_host,
                                           self.advertised_port),)

    def advertised(self, bound_port: int, listener: Optional[Listener] = None) -> tuple[str, int]:
        """Where clients are told to reach `listener` (default: the first) bound at `bound_port`."""
        listener = listener or self.all_listeners()[0]
        host = listener.advertised_host or listener.host
        if host in ("0.0.0.0", "::", ""):
            host = "127.0.0.1"
        return host, listener.advertised_port or bound_port
