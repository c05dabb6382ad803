"""The stored ACL documents (`groupctl.layout.acls`): Kafka's ZooKeeper paths and JSON."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groupctl.layout.acls import AclDocument, StoredAcl, acl_path, name_of
from groupctl.layout.codec import LayoutError
from groupctl.security.acls import PatternType, ResourcePattern, ResourceType
from groupctl.security.stored_acls import pattern_path

ALICE_READ = StoredAcl(principal="User:alice", permission_type="Allow", operation="Read", host="*")


def test_literal_and_prefixed_patterns_live_where_kafka_keeps_them():
    assert pattern_path(ResourcePattern(ResourceType.TOPIC, "orders")) == "/kafka-acl/Topic/orders"
    assert pattern_path(ResourcePattern(ResourceType.CLUSTER, "kafka-cluster")) == "/kafka-acl/Cluster/kafka-cluster"
    assert (pattern_path(ResourcePattern(ResourceType.GROUP, "app-", PatternType.PREFIXED))
            == "/kafka-acl-extended/prefixed/Group/app-")


def test_names_are_written_raw_as_kafka_writes_them_but_what_a_znode_name_cannot_hold():
    assert acl_path("literal", "Topic", "*") == "/kafka-acl/Topic/*"
    assert acl_path("literal", "Group", "app:eu 1@x,é") == "/kafka-acl/Group/app:eu 1@x,é"
    assert acl_path("literal", "Group", "team/app") == "/kafka-acl/Group/team%2Fapp"
    assert acl_path("literal", "Group", "50%") == "/kafka-acl/Group/50%25"
    assert acl_path("literal", "Group", "tab\there") == "/kafka-acl/Group/tab%09here"
    assert [acl_path("literal", "Group", n) for n in (".", "..")] == ["/kafka-acl/Group/%2E", "/kafka-acl/Group/%2E%2E"]


@given(st.text(max_size=40))
def test_every_name_is_one_component_that_reads_back_as_itself(name):
    component = acl_path("literal", "Group", name).removeprefix("/kafka-acl/Group/")
    assert "/" not in component and component not in ("", ".", "..")
    assert name_of(component) == name


def test_a_document_is_written_as_kafka_writes_it():
    document = AclDocument(frozenset({ALICE_READ}))
    assert json.loads(document.encode()) == {
        "version": 1,
        "acls": [{"principal": "User:alice", "permissionType": "Allow", "operation": "Read", "host": "*"}]}


def test_a_document_written_by_kafka_reads_back_whatever_its_key_order():
    written_by_kafka = (b'{"version": 1, "acls": [{"host": "*", "permissionType": "Allow", '
                        b'"operation": "Read", "principal": "User:alice"}]}')
    assert AclDocument.decode("/kafka-acl/Topic/orders", written_by_kafka).acls == {ALICE_READ}


def test_empty_data_reads_as_no_acls_as_kafka_reads_it():
    assert AclDocument.decode("/kafka-acl/Topic/orders", b"").acls == frozenset()


@pytest.mark.parametrize("data", [b"[]", b'{"version":1}', b'{"version":1,"acls":[{"principal":"User:a"}]}',
                                  b'{"version":2,"acls":[]}'])
def test_a_malformed_document_is_a_layout_error_naming_its_path(data):
    with pytest.raises(LayoutError, match="/kafka-acl/Topic/orders"):
        AclDocument.decode("/kafka-acl/Topic/orders", data)
