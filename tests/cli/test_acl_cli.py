"""`groupctl acl list|add|remove` through CliRunner, with kafka-acls.sh's options: against an
in-process node started with the authorizer (--bootstrap), one without it, and directly against
a real ZooKeeper that a node reads (--zk)."""

from __future__ import annotations

import json

import pytest
from confluent_kafka import KafkaException
from confluent_kafka import Producer as RdProducer
from typer.testing import CliRunner

from groupctl.cli.app import app
from groupctl.security.acls import Operation, ResourceType
from tests.support.cli import assert_one_line_error
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.polling import wait_until

ANONYMOUS = "User:ANONYMOUS"
CLIENT_TIMEOUT_S = 30


def run(args: list[str], stdin: str | None = None):
    return CliRunner().invoke(app, args, input=stdin, env={"GROUPCTL_BOOTSTRAP": None, "GROUPCTL_ZK": None},
                              catch_exceptions=False)


@pytest.fixture
def guarded():
    """A node with the authorizer on; User:ANONYMOUS (every PLAINTEXT client) is a super user."""
    node = InProcessCoordinator(node_config(authorizer=True, super_users=(ANONYMOUS,))).start()
    yield node
    node.stop()


def test_add_list_and_remove_with_kafka_acls_spellings(guarded):
    boot = ["--bootstrap", guarded.bootstrap]
    added = run([*boot, "acl", "add", "--allow-principal", "User:alice", "--operation", "Read",
                 "--operation", "describe", "--topic", "orders", "--group", "app"])
    assert added.exit_code == 0, added.output
    assert added.stdout.splitlines() == [
        "added: Allow User:alice Read from * on Topic orders (literal)",
        "added: Allow User:alice Describe from * on Topic orders (literal)",
        "added: Allow User:alice Read from * on Group app (literal)",
        "added: Allow User:alice Describe from * on Group app (literal)"]
    run([*boot, "acl", "add", "--deny-principal", "User:bob", "--deny-host", "10.0.0.9", "--group", "app-",
         "--resource-pattern-type", "prefixed"])

    listed = run([*boot, "acl", "list"])
    assert listed.stdout.splitlines()[0].split() == [
        "RESOURCE-TYPE", "NAME", "PATTERN-TYPE", "PRINCIPAL", "HOST", "OPERATION", "PERMISSION"]
    assert [line.split() for line in listed.stdout.splitlines()[1:]] == [
        ["Topic", "orders", "literal", "User:alice", "*", "Read", "Allow"],
        ["Topic", "orders", "literal", "User:alice", "*", "Describe", "Allow"],
        ["Group", "app", "literal", "User:alice", "*", "Read", "Allow"],
        ["Group", "app", "literal", "User:alice", "*", "Describe", "Allow"],
        ["Group", "app-", "prefixed", "User:bob", "10.0.0.9", "All", "Deny"]]
    applying = json.loads(run([*boot, "--output", "json", "acl", "list", "--group", "app-billing",
                               "--resource-pattern-type", "match"]).stdout)
    assert applying == [{"resource_type": "Group", "name": "app-", "pattern_type": "prefixed", "principal": "User:bob",
                         "host": "10.0.0.9", "operation": "All", "permission_type": "Deny"}]
    assert guarded.node.authorizer.rules.authorize("User:alice", "1.2.3.4", Operation.READ, ResourceType.GROUP, "app")

    removed = run([*boot, "acl", "remove", "--allow-principal", "User:alice", "--operation", "Read", "--topic",
                   "orders", "--force"])
    assert removed.stdout.splitlines() == ["removed: Allow User:alice Read from * on Topic orders (literal)"]
    everything = json.loads(run([*boot, "acl", "remove", "--group", "app", "--topic", "orders", "--force",
                                 "--output", "json"]).stdout)
    assert sorted((b["name"], b["operation"]) for b in everything["removed"]) == [
        ("app", "Describe"), ("app", "Read"), ("orders", "Describe")]
    assert run([*boot, "acl", "remove", "--group", "app", "--force"]).stdout.strip() == "no ACL matched"
    assert len(json.loads(run([*boot, "acl", "list", "--output", "json"]).stdout)) == 1


def test_remove_asks_first_and_refuses_to_guess_off_a_terminal(guarded):
    boot = ["--bootstrap", guarded.bootstrap]
    run([*boot, "acl", "add", "--allow-principal", "User:alice", "--topic", "orders"])
    result = run([*boot, "acl", "remove", "--topic", "orders"])
    assert_one_line_error(result, 2, "asks for confirmation", "--force")
    assert len(json.loads(run([*boot, "acl", "list", "--output", "json"]).stdout)) == 1


def test_a_node_without_an_authorizer_is_named_in_one_line(coordinator):
    result = run(["--bootstrap", coordinator.bootstrap, "acl", "list"])
    assert_one_line_error(result, 1, "the node has no authorizer (start it with --authorizer)")


