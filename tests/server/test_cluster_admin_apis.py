"""The admin APIs of a one-replica cluster (DescribeTopicPartitions, DescribeLogDirs,
AlterReplicaLogDirs, ElectLeaders, List/AlterPartitionReassignments) answered as Apache Kafka
answers them, through kafka-python's KafkaAdminClient and confluent-kafka's AdminClient on a real
node, raw requests at the versions clients do not send, and a two-node ZooKeeper cluster with a
node down."""

from __future__ import annotations

import logging
import os
import struct
from dataclasses import replace

import pytest
from confluent_kafka import ElectionType, TopicCollection, TopicPartition as ConfluentPartition
from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import ElectionNotNeededError
from kafka.protocol.metadata import ApiVersionsRequest
from kafka.protocol.admin.cluster import AlterReplicaLogDirsRequest, DescribeLogDirsRequest
from kafka.protocol.admin.topics import (AlterPartitionReassignmentsRequest, DescribeTopicPartitionsRequest,
                                         ElectLeadersRequest, ListPartitionReassignmentsRequest)

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import REGISTRY
from groupctl.security.acls import SUPPORTED_OPERATIONS, ResourceType
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.polling import wait_until
from tests.support.wire import connect, exchange

ALL_TOPIC_OPERATIONS = sum(1 << op for op in SUPPORTED_OPERATIONS[ResourceType.TOPIC])


@pytest.fixture
def disk_node(tmp_path):
    node = InProcessCoordinator(node_config(data_dir=tmp_path / "data")).start()
    yield node
    node.stop()


@pytest.fixture
def admin_of():
    clients = []

    def make(node):
        client = KafkaAdminClient(bootstrap_servers=node.bootstrap, request_timeout_ms=10000)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def create(admin, **topics):
    admin.create_topics([NewTopic(name, partitions, 1) for name, partitions in topics.items()])


def log_directory(node) -> str:
    return os.path.abspath(node.node.config.data_dir / "log")


# --- DescribeTopicPartitions ----------------------------------------------------------------------

def test_describe_topic_partitions_pages_through_topics_with_its_cursor(coordinator, admin_of):
    admin = admin_of(coordinator)
    create(admin, alpha=3, beta=2, gamma=1)
    first = admin.describe_topic_partitions(["gamma", "alpha", "beta"], response_partition_limit=4)
    assert [(t["name"], [p["partition_index"] for p in t["partitions"]]) for t in first["topics"]] == [
        ("alpha", [0, 1, 2]), ("beta", [0])]
    assert first["next_cursor"] == {"topic_name": "beta", "partition_index": 1}
    rest = admin.describe_topic_partitions(["gamma", "alpha", "beta"], response_partition_limit=4,
                                           cursor=first["next_cursor"])
    assert [(t["name"], [p["partition_index"] for p in t["partitions"]]) for t in rest["topics"]] == [
        ("beta", [1]), ("gamma", [0])]
    assert rest["next_cursor"] is None


def test_describe_topic_partitions_describes_each_partition_as_metadata_does(coordinator, admin_of):
    admin = admin_of(coordinator)
    create(admin, alpha=2)
    [topic] = admin.describe_topic_partitions(["alpha"])["topics"]
    assert topic["error_code"] == 0 and topic["topic_authorized_operations"] == ALL_TOPIC_OPERATIONS
    described = [(p["partition_index"], p["leader_id"], p["replica_nodes"], p["isr_nodes"], p["offline_replicas"])
                 for p in topic["partitions"]]
    assert described == [(0, 0, [0], [0], []), (1, 0, [0], [0], [])]
    # confluent-kafka's describe_topics asks Metadata: both APIs describe the topic alike
    confluent = AdminClient({"bootstrap.servers": coordinator.bootstrap})
    by_metadata = confluent.describe_topics(TopicCollection(["alpha"]))["alpha"].result(timeout=10)
    assert [
        (p.id, p.leader.id, [r.id for r in p.replicas], [r.id for r in p.isr], []) for p in by_metadata.partitions
    ] == described


