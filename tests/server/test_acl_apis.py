"""DescribeAcls, CreateAcls and DeleteAcls with kafka-python's KafkaAdminClient as the judge, and
the ACL documents the node stores (Kafka's ZooKeeper paths and JSON) and watches.

A PLAINTEXT connection's principal is User:ANONYMOUS: it is made a super user to manage ACLs,
and left an ordinary user to be refused.
"""

from __future__ import annotations

import json

import pytest
from kafka.admin import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    KafkaAdminClient,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kafka.errors import ClusterAuthorizationFailedError, InvalidRequestError, SecurityDisabledError

from groupctl.security.acls import AccessControlEntry, AclBinding, Operation, Permission
from groupctl.security.acls import ResourcePattern as Pattern
from groupctl.security.acls import ResourceType as Resource
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.polling import wait_until

ANONYMOUS = "User:ANONYMOUS"
EVERYTHING = ACLFilter(principal=None, host=None, operation=ACLOperation.ANY, permission_type=ACLPermissionType.ANY,
                       resource_pattern=ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY))


def acl(resource_type, name, operation=ACLOperation.READ, principal="User:alice",
        permission=ACLPermissionType.ALLOW, pattern=ACLResourcePatternType.LITERAL, host="*"):
    return ACL(principal=principal, host=host, operation=operation, permission_type=permission,
               resource_pattern=ResourcePattern(resource_type, name, pattern))


def key(a):
    p = a.resource_pattern
    return (p.resource_type, p.resource_name, p.pattern_type, a.principal, a.host, a.operation, a.permission_type)


@pytest.fixture
def node_with():
    started = []

    def start(**config):
        node = InProcessCoordinator(node_config(**config)).start()
        started.append(node)
        return node

    yield start
    for node in started:
        node.stop()


@pytest.fixture
def admin_of():
    clients = []

    def connect(node):
        client = KafkaAdminClient(bootstrap_servers=node.bootstrap, request_timeout_ms=10_000)
        clients.append(client)
        return client

    yield connect
    for client in clients:
        client.close()


def test_without_an_authorizer_the_acl_apis_answer_security_disabled(coordinator, admin_of):
    admin = admin_of(coordinator)
    with pytest.raises(SecurityDisabledError):
        admin.describe_acls(EVERYTHING)
    result = admin.create_acls([acl(ResourceType.TOPIC, "orders")])
    assert result["succeeded"] == [] and result["failed"] == [SecurityDisabledError]
    [(_, deleted, error)] = admin.delete_acls([EVERYTHING])
    assert deleted == [] and error is SecurityDisabledError


def test_created_acls_are_described_deleted_and_stored_where_kafka_stores_them(node_with, admin_of):
    node = node_with(authorizer=True, super_users=(ANONYMOUS,))
    admin = admin_of(node)
    created = [acl(ResourceType.TOPIC, "orders"),
               acl(ResourceType.GROUP, "app-", ACLOperation.ALL, "User:bob", ACLPermissionType.DENY,
                   ACLResourcePatternType.PREFIXED),
               acl(ResourceType.CLUSTER, "kafka-cluster", ACLOperation.IDEMPOTENT_WRITE, host="10.0.0.1")]
    assert admin.create_acls(created)["failed"] == []

    described, error = admin.describe_acls(EVERYTHING)
    assert sorted(map(key, described)) == sorted(map(key, created))
    stored = node.call(node.node.store.get("/kafka-acl-extended/prefixed/Group/app-"))
    assert json.loads(stored.data) == {"version": 1, "acls": [
        {"principal": "User:bob", "permissionType": "Deny", "operation": "All", "host": "*"}]}
    assert node.call(node.node.store.get("/kafka-acl/Cluster/kafka-cluster")) is not None

    topics = ResourcePatternFilter(ResourceType.TOPIC, None, ACLResourcePatternType.ANY)
    only_topics = ACLFilter(principal=None, host=None, operation=ACLOperation.ANY,
                            permission_type=ACLPermissionType.ANY, resource_pattern=topics)
    [(_, deleted, error)] = admin.delete_acls([only_topics])
    assert [key(a) for a in deleted] == [key(created[0])]
    assert node.call(node.node.store.get("/kafka-acl/Topic/orders")) is None  # no ACL left: no document
    assert sorted(map(key, admin.describe_acls(EVERYTHING)[0])) == sorted(map(key, created[1:]))


def test_a_match_filter_describes_every_acl_that_applies_to_a_resource(node_with, admin_of):
    node = node_with(authorizer=True, super_users=(ANONYMOUS,))
    admin = admin_of(node)
    admin.create_acls([acl(ResourceType.GROUP, "app-billing"), acl(ResourceType.GROUP, "*"),
                       acl(ResourceType.GROUP, "app-", pattern=ACLResourcePatternType.PREFIXED),
                       acl(ResourceType.GROUP, "other")])
    applying = ACLFilter(principal=None, host=None, operation=ACLOperation.ANY, permission_type=ACLPermissionType.ANY,
                         resource_pattern=ResourcePatternFilter(ResourceType.GROUP, "app-billing",
                                                                ACLResourcePatternType.MATCH))
    assert sorted(a.resource_pattern.resource_name for a in admin.describe_acls(applying)[0]) == [
        "*", "app-", "app-billing"]