def test_a_principal_without_alter_on_the_cluster_is_told_what_it_lacks():
    node = InProcessCoordinator(node_config(authorizer=True)).start()
    try:
        result = run(["--bootstrap", node.bootstrap, "acl", "add", "--allow-principal", "User:alice", "--topic", "t"])
        assert_one_line_error(result, 1, "not authorized to add ACLs", "needs Alter on the Cluster",
                              "User:ANONYMOUS is not allowed Alter")
    finally:
        node.stop()


def test_transactional_id_acls_decide_which_transactional_producers_may_run(guarded):
    boot = ["--bootstrap", guarded.bootstrap]
    guarded.call(guarded.node.topics.get_or_create("pay-out", 1))
    added = run([*boot, "acl", "add", "--allow-principal", ANONYMOUS, "--operation", "Write", "--operation",
                 "Describe", "--transactional-id", "pay-", "--resource-pattern-type", "prefixed"])
    assert added.stdout.splitlines() == [
        f"added: Allow {ANONYMOUS} Write from * on TransactionalId pay- (prefixed)",
        f"added: Allow {ANONYMOUS} Describe from * on TransactionalId pay- (prefixed)"]
    run([*boot, "acl", "add", "--allow-principal", ANONYMOUS, "--operation", "Write", "--topic", "pay-out"])
    listed = json.loads(run([*boot, "--output", "json", "acl", "list", "--transactional-id", "pay-",
                             "--resource-pattern-type", "prefixed"]).stdout)
    assert [(b["resource_type"], b["operation"]) for b in listed] == [
        ("TransactionalId", "Write"), ("TransactionalId", "Describe")]
    guarded.node.authorizer.rules.super_users = frozenset()  # from here on ANONYMOUS has only its ACLs

    allowed = RdProducer({"bootstrap.servers": guarded.bootstrap, "transactional.id": "pay-1"})
    allowed.init_transactions(CLIENT_TIMEOUT_S)
    allowed.begin_transaction()
    allowed.produce("pay-out", value=b"paid", partition=0)
    allowed.commit_transaction(CLIENT_TIMEOUT_S)
    refused = RdProducer({"bootstrap.servers": guarded.bootstrap, "transactional.id": "refund-1"})
    with pytest.raises(KafkaException, match="TRANSACTIONAL_ID_AUTHORIZATION_FAILED"):
        refused.init_transactions(CLIENT_TIMEOUT_S)

    guarded.node.authorizer.rules.super_users = frozenset({ANONYMOUS})
    removed = run([*boot, "--output", "json", "acl", "remove", "--transactional-id", "pay-",
                   "--resource-pattern-type", "prefixed", "--force"])
    assert len(json.loads(removed.stdout)["removed"]) == 2


@pytest.mark.parametrize("args, fragment", [
    (["add", "--topic", "orders"], "--allow-principal or --deny-principal"),
    (["add", "--allow-principal", "alice", "--topic", "orders"], "Type:name"),
    (["add", "--allow-principal", "User:a", "--operation", "Fly", "--topic", "orders"], "unknown operation 'Fly'"),
    (["add", "--allow-principal", "User:a", "--operation", "IdempotentWrite", "--group", "g"],
     "Group only supports operations"),
    (["add", "--allow-principal", "User:a", "--topic", "t", "--resource-pattern-type", "match"],
     "not valid when adding ACLs"),
    (["add", "--allow-principal", "User:a"], "give at least one resource"),
    (["add", "--allow-principal", "User:a", "--operation", "Read", "--transactional-id", "tx"],
     "TransactionalId only supports operations All, Describe, Write"),
    (["add", "--allow-principal", "User:a", "--cluster", "--resource-pattern-type", "prefixed"], "--cluster"),
    (["remove", "--force"], "give at least one resource"),
    (["list"], "needs --bootstrap HOST:PORT or --zk"),
])
def test_bad_input_is_a_usage_error_before_anything_is_sent(args, fragment):
    source = [] if args == ["list"] else ["--bootstrap", "127.0.0.1:1"]
    assert_one_line_error(run([*source, "acl", *args]), 2, fragment)


@pytest.mark.zookeeper
def test_acls_written_with_zk_are_enforced_by_a_node_on_that_zookeeper(zk_connect, tmp_path):
    zk = ["--zk", zk_connect]
    added = run([*zk, "acl", "add", "--allow-principal", "User:alice", "--operation", "Read", "--group", "app",
                 "--group", "*"])
    assert added.exit_code == 0, added.output
    assert [b["name"] for b in json.loads(run([*zk, "--output", "json", "acl", "list"]).stdout)] == ["*", "app"]
    node = InProcessCoordinator(node_config(authorizer=True, zk=zk_connect, data_dir=tmp_path)).start()
    try:
        rules = node.node.authorizer.rules
        assert rules.authorize("User:alice", "1.2.3.4", Operation.READ, ResourceType.GROUP, "app")
        removed = run([*zk, "acl", "remove", "--group", "*", "--force", "--output", "json"])
        assert [b["name"] for b in json.loads(removed.stdout)["removed"]] == ["*"]
        run([*zk, "acl", "remove", "--group", "app", "--force"])
        wait_until(lambda: not rules.authorize("User:alice", "1.2.3.4", Operation.READ, ResourceType.GROUP, "app"),
                   15, message="the node's watch to see the removal")
    finally:
        node.stop()
