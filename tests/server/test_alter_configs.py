"""AlterConfigs, IncrementalAlterConfigs and CreateTopics' configs with real clients as the judges
(kafka-python's KafkaAdminClient, confluent-kafka's AdminClient); the configs are stored where and
as Kafka stores them, survive a restart in both store modes and show on every ZooKeeper node."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from confluent_kafka import KafkaException
from confluent_kafka import admin as confluent
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic
from kafka.errors import InvalidConfigurationError
from kafka.protocol.admin import AlterConfigsRequest, IncrementalAlterConfigsRequest
from kafka.protocol.metadata import MetadataRequest

from groupctl.configs.catalog import ResourceType
from groupctl.coordinator.consumer.config import ConsumerGroupConfig
from groupctl.security.acls import AccessControlEntry, AclBinding, Operation, Permission, ResourcePattern
from groupctl.security.acls import ResourceType as Resource
from groupctl.server.handlers.config_resources import ResourceError, validated
from groupctl.store.base import StoreUnavailable
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.polling import wait_until
from tests.support.wire import exchange

TOPIC, BROKER, GROUP = ConfigResourceType.TOPIC, ConfigResourceType.BROKER, ConfigResourceType.GROUP
SET, DELETE, APPEND = (confluent.AlterConfigOpType.SET, confluent.AlterConfigOpType.DELETE,
                       confluent.AlterConfigOpType.APPEND)


@pytest.fixture
def started():
    nodes = []

    def start(**config):
        node = InProcessCoordinator(node_config(**config)).start()
        nodes.append(node)
        return node

    yield start
    for node in nodes:
        if node._thread.is_alive():  # not stopped by the test
            node.stop()


@pytest.fixture
def clients():
    opened = []

    def kafka_python(node):
        client = KafkaAdminClient(bootstrap_servers=node.bootstrap, request_timeout_ms=10_000)
        opened.append(client)
        return client

    yield kafka_python
    for client in opened:
        client.close()


def modified(admin, kind, name):
    """The resource's values that are not defaults (kafka-python's default config_filter)."""
    described = admin.describe_configs([ConfigResource(kind, name)])
    return {key: entry["value"] for key, entry in described[kind.name.lower()][name].items()}


def incremental(node, kind, name, *ops, validate_only=False):
    client = confluent.AdminClient({"bootstrap.servers": node.bootstrap})
    resource = confluent.ConfigResource(kind, name, incremental_configs=[
        confluent.ConfigEntry(key, value, incremental_operation=op) for key, value, op in ops])
    return client.incremental_alter_configs([resource], validate_only=validate_only)[resource].result(10)


def stored(node, path):
    found = node.call(node.node.store.get(path))
    return json.loads(found.data) if found is not None else None


def test_create_topics_stores_its_configs_and_validate_only_creates_nothing(started, clients):
    node = started()
    admin = clients(node)
    admin.create_topics([NewTopic("checked", 1, 1, topic_configs={"retention.ms": "60000"})], validate_only=True)
    assert "checked" not in admin.list_topics()
    assert stored(node, "/config/topics/checked") is None
    result = admin.create_topics([NewTopic("orders", 1, 1, topic_configs={"retention.ms": " 60000",
                                                                         "segment.bytes": "1048576"})])
    reported = result["topics"][0]["configs"]  # v5+: every config in force
    assert reported["retention.ms"] == {"value": "60000", "read_only": False, "config_source": "DYNAMIC_TOPIC_CONFIG",
                                        "is_sensitive": False}
    assert reported["retention.bytes"]["config_source"] == "DEFAULT_CONFIG"
    assert modified(admin, TOPIC, "orders") == {"retention.ms": "60000", "segment.bytes": "1048576"}
    assert stored(node, "/config/topics/orders") == {"version": 1, "config": {"retention.ms": "60000",
                                                                               "segment.bytes": "1048576"}}


def test_a_topic_created_with_compaction_or_a_bad_value_is_refused_with_invalid_config(started, clients):
    admin = clients(started())
    result = admin.create_topics([NewTopic("compacted", 1, 1, topic_configs={"cleanup.policy": "compact"}),
                                  NewTopic("bad", 1, 1, topic_configs={"retention.ms": "soon"})], raise_errors=False)
    errors = {t["name"]: (t["error_code"], t["error_message"]) for t in result["topics"]}
    assert errors["compacted"][0] == 40 and "cleanup.policy" in errors["compacted"][1]
    assert errors["bad"] == (40, "Invalid value soon for configuration retention.ms: Not a number of type LONG")
    assert not {"compacted", "bad"} & set(admin.list_topics())


def test_segments_smaller_than_kafka_4s_minimum_of_one_mebibyte_are_refused(started, clients):
    admin = clients(started())
    result = admin.create_topics([NewTopic("tiny", 1, 1, topic_configs={"segment.bytes": "65536"})], raise_errors=False)
    [topic] = result["topics"]
    assert (topic["error_code"], topic["error_message"]) == (
        40, "Invalid value 65536 for configuration segment.bytes: Value must be at least 1048576")


def test_kafka_python_legacy_alter_configs_keeps_the_modified_keys_it_describes_first(started, clients):
    admin = clients(started())
    admin.create_topics([NewTopic("orders", 1, 1, topic_configs={"retention.ms": "60000"})])
    admin.alter_configs([ConfigResource(TOPIC, "orders", configs={"retention.bytes": "1000000"})], incremental=False)
    assert modified(admin, TOPIC, "orders") == {"retention.ms": "60000", "retention.bytes": "1000000"}


def test_topics_take_every_kafka_topic_config_though_the_logs_act_on_their_own_keys_only(started, clients):
    node = started()
    admin = clients(node)
    admin.create_topics([NewTopic("orders", 1, 1, topic_configs={"compression.type": "lz4",
                                                                 "min.insync.replicas": "1"})])
    assert modified(admin, TOPIC, "orders") == {"compression.type": "lz4", "min.insync.replicas": "1"}
    admin.alter_configs([ConfigResource(TOPIC, "orders", configs={"compression.type": "gzip"})])  # read_only false
    incremental(node, confluent.ResourceType.TOPIC, "orders", ("preallocate", "true", SET))
    assert modified(admin, TOPIC, "orders") == {"compression.type": "gzip", "min.insync.replicas": "1",
                                                "preallocate": "true"}
    assert node.node.logs.config_for("orders") == node.node.logs.default_config


def test_kafka_python_refuses_read_only_keys_before_sending_and_the_node_refuses_them_too(started, clients):
    admin = clients(started())
    with pytest.raises(ValueError, match="broker.id"):  # read from DescribeConfigs' read_only flags
        admin.alter_configs([ConfigResource(BROKER, "0", configs={"broker.id": "3"})])
    answer = admin.alter_configs([ConfigResource(BROKER, "0", configs={"num.partitions": "3"})],
                                 raise_on_unknown=False, incremental=False)
    assert "Cannot update these configs dynamically: num.partitions" in answer["broker"]["0"]
    admin.alter_configs([ConfigResource(BROKER, "0", configs={"log.retention.ms": "3600000"})])  # dynamic in Kafka
    assert modified(admin, BROKER, "0")["log.retention.ms"] == "3600000"


def test_incremental_alter_configs_sets_deletes_and_refuses_append_on_a_non_list_key(started, clients):
    node = started()
    admin = clients(node)
    admin.create_topics([NewTopic("orders", 1, 1, topic_configs={"retention.ms": "60000"})])
    incremental(node, confluent.ResourceType.TOPIC, "orders", ("retention.bytes", "5000", SET),
                ("retention.ms", None, DELETE))
    assert modified(admin, TOPIC, "orders") == {"retention.bytes": "5000"}
    with pytest.raises(KafkaException, match="Config value append is not allowed for config key: retention.ms"):
        incremental(node, confluent.ResourceType.TOPIC, "orders", ("retention.ms", "1", APPEND))
    with pytest.raises(KafkaException, match="INVALID_CONFIG"):
        incremental(node, confluent.ResourceType.TOPIC, "orders", ("cleanup.policy", "compact", APPEND))
    incremental(node, confluent.ResourceType.TOPIC, "orders", ("segment.ms", "1000", SET), validate_only=True)
    assert modified(admin, TOPIC, "orders") == {"retention.bytes": "5000"}


def test_legacy_alter_configs_replaces_the_whole_dynamic_config_and_refuses_unknown_topics(started, clients):
    node = started()
    clients(node).create_topics([NewTopic("orders", 1, 1, topic_configs={"retention.ms": "60000"})])
    client = confluent.AdminClient({"bootstrap.servers": node.bootstrap})
    resource = confluent.ConfigResource(confluent.ResourceType.TOPIC, "orders", set_config={"segment.ms": "3600000"})
    client.alter_configs([resource])[resource].result(10)
    assert stored(node, "/config/topics/orders")["config"] == {"segment.ms": "3600000"}
    missing = confluent.ConfigResource(confluent.ResourceType.TOPIC, "missing", set_config={"segment.ms": "1"})
    with pytest.raises(KafkaException, match="UNKNOWN_TOPIC_OR_PART"):
        client.alter_configs([missing])[missing].result(10)


def test_a_groups_timeouts_are_checked_against_the_brokers_consumer_bounds(started, clients):
    node = started(consumer_groups=ConsumerGroupConfig(min_session_timeout_ms=10_000))
    with pytest.raises(KafkaException, match="consumer.session.timeout.ms must be greater than or equal to "
                                             "group.consumer.min.session.timeout.ms"):
        incremental(node, confluent.ResourceType.GROUP, "billing", ("consumer.session.timeout.ms", "9000", SET))
    with pytest.raises(KafkaException, match="Unknown group config name: share.session.timeout.ms"):
        incremental(node, confluent.ResourceType.GROUP, "billing", ("share.session.timeout.ms", "9000", SET))
    incremental(node, confluent.ResourceType.GROUP, "billing", ("consumer.session.timeout.ms", "12000", SET))
    assert modified(clients(node), GROUP, "billing") == {"consumer.session.timeout.ms": "12000"}
    assert stored(node, "/config/groups/billing") == {"version": 1, "config": {"consumer.session.timeout.ms": "12000"}}


def test_deleting_a_topic_deletes_its_configs(started, clients):
    node = started()
    admin = clients(node)
    admin.create_topics([NewTopic("orders", 1, 1, topic_configs={"retention.ms": "60000"})])
    admin.delete_topics(["orders"])
    assert stored(node, "/config/topics/orders") is None
    admin.create_topics([NewTopic("orders", 1, 1)])
    assert modified(admin, TOPIC, "orders") == {}


def left_behind(node, topic, config):
    """The config document a deleted topic leaves when the node dies between deleting the topic
    and its configs (or an AlterConfigs on another node races the deletion)."""
    node.call(node.node.store.create(f"/config/topics/{topic}", json.dumps({"version": 1, "config": config}).encode(),
                                     make_parents=True))
    wait_until(lambda: node.node.configs.stored.topics.get(topic) == config, timeout=10,
               message="the node to read the left-behind document")


def test_a_recreated_topic_never_inherits_the_configs_a_deleted_one_left_behind(started, clients):
    node = started()
    admin = clients(node)
    left_behind(node, "orders", {"retention.ms": "1000"})
    admin.create_topics([NewTopic("orders", 1, 1)])
    assert stored(node, "/config/topics/orders") is None
    assert modified(admin, TOPIC, "orders") == {}
    assert node.node.logs.config_for("orders").retention_ms == 604_800_000
    left_behind(node, "payments", {"retention.ms": "1000"})
    admin.create_topics([NewTopic("payments", 1, 1, topic_configs={"segment.bytes": "1048576"})])
    assert stored(node, "/config/topics/payments") == {"version": 1, "config": {"segment.bytes": "1048576"}}
    assert modified(admin, TOPIC, "payments") == {"segment.bytes": "1048576"}


def test_an_auto_created_topic_never_inherits_the_configs_a_deleted_one_left_behind(started):
    node = started()
    left_behind(node, "orders", {"retention.ms": "1000"})
    request = MetadataRequest[12](topics=[MetadataRequest.MetadataRequestTopic(name="orders")],
                                  allow_auto_topic_creation=True)
    assert exchange(node, request, 12).topics[0].error_code in (0, 5)  # created (LEADER_NOT_AVAILABLE: not yet)
    assert node.node.topics.get("orders") is not None
    assert stored(node, "/config/topics/orders") is None
    assert node.node.configs.stored.topics.get("orders") is None
    assert node.node.logs.config_for("orders").retention_ms == 604_800_000


def test_a_store_failure_storing_a_new_topics_configs_fails_that_topic_alone(started, clients, monkeypatch):
    node = started()
    store = node.node.store
    real_create = store.create

    async def create(path, *args, **kwargs):
        if path == "/config/topics/broken":
            raise StoreUnavailable("the store is unreachable")
        return await real_create(path, *args, **kwargs)

    monkeypatch.setattr(store, "create", create)
    admin = clients(node)
    result = admin.create_topics([NewTopic("broken", 1, 1, topic_configs={"retention.ms": "60000"}),
                                  NewTopic("fine", 1, 1, topic_configs={"retention.ms": "60000"})],
                                 raise_errors=False)
    errors = {t["name"]: (t["error_code"], t["error_message"]) for t in result["topics"]}
    assert errors["broken"][0] == -1 and "the store is unreachable" in errors["broken"][1]  # UNKNOWN_SERVER_ERROR
    assert errors["fine"][0] == 0
    assert set(admin.list_topics()) >= {"fine"} and "broken" not in admin.list_topics()


def legacy_alter(node, kind, name, config):
    """AlterConfigs v2 of one resource: its (error_code, error_message)."""
    entry = AlterConfigsRequest.AlterConfigsResource
    request = AlterConfigsRequest(resources=[entry(resource_type=kind, resource_name=name, configs=[
        entry.AlterableConfig(name=key, value=value) for key, value in config.items()])], validate_only=False)
    answer = exchange(node, request, 2).responses[0]
    return answer.error_code, answer.error_message


def incremental_set(node, kind, name, key, value, operation=0):
    """IncrementalAlterConfigs v1 of one key: its (error_code, error_message)."""
    entry = IncrementalAlterConfigsRequest.AlterConfigsResource
    request = IncrementalAlterConfigsRequest(resources=[entry(resource_type=kind, resource_name=name, configs=[
        entry.AlterableConfig(name=key, config_operation=operation, value=value)])], validate_only=False)
    answer = exchange(node, request, 1).responses[0]
    return answer.error_code, answer.error_message


def test_a_null_value_is_refused_as_kafka_refuses_it_and_nothing_is_stored(started, clients):
    node = started()
    clients(node).create_topics([NewTopic("orders", 1, 1)])
    for operation in (0, 2, 3):  # SET, APPEND, SUBTRACT
        assert incremental_set(node, 2, "orders", "cleanup.policy", None, operation) == (
            42, "Null value not supported for : cleanup.policy")  # INVALID_REQUEST
    assert incremental_set(node, 32, "billing", "consumer.session.timeout.ms", None) == (
        42, "Null value not supported for : consumer.session.timeout.ms")
    assert legacy_alter(node, 2, "orders", {"retention.ms": None, "segment.ms": "1000", "segment.bytes": None}) == (
        42, "Null value not supported for : retention.ms, segment.bytes")
    assert incremental_set(node, 2, "orders", "retention.ms", None, 1) == (0, None)  # DELETE needs no value
    assert stored(node, "/config/topics/orders") is None
    assert stored(node, "/config/groups/billing") is None
    assert incremental_set(node, 2, "orders", "retention.ms", "60000") == (0, None)
    assert stored(node, "/config/topics/orders") == {"version": 1, "config": {"retention.ms": "60000"}}


def test_a_key_whose_new_value_is_null_is_judged_like_any_new_value():
    ctx = SimpleNamespace(node=SimpleNamespace(config=node_config()))
    with pytest.raises(ResourceError, match="Invalid value null for configuration retention.ms"):
        validated(ctx, ResourceType.TOPIC, {"retention.ms": None}, {})


def test_an_undecodable_config_document_fails_incremental_changes_and_alter_configs_overwrites_it(started, clients):
    node = started()
    clients(node).create_topics([NewTopic("orders", 1, 1)])
    node.call(node.node.store.create("/config/topics/orders", b'{"version":1,"config":{"retention.ms":null}}'))
    code, message = incremental_set(node, 2, "orders", "retention.bytes", "5000")
    assert code == -1 and "do not decode" in message  # UNKNOWN_SERVER_ERROR for this resource, connection kept
    assert legacy_alter(node, 2, "orders", {"retention.bytes": "5000"}) == (0, None)
    assert stored(node, "/config/topics/orders") == {"version": 1, "config": {"retention.bytes": "5000"}}
    assert incremental_set(node, 2, "orders", "retention.ms", "60000") == (0, None)


def test_configs_survive_a_restart_of_the_embedded_store(started, clients, tmp_path):
    node = started(data_dir=tmp_path)
    admin = clients(node)
    admin.create_topics([NewTopic("orders", 1, 1, topic_configs={"retention.ms": "60000"})])
    incremental(node, confluent.ResourceType.GROUP, "billing", ("consumer.heartbeat.interval.ms", "6000", SET))
    node.stop()
    again = started(data_dir=tmp_path)
    admin = clients(again)
    assert modified(admin, TOPIC, "orders") == {"retention.ms": "60000"}
    assert modified(admin, GROUP, "billing") == {"consumer.heartbeat.interval.ms": "6000"}


@pytest.mark.zookeeper
def test_with_zookeeper_a_change_shows_on_the_other_node_and_survives_restarts(started, clients, zk_connect, tmp_path):
    first = started(zk=zk_connect, node_id=0, data_dir=tmp_path / "a")
    second = started(zk=zk_connect, node_id=1, data_dir=tmp_path / "b")
    clients(first).create_topics([NewTopic("orders", 1, 1)])
    incremental(first, confluent.ResourceType.TOPIC, "orders", ("retention.ms", "60000", SET))
    on_second = clients(second)
    wait_until(lambda: modified(on_second, TOPIC, "orders") == {"retention.ms": "60000"}, timeout=10,
               message="node 1 to describe node 0's change")
    incremental(second, confluent.ResourceType.GROUP, "billing", ("consumer.session.timeout.ms", "50000", SET))
    wait_until(lambda: modified(clients(first), GROUP, "billing") == {"consumer.session.timeout.ms": "50000"},
               timeout=10, message="node 0 to describe node 1's group config")
    first.stop()
    second.stop()
    again = started(zk=zk_connect, node_id=0, data_dir=tmp_path / "a")
    assert modified(clients(again), TOPIC, "orders") == {"retention.ms": "60000"}
    assert stored(again, "/config/topics/orders") == {"version": 1, "config": {"retention.ms": "60000"}}


def test_invalid_config_errors_reach_kafka_python_as_its_exception(started, clients):
    admin = clients(started())
    admin.create_topics([NewTopic("orders", 1, 1)])
    answer = admin.alter_configs([ConfigResource(TOPIC, "orders", configs={"max.message.bytes": "-5"})],
                                 incremental=False)
    assert answer["topic"]["orders"].startswith(f"[Error {InvalidConfigurationError.errno}]")
    assert "Value must be at least 0" in answer["topic"]["orders"]


def test_the_cluster_wide_broker_defaults_are_kafkas_default_entity_and_every_topic_falls_back_to_them(started,
                                                                                                       clients):
    node = started()
    admin = clients(node)
    admin.create_topics([NewTopic("orders", 1, 1)])
    request = AlterConfigsRequest(resources=[AlterConfigsRequest.AlterConfigsResource(
        resource_type=BROKER.value, resource_name="", configs=[
            AlterConfigsRequest.AlterConfigsResource.AlterableConfig(name="log.retention.ms", value="7200000")])],
        validate_only=False)
    assert exchange(node, request, 2).responses[0].error_code == 0
    assert stored(node, "/config/brokers/<default>") == {"version": 1, "config": {"log.retention.ms": "7200000"}}
    topic = admin.describe_configs([ConfigResource(TOPIC, "orders")], include_synonyms=True,
                                   config_filter="all")["topic"]["orders"]["retention.ms"]
    assert topic["value"] == "7200000" and topic["config_source"] == "DYNAMIC_DEFAULT_BROKER_CONFIG"
    assert topic["synonyms"][0] == {"name": "log.retention.ms", "value": "7200000",
                                    "source": "DYNAMIC_DEFAULT_BROKER_CONFIG"}


def test_without_alter_configs_on_the_topic_the_change_is_refused_and_nothing_is_stored(started, clients):
    node = started(authorizer=True, super_users=())
    node.call(node.node.authorizer.create([
        AclBinding(ResourcePattern(Resource.TOPIC, "orders"), AccessControlEntry("User:ANONYMOUS", "*", operation,
                                                                                 Permission.ALLOW))
        for operation in (Operation.CREATE, Operation.DESCRIBE, Operation.DESCRIBE_CONFIGS)]))
    clients(node).create_topics([NewTopic("orders", 1, 1)])
    with pytest.raises(KafkaException, match="TOPIC_AUTHORIZATION_FAILED"):
        incremental(node, confluent.ResourceType.TOPIC, "orders", ("retention.ms", "60000", SET))
    assert stored(node, "/config/topics/orders") is None
