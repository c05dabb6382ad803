"""Every default of `groupctl coordinator run`, in one place.

The node's configuration (`groupctl.server.config.NodeConfig`), the classic groups' settings
(`groupctl.coordinator.classic.config.GroupConfig`), the modules that own a setting (group
placement, framing, the journal), the CLI's options and docs/configuration.md's option table all
read these; tests/test_docs.py keeps that table equal to the CLI's options. A module of constants with no
imports, so that the CLI can read it without loading the coordinator.
"""

HOST = "127.0.0.1"
PORT = 9092
NODE_ID = 0
MIN_SESSION_TIMEOUT_MS = 6_000  # group.min.session.timeout.ms
MAX_SESSION_TIMEOUT_MS = 1_800_000  # group.max.session.timeout.ms
INITIAL_REBALANCE_DELAY_MS = 3_000  # group.initial.rebalance.delay.ms (0 is handy in tests)
MAX_GROUP_SIZE = None  # group.max.size: members a classic group may have; None: no limit
CONSUMER_SESSION_TIMEOUT_MS = 45_000  # group.consumer.session.timeout.ms
CONSUMER_HEARTBEAT_INTERVAL_MS = 5_000  # group.consumer.heartbeat.interval.ms
CONSUMER_MIN_SESSION_TIMEOUT_MS = 45_000  # group.consumer.min.session.timeout.ms: a group's least consumer.session.timeout.ms
CONSUMER_MAX_SESSION_TIMEOUT_MS = 60_000  # group.consumer.max.session.timeout.ms
CONSUMER_MIN_HEARTBEAT_INTERVAL_MS = 5_000  # group.consumer.min.heartbeat.interval.ms
CONSUMER_MAX_HEARTBEAT_INTERVAL_MS = 15_000  # group.consumer.max.heartbeat.interval.ms
CONSUMER_ASSIGNORS = ("uniform", "range")  # group.consumer.assignors: the first is the default
CONSUMER_MIGRATION_POLICY = "bidirectional"  # group.consumer.migration.policy: bidirectional|upgrade|downgrade|disabled
CONSUMER_MAX_SIZE = None  # group.consumer.max.size: members a consumer group may have; None: no limit
AUTO_CREATE_TOPICS = True
DEFAULT_PARTITIONS = 1  # partitions of an auto-created topic
MAX_FRAME_BYTES = 100 * 1024 * 1024  # the largest request accepted
ZK_SESSION_TIMEOUT_S = 6.0  # how long a dead node keeps its group partitions
GROUP_PARTITIONS = 50  # group partitions of a new cluster (Kafka's offsets.topic.num.partitions)
HANDBACK_DELAY_S = 10.0  # how long a (re)started node is live before its partitions come back
LOG_RETENTION_CHECK_INTERVAL_MS = 300_000  # Kafka's log.retention.check.interval.ms
JOURNAL_SEGMENT_BYTES = 64 * 1024 * 1024  # a new journal file at this size
JOURNAL_KEEP_SEGMENTS = 16  # journal files kept, the active one included; 0: all
LOG_LEVEL = "info"
SASL_ENABLED_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")  # sasl.enabled.mechanisms
SCRAM_ITERATIONS = 4096  # Kafka's default iteration count for SCRAM credentials
