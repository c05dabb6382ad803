"""DescribeConfigs and ListConfigResources with real clients as the judges: confluent-kafka's
AdminClient (v1) and kafka-python's KafkaAdminClient (v4, synonyms, documentation)."""

from __future__ import annotations

import pytest
from confluent_kafka import admin as confluent
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic
from kafka.protocol.admin import DescribeConfigsRequest, ListConfigResourcesRequest

from groupctl.coordinator.consumer.config import ConsumerGroupConfig
from groupctl.security.acls import AccessControlEntry, AclBinding, Operation, Permission, ResourcePattern
from groupctl.security.acls import ResourceType as Resource
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.wire import exchange

TOPIC, BROKER, GROUP = ConfigResourceType.TOPIC, ConfigResourceType.BROKER, ConfigResourceType.GROUP


@pytest.fixture
def node():
    started = InProcessCoordinator(node_config(
        consumer_groups=ConsumerGroupConfig(session_timeout_ms=30_000, min_session_timeout_ms=10_000))).start()
    yield started
    started.stop()


@pytest.fixture
def admin(node):
    client = KafkaAdminClient(bootstrap_servers=node.bootstrap, request_timeout_ms=10_000)
    client.create_topics([NewTopic("orders", 2, 1)])
    yield client
    client.close()


def describe(admin, *resources, **options):
    return admin.describe_configs([ConfigResource(kind, name) for kind, name in resources], **options)


def test_a_topic_is_described_with_kafkas_keys_defaults_synonyms_and_types(admin):
    configs = describe(admin, (TOPIC, "orders"), include_synonyms=True,
                       config_filter="all")["topic"]["orders"]
    retention = configs["retention.ms"]
    assert retention["value"] == "604800000"
    assert retention["config_source"] == "DEFAULT_CONFIG" and retention["config_type"] == "LONG"
    assert retention["synonyms"] == []  # Kafka lists none ahead of log.retention.ms, which has no default
    assert configs["segment.bytes"]["synonyms"] == [{"name": "log.segment.bytes", "value": "67108864",
                                                     "source": "DEFAULT_CONFIG"}]
    assert retention["read_only"] is False
    assert configs["cleanup.policy"]["value"] == "delete" and configs["cleanup.policy"]["config_type"] == "LIST"
    assert configs["compression.type"]["read_only"] is False  # writable as in Kafka, though the logs ignore it
    assert {"segment.bytes", "segment.ms", "retention.bytes", "max.message.bytes",
            "message.timestamp.type"} <= configs.keys()


def test_the_default_filter_of_kafka_python_hides_defaults_so_an_unaltered_topic_shows_nothing(admin):
    assert describe(admin, (TOPIC, "orders"))["topic"]["orders"] == {}


def test_this_broker_reports_its_options_under_kafka_names_as_static_configs(admin, node):
    configs = describe(admin, (BROKER, str(node.node.config.node_id)), config_filter="all")["broker"]["0"]
    assert configs["group.consumer.session.timeout.ms"]["value"] == "30000"
    assert configs["group.consumer.session.timeout.ms"]["config_source"] == "STATIC_BROKER_CONFIG"
    assert configs["group.consumer.min.session.timeout.ms"]["value"] == "10000"
    assert configs["group.consumer.max.heartbeat.interval.ms"]["value"] == "15000"
    assert configs["group.consumer.heartbeat.interval.ms"]["config_source"] == "DEFAULT_CONFIG"
    assert configs["broker.id"]["read_only"] is True
    assert configs["log.retention.ms"]["read_only"] is False  # a dynamic broker config in Kafka


def test_a_group_that_set_nothing_has_the_brokers_consumer_timeouts_as_defaults(admin):
    configs = describe(admin, (GROUP, "billing"), config_filter="all")["group"]["billing"]
    assert configs["consumer.session.timeout.ms"]["value"] == "30000"
    assert configs["consumer.session.timeout.ms"]["config_source"] == "DEFAULT_CONFIG"
    assert configs["consumer.heartbeat.interval.ms"]["value"] == "5000"


