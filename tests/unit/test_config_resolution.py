"""What a resource's configs resolve to (`groupctl.configs.resolve`): Kafka's precedence, the
LogConfig a topic's logs get, and the checks an alteration passes."""

from __future__ import annotations

import pytest

from groupctl.configs.catalog import InvalidConfig, ResourceType, Source
from groupctl.configs.resolve import DEFAULT_BROKER, StoredConfigs, broker_entries, checked, log_config, topic_entries
from groupctl.coordinator.consumer.config import ConsumerGroupConfig
from groupctl.log.config import LOG_APPEND_TIME, LogConfig
from groupctl.server.config import NodeConfig

NODE = NodeConfig(node_id=3)


def test_a_topic_without_configs_gets_the_logs_defaults():
    assert log_config(NODE, StoredConfigs(), "orders") == LogConfig()


def test_a_topics_own_value_beats_this_brokers_which_beats_the_cluster_default():
    stored = StoredConfigs(topics={"orders": {"segment.bytes": "1048576"}},
                           brokers={"3": {"log.retention.ms": "60000"},
                                    DEFAULT_BROKER: {"log.retention.ms": "1", "log.message.timestamp.type": LOG_APPEND_TIME}})
    config = log_config(NODE, stored, "orders")
    assert (config.segment_bytes, config.retention_ms, config.message_timestamp_type) == (
        1_048_576, 60_000, LOG_APPEND_TIME)
    retention = next(e for e in topic_entries(NODE, stored, "orders") if e.name == "retention.ms")
    assert [(s.name, s.value, s.source) for s in retention.synonyms] == [
        ("log.retention.ms", "60000", Source.DYNAMIC_BROKER_CONFIG),
        ("log.retention.ms", "1", Source.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ("log.retention.hours", "168", Source.DEFAULT_CONFIG)]


def test_synonyms_carry_their_own_values_in_their_own_units_as_kafkas_config_helper_lists_them():
    entry = {e.name: e for e in topic_entries(NODE, StoredConfigs(), "orders")}
    retention = entry["retention.ms"]  # Kafka drops the synonyms ahead of log.retention.ms: none is left
    assert (retention.value, retention.source, retention.synonyms) == ("604800000", Source.DEFAULT_CONFIG, ())
    assert [(s.name, s.value) for s in entry["segment.bytes"].synonyms] == [("log.segment.bytes", "67108864")]
    stored = StoredConfigs(brokers={DEFAULT_BROKER: {"log.roll.ms": "3600000"}})
    segment = {e.name: e for e in topic_entries(NODE, stored, "orders")}["segment.ms"]
    assert (segment.value, segment.source) == ("3600000", Source.DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert [(s.name, s.value, s.source) for s in segment.synonyms] == [
        ("log.roll.ms", "3600000", Source.DYNAMIC_DEFAULT_BROKER_CONFIG), ("log.roll.hours", "168", Source.DEFAULT_CONFIG)]
    brokers = {e.name: e for e in broker_entries(NODE, StoredConfigs(brokers={"3": {"log.retention.ms": "60000"}}))}
    assert [(s.name, s.value, s.source) for s in brokers["log.retention.ms"].synonyms] == [
        ("log.retention.ms", "60000", Source.DYNAMIC_BROKER_CONFIG), ("log.retention.hours", "168", Source.DEFAULT_CONFIG)]
    hours = brokers["log.retention.hours"]
    assert (hours.value, hours.source, [(s.name, s.value) for s in hours.synonyms]) == (
        "168", Source.DEFAULT_CONFIG, [("log.retention.hours", "168")])
    minutes = brokers["log.retention.minutes"]
    assert (minutes.value, minutes.source, minutes.synonyms) == (None, Source.DEFAULT_CONFIG, ())


def test_another_brokers_dynamic_config_does_not_count_here():
    stored = StoredConfigs(brokers={"4": {"log.retention.bytes": "10"}})
    assert log_config(NODE, stored, "orders").retention_bytes == -1


def test_values_are_stored_in_canonical_text_and_bad_ones_name_the_key():
    assert checked(NODE, ResourceType.TOPIC, {"retention.ms": " 60000 ", "cleanup.policy": "delete"}) == {
        "retention.ms": "60000", "cleanup.policy": "delete"}
    with pytest.raises(InvalidConfig, match="Invalid value 0 for configuration segment.ms: Value must be at least 1"):
        checked(NODE, ResourceType.TOPIC, {"segment.ms": "0"})
    with pytest.raises(InvalidConfig, match="String must be one of: CreateTime, LogAppendTime"):
        checked(NODE, ResourceType.TOPIC, {"message.timestamp.type": "Now"})
    with pytest.raises(InvalidConfig, match="only 'delete' is supported"):
        checked(NODE, ResourceType.BROKER, {"log.cleanup.policy": "delete,compact"})
    with pytest.raises(InvalidConfig, match="Cannot update these configs dynamically: broker.id"):
        checked(NODE, ResourceType.BROKER, {"broker.id": "4"})


def test_every_topic_key_is_writable_and_checked_as_kafkas_log_config_checks_it():
    assert checked(NODE, ResourceType.TOPIC, {"compression.type": "lz4", "min.insync.replicas": "2",
                                              "unclean.leader.election.enable": "TRUE"}) == {
        "compression.type": "lz4", "min.insync.replicas": "2", "unclean.leader.election.enable": "true"}
    with pytest.raises(InvalidConfig, match="compression.type: String must be one of: uncompressed, zstd, lz4"):
        checked(NODE, ResourceType.TOPIC, {"compression.type": "brotli"})
    with pytest.raises(InvalidConfig, match="min.insync.replicas: Value must be at least 1"):
        checked(NODE, ResourceType.TOPIC, {"min.insync.replicas": "0"})
    with pytest.raises(InvalidConfig, match="min.cleanable.dirty.ratio: Value must be no more than 1"):
        checked(NODE, ResourceType.TOPIC, {"min.cleanable.dirty.ratio": "1.5"})
    with pytest.raises(InvalidConfig, match="Tiered Storage functionality is disabled in the broker"):
        checked(NODE, ResourceType.TOPIC, {"remote.storage.enable": "true"})


def test_a_groups_session_must_exceed_its_heartbeat_interval_within_the_brokers_bounds():
    node = NodeConfig(consumer_groups=ConsumerGroupConfig(min_session_timeout_ms=1000, min_heartbeat_interval_ms=1000))
    assert checked(node, ResourceType.GROUP, {"consumer.session.timeout.ms": "2000"},
                   context={"consumer.heartbeat.interval.ms": "1000"}) == {"consumer.session.timeout.ms": "2000"}
    with pytest.raises(InvalidConfig, match="consumer.session.timeout.ms must be greater than "
                                            "consumer.heartbeat.interval.ms"):
        checked(node, ResourceType.GROUP, {"consumer.session.timeout.ms": "2000"},
                context={"consumer.heartbeat.interval.ms": "2000"})
    with pytest.raises(InvalidConfig, match="must be less than or equal to group.consumer.max.heartbeat.interval.ms"):
        checked(node, ResourceType.GROUP, {"consumer.heartbeat.interval.ms": "16000"})
