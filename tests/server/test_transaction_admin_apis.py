"""The operators' transaction APIs on a running node, spoken raw (kafka-python's request classes):
DescribeTransactions (65), ListTransactions (66) with its duration (v1) and id pattern (v2)
filters, and DescribeProducers (61), answering what a producer did through the transactional
APIs; then their authorization as Kafka's, and kafka-python's admin client reading them."""

from __future__ import annotations

import pytest
from confluent_kafka import Producer as RdProducer
from kafka import TopicPartition
from kafka.admin import KafkaAdminClient, TransactionState
from kafka.protocol.admin.transactions import (
    DescribeProducersRequest,
    DescribeTransactionsRequest,
    ListTransactionsRequest,
)

from groupctl.coordinator.errors import ErrorCode
from groupctl.security.acls import (
    AccessControlEntry,
    AclBinding,
    Operation,
    PatternType,
    Permission,
    ResourcePattern,
    ResourceType,
)
from tests.server.test_transaction_handlers import TOPIC, add_partitions, end, eventually, init, produce, transactional_batch
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.wire import exchange


@pytest.fixture
def node(coordinator):
    coordinator.call(coordinator.node.topics.get_or_create(TOPIC, 2))
    return coordinator


def describe(node, *transactional_ids):
    return exchange(node, DescribeTransactionsRequest(version=0, transactional_ids=list(transactional_ids)),
                    0).transaction_states


def list_transactions(node, version=2, states=(), producer_ids=(), duration=-1, pattern=None):
    fields = {"state_filters": list(states), "producer_id_filters": list(producer_ids)}
    if version >= 1:
        fields["duration_filter"] = duration
    if version >= 2:
        fields["transactional_id_pattern"] = pattern
    return exchange(node, ListTransactionsRequest(version=version, **fields), version)


def producers(node, topic, *partitions):
    request = DescribeProducersRequest(version=0, topics=[
        DescribeProducersRequest.TopicRequest(name=topic, partition_indexes=list(partitions))])
    return exchange(node, request, 0).topics[0].partitions


def test_describe_shows_an_open_transaction_with_its_partitions_and_then_its_commit(node):
    producer = init(node, "orders-tx", timeout_ms=45_000)
    add_partitions(node, "orders-tx", producer, [(TOPIC, 1), (TOPIC, 0)])
    [state] = describe(node, "orders-tx")
    assert (state.error_code, state.transactional_id, state.transaction_state) == (ErrorCode.NONE, "orders-tx", "Ongoing")
    assert (state.producer_id, state.producer_epoch) == (producer.producer_id, producer.producer_epoch)
    assert state.transaction_timeout_ms == 45_000 and state.transaction_start_time_ms > 0
    assert [(t.topic, t.partitions) for t in state.topics] == [(TOPIC, [0, 1])]
    assert end(node, "orders-tx", producer, commit=True) == ErrorCode.NONE
    eventually(lambda: describe(node, "orders-tx")[0].transaction_state == "CompleteCommit")


def test_describe_answers_each_id_in_order_with_its_own_error(node):
    init(node, "known-tx")
    states = describe(node, "never-seen", "known-tx", "")
    assert [(s.transactional_id, s.error_code) for s in states] == [
        ("never-seen", ErrorCode.TRANSACTIONAL_ID_NOT_FOUND), ("known-tx", ErrorCode.NONE), ("", ErrorCode.INVALID_REQUEST)]
    assert states[1].transaction_state == "Empty" and states[1].transaction_start_time_ms == -1


def test_describe_of_an_id_another_node_coordinates_is_not_coordinator(node):
    partition = node.node.placement.partition_of("elsewhere-tx")
    node.node.placement.serving.discard(partition)
    try:
        assert describe(node, "elsewhere-tx")[0].error_code == ErrorCode.NOT_COORDINATOR
    finally:
        node.node.placement.serving.add(partition)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_list_answers_every_coordinated_id_with_its_state_and_producer_id(node, version):
    idle = init(node, f"idle-{version}")
    busy = init(node, f"busy-{version}")
    add_partitions(node, f"busy-{version}", busy, [(TOPIC, 0)])
    answer = list_transactions(node, version)
    assert answer.error_code == ErrorCode.NONE
    listed = {s.transactional_id: (s.producer_id, s.transaction_state) for s in answer.transaction_states}
    assert listed[f"idle-{version}"] == (idle.producer_id, "Empty")
    assert listed[f"busy-{version}"] == (busy.producer_id, "Ongoing")


def test_list_filters_by_state_producer_id_duration_and_pattern_and_names_unknown_states(node):
    first = init(node, "pay-1")
    add_partitions(node, "pay-1", first, [(TOPIC, 0)])
    second = init(node, "pay-2")
    init(node, "ship-1")

    def ids(**filters):
        return sorted(s.transactional_id for s in list_transactions(node, **filters).transaction_states)

    assert ids(states=["Ongoing"]) == ["pay-1"]
    assert ids(producer_ids=[second.producer_id]) == ["pay-2"]
    assert ids(pattern="pay-.*") == ["pay-1", "pay-2"]
    assert ids(pattern="pay") == []  # the whole id must match, as Kafka's
    assert ids(states=["Ongoing"], duration=3_600_000) == []
    eventually(lambda: ids(states=["Ongoing"], duration=0) == ["pay-1"])  # open for more than 0 ms
    answer = list_transactions(node, states=["Ongoing", "Sleeping"])
    assert list(answer.unknown_state_filters) == ["Sleeping"]
    assert list_transactions(node, pattern="(").error_code == ErrorCode.INVALID_REGULAR_EXPRESSION