def test_configuration_keys_limit_the_entries(admin, node):
    result = _describe(node, TOPIC, "orders", keys=["retention.ms", "no.such.key"])
    assert [(c.name, c.value) for c in result.configs] == [("retention.ms", "604800000")]
    assert "kept after its newest record" in result.configs[0].documentation  # v3+ with include_documentation


def test_confluent_describes_topic_broker_and_group_resources(admin, node):
    client = confluent.AdminClient({"bootstrap.servers": node.bootstrap})
    resources = [confluent.ConfigResource(confluent.ResourceType.TOPIC, "orders"),
                 confluent.ConfigResource(confluent.ResourceType.BROKER, "0"),
                 confluent.ConfigResource(confluent.ResourceType.GROUP, "billing")]
    described = {r.restype: f.result(10) for r, f in client.describe_configs(resources).items()}
    assert described[confluent.ResourceType.TOPIC]["segment.bytes"].is_read_only is False
    assert described[confluent.ResourceType.BROKER]["broker.id"].value == "0"
    assert described[confluent.ResourceType.BROKER]["broker.id"].is_read_only is True
    assert described[confluent.ResourceType.GROUP]["consumer.session.timeout.ms"].value == "30000"


def test_an_unknown_topic_and_another_broker_id_are_refused_as_kafka_refuses_them(node):
    client = confluent.AdminClient({"bootstrap.servers": node.bootstrap})
    missing = confluent.ConfigResource(confluent.ResourceType.TOPIC, "missing")
    with pytest.raises(Exception) as refused:
        client.describe_configs([missing])[missing].result(10)
    assert "UNKNOWN_TOPIC_OR_PART" in str(refused.value)
    result = _describe(node, BROKER, "7")
    assert result.error_code == 42 and "expected 0 or empty string" in result.error_message


def _describe(node, kind, name, keys=None):
    request = DescribeConfigsRequest(resources=[DescribeConfigsRequest.DescribeConfigsResource(
        resource_type=kind.value, resource_name=name, configuration_keys=keys)], include_synonyms=False,
        include_documentation=True)
    return exchange(node, request, 4).results[0]


def test_list_config_resources_v1_lists_topics_brokers_and_groups_and_v0_lists_nothing(admin, node):
    listed = admin.list_config_resources()
    assert listed["topic"] == ["orders"] and listed["broker"] == ["0"]
    assert admin.list_config_resources(["TOPIC"]) == {"topic": ["orders"]}
    v0 = exchange(node, ListConfigResourcesRequest(), 0)
    assert v0.error_code == 0 and v0.config_resources == []


def test_without_describe_configs_each_resource_and_the_listing_are_refused_with_their_authorization_errors():
    node = InProcessCoordinator(node_config(authorizer=True, super_users=())).start()
    try:
        node.call(node.node.authorizer.create([AclBinding(ResourcePattern(Resource.TOPIC, "orders"),
                                                          AccessControlEntry("User:ANONYMOUS", "*", Operation.CREATE,
                                                                             Permission.ALLOW))]))
        client = confluent.AdminClient({"bootstrap.servers": node.bootstrap})
        for kind, name, error in ((confluent.ResourceType.BROKER, "0", "CLUSTER_AUTHORIZATION_FAILED"),
                                  (confluent.ResourceType.GROUP, "g", "GROUP_AUTHORIZATION_FAILED")):
            resource = confluent.ConfigResource(kind, name)
            with pytest.raises(Exception) as refused:
                client.describe_configs([resource])[resource].result(10)
            assert error in str(refused.value)
        listed = exchange(node, ListConfigResourcesRequest(resource_types=[]), 1)
        assert listed.error_code == 31 and listed.config_resources == []  # CLUSTER_AUTHORIZATION_FAILED
    finally:
        node.stop()
