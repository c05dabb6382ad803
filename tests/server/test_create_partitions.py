"""CreatePartitions over the wire against an in-process node: raw requests at every served
version, races between connections, and kafka-python's KafkaAdminClient as a real client."""

from __future__ import annotations

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewPartitions
from kafka.errors import InvalidPartitionsError
from kafka.protocol.admin import CreatePartitionsRequest, CreateTopicsRequest

from groupctl.coordinator.errors import ErrorCode
from tests.support.wire import connect, decode_response, exchange, read_frame

RACERS = 8

Topic = CreatePartitionsRequest.CreatePartitionsTopic
Assignment = Topic.CreatePartitionsAssignment


def growth(name: str, count: int, assignments=None):
    return Topic(name=name, count=count,
                 assignments=None if assignments is None else [Assignment(broker_ids=b) for b in assignments])


def request(*topics, validate_only: bool = False, version: int = 3):
    return CreatePartitionsRequest[version](topics=list(topics), timeout_ms=5000, validate_only=validate_only)


def create_partitions(coordinator, *topics, version: int = 3, validate_only: bool = False):
    return exchange(coordinator, request(*topics, validate_only=validate_only, version=version), version).results


def grow_one(coordinator, topic, version: int = 3, validate_only: bool = False):
    (result,) = create_partitions(coordinator, topic, version=version, validate_only=validate_only)
    return result


def create_topic(coordinator, name: str, partitions: int) -> None:
    cls = CreateTopicsRequest.CreatableTopic
    topic = cls(name=name, num_partitions=partitions, replication_factor=1, assignments=[], configs=[])
    (result,) = exchange(coordinator, CreateTopicsRequest[7](topics=[topic], timeout_ms=5000, validate_only=False),
                         7).topics
    assert result.error_code == 0


def replicas(coordinator, name: str):
    record = coordinator.node.topics.get(name)
    return None if record is None else [record.replicas[p] for p in sorted(record.replicas)]


@pytest.fixture
def admin(coordinator):
    client = KafkaAdminClient(bootstrap_servers=coordinator.bootstrap, request_timeout_ms=10000)
    yield client
    client.close()


# --- growing --------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", range(0, 4))
def test_create_partitions_grows_a_topic_at_every_version_and_keeps_its_id(coordinator, version):
    create_topic(coordinator, "orders", 2)
    topic_id = coordinator.node.topics.get("orders").topic_id
    result = grow_one(coordinator, growth("orders", 5), version=version)
    assert (result.name, result.error_code, result.error_message) == ("orders", 0, None)
    assert replicas(coordinator, "orders") == [[0]] * 5
    assert coordinator.node.topics.get("orders").topic_id == topic_id


def test_a_manual_assignment_places_the_new_partitions(coordinator):
    create_topic(coordinator, "orders", 1)
    assert grow_one(coordinator, growth("orders", 3, [[0], [0]])).error_code == 0
    assert replicas(coordinator, "orders") == [[0], [0], [0]]


def test_each_topic_in_a_request_gets_its_own_answer(coordinator):
    create_topic(coordinator, "a", 1)
    create_topic(coordinator, "b", 1)
    results = create_partitions(coordinator, growth("a", 2), growth("missing", 2), growth("b", 1))
    assert [(r.name, r.error_code) for r in results] == [
        ("a", 0), ("missing", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), ("b", ErrorCode.INVALID_PARTITIONS)]
    assert (len(replicas(coordinator, "a")), len(replicas(coordinator, "b"))) == (2, 1)


# --- refusals -------------------------------------------------------------------------------------


def test_an_unknown_topic_is_unknown_topic_or_partition(coordinator):
    result = grow_one(coordinator, growth("nope", 3))
    assert result.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION and "nope" in result.error_message


@pytest.mark.parametrize("count", [1, 2])
def test_a_count_not_above_the_current_one_is_invalid_partitions(coordinator, count):
    create_topic(coordinator, "orders", 2)
    result = grow_one(coordinator, growth("orders", count))
    assert result.error_code == ErrorCode.INVALID_PARTITIONS and result.error_message
    assert len(replicas(coordinator, "orders")) == 2


def test_a_count_above_the_maximum_is_invalid_partitions(coordinator):
    create_topic(coordinator, "orders", 1)
    assert grow_one(coordinator, growth("orders", 1_000_000)).error_code == ErrorCode.INVALID_PARTITIONS