def test_describe_topic_partitions_stops_before_a_topic_when_the_limit_is_used_up(coordinator, admin_of):
    admin = admin_of(coordinator)
    create(admin, alpha=2, beta=2)
    page = admin.describe_topic_partitions([], response_partition_limit=2)
    assert [t["name"] for t in page["topics"]] == ["alpha"]
    assert page["next_cursor"] == {"topic_name": "beta", "partition_index": 0}


def test_describe_topic_partitions_answers_a_missing_topic_and_refuses_a_cursor_outside_the_list(coordinator):
    request = DescribeTopicPartitionsRequest[0]
    names = [request.TopicRequest(name="missing"), request.TopicRequest(name="bad/name")]
    answer = exchange(coordinator, request(topics=names, response_partition_limit=10, cursor=None), 0)
    assert [(t.name, t.error_code) for t in answer.topics] == [
        ("bad/name", ErrorCode.INVALID_TOPIC_EXCEPTION), ("missing", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
    outside = request.Cursor(topic_name="other", partition_index=0)
    answer = exchange(coordinator, request(topics=names[:1], response_partition_limit=10, cursor=outside), 0)
    assert [(t.name, t.error_code) for t in answer.topics] == [("missing", ErrorCode.INVALID_REQUEST)]


# --- DescribeLogDirs / AlterReplicaLogDirs --------------------------------------------------------

def test_describe_log_dirs_lists_the_log_directory_with_each_partitions_size(disk_node, admin_of):
    admin = admin_of(disk_node)
    create(admin, alpha=2)
    producer = KafkaProducer(bootstrap_servers=disk_node.bootstrap)
    producer.send("alpha", b"x" * 100, partition=1).get(timeout=10)
    producer.close()
    [broker] = admin.describe_log_dirs()
    [directory] = broker["log_dirs"]
    assert directory["log_dir"] == log_directory(disk_node) and directory["error_code"] == 0
    assert directory["total_bytes"] >= directory["usable_bytes"] > 0 and directory["is_cordoned"] is False
    [topic] = directory["topics"]
    sizes = {p["partition_index"]: (p["partition_size"], p["offset_lag"], p["is_future_key"])
             for p in topic["partitions"]}
    assert sizes == {0: (0, 0, False), 1: (disk_node.node.logs.get("alpha", 1).size_bytes, 0, False)}
    assert sizes[1][0] > 100


def test_describe_log_dirs_sizes_logs_not_open_yet_without_opening_them(tmp_path, admin_of):
    config = node_config(data_dir=tmp_path / "data")
    node = InProcessCoordinator(config).start()
    try:
        create(admin_of(node), alpha=2)
        producer = KafkaProducer(bootstrap_servers=node.bootstrap)
        producer.send("alpha", b"x" * 100, partition=1).get(timeout=10)
        producer.close()
        size = node.node.logs.get("alpha", 1).size_bytes
    finally:
        node.stop()
    node = InProcessCoordinator(replace(config, port=0)).start()
    try:
        [directory] = admin_of(node).describe_log_dirs()[0]["log_dirs"]
        [topic] = directory["topics"]
        assert {p["partition_index"]: p["partition_size"] for p in topic["partitions"]} == {0: 0, 1: size}
        assert node.node.logs.get("alpha", 0) is None and node.node.logs.get("alpha", 1) is None
    finally:
        node.stop()


def test_describe_log_dirs_lists_only_the_named_partitions_at_its_first_version(disk_node, admin_of):
    create(admin_of(disk_node), alpha=2, beta=1)
    request = DescribeLogDirsRequest[1]
    wanted = [request.DescribableLogDirTopic(topic="alpha", partitions=[1, 7]),
              request.DescribableLogDirTopic(topic="nope", partitions=[0])]
    [directory] = exchange(disk_node, request(topics=wanted), 1).results
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in directory.topics] == [("alpha", [1])]


def test_a_node_without_a_data_dir_has_no_log_directory(coordinator, admin_of):
    admin = admin_of(coordinator)
    create(admin, alpha=1)
    assert admin.describe_log_dirs() == [{"broker": 0, "log_dirs": []}]
    answer = admin.alter_replica_log_dirs({("alpha", 0, 0): "/var/lib/kafka"})
    assert [error.errno for error in answer.values()] == [ErrorCode.LOG_DIR_NOT_FOUND]


def test_alter_replica_log_dirs_accepts_the_current_directory_and_nothing_else(disk_node, admin_of):
    admin = admin_of(disk_node)
    create(admin, alpha=2)
    answer = admin.alter_replica_log_dirs({
        ("alpha", 0, 0): log_directory(disk_node),
        ("alpha", 1, 0): "/elsewhere",
        ("alpha", 9, 0): log_directory(disk_node),
    })
    assert {tpr.partition: error.errno for tpr, error in answer.items()} == {
        0: ErrorCode.NONE, 1: ErrorCode.LOG_DIR_NOT_FOUND, 9: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}


# --- ElectLeaders ---------------------------------------------------------------------------------

def test_elect_leaders_is_not_needed_for_a_live_leader_with_both_clients(coordinator, admin_of):
    create(admin_of(coordinator), alpha=2)
    kafka_python = admin_of(coordinator).elect_leaders(0, {"alpha": [0, 1]}, raise_errors=False)
    assert [(r.partition_id, r.error_code, r.error_message) for r in kafka_python.replica_election_results[0]
            .partition_result] == [(p, ElectionNotNeededError.errno,
                                    "Leader election not needed for topic partition.") for p in (0, 1)]
    confluent = AdminClient({"bootstrap.servers": coordinator.bootstrap})
    # No timeout arguments: confluent-kafka 2.16.1's binding raises SystemError with them.
    future = confluent.elect_leaders(ElectionType.PREFERRED, [ConfluentPartition("alpha", 0)])
    [(partition, error)] = future.result(timeout=10).items()
    assert (partition.topic, partition.partition, error.code()) == ("alpha", 0, ElectionNotNeededError.errno)


def test_elect_leaders_for_every_partition_lists_each_topic_without_the_unneeded(coordinator, admin_of):
    create(admin_of(coordinator), alpha=2, beta=1)
    for version in (0, 1, 2):
        request = ElectLeadersRequest[version](election_type=1, topic_partitions=None, timeout_ms=1000)
        answer = exchange(coordinator, request, version)
        assert [(r.topic, r.partition_result) for r in answer.replica_election_results] == [
            ("alpha", []), ("beta", [])]


def test_elect_leaders_names_a_missing_topic_and_refuses_an_unknown_election_type(coordinator):
    named = [ElectLeadersRequest[2].TopicPartitions(topic="missing", partitions=[0])]
    answer = exchange(coordinator, ElectLeadersRequest[2](election_type=0, topic_partitions=named,
                                                          timeout_ms=1000), 2)
    [result] = answer.replica_election_results[0].partition_result
    assert (result.error_code, result.error_message) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                                         "No such topic as missing")
    answer = exchange(coordinator, ElectLeadersRequest[2](election_type=5, topic_partitions=named,
                                                          timeout_ms=1000), 2)
    assert answer.error_code == ErrorCode.INVALID_REQUEST
    assert answer.replica_election_results[0].partition_result[0].error_message == "Unknown election type 5"


