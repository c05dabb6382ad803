"""Kafka's authorization rules, pure (`groupctl.security.rules`): what an ACL set allows.

Each case is the rule as Apache Kafka's StandardAuthorizer decides it (AuthorizerTest and
StandardAuthorizerTest in Kafka's tree pin the same behaviours).
"""

from __future__ import annotations

import pytest

from groupctl.security.acls import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclError,
    Operation,
    PatternType,
    Permission,
    ResourcePattern,
    ResourceType,
    creation_error,
    kafka_name,
    parse_operation,
)
from groupctl.security.rules import Acls, Authorizer

TOPIC, GROUP, CLUSTER = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
LITERAL, PREFIXED = PatternType.LITERAL, PatternType.PREFIXED
ALLOW, DENY = Permission.ALLOW, Permission.DENY
ALICE, BOB = "User:alice", "User:bob"
HOST = "10.0.0.1"


def authorizer(*acls: tuple, super_users=(), allow_everyone=False) -> Authorizer:
    """`acls`: (resource type, name, pattern type, principal, host, operation, permission)."""
    index = Acls()
    by_pattern: dict[ResourcePattern, set] = {}
    for resource_type, name, pattern_type, principal, host, operation, permission in acls:
        by_pattern.setdefault(ResourcePattern(resource_type, name, pattern_type), set()).add(
            AccessControlEntry(principal, host, operation, permission))
    for pattern, entries in by_pattern.items():
        index.replace(pattern, entries)
    return Authorizer(index, super_users, allow_everyone)


def allow(resource_type, name, operation, principal=ALICE, pattern_type=LITERAL, host="*"):
    return (resource_type, name, pattern_type, principal, host, operation, ALLOW)


def deny(resource_type, name, operation, principal=ALICE, pattern_type=LITERAL, host="*"):
    return (resource_type, name, pattern_type, principal, host, operation, DENY)


def test_an_allow_entry_allows_exactly_its_principal_operation_and_resource():
    rules = authorizer(allow(TOPIC, "orders", Operation.READ))
    assert rules.authorize(ALICE, HOST, Operation.READ, TOPIC, "orders")
    assert not rules.authorize(BOB, HOST, Operation.READ, TOPIC, "orders")
    assert not rules.authorize(ALICE, HOST, Operation.WRITE, TOPIC, "orders")
    assert not rules.authorize(ALICE, HOST, Operation.READ, TOPIC, "orders-v2")
    assert not rules.authorize(ALICE, HOST, Operation.READ, GROUP, "orders")


def test_deny_wins_over_allow_whatever_pattern_carries_it():
    rules = authorizer(allow(TOPIC, "*", Operation.ALL), deny(TOPIC, "pay", Operation.WRITE, pattern_type=PREFIXED))
    assert rules.authorize(ALICE, HOST, Operation.WRITE, TOPIC, "orders")
    assert not rules.authorize(ALICE, HOST, Operation.WRITE, TOPIC, "payments")
    assert rules.authorize(ALICE, HOST, Operation.READ, TOPIC, "payments")


def test_a_deny_all_entry_denies_every_operation():
    rules = authorizer(allow(GROUP, "app", Operation.READ), deny(GROUP, "app", Operation.ALL, principal="User:*"))
    assert not rules.authorize(ALICE, HOST, Operation.READ, GROUP, "app")
    assert not rules.authorize(ALICE, HOST, Operation.DESCRIBE, GROUP, "app")


def test_prefixed_patterns_apply_to_names_that_start_with_them_only():
    rules = authorizer(allow(GROUP, "app-", Operation.READ, pattern_type=PREFIXED))
    assert rules.authorize(ALICE, HOST, Operation.READ, GROUP, "app-")
    assert rules.authorize(ALICE, HOST, Operation.READ, GROUP, "app-billing")
    assert not rules.authorize(ALICE, HOST, Operation.READ, GROUP, "app")
    assert not rules.authorize(ALICE, HOST, Operation.READ, GROUP, "my-app-billing")


def test_a_literal_pattern_is_not_a_prefix():
    rules = authorizer(allow(TOPIC, "orders", Operation.READ))
    assert not rules.authorize(ALICE, HOST, Operation.READ, TOPIC, "orders-eu")


def test_the_wildcard_resource_name_covers_every_resource_of_its_type():
    rules = authorizer(allow(TOPIC, "*", Operation.READ))
    assert rules.authorize(ALICE, HOST, Operation.READ, TOPIC, "anything")
    assert not rules.authorize(ALICE, HOST, Operation.READ, GROUP, "anything")


