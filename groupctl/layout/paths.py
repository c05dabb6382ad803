"""Where each stored document lives (docs/zookeeper-layout.md), under the connect string's chroot.

Names: Kafka group ids may contain '/' and other characters a znode name cannot hold, so group
and topic components are percent-encoded (`urllib.parse.quote(name, safe="")`; ordinary names
such as `orders-v2.eu_1` are unchanged). "", "." and ".." cannot be znode names and are stored
as "%", "%2E" and "%2E%2E". Legacy Kafka 0.8 paths (`/consumers/<group>`) hold the raw name, as
Kafka 0.8 wrote them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional
from urllib.parse import quote, unquote

GROUPS = "/groups"
"""`/groups/<group>`: the group document; `/groups/<group>/offsets/<topic>`: its offsets;
`/groups/<group>/pending-offsets/<producer id>`: a producer's transactional offsets, pending."""
OFFSETS = "offsets"
PENDING_OFFSETS = "pending-offsets"
TOPICS = "/brokers/topics"
"""`/brokers/topics/<topic>`: the topic document."""
BROKER_IDS = "/brokers/ids"
"""`/brokers/ids/<node-id>`: a live node's ephemeral registration."""
COORDINATORS = "/coordinators"
COORDINATORS_CONFIG = "/coordinators/config"
"""The cluster's configuration, written once by its first node."""
COORDINATOR_PARTITIONS = "/coordinators/partitions"
"""`/coordinators/partitions/<p>`: the last election of group partition p; its ephemeral child
`leader` exists while the elected node leads p."""
REBALANCE_REQUESTS = "/coordinators/rebalance-requests"
"""`/coordinators/rebalance-requests/<group>`: created by `groupctl rebalance trigger --zk`,
deleted by the group's coordinator once it has started the rebalance."""
USERS = "/config/users"
"""`/config/users/<user>`: a user's SCRAM credentials, in Kafka's own format and place."""
CONFIG_TOPICS = "/config/topics"
"""`/config/topics/<topic>`: a topic's dynamic configs, in Kafka's own format and place."""
CONFIG_BROKERS = "/config/brokers"
"""`/config/brokers/<node-id>` and `/config/brokers/<default>`: dynamic broker configs, as Kafka's."""
DEFAULT_CONFIG_ENTITY = "<default>"
"""`/config/brokers/<default>`: the cluster-wide dynamic broker defaults (Kafka's name)."""
CONFIG_GROUPS = "/config/groups"
"""`/config/groups/<group>`: a group's configs (Kafka 4 keeps them in KRaft metadata only)."""
TRANSACTIONS = "/transactions"
"""`/transactions/<transactional-id>`: a transactional id's state, written by its coordinator."""
LEGACY_CONSUMERS = "/consumers"
"""Kafka 0.8's `/consumers/<group>/{ids,owners,offsets}`, read by the tools only."""

_SPECIAL = {"": "%", ".": "%2E", "..": "%2E%2E"}
_SPECIAL_BACK = {v: k for k, v in _SPECIAL.items()}


def _encode_name(name: str) -> str:
    return _SPECIAL.get(name) or quote(name, safe="")


_cached_encode_name = lru_cache(maxsize=1 << 14)(_encode_name)
CACHED_NAME_CHARS = 255
"""Only names this short are cached: group ids come from clients and may be 32767 bytes long
(their encoding up to 9 times that); 16,384 of those would hold gigabytes."""


def encode_name(name: str) -> str:
    """A group or topic name as one znode name component."""
    if len(name) > CACHED_NAME_CHARS:
        return _encode_name(name)
    return _cached_encode_name(name)


def decode_name(component: str) -> str:
    return _SPECIAL_BACK[component] if component in _SPECIAL_BACK else unquote(component)


def group_path(group: str) -> str:
    return f"{GROUPS}/{encode_name(group)}"


def offsets_path(group: str) -> str:
    return f"{group_path(group)}/{OFFSETS}"


def offset_topic_path(group: str, topic: str) -> str:
    return f"{offsets_path(group)}/{encode_name(topic)}"


def pending_offsets_path(group: str) -> str:
    return f"{group_path(group)}/{PENDING_OFFSETS}"


def pending_producer_path(group: str, producer_id: int) -> str:
    return f"{pending_offsets_path(group)}/{producer_id}"


def topic_path(topic: str) -> str:
    return f"{TOPICS}/{encode_name(topic)}"


def transaction_path(transactional_id: str) -> str:
    return f"{TRANSACTIONS}/{encode_name(transactional_id)}"


def broker_path(node_id: int) -> str:
    return f"{BROKER_IDS}/{node_id}"


def partition_path(partition: int) -> str:
    return f"{COORDINATOR_PARTITIONS}/{partition}"


def leader_path(partition: int) -> str:
    return f"{COORDINATOR_PARTITIONS}/{partition}/leader"


def rebalance_request_path(group: str) -> str:
    return f"{REBALANCE_REQUESTS}/{encode_name(group)}"


def user_path(user: str) -> str:
    """Where a user's credentials live. The name is encoded as `encode_name` does, except that
    '~' becomes "%7E": that is Kafka's `Sanitizer.sanitize` (Java's URLEncoder), so Kafka's
    tools and groupctl name the same znode. `decode_name` reads such a component back."""
    return f"{USERS}/{encode_name(user).replace('~', '%7E')}"


def config_path(parent: str, name: str) -> str:
    """Where the dynamic configs of a topic, broker or group (`parent`: CONFIG_TOPICS, ...) live.
    The name is encoded as `user_path` encodes a user's: Kafka's `Sanitizer.sanitize`, so Kafka's
    tools and groupctl name the same znode (legal topic names and node ids are unchanged), except
    the broker defaults' `<default>`, which Kafka writes as it is."""
    if parent == CONFIG_BROKERS and name == DEFAULT_CONFIG_ENTITY:
        return f"{parent}/{name}"
    return f"{parent}/{encode_name(name).replace('~', '%7E')}"


def legacy_group_path(group: str) -> Optional[str]:
    """`/consumers/<group>` as Kafka 0.8 named it; None for names 0.8 could not have stored."""
    if group in ("", ".", "..") or "/" in group or "\0" in group:
        return None
    return f"{LEGACY_CONSUMERS}/{group}"