def test_managing_acls_needs_describe_or_alter_on_the_cluster(node_with, admin_of):
    node = node_with(authorizer=True)
    admin = admin_of(node)
    with pytest.raises(ClusterAuthorizationFailedError, match="User:ANONYMOUS is not allowed Describe"):
        admin.describe_acls(EVERYTHING)
    assert admin.create_acls([acl(ResourceType.TOPIC, "orders")])["failed"] == [ClusterAuthorizationFailedError]
    [(_, _, error)] = admin.delete_acls([EVERYTHING])
    assert error is ClusterAuthorizationFailedError

    node.call(node.node.authorizer.create([_binding(Resource.CLUSTER, "kafka-cluster", Operation.ALTER, ANONYMOUS)]))
    described, _ = admin.describe_acls(EVERYTHING)  # Alter on the Cluster implies Describe
    assert [a.principal for a in described] == [ANONYMOUS]


def test_an_acl_that_is_not_valid_is_refused_alone(node_with, admin_of):
    node = node_with(authorizer=True, super_users=(ANONYMOUS,))
    admin = admin_of(node)
    result = admin.create_acls([acl(ResourceType.CLUSTER, "my-cluster"), acl(ResourceType.TOPIC, "orders"),
                                acl(ResourceType.TOPIC, "orders", principal="alice")])
    assert [key(a) for a in result["succeeded"]] == [key(acl(ResourceType.TOPIC, "orders"))]
    assert result["failed"] == [InvalidRequestError, InvalidRequestError]


def test_acls_written_to_the_store_by_another_writer_reach_the_node_through_its_watch(node_with):
    node = node_with(authorizer=True)
    store = node.node.store
    document = b'{"version":1,"acls":[{"host":"*","permissionType":"Allow","operation":"Read","principal":"User:x"}]}'
    node.call(store.create("/kafka-acl/Topic/orders", document))
    rules = node.node.authorizer.rules
    wait_until(lambda: rules.authorize("User:x", "1.2.3.4", Operation.READ, Resource.TOPIC, "orders"), 10,
               message="the watch to report the new document")
    version = node.call(store.get("/kafka-acl/Topic/orders")).version
    node.call(store.delete_if_version("/kafka-acl/Topic/orders", version))
    wait_until(lambda: not rules.authorize("User:x", "1.2.3.4", Operation.READ, Resource.TOPIC, "orders"), 10,
               message="the watch to report the deletion")


def test_a_node_loads_the_stored_acls_before_it_serves(node_with, tmp_path):
    first = InProcessCoordinator(node_config(authorizer=True, data_dir=tmp_path)).start()
    try:
        first.call(first.node.authorizer.create([_binding(Resource.GROUP, "app", Operation.READ)]))
    finally:
        first.stop()
    again = node_with(authorizer=True, data_dir=tmp_path)
    assert again.node.authorizer.rules.authorize("User:alice", "1.2.3.4", Operation.READ, Resource.GROUP, "app")


@pytest.mark.zookeeper
def test_an_acl_created_through_one_node_is_enforced_by_another(node_with, admin_of, zk_connect, tmp_path):
    # kafka-python's admin client sends each request to either node: both let it manage ACLs.
    first = node_with(authorizer=True, super_users=(ANONYMOUS,), zk=zk_connect, data_dir=tmp_path / "a")
    second = node_with(authorizer=True, super_users=(ANONYMOUS,), zk=zk_connect, node_id=1, data_dir=tmp_path / "b")
    assert admin_of(first).create_acls([acl(ResourceType.GROUP, "app")])["failed"] == []
    on_first, on_second = first.node.authorizer.rules, second.node.authorizer.rules
    wait_until(lambda: all(r.authorize("User:alice", "127.0.0.1", Operation.READ, Resource.GROUP, "app")
                           for r in (on_first, on_second)), 15, message="both nodes' watches")
    [(_, deleted, _)] = admin_of(first).delete_acls([EVERYTHING])
    assert len(deleted) == 1
    wait_until(lambda: not any(r.authorize("User:alice", "127.0.0.1", Operation.READ, Resource.GROUP, "app")
                               for r in (on_first, on_second)), 15, message="both nodes' watches to see the deletion")


def _binding(resource_type, name, operation, principal="User:alice"):
    return AclBinding(Pattern(resource_type, name), AccessControlEntry(principal, "*", operation, Permission.ALLOW))


def test_confluent_kafkas_admin_client_creates_describes_and_deletes_acls(node_with):
    from confluent_kafka.admin import (AclBinding as Binding, AclBindingFilter as BindingFilter, AclOperation,
                                       AclPermissionType, AdminClient, ResourcePatternType, ResourceType as Type)

    node = node_with(authorizer=True, super_users=(ANONYMOUS,))
    admin = AdminClient({"bootstrap.servers": node.bootstrap})
    binding = Binding(Type.GROUP, "app-", ResourcePatternType.PREFIXED, "User:alice", "*", AclOperation.READ,
                      AclPermissionType.ALLOW)
    for future in admin.create_acls([binding]).values():
        future.result(timeout=10)
    everything = BindingFilter(Type.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
                               AclPermissionType.ANY)
    assert admin.describe_acls(everything).result(timeout=10) == [binding]
    [deleted] = admin.delete_acls([everything]).values()
    assert deleted.result(timeout=10) == [binding]
    assert admin.describe_acls(everything).result(timeout=10) == []
