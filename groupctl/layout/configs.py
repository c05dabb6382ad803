"""Dynamic configs of topics, brokers and groups, in Apache Kafka's ZooKeeper format (its
`ConfigEntityZNode`):

    /config/topics/<topic>          {"version":1,"config":{"retention.ms":"3600000"}}
    /config/brokers/<node-id>       {"version":1,"config":{"log.retention.ms":"..."}}
    /config/brokers/<default>       the cluster-wide dynamic broker defaults
    /config/groups/<group>          {"version":1,"config":{"consumer.session.timeout.ms":"30000"}}

Written by a node answering AlterConfigs, IncrementalAlterConfigs or CreateTopics (with configs);
read by every node (`groupctl.server.dynamic_configs` watches them). Topic and broker documents
are where and what Kafka (ZooKeeper mode) keeps; Kafka 4 keeps GROUP configs in KRaft metadata
only, so `/config/groups` is groupctl's choice, in the same format beside them.

Invariants: values are strings, as Kafka stores them; a document left with no entry is deleted,
not kept empty; empty data reads as no config, as Kafka reads a node without data.
"""

from __future__ import annotations

from typing import Mapping, Optional

from groupctl.layout.codec import LayoutError, encode, read

VERSION = 1


def encode_config(config: Mapping[str, str]) -> bytes:
    return encode({"version": VERSION, "config": dict(sorted(config.items()))})


def decode_config(path: str, data: Optional[bytes]) -> dict[str, str]:
    """The config entries of the document at `path` ({} for empty data)."""
    if not data:
        return {}
    config = read(path, data, VERSION).get("config", {})
    if not isinstance(config, dict) or not all(isinstance(v, str) for v in config.values()):
        raise LayoutError(path, '"config" must be an object of strings')
    return config