BAD_ASSIGNMENTS = {
    "fewer assignments than new partitions": [[0]],
    "more assignments than new partitions": [[0], [0], [0]],
    "an empty list": [],
    "a node that is not live": [[0], [7]],
    "a node twice": [[0], [0, 0]],
    "another replication factor": [[0], []],
}


@pytest.mark.parametrize("assignments", list(BAD_ASSIGNMENTS.values()), ids=list(BAD_ASSIGNMENTS))
def test_a_bad_manual_assignment_is_invalid_replica_assignment_and_changes_nothing(coordinator, assignments):
    create_topic(coordinator, "orders", 1)
    result = grow_one(coordinator, growth("orders", 3, assignments))
    assert result.error_code == ErrorCode.INVALID_REPLICA_ASSIGNMENT and result.error_message
    assert replicas(coordinator, "orders") == [[0]]


def test_a_name_repeated_in_one_request_is_an_invalid_request_for_each_entry_and_not_grown(coordinator):
    create_topic(coordinator, "twice", 1)
    create_topic(coordinator, "once", 1)
    results = create_partitions(coordinator, growth("twice", 2), growth("once", 2), growth("twice", 3))
    assert [(r.name, r.error_code) for r in results] == [
        ("twice", ErrorCode.INVALID_REQUEST), ("once", 0), ("twice", ErrorCode.INVALID_REQUEST)]
    assert (len(replicas(coordinator, "twice")), len(replicas(coordinator, "once"))) == (1, 2)


def test_validate_only_answers_as_a_growth_would_and_changes_nothing(coordinator):
    create_topic(coordinator, "orders", 1)
    results = create_partitions(coordinator, growth("orders", 4), growth("nope", 2), validate_only=True)
    assert [r.error_code for r in results] == [0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]
    assert replicas(coordinator, "orders") == [[0]]


def test_simultaneous_growths_to_one_count_grow_the_topic_exactly_once(coordinator):
    create_topic(coordinator, "orders", 1)
    sockets = [connect(coordinator) for _ in range(RACERS)]
    requests = [request(growth("orders", 5)) for _ in range(RACERS)]
    try:
        for cid, (sock, req) in enumerate(zip(sockets, requests)):
            req.with_header(correlation_id=cid, client_id=f"racer-{cid}")
            sock.sendall(bytes(req.encode(version=3, header=True, framed=True)))
        answers = [decode_response(req, read_frame(sock), 3) for sock, req in zip(sockets, requests)]
    finally:
        for sock in sockets:
            sock.close()
    codes = sorted(answer.results[0].error_code for answer in answers)
    assert codes == [0] + [ErrorCode.INVALID_PARTITIONS] * (RACERS - 1)
    assert len(replicas(coordinator, "orders")) == 5


# --- a real client ----------------------------------------------------------------------------------


def test_kafka_python_admin_adds_partitions_that_clients_then_use(coordinator, admin):
    admin.create_topics({"payments": {"num_partitions": 1, "replication_factor": 1}})
    admin.create_partitions({"payments": NewPartitions(3)})
    admin.create_partitions({"payments": {"count": 4, "assignments": [[0]]}})
    (described,) = admin.describe_topics(["payments"])
    assert sorted(p["partition_index"] for p in described["partitions"]) == [0, 1, 2, 3]
    producer = KafkaProducer(bootstrap_servers=coordinator.bootstrap, request_timeout_ms=10000)
    try:
        producer.send("payments", b"on the new partition", partition=3).get(timeout=10)
    finally:
        producer.close()
    consumer = KafkaConsumer(bootstrap_servers=coordinator.bootstrap, consumer_timeout_ms=5000,
                             auto_offset_reset="earliest", enable_auto_commit=False)
    try:
        consumer.assign([TopicPartition("payments", 3)])
        assert [m.value for m in consumer] == [b"on the new partition"]
    finally:
        consumer.close()


def test_kafka_python_admin_validate_only_and_errors(coordinator, admin):
    admin.create_topics({"payments": {"num_partitions": 2, "replication_factor": 1}})
    admin.create_partitions({"payments": 6}, validate_only=True)
    assert len(replicas(coordinator, "payments")) == 2
    with pytest.raises(InvalidPartitionsError):
        admin.create_partitions({"payments": 2})
