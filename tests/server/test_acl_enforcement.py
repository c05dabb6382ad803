"""Authorization on every API, as Apache Kafka enforces it, against a real node (`--authorizer`).

A PLAINTEXT connection's principal is User:ANONYMOUS, so the tests grant and deny ACLs to it (the
ACLs are written through the node's authorizer, as CreateAcls would). The table pins, per API,
the error a principal without ACLs gets and where the answer carries it; a super user's same
request never carries it. kafka-python's consumer and admin client then meet the refusals the way
applications do.
"""

from __future__ import annotations

import uuid

import pytest
from kafka import KafkaConsumer
from kafka.admin import KafkaAdminClient
from kafka.errors import GroupAuthorizationFailedError
from kafka.protocol.admin.groups import DeleteGroupsRequest, DescribeGroupsRequest, ListGroupsRequest
from kafka.protocol.admin.topics import (
    CreatePartitionsRequest,
    CreateTopicsRequest,
    DeleteRecordsRequest,
    DeleteTopicsRequest,
)
from kafka.protocol.admin.transactions import DescribeProducersRequest, DescribeTransactionsRequest
from kafka.protocol.consumer.fetch import FetchRequest
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetDeleteRequest,
    OffsetFetchRequest,
    SyncGroupRequest,
)
from kafka.protocol.consumer.offsets import ListOffsetsRequest
from kafka.protocol.metadata import FindCoordinatorRequest, MetadataRequest
from kafka.protocol.producer import (
    AddOffsetsToTxnRequest,
    AddPartitionsToTxnRequest,
    EndTxnRequest,
    InitProducerIdRequest,
    ProduceRequest,
)

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.consumer_group import ConsumerGroupDescribeRequest, ConsumerGroupHeartbeatRequest
from groupctl.protocol.extensions import GroupctlDescribeGroupRequest, GroupctlTriggerRebalanceRequest
from groupctl.security.acls import (
    AccessControlEntry,
    AclBinding,
    Operation,
    PatternType,
    Permission,
    ResourcePattern,
    ResourceType,
)
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.wire import exchange

ANONYMOUS = "User:ANONYMOUS"
TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED
GROUP_DENIED = ErrorCode.GROUP_AUTHORIZATION_FAILED
CLUSTER_DENIED = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
TXN_DENIED = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def grant(node, resource_type, name, operation, *, permission=Permission.ALLOW, principal=ANONYMOUS,
          pattern_type=PatternType.LITERAL):
    binding = AclBinding(ResourcePattern(resource_type, name, pattern_type),
                         AccessControlEntry(principal, "*", operation, permission))
    assert node.call(node.node.authorizer.create([binding])) == [None]


@pytest.fixture
def start():
    started = []

    def start_node(**config):
        node = InProcessCoordinator(node_config(**{"authorizer": True, "topics": (("orders", 1),), **config})).start()
        started.append(node)
        return node

    yield start_node
    for node in started:
        node.stop()


# -- the table: API, version, request, where the answer carries the error, the error --------------------

def join():
    protocol = JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"")
    return JoinGroupRequest[5](group_id="app", session_timeout_ms=10_000, rebalance_timeout_ms=10_000, member_id="",
                               group_instance_id=None, protocol_type="consumer", protocols=[protocol])


def commit():
    partition = OffsetCommitRequest.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
        partition_index=0, committed_offset=0, committed_leader_epoch=-1, committed_metadata="")
    topic = OffsetCommitRequest.OffsetCommitRequestTopic(name="orders", partitions=[partition])
    return OffsetCommitRequest[8](group_id="app", generation_id_or_member_epoch=-1, member_id="",
                                  group_instance_id=None, topics=[topic])


def fetch_offsets():
    topics = [OffsetFetchRequest.OffsetFetchRequestGroup.OffsetFetchRequestTopics(name="orders", partition_indexes=[0])]
    return OffsetFetchRequest[8](groups=[OffsetFetchRequest.OffsetFetchRequestGroup(group_id="app", topics=topics)],
                                 require_stable=False)