# --- partition reassignments ----------------------------------------------------------------------

def test_no_partition_reassignment_is_ever_in_progress(coordinator, admin_of):
    admin = admin_of(coordinator)
    create(admin, alpha=2)
    assert admin.list_partition_reassignments() == {}
    assert admin.list_partition_reassignments([TopicPartition("alpha", 0)]) == {}


def test_reassigning_a_partition_to_its_current_replicas_is_accepted_and_anything_else_refused(coordinator):
    admin = KafkaAdminClient(bootstrap_servers=coordinator.bootstrap, request_timeout_ms=10000)
    try:
        create(admin, alpha=1)
        assert admin.alter_partition_reassignments({TopicPartition("alpha", 0): [0]}) == {
            TopicPartition("alpha", 0): None}
    finally:
        admin.close()
    request = AlterPartitionReassignmentsRequest[1]
    topic = request.ReassignableTopic
    targets = [None, [7], [0, 0], [], [0]]
    answer = exchange(coordinator, request(timeout_ms=1000, allow_replication_factor_change=True, topics=[
        topic(name="alpha", partitions=[topic.ReassignablePartition(partition_index=0, replicas=r)
                                        for r in targets]),
        topic(name="missing", partitions=[topic.ReassignablePartition(partition_index=0, replicas=[0])])]), 1)
    assert (answer.error_code, answer.error_message) == (0, None)
    assert [(p.error_code, p.error_message) for t in answer.responses for p in t.partitions] == [
        (ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, "No partition reassignment is in progress."),
        (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
         "The manual partition assignment includes broker 7, but no such broker is registered."),
        (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
         "The manual partition assignment includes the broker 0 more than once."),
        (ErrorCode.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes an empty replica list."),
        (ErrorCode.NONE, None),
        (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named missing."),
    ]


# --- authorization --------------------------------------------------------------------------------

def test_cluster_admin_calls_need_the_cluster_operations_kafka_checks():
    node = InProcessCoordinator(node_config(authorizer=True)).start()
    try:
        node.call(node.node.topics.get_or_create("alpha", 1))
        logs = exchange(node, DescribeLogDirsRequest[4](topics=None), 4)
        assert (logs.error_code, logs.results) == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, [])
        move = AlterReplicaLogDirsRequest[2].AlterReplicaLogDir
        moved = exchange(node, AlterReplicaLogDirsRequest[2](dirs=[move(path="/x", topics=[
            move.AlterReplicaLogDirTopic(name="alpha", partitions=[0])])]), 2)
        assert moved.results[0].partitions[0].error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        named = [ElectLeadersRequest[2].TopicPartitions(topic="alpha", partitions=[0])]
        elected = exchange(node, ElectLeadersRequest[2](election_type=0, topic_partitions=named, timeout_ms=1000), 2)
        assert elected.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        assert elected.replica_election_results[0].partition_result[0].error_code == \
            ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        listed = exchange(node, ListPartitionReassignmentsRequest[0](timeout_ms=1000, topics=None), 0)
        assert listed.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        topic = AlterPartitionReassignmentsRequest[0].ReassignableTopic
        altered = exchange(node, AlterPartitionReassignmentsRequest[0](timeout_ms=1000, topics=[topic(
            name="alpha", partitions=[topic.ReassignablePartition(partition_index=0, replicas=[0])])]), 0)
        assert altered.error_code == altered.responses[0].partitions[0].error_code == \
            ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        request = DescribeTopicPartitionsRequest[0]
        described = exchange(node, request(topics=[request.TopicRequest(name="alpha")], response_partition_limit=10,
                                           cursor=None), 0)
        assert [(t.name, t.error_code) for t in described.topics] == [("alpha", ErrorCode.TOPIC_AUTHORIZATION_FAILED)]
    finally:
        node.stop()


# --- a two-node cluster with a node down ----------------------------------------------------------

@pytest.mark.zookeeper
def test_with_its_only_replica_down_a_partition_has_no_leader_to_elect(zk_connect, tmp_path, admin_of):
    first = InProcessCoordinator(node_config(zk=zk_connect, data_dir=tmp_path / "a")).start()
    second = InProcessCoordinator(node_config(zk=zk_connect, node_id=1, data_dir=tmp_path / "b")).start()
    running = [first, second]
    try:
        wait_until(lambda: set(first.node.live_brokers()) == {0, 1}, 15, message="both nodes registered")
        admin = admin_of(first)
        admin.create_topics([NewTopic("split", replica_assignments={0: [0], 1: [1]})])
        wait_until(lambda: second.node.topics.get("split") is not None, 15, message="the topic on node 1")
        running.remove(second)
        second.stop()
        wait_until(lambda: set(first.node.live_brokers()) == {0}, 15, message="node 1 gone")
        named = [ElectLeadersRequest[2].TopicPartitions(topic="split", partitions=[0, 1])]
        outcomes = {}
        for election_type in (0, 1):
            answer = exchange(first, ElectLeadersRequest[2](election_type=election_type, topic_partitions=named,
                                                            timeout_ms=1000), 2)
            outcomes[election_type] = [p.error_code for p in answer.replica_election_results[0].partition_result]
        assert outcomes == {0: [ErrorCode.ELECTION_NOT_NEEDED, ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE],
                            1: [ErrorCode.ELECTION_NOT_NEEDED, ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE]}
        every = exchange(first, ElectLeadersRequest[2](election_type=0, topic_partitions=None, timeout_ms=1000), 2)
        assert [(r.topic, [p.partition_id for p in r.partition_result]) for r in every.replica_election_results] == [
            ("split", [1])]
        [topic] = admin.describe_topic_partitions(["split"])["topics"]
        assert [(p["leader_id"], p["offline_replicas"]) for p in topic["partitions"]] == [(0, []), (-1, [1])]
        [directory] = admin.describe_log_dirs(brokers=[0])[0]["log_dirs"]
        assert [(t["name"], [p["partition_index"] for p in t["partitions"]]) for t in directory["topics"]] == [
            ("split", [0])]
        moved = admin.alter_replica_log_dirs({("split", 0, 0): log_directory(first),
                                              ("split", 1, 0): log_directory(first)})
        assert {tpr.partition: error.errno for tpr, error in moved.items()} == {
            0: ErrorCode.NONE, 1: ErrorCode.REPLICA_NOT_AVAILABLE}
        assert admin.alter_partition_reassignments({TopicPartition("split", 1): [1]}) == {
            TopicPartition("split", 1): None}
        topic = AlterPartitionReassignmentsRequest[0].ReassignableTopic
        moved = exchange(first, AlterPartitionReassignmentsRequest[0](timeout_ms=1000, topics=[topic(
            name="split", partitions=[topic.ReassignablePartition(partition_index=1, replicas=[0])])]), 0)
        [result] = moved.responses[0].partitions
        assert result.error_code == ErrorCode.INVALID_REPLICA_ASSIGNMENT
        assert "groupctl does not move partitions" in result.error_message
    finally:
        for node in running:
            node.stop()


# --- API keys and versions the node does not serve ------------------------------------------------

def unserved_request(api_key: int, version: int, client_id: bytes = b"probe-client") -> bytes:
    body = struct.pack(">hhih", api_key, version, 11, len(client_id)) + client_id + b"\x00" * 8
    return struct.pack(">i", len(body)) + body


@pytest.mark.parametrize("api_key, version, said", [
    (999, 0, "Received request api key 999 with version 0 which is not enabled"),
    (48, 1, "Received request api key 48 (DescribeClientQuotas) with version 1 which is not enabled"),
    (1, 3, "Received request api key 1 (Fetch) with version 3 which is not enabled (serving v4-v"),
])
def test_an_unserved_api_closes_the_connection_with_an_error_naming_key_version_and_client(
        coordinator, caplog, api_key, version, said):
    caplog.set_level(logging.INFO, logger="groupctl.connection")
    with connect(coordinator) as sock:
        sock.sendall(unserved_request(api_key, version))
        assert sock.recv(64) == b""  # closed without an answer, as Kafka closes it
    [record] = [r for r in caplog.records if r.name == "groupctl.connection"]
    assert record.levelno == logging.ERROR
    assert said in record.getMessage() and "'probe-client'" in record.getMessage()
    assert record.getMessage().startswith("Closing socket for 127.0.0.1:")
    versions = exchange(coordinator, ApiVersionsRequest[3](client_software_name="t", client_software_version="1"), 3)
    assert versions.error_code == 0
    assert {k.api_key for k in versions.api_keys} == set(REGISTRY)
