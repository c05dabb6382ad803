"""Describe/AlterUserScramCredentials against an in-process node: real admin clients
(kafka-python's KafkaAdminClient, confluent-kafka's AdminClient) for the happy paths, raw
requests for Kafka's error rules, and the stored document checked against the password."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism as CKMechanism
from confluent_kafka.admin import UserScramCredentialDeletion as CKDeletion
from confluent_kafka.admin import UserScramCredentialUpsertion as CKUpsertion
from kafka import KafkaAdminClient
from kafka.admin import ScramMechanism, UserScramCredentialDeletion, UserScramCredentialUpsertion
from kafka.protocol.admin.users import AlterUserScramCredentialsRequest, DescribeUserScramCredentialsRequest

from groupctl.coordinator.errors import ErrorCode
from groupctl.layout.credentials import decode_credentials
from groupctl.layout.paths import user_path
from groupctl.security.scram import password_matches, salted_password
from tests.support.wire import exchange

Alter = AlterUserScramCredentialsRequest[0]
Describe = DescribeUserScramCredentialsRequest[0]


@pytest.fixture
def admin(coordinator):
    client = KafkaAdminClient(bootstrap_servers=coordinator.bootstrap, request_timeout_ms=10000)
    yield client
    client.close()


def stored(coordinator, user):
    node = coordinator.call(coordinator.node.store.get(user_path(user)))
    return decode_credentials(user, node.data) if node is not None else None


def upsertion(name, mechanism=1, iterations=4096, password="pw", salt=b"0123456789abcdef"):
    hash_name = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}.get(mechanism, "SCRAM-SHA-256")
    return Alter.ScramCredentialUpsertion(name=name, mechanism=mechanism, iterations=iterations, salt=salt,
                                          salted_password=salted_password(hash_name, password, salt, 4096))


def deletion(name, mechanism=1):
    return Alter.ScramCredentialDeletion(name=name, mechanism=mechanism)


def alter(coordinator, deletions=(), upsertions=()):
    response = exchange(coordinator, Alter(deletions=list(deletions), upsertions=list(upsertions)), 0)
    return [(r.user, r.error_code, r.error_message) for r in response.results]


def describe(coordinator, names=None):
    users = None if names is None else [Describe.UserName(name=n) for n in names]
    return exchange(coordinator, Describe(users=users), 0)


# -- real clients -----------------------------------------------------------------------------


def test_kafka_python_upserts_describes_and_deletes_credentials(coordinator, admin):
    answer = admin.alter_user_scram_credentials([
        UserScramCredentialUpsertion("alice", ScramMechanism.SCRAM_SHA_256, "alice-secret"),
        UserScramCredentialUpsertion("bob", ScramMechanism.SCRAM_SHA_512, "bob-secret", iterations=8192),
    ])
    assert answer == {"alice": None, "bob": None}
    described = admin.describe_user_scram_credentials()
    assert described == {
        "alice": {"error": None, "credential_infos": [{"mechanism": ScramMechanism.SCRAM_SHA_256, "iterations": 4096}]},
        "bob": {"error": None, "credential_infos": [{"mechanism": ScramMechanism.SCRAM_SHA_512, "iterations": 8192}]},
    }
    assert password_matches(stored(coordinator, "alice")["SCRAM-SHA-256"], "alice-secret")
    assert not password_matches(stored(coordinator, "bob")["SCRAM-SHA-512"], "alice-secret")

    assert admin.alter_user_scram_credentials(
        [UserScramCredentialDeletion("alice", ScramMechanism.SCRAM_SHA_256)]) == {"alice": None}
    assert stored(coordinator, "alice") is None
    assert list(admin.describe_user_scram_credentials()) == ["bob"]


def test_confluent_kafka_upserts_describes_and_deletes_credentials(coordinator):
    client = AdminClient({"bootstrap.servers": coordinator.bootstrap})
    futures = client.alter_user_scram_credentials([
        CKUpsertion("carol", ScramCredentialInfo(CKMechanism.SCRAM_SHA_512, 10000), b"carol-secret"),
    ])
    futures["carol"].result(10)
    assert password_matches(stored(coordinator, "carol")["SCRAM-SHA-512"], "carol-secret")

    every = client.describe_user_scram_credentials().result(10)
    [info] = every["carol"].scram_credential_infos
    assert (info.mechanism, info.iterations) == (CKMechanism.SCRAM_SHA_512, 10000)
    one = client.describe_user_scram_credentials(["carol"])["carol"].result(10)
    assert one.user == "carol"

    client.alter_user_scram_credentials([CKDeletion("carol", CKMechanism.SCRAM_SHA_512)])["carol"].result(10)
    with pytest.raises(Exception, match="RESOURCE_NOT_FOUND|does not exist"):
        client.describe_user_scram_credentials(["carol"])["carol"].result(10)


def test_a_new_password_replaces_the_old_one_and_keeps_other_mechanisms(coordinator):
    alter(coordinator, upsertions=[upsertion("dave", 1, password="old")])
    alter(coordinator, upsertions=[upsertion("dave", 2, password="other")])
    assert alter(coordinator, upsertions=[upsertion("dave", 1, password="new")]) == [("dave", 0, None)]
    creds = stored(coordinator, "dave")
    assert password_matches(creds["SCRAM-SHA-256"], "new") and not password_matches(creds["SCRAM-SHA-256"], "old")
    assert password_matches(creds["SCRAM-SHA-512"], "other")


# -- Kafka's rules ----------------------------------------------------------------------------


def test_describe_names_users_once_each_and_refuses_unknown_and_repeated_names(coordinator):
    alter(coordinator, upsertions=[upsertion("alice"), upsertion("bob", 2)])
    response = describe(coordinator, ["bob", "nobody", "alice", "bob", ""])
    assert response.error_code == 0
    results = [(r.user, r.error_code, [(c.mechanism, c.iterations) for c in r.credential_infos])
               for r in response.results]
    assert results == [
        ("bob", ErrorCode.DUPLICATE_RESOURCE, []),
        ("nobody", ErrorCode.RESOURCE_NOT_FOUND, []),
        ("alice", 0, [(1, 4096)]),
        ("", ErrorCode.RESOURCE_NOT_FOUND, []),
    ]
    assert "does not exist: nobody" in response.results[1].error_message


def test_describing_every_user_sorts_them_and_skips_documents_without_credentials(coordinator):
    alter(coordinator, upsertions=[upsertion("zed"), upsertion("amy")])
    coordinator.call(coordinator.node.store.create(user_path("quota-only"), b'{"version":1,"config":'
                                                   b'{"producer_byte_rate":"1024"}}', make_parents=True))
    for users in (None, []):
        assert [r.user for r in describe(coordinator, users).results] == ["amy", "zed"]


def test_describe_with_no_users_at_all_is_empty(coordinator):
    assert describe(coordinator).results == []


@pytest.mark.parametrize("entry, code, message", [
    (upsertion("u", mechanism=0), ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
    (upsertion("u", mechanism=3), ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
    (upsertion("u", iterations=4095), ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"),
    (upsertion("u", iterations=16385), ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"),
    (upsertion(""), ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
    (deletion("", 1), ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
    (deletion("u", 9), ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
    (deletion("u", 1), ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"),
])
def test_alter_refuses_what_kafka_refuses_and_stores_nothing(coordinator, entry, code, message):
    is_deletion = isinstance(entry, Alter.ScramCredentialDeletion)
    results = alter(coordinator, deletions=[entry] if is_deletion else [],
                    upsertions=[] if is_deletion else [entry])
    assert results == [(entry.name, code, message)]
    assert stored(coordinator, entry.name) is None


def test_a_user_named_twice_in_one_request_is_a_duplicate_and_nothing_of_it_changes(coordinator):
    alter(coordinator, upsertions=[upsertion("alice", 1, password="kept")])
    results = alter(coordinator, deletions=[deletion("alice", 1)],
                    upsertions=[upsertion("alice", 2), upsertion("bob"), upsertion("carl"), upsertion("carl", 2)])
    assert results == [
        ("alice", ErrorCode.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request"),
        ("bob", 0, None),
        ("carl", ErrorCode.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request"),
    ]
    assert list(stored(coordinator, "alice")) == ["SCRAM-SHA-256"]
    assert password_matches(stored(coordinator, "alice")["SCRAM-SHA-256"], "kept")
    assert stored(coordinator, "carl") is None and stored(coordinator, "bob") is not None


def test_a_refused_first_entry_keeps_its_error_when_the_user_comes_again(coordinator):
    results = alter(coordinator, upsertions=[upsertion("eve", iterations=1), upsertion("eve")])
    assert results == [("eve", ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations")]


def test_deleting_one_mechanism_keeps_the_other(coordinator):
    alter(coordinator, upsertions=[upsertion("fay", 1)])
    alter(coordinator, upsertions=[upsertion("fay", 2)])
    assert alter(coordinator, deletions=[deletion("fay", 1)]) == [("fay", 0, None)]
    assert list(stored(coordinator, "fay")) == ["SCRAM-SHA-512"]


def test_a_malformed_stored_document_is_an_error_for_that_user_only(coordinator):
    alter(coordinator, upsertions=[upsertion("good")])
    coordinator.call(coordinator.node.store.create(user_path("bad"), b'{"version":1,"config":'
                                                   b'{"SCRAM-SHA-256":"salt=x"}}', make_parents=True))
    results = {r.user: r for r in describe(coordinator).results}
    assert results["good"].error_code == 0
    assert results["bad"].error_code == ErrorCode.UNKNOWN_SERVER_ERROR
    assert "/config/users/bad" in results["bad"].error_message
    [(user, code, message)] = alter(coordinator, deletions=[deletion("bad")])
    assert code == ErrorCode.UNKNOWN_SERVER_ERROR and "/config/users/bad" in message


@pytest.mark.zookeeper
def test_a_node_on_zookeeper_writes_kafkas_document_at_config_users(zk_coordinator, zk_connect):
    from kazoo.client import KazooClient

    alter(zk_coordinator, upsertions=[upsertion("CN=svc,O=acme", password="pw")])
    hosts, _, chroot = zk_connect.partition("/")
    zk = KazooClient(hosts=hosts)
    zk.start(timeout=10)
    try:
        data, _ = zk.get(f"/{chroot}/config/users/CN%3Dsvc%2CO%3Dacme")
    finally:
        zk.stop()
        zk.close()
    assert data.startswith(b'{"version":1,"config":{"SCRAM-SHA-256":"salt=MDEyMzQ1Njc4OWFiY2RlZg==,stored_key=')
    assert password_matches(decode_credentials("CN=svc,O=acme", data)["SCRAM-SHA-256"], "pw")


def test_with_an_authorizer_a_principal_without_cluster_rights_is_refused_and_nothing_changes():
    from tests.support.coordinator import InProcessCoordinator, node_config

    node = InProcessCoordinator(node_config(authorizer=True, super_users=("User:admin",))).start()
    try:
        results = alter(node, deletions=[deletion("zoe")], upsertions=[upsertion("amy"), upsertion("zoe", 2)])
        assert [(user, code) for user, code, _ in results] == [
            ("amy", ErrorCode.CLUSTER_AUTHORIZATION_FAILED), ("zoe", ErrorCode.CLUSTER_AUTHORIZATION_FAILED)]
        assert "User:ANONYMOUS is not allowed Alter" in results[0][2]
        assert stored(node, "amy") is None
        response = describe(node, ["amy"])
        assert response.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        assert [(r.user, r.error_code) for r in response.results] == [("amy", ErrorCode.CLUSTER_AUTHORIZATION_FAILED)]
    finally:
        node.stop()