def produce():
    data = ProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=b"")
    return ProduceRequest[9](transactional_id=None, acks=1, timeout_ms=1000, topic_data=[
        ProduceRequest.TopicProduceData(name="orders", partition_data=[data])])


def transactional_produce():
    data = ProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=b"")
    return ProduceRequest[9](transactional_id="tx", acks=1, timeout_ms=1000, topic_data=[
        ProduceRequest.TopicProduceData(name="orders", partition_data=[data])])


def add_partitions():
    return AddPartitionsToTxnRequest[3](
        v3_and_below_transactional_id="tx", v3_and_below_producer_id=1, v3_and_below_producer_epoch=0,
        v3_and_below_topics=[AddPartitionsToTxnRequest.AddPartitionsToTxnTopic(name="orders", partitions=[0])])


def fetch():
    partition = FetchRequest.FetchTopic.FetchPartition(partition=0, current_leader_epoch=-1, fetch_offset=0,
                                                       last_fetched_epoch=-1, log_start_offset=-1,
                                                       partition_max_bytes=1024)
    return FetchRequest[12](replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1024, isolation_level=0,
                            session_id=0, session_epoch=-1, topics=[FetchRequest.FetchTopic(topic="orders",
                                                                                           partitions=[partition])],
                            forgotten_topics_data=[], rack_id="")


def list_offsets():
    partition = ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1,
                                                                          timestamp=-1)
    return ListOffsetsRequest[7](replica_id=-1, isolation_level=0, topics=[
        ListOffsetsRequest.ListOffsetsTopic(name="orders", partitions=[partition])])