def test_list_answers_load_in_progress_while_a_partition_loads(node):
    node.node.placement.loading.add(999)
    try:
        answer = list_transactions(node)
        assert (answer.error_code, list(answer.transaction_states)) == (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, [])
    finally:
        node.node.placement.loading.discard(999)


def test_describe_producers_shows_an_open_transaction_then_its_marker(node):
    producer = init(node, "producers-tx")
    add_partitions(node, "producers-tx", producer, [(TOPIC, 1)])
    assert produce(node, "producers-tx", 1, transactional_batch(producer)) == ErrorCode.NONE
    assert produce(node, "producers-tx", 1, transactional_batch(producer, 1)) == ErrorCode.NONE
    [partition] = producers(node, TOPIC, 1)
    assert (partition.partition_index, partition.error_code) == (1, ErrorCode.NONE)
    [state] = partition.active_producers
    assert (state.producer_id, state.producer_epoch) == (producer.producer_id, producer.producer_epoch)
    assert (state.last_sequence, state.last_timestamp, state.current_txn_start_offset) == (1, 1_000, 0)
    assert state.coordinator_epoch == -1
    assert end(node, "producers-tx", producer, commit=True) == ErrorCode.NONE

    def closed():
        [after] = producers(node, TOPIC, 1)[0].active_producers
        return after.current_txn_start_offset == -1 and after.coordinator_epoch >= 0
    eventually(closed)


def test_describe_producers_answers_each_partition_with_kafkas_errors(node):
    assert [p.active_producers for p in producers(node, TOPIC, 0)] == [[]]
    assert [p.error_code for p in producers(node, TOPIC, 7)] == [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]
    assert [p.error_code for p in producers(node, "no-such-topic", 0, 1)] == [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION] * 2
    assert [p.error_code for p in producers(node, "bad/name", 0)] == [ErrorCode.INVALID_TOPIC_EXCEPTION]


# -- authorization -----------------------------------------------------------------------------------

ANONYMOUS = "User:ANONYMOUS"


@pytest.fixture
def secured():
    node = InProcessCoordinator(node_config(authorizer=True, super_users=(ANONYMOUS,),
                                            topics=((TOPIC, 2), ("secret", 1)))).start()
    yield node
    node.stop()


def grant(node, resource_type, name, operation, pattern_type=PatternType.LITERAL):
    binding = AclBinding(ResourcePattern(resource_type, name, pattern_type),
                         AccessControlEntry(ANONYMOUS, "*", operation, Permission.ALLOW))
    assert node.call(node.node.authorizer.create([binding])) == [None]


def test_describe_and_list_show_only_the_ids_and_topics_the_principal_may_describe(secured):
    for transactional_id in ("team-a", "team-b"):
        producer = init(secured, transactional_id)
        add_partitions(secured, transactional_id, producer, [(TOPIC, 0), ("secret", 0)])
    secured.node.authorizer.rules.super_users = frozenset()  # from here on an ordinary principal
    assert [s.error_code for s in describe(secured, "team-a")] == [ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]
    assert list(list_transactions(secured).transaction_states) == []
    grant(secured, ResourceType.TRANSACTIONAL_ID, "team-a", Operation.DESCRIBE)
    grant(secured, ResourceType.TOPIC, TOPIC, Operation.DESCRIBE)
    [state] = describe(secured, "team-a")
    assert state.error_code == ErrorCode.NONE
    assert [(t.topic, t.partitions) for t in state.topics] == [(TOPIC, [0])]  # "secret" left out
    assert [s.transactional_id for s in list_transactions(secured).transaction_states] == ["team-a"]


def test_describe_producers_needs_read_on_the_topic(secured):
    secured.node.authorizer.rules.super_users = frozenset()
    assert [p.error_code for p in producers(secured, TOPIC, 0)] == [ErrorCode.TOPIC_AUTHORIZATION_FAILED]
    grant(secured, ResourceType.TOPIC, TOPIC, Operation.DESCRIBE)
    assert [p.error_code for p in producers(secured, TOPIC, 0)] == [ErrorCode.TOPIC_AUTHORIZATION_FAILED]
    grant(secured, ResourceType.TOPIC, "txn-", Operation.READ, PatternType.PREFIXED)
    assert [p.error_code for p in producers(secured, TOPIC, 0)] == [ErrorCode.NONE]


# -- a real admin client ---------------------------------------------------------------------------

def test_kafka_pythons_admin_client_reads_what_a_librdkafka_transactional_producer_did(coordinator):
    topic = "txn-admin-seen"
    coordinator.call(coordinator.node.topics.get_or_create(topic, 1))
    producer = RdProducer({"bootstrap.servers": coordinator.bootstrap, "transactional.id": "admin-seen-tx",
                           "linger.ms": 5})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, value=b"open", partition=0)
    producer.flush(30)
    admin = KafkaAdminClient(bootstrap_servers=coordinator.bootstrap, request_timeout_ms=10_000)
    try:
        [listing] = [t for listings in admin.list_transactions().values() for t in listings
                     if t.transactional_id == "admin-seen-tx"]
        assert listing.state == TransactionState.ONGOING
        described = admin.describe_transactions(["admin-seen-tx"])["admin-seen-tx"]
        assert (described.state, described.producer_id) == (TransactionState.ONGOING, listing.producer_id)
        assert described.topic_partitions == {TopicPartition(topic, 0)}
        [state] = admin.describe_producers([TopicPartition(topic, 0)])[TopicPartition(topic, 0)].active_producers
        assert (state.producer_id, state.current_transaction_start_offset) == (listing.producer_id, 0)
        producer.commit_transaction(30)
        eventually(lambda: admin.describe_transactions(["admin-seen-tx"])["admin-seen-tx"].state
                   == TransactionState.COMPLETE_COMMIT)
    finally:
        admin.close()