def test_a_prefixed_star_is_an_ordinary_prefix_not_a_wildcard():
    rules = authorizer(allow(TOPIC, "*", Operation.READ, pattern_type=PREFIXED))
    assert not rules.authorize(ALICE, HOST, Operation.READ, TOPIC, "orders")
    assert rules.authorize(ALICE, HOST, Operation.READ, TOPIC, "*orders")


def test_the_wildcard_principal_stands_for_every_user():
    rules = authorizer(allow(TOPIC, "orders", Operation.READ, principal="User:*"))
    assert rules.authorize(BOB, HOST, Operation.READ, TOPIC, "orders")
    assert rules.authorize("User:ANONYMOUS", HOST, Operation.READ, TOPIC, "orders")


def test_super_users_may_do_anything_even_against_a_deny():
    rules = authorizer(deny(CLUSTER, "kafka-cluster", Operation.ALL, principal="User:*"), super_users=("User:admin",))
    assert rules.authorize("User:admin", HOST, Operation.ALTER, CLUSTER, "kafka-cluster")
    assert rules.authorize("User:admin", HOST, Operation.DELETE, TOPIC, "no-acls-at-all")
    assert not rules.authorize(ALICE, HOST, Operation.ALTER, CLUSTER, "kafka-cluster")


@pytest.mark.parametrize("granted", [Operation.READ, Operation.WRITE, Operation.DELETE, Operation.ALTER,
                                     Operation.DESCRIBE])
def test_read_write_delete_and_alter_imply_describe(granted):
    rules = authorizer(allow(TOPIC, "orders", granted))
    assert rules.authorize(ALICE, HOST, Operation.DESCRIBE, TOPIC, "orders")


@pytest.mark.parametrize("granted", [Operation.CREATE, Operation.ALTER_CONFIGS, Operation.DESCRIBE_CONFIGS,
                                     Operation.IDEMPOTENT_WRITE])
def test_other_operations_do_not_imply_describe(granted):
    rules = authorizer(allow(TOPIC, "orders", granted))
    assert not rules.authorize(ALICE, HOST, Operation.DESCRIBE, TOPIC, "orders")


def test_alter_configs_implies_describe_configs_and_nothing_implies_the_other_way():
    rules = authorizer(allow(TOPIC, "orders", Operation.ALTER_CONFIGS))
    assert rules.authorize(ALICE, HOST, Operation.DESCRIBE_CONFIGS, TOPIC, "orders")
    assert not authorizer(allow(TOPIC, "orders", Operation.DESCRIBE)).authorize(
        ALICE, HOST, Operation.READ, TOPIC, "orders")


def test_a_deny_on_read_does_not_deny_the_describe_read_would_imply():
    rules = authorizer(allow(TOPIC, "orders", Operation.DESCRIBE), deny(TOPIC, "orders", Operation.READ))
    assert rules.authorize(ALICE, HOST, Operation.DESCRIBE, TOPIC, "orders")
    assert not rules.authorize(ALICE, HOST, Operation.READ, TOPIC, "orders")


def test_allow_everyone_if_no_acl_found_applies_only_to_resources_without_any_acl():
    rules = authorizer(allow(TOPIC, "orders", Operation.READ, principal=BOB), allow_everyone=True)
    assert rules.authorize(ALICE, HOST, Operation.WRITE, TOPIC, "payments")  # no ACL at all: allowed
    assert not rules.authorize(ALICE, HOST, Operation.READ, TOPIC, "orders")  # bob's ACL makes it guarded


def test_without_allow_everyone_a_resource_without_acls_is_denied():
    assert not authorizer().authorize(ALICE, HOST, Operation.READ, TOPIC, "orders")


def test_a_prefixed_acl_guards_the_resources_it_covers_under_allow_everyone():
    rules = authorizer(allow(GROUP, "app-", Operation.READ, principal=BOB, pattern_type=PREFIXED),
                       allow_everyone=True)
    assert not rules.authorize(ALICE, HOST, Operation.READ, GROUP, "app-billing")
    assert rules.authorize(ALICE, HOST, Operation.READ, GROUP, "other")


def test_host_entries_match_their_address_or_any_host_with_star():
    rules = authorizer(allow(TOPIC, "orders", Operation.READ, host=HOST),
                       deny(TOPIC, "orders", Operation.READ, host="10.0.0.66"))
    assert rules.authorize(ALICE, HOST, Operation.READ, TOPIC, "orders")
    assert not rules.authorize(ALICE, "10.0.0.2", Operation.READ, TOPIC, "orders")
    assert not rules.authorize(ALICE, "10.0.0.66", Operation.READ, TOPIC, "orders")