CASES = {
    "JoinGroup": (5, join, lambda r: r.error_code, GROUP_DENIED),
    "SyncGroup": (3, lambda: SyncGroupRequest[3](group_id="app", generation_id=1, member_id="m", group_instance_id=None,
                                                 assignments=[]), lambda r: r.error_code, GROUP_DENIED),
    "Heartbeat": (3, lambda: HeartbeatRequest[3](group_id="app", generation_id=1, member_id="m",
                                                 group_instance_id=None), lambda r: r.error_code, GROUP_DENIED),
    "LeaveGroup": (3, lambda: LeaveGroupRequest[3](group_id="app", members=[
        LeaveGroupRequest.MemberIdentity(member_id="m", group_instance_id=None)]),
        lambda r: r.error_code, GROUP_DENIED),
    "OffsetCommit": (8, commit, lambda r: r.topics[0].partitions[0].error_code, GROUP_DENIED),
    "OffsetFetch": (8, fetch_offsets, lambda r: r.groups[0].error_code, GROUP_DENIED),
    "OffsetDelete": (0, lambda: OffsetDeleteRequest[0](group_id="app", topics=[]), lambda r: r.error_code,
                     GROUP_DENIED),
    "DescribeGroups": (5, lambda: DescribeGroupsRequest[5](groups=["app"], include_authorized_operations=False),
                       lambda r: r.groups[0].error_code, GROUP_DENIED),
    "DeleteGroups": (2, lambda: DeleteGroupsRequest[2](groups_names=["app"]), lambda r: r.results[0].error_code,
                     GROUP_DENIED),
    "FindCoordinator v3": (3, lambda: FindCoordinatorRequest[3](key="app", key_type=0), lambda r: r.error_code,
                           GROUP_DENIED),
    "FindCoordinator v4": (4, lambda: FindCoordinatorRequest[4](key_type=0, coordinator_keys=["app"]),
                           lambda r: r.coordinators[0].error_code, GROUP_DENIED),
    "ConsumerGroupHeartbeat": (0, lambda: ConsumerGroupHeartbeatRequest[0](
        group_id="app", member_id="", member_epoch=0, instance_id=None, rack_id=None, rebalance_timeout_ms=10_000,
        subscribed_topic_names=["orders"], server_assignor=None, topic_partitions=[]),
        lambda r: r.error_code, GROUP_DENIED),
    "ConsumerGroupDescribe": (0, lambda: ConsumerGroupDescribeRequest[0](group_ids=["app"],
                                                                         include_authorized_operations=False),
                              lambda r: r.groups[0].error_code, GROUP_DENIED),
    "GroupctlDescribeGroup": (0, lambda: GroupctlDescribeGroupRequest[0](group_id="app", after_generation=-1,
                                                                         max_wait_ms=0),
                              lambda r: r.error_code, GROUP_DENIED),
    "GroupctlTriggerRebalance": (0, lambda: GroupctlTriggerRebalanceRequest[0](group_id="app", reason=None),
                                 lambda r: r.error_code, GROUP_DENIED),
    "Metadata": (12, lambda: MetadataRequest[12](topics=[MetadataRequest.MetadataRequestTopic(name="orders")],
                                                 allow_auto_topic_creation=False),
                 lambda r: r.topics[0].error_code, TOPIC_DENIED),
    "Produce": (9, produce, lambda r: r.responses[0].partition_responses[0].error_code, TOPIC_DENIED),
    "Fetch": (12, fetch, lambda r: r.responses[0].partitions[0].error_code, TOPIC_DENIED),
    "ListOffsets": (7, list_offsets, lambda r: r.topics[0].partitions[0].error_code, TOPIC_DENIED),
    "CreateTopics": (5, lambda: CreateTopicsRequest[5](topics=[CreateTopicsRequest.CreatableTopic(
        name="new", num_partitions=1, replication_factor=1, assignments=[], configs=[])], timeout_ms=1000,
        validate_only=True), lambda r: r.topics[0].error_code, TOPIC_DENIED),
    "DeleteTopics": (5, lambda: DeleteTopicsRequest[5](topic_names=["orders"], timeout_ms=1000),
                     lambda r: r.responses[0].error_code, TOPIC_DENIED),
    "DeleteRecords": (2, lambda: DeleteRecordsRequest[2](topics=[DeleteRecordsRequest.DeleteRecordsTopic(
        name="orders", partitions=[DeleteRecordsRequest.DeleteRecordsTopic.DeleteRecordsPartition(
            partition_index=0, offset=-1)])], timeout_ms=1000),
        lambda r: r.topics[0].partitions[0].error_code, TOPIC_DENIED),
    "CreatePartitions": (2, lambda: CreatePartitionsRequest[2](topics=[CreatePartitionsRequest.CreatePartitionsTopic(
        name="orders", count=2, assignments=None)], timeout_ms=1000, validate_only=True),
        lambda r: r.results[0].error_code, TOPIC_DENIED),
    "InitProducerId": (2, lambda: InitProducerIdRequest[2](transactional_id=None, transaction_timeout_ms=60_000),
                       lambda r: r.error_code, CLUSTER_DENIED),
    "InitProducerId transactional": (4, lambda: InitProducerIdRequest[4](
        transactional_id="tx", transaction_timeout_ms=60_000, producer_id=-1, producer_epoch=-1),
        lambda r: r.error_code, TXN_DENIED),
    "FindCoordinator transaction": (3, lambda: FindCoordinatorRequest[3](key="tx", key_type=1),
                                    lambda r: r.error_code, TXN_DENIED),
    "AddPartitionsToTxn": (3, add_partitions,
                           lambda r: r.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code,
                           TXN_DENIED),
    "AddOffsetsToTxn": (3, lambda: AddOffsetsToTxnRequest[3](transactional_id="tx", producer_id=1, producer_epoch=0,
                                                             group_id="app"), lambda r: r.error_code, TXN_DENIED),
    "EndTxn": (3, lambda: EndTxnRequest[3](transactional_id="tx", producer_id=1, producer_epoch=0, committed=True),
               lambda r: r.error_code, TXN_DENIED),
    "Produce transactional": (9, transactional_produce, lambda r: r.responses[0].partition_responses[0].error_code,
                              TXN_DENIED),
    "DescribeTransactions": (0, lambda: DescribeTransactionsRequest[0](transactional_ids=["tx"]),
                             lambda r: r.transaction_states[0].error_code, TXN_DENIED),
    "DescribeProducers": (0, lambda: DescribeProducersRequest[0](topics=[DescribeProducersRequest.TopicRequest(
        name="orders", partition_indexes=[0])]), lambda r: r.topics[0].partitions[0].error_code, TOPIC_DENIED),
}


@pytest.mark.parametrize("api", CASES)
def test_a_principal_without_acls_is_refused_with_kafkas_error(start, api):
    version, build, error_of, denied = CASES[api]
    node = start()
    assert error_of(exchange(node, build(), version)) == denied


@pytest.mark.parametrize("api", CASES)
def test_a_super_user_is_never_refused(start, api):
    version, build, error_of, denied = CASES[api]
    node = start(super_users=(ANONYMOUS,))
    assert error_of(exchange(node, build(), version)) != denied


@pytest.mark.parametrize("api", ["JoinGroup", "Heartbeat", "OffsetFetch", "DescribeGroups", "Metadata", "Fetch"])
def test_allow_everyone_if_no_acl_found_lets_unguarded_resources_through(start, api):
    version, build, error_of, denied = CASES[api]
    node = start(allow_everyone_if_no_acl_found=True)
    assert error_of(exchange(node, build(), version)) != denied
    for resource_type, name in ((ResourceType.GROUP, "app"), (ResourceType.TOPIC, "orders")):
        grant(node, resource_type, name, Operation.ALL, principal="User:someone-else")  # now guarded
    assert error_of(exchange(node, build(), version)) == denied


def test_offset_commit_needs_read_on_the_group_and_then_on_each_topic(start):
    node = start()
    grant(node, ResourceType.GROUP, "app", Operation.READ)
    assert exchange(node, commit(), 8).topics[0].partitions[0].error_code == TOPIC_DENIED
    grant(node, ResourceType.TOPIC, "ord", Operation.READ, pattern_type=PatternType.PREFIXED)
    assert exchange(node, commit(), 8).topics[0].partitions[0].error_code == ErrorCode.NONE


def test_init_producer_id_is_allowed_by_write_on_any_topic(start):
    node = start()
    grant(node, ResourceType.TOPIC, "logs-", Operation.WRITE, pattern_type=PatternType.PREFIXED)
    assert exchange(node, CASES["InitProducerId"][1](), 2).error_code == ErrorCode.NONE


def test_metadata_for_every_topic_lists_only_those_the_principal_may_describe(start):
    node = start(topics=(("orders", 1), ("public", 1), ("private", 1)))
    grant(node, ResourceType.TOPIC, "public", Operation.READ)  # Read implies Describe
    grant(node, ResourceType.TOPIC, "orders", Operation.DESCRIBE)
    grant(node, ResourceType.TOPIC, "orders", Operation.DESCRIBE, permission=Permission.DENY)
    listed = exchange(node, MetadataRequest[12](topics=None, allow_auto_topic_creation=False), 12).topics
    assert [t.name for t in listed] == ["public"]


def test_auto_creating_a_topic_needs_create(start):
    node = start(auto_create_topics=True)
    grant(node, ResourceType.TOPIC, "new-", Operation.DESCRIBE, pattern_type=PatternType.PREFIXED)

    def ask(name):
        request = MetadataRequest[12](topics=[MetadataRequest.MetadataRequestTopic(name=name)],
                                      allow_auto_topic_creation=True)
        return exchange(node, request, 12).topics[0].error_code

    assert ask("new-a") == TOPIC_DENIED
    grant(node, ResourceType.CLUSTER, "kafka-cluster", Operation.CREATE)
    assert ask("new-b") == ErrorCode.NONE