def test_decisions_follow_acl_changes():
    rules = authorizer(allow(TOPIC, "orders", Operation.READ))
    assert rules.authorize(ALICE, HOST, Operation.READ, TOPIC, "orders")
    rules.acls.replace(ResourcePattern(TOPIC, "orders"), [])
    assert not rules.authorize(ALICE, HOST, Operation.READ, TOPIC, "orders")
    rules.acls.replace(ResourcePattern(TOPIC, "ord", PREFIXED),
                       [AccessControlEntry(ALICE, "*", Operation.READ, ALLOW)])
    assert rules.authorize(ALICE, HOST, Operation.READ, TOPIC, "orders")


def test_authorize_any_finds_a_write_on_some_topic_unless_a_deny_dominates_it():
    assert authorizer(allow(TOPIC, "orders", Operation.WRITE)).authorize_any(ALICE, HOST, Operation.WRITE, TOPIC)
    assert authorizer(allow(TOPIC, "o", Operation.ALL, pattern_type=PREFIXED)).authorize_any(
        ALICE, HOST, Operation.WRITE, TOPIC)
    assert not authorizer(allow(TOPIC, "orders", Operation.READ)).authorize_any(ALICE, HOST, Operation.WRITE, TOPIC)
    assert not authorizer(allow(TOPIC, "orders", Operation.WRITE),
                          deny(TOPIC, "or", Operation.WRITE, pattern_type=PREFIXED)).authorize_any(
        ALICE, HOST, Operation.WRITE, TOPIC)
    assert not authorizer(allow(TOPIC, "*", Operation.WRITE), deny(TOPIC, "*", Operation.WRITE)).authorize_any(
        ALICE, HOST, Operation.WRITE, TOPIC)


def test_filters_match_as_kafkas_binding_filters():
    literal = AclBinding(ResourcePattern(TOPIC, "orders"), AccessControlEntry(ALICE, "*", Operation.READ, ALLOW))
    wildcard = AclBinding(ResourcePattern(TOPIC, "*"), AccessControlEntry(BOB, "*", Operation.WRITE, ALLOW))
    prefixed = AclBinding(ResourcePattern(TOPIC, "ord", PREFIXED), AccessControlEntry(BOB, "*", Operation.READ, DENY))
    everything = [literal, wildcard, prefixed]

    def matching(**where):
        return [b for b in everything if AclBindingFilter(**where).matches(b)]

    assert matching() == everything
    assert matching(resource_type=TOPIC, name="orders", pattern_type=PatternType.MATCH) == everything
    assert matching(resource_type=TOPIC, name="orders", pattern_type=PatternType.ANY) == [literal]
    assert matching(name="ord", pattern_type=PREFIXED) == [prefixed]
    assert matching(principal=BOB, permission=DENY) == [prefixed]
    assert matching(operation=Operation.WRITE) == [wildcard]


def test_creation_refuses_what_kafka_refuses_and_types_groupctl_does_not_have():
    def binding(resource_type=TOPIC, name="orders", pattern_type=LITERAL, principal=ALICE, operation=Operation.READ):
        return AclBinding(ResourcePattern(resource_type, name, pattern_type),
                          AccessControlEntry(principal, "*", operation, ALLOW))

    assert creation_error(binding()) is None
    assert "kafka-cluster" in creation_error(binding(CLUSTER, "my-cluster"))
    assert creation_error(binding(CLUSTER, "kafka-cluster", operation=Operation.ALTER)) is None
    assert "empty" in creation_error(binding(name=""))
    assert "pattern type" in creation_error(binding(pattern_type=PatternType.MATCH))
    assert "operation" in creation_error(binding(operation=Operation.ANY))
    assert "Type:name" in creation_error(binding(principal="alice"))
    assert "not supported" in creation_error(binding(ResourceType.DELEGATION_TOKEN))
    assert creation_error(binding(ResourceType.TRANSACTIONAL_ID, "tx", operation=Operation.WRITE)) is None


def test_names_are_kafkas_spellings_and_parse_in_any_case():
    assert kafka_name(Operation.IDEMPOTENT_WRITE) == "IdempotentWrite"
    assert kafka_name(ResourceType.TOPIC) == "Topic"
    assert kafka_name(PREFIXED) == "prefixed"
    assert parse_operation("idempotent-write") is Operation.IDEMPOTENT_WRITE
    assert parse_operation("DESCRIBE_CONFIGS") is Operation.DESCRIBE_CONFIGS
    with pytest.raises(AclError, match="unknown operation 'Fly'"):
        parse_operation("Fly")


def test_an_ipv6_host_written_as_java_prints_it_matches_the_peer_python_reports():
    from groupctl.security.rules import same_address

    assert same_address("0:0:0:0:0:0:0:1", "::1")
    assert not same_address("0:0:0:0:0:0:0:2", "::1")
    assert not same_address("not-an-address", "::1")