def test_list_groups_shows_only_the_groups_the_principal_may_describe(start):
    node = start(super_users=(ANONYMOUS,))
    for group in ("visible", "hidden"):
        request = commit()
        request.group_id = group
        assert exchange(node, request, 8).topics[0].partitions[0].error_code == ErrorCode.NONE
    node.node.authorizer.rules.super_users = frozenset()  # from here on an ordinary principal
    grant(node, ResourceType.GROUP, "visible", Operation.DESCRIBE)
    listed = exchange(node, ListGroupsRequest[4](states_filter=[]), 4).groups
    assert [g.group_id for g in listed] == ["visible"]
    grant(node, ResourceType.CLUSTER, "kafka-cluster", Operation.DESCRIBE)
    listed = exchange(node, ListGroupsRequest[4](states_filter=[]), 4).groups
    assert sorted(g.group_id for g in listed) == ["hidden", "visible"]


def test_a_kafka_python_consumer_denied_its_group_gets_group_authorization_failed(start):
    node = start(allow_everyone_if_no_acl_found=True)
    grant(node, ResourceType.GROUP, "secret", Operation.READ, permission=Permission.DENY)
    consumer = KafkaConsumer("orders", bootstrap_servers=node.bootstrap, group_id="secret",
                             client_id=f"c-{uuid.uuid4().hex[:6]}", consumer_timeout_ms=5000,
                             request_timeout_ms=10_000)
    try:
        with pytest.raises(GroupAuthorizationFailedError):
            for _ in range(20):
                consumer.poll(timeout_ms=500)
    finally:
        consumer.close(autocommit=False)


def test_a_kafka_python_admin_lists_only_the_groups_and_topics_it_may_describe(start):
    node = start(topics=(("orders", 1), ("private", 1)), allow_everyone_if_no_acl_found=True)
    for group in ("visible", "hidden"):
        request = commit()
        request.group_id = group
        assert exchange(node, request, 8).topics[0].partitions[0].error_code == ErrorCode.NONE
    for resource_type, name in ((ResourceType.GROUP, "hidden"), (ResourceType.TOPIC, "private"),
                                (ResourceType.CLUSTER, "kafka-cluster")):
        grant(node, resource_type, name, Operation.ALL, principal="User:admin")  # guarded: not for ANONYMOUS
    admin = KafkaAdminClient(bootstrap_servers=node.bootstrap, request_timeout_ms=10_000)
    try:
        assert [g["group_id"] for g in admin.list_groups()] == ["visible"]
        assert admin.list_topics() == ["orders"]
    finally:
        admin.close()


def test_a_producer_and_consumer_with_the_acls_kafka_acls_would_grant_work_end_to_end(start):
    from kafka import KafkaProducer

    node = start()  # nothing is allowed but what is granted below (kafka-acls.sh --producer / --consumer)
    for operation in (Operation.WRITE, Operation.DESCRIBE, Operation.CREATE, Operation.READ):
        grant(node, ResourceType.TOPIC, "orders", operation)
    grant(node, ResourceType.GROUP, "app", Operation.READ)
    producer = KafkaProducer(bootstrap_servers=node.bootstrap, request_timeout_ms=10_000)
    try:
        producer.send("orders", b"paid").get(timeout=10)
    finally:
        producer.close()
    consumer = KafkaConsumer("orders", bootstrap_servers=node.bootstrap, group_id="app",
                             auto_offset_reset="earliest", consumer_timeout_ms=10_000, request_timeout_ms=10_000)
    try:
        assert next(iter(consumer)).value == b"paid"
        consumer.commit()
    finally:
        consumer.close()
    fetched = exchange(node, fetch_offsets(), 8).groups[0]
    assert (fetched.error_code, fetched.topics[0].partitions[0].committed_offset) == (ErrorCode.NONE, 1)


def test_write_on_the_transactional_id_lets_a_transactional_producer_through(start):
    node = start()
    version, build, error_of, _ = CASES["InitProducerId transactional"]
    grant(node, ResourceType.TRANSACTIONAL_ID, "tx", Operation.WRITE)
    assert error_of(exchange(node, build(), version)) == ErrorCode.NONE
    version, build, error_of, _ = CASES["FindCoordinator transaction"]
    assert error_of(exchange(node, build(), version)) == ErrorCode.NONE  # Write implies Describe
