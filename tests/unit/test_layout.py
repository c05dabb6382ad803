"""The stored formats (groupctl.layout): each codec writes what earlier releases wrote, byte for
byte, reads it back equal, and turns a malformed document or one from a newer groupctl into a
LayoutError naming its path (never a KeyError)."""

from __future__ import annotations

import pytest

from groupctl.layout.brokers import BrokerRegistration, node_id_of
from groupctl.layout.codec import LayoutError
from groupctl.layout.coordinators import MAX_GROUP_PARTITIONS, ClusterConfig, PartitionElection, PartitionLeader
from groupctl.layout.paths import (
    decode_name,
    encode_name,
    group_path,
    leader_path,
    legacy_group_path,
    offset_topic_path,
    partition_path,
    rebalance_request_path,
    topic_path,
)
from groupctl.layout.offsets import OffsetsDocument
from groupctl.layout.rebalance_requests import RebalanceRequest
from groupctl.layout.topics import TopicDocument

# Documents as the release before groupctl.layout wrote them (the bytes its code produced for
# these values), with the arguments that decode them.
WRITTEN_BEFORE = [
    (BrokerRegistration(3, "127.0.0.1", 9094, 1764090000000), (3,),
     b'{"host":"127.0.0.1","port":9094,"node_id":3,"started_at_ms":1764090000000}'),
    (ClusterConfig(50), (), b'{"version":1,"group_partitions":50}'),
    (PartitionElection(7, 2, 1764090000123), (12,), b'{"version":1,"epoch":7,"node_id":2,"elected_at_ms":1764090000123}'),
    (PartitionLeader(2, 7), (12,), b'{"node_id":2,"epoch":7}'),
    (RebalanceRequest(1764090000000, "after a deploy"), ("orders",),
     b'{"requested_at_ms":1764090000000,"reason":"after a deploy"}'),
    (RebalanceRequest(1764090000000, None), ("orders",), b'{"requested_at_ms":1764090000000,"reason":null}'),
    (TopicDocument("5f1c0de2-7a8e-4b3c-9d21-0a1b2c3d4e5f", {0: [1, 2], 1: [2, 0]}), ("orders",),
     b'{"version":1,"topic_id":"5f1c0de2-7a8e-4b3c-9d21-0a1b2c3d4e5f","partitions":{"0":[1,2],"1":[2,0]}}'),
]


@pytest.mark.parametrize("document, where, data", WRITTEN_BEFORE, ids=lambda value: type(value).__name__)
def test_every_small_document_is_written_as_before_and_read_back_equal(document, where, data):
    assert document.encode() == data
    assert type(document).decode(*where, data) == document


@pytest.mark.parametrize("codec, where, data, problem", [
    (BrokerRegistration, (3,), b"not json", "/brokers/ids/3: not JSON"),
    (BrokerRegistration, (3,), b"[1, 2]", "/brokers/ids/3: not a JSON object but list"),
    (BrokerRegistration, (3,), b'{"host": "h"}', '/brokers/ids/3: "port" must be an integer, not None'),
    (BrokerRegistration, (3,), b'{"host": "h", "port": 70000}', '"port" must be within 0..65535'),
    (ClusterConfig, (), b'{"version": 1, "group_partitions": 0}', '/coordinators/config: "group_partitions" must'),
    (ClusterConfig, (), b'{"version": 2, "group_partitions": 50}', "version 2 is newer than this groupctl reads"),
    (PartitionElection, (4,), b'{"version": 1, "node_id": 1}', '/coordinators/partitions/4: "epoch" must be'),
    (PartitionLeader, (4,), b'{"node_id": true, "epoch": 1}', '/coordinators/partitions/4/leader: "node_id"'),
    (RebalanceRequest, ("a/b",), b'{"reason": 5}', '/coordinators/rebalance-requests/a%2Fb: "reason" must be a string'),
    (TopicDocument, ("t",), b'{"version": 1, "partitions": {"0": [0]}}', '/brokers/topics/t: "topic_id" must be'),
    (TopicDocument, ("t",), b'{"topic_id": "x", "partitions": {"0": [0], "2": [0]}}', "are not numbered 0..n-1"),
    (TopicDocument, ("t",), b'{"topic_id": "x", "partitions": {"0": [0], "1": [0, 1]}}', "different replica counts"),
    (TopicDocument, ("t",), b'{"topic_id": "x", "partitions": {"0": []}}', "are not a non-empty list of node ids"),
    (OffsetsDocument.decode, ("/groups/g/offsets/t",), b'{"version": 1, "partitions": [1]}',
     '/groups/g/offsets/t: "partitions" must be an object of entries'),
    (OffsetsDocument.decode, ("/groups/g/offsets/t",), b'{"version": 3, "partitions": {}}', "version 3 is newer"),
])
def test_a_malformed_or_newer_document_is_a_layout_error_naming_its_path(codec, where, data, problem):
    decode = codec if callable(codec) and not isinstance(codec, type) else codec.decode
    with pytest.raises(LayoutError) as raised:
        decode(*where, data)
    assert problem in str(raised.value)


def test_an_offsets_document_is_written_as_before_and_a_commit_replaces_one_entry():
    before = (b'{"version":1,"partitions":{"0":{"offset":42,"leader_epoch":-1,"metadata":"",'
              b'"commit_timestamp_ms":1764090000000},"1":{"offset":7,"leader_epoch":3,"metadata":"m\\u00fc",'
              b'"commit_timestamp_ms":1764090000001}}}')
    document = OffsetsDocument.decode("/groups/g/offsets/t", before)
    assert document.encode() == before
    after = document.with_commit(1, 8, 3, "", 1764090000002)
    assert after.partitions["1"] == {"offset": 8, "leader_epoch": 3, "metadata": "", "commit_timestamp_ms": 1764090000002}
    assert after.encode().startswith(before[:before.index(b',"1"')])
    assert OffsetsDocument.decode("/p", after.encode()).partitions == after.partitions


def test_optional_fields_may_be_absent_and_a_missing_version_is_1():
    assert BrokerRegistration.decode(1, b'{"host":"h","port":1}') == BrokerRegistration(1, "h", 1, None)
    assert PartitionElection.decode(0, b'{"epoch":1,"node_id":0}') == PartitionElection(1, 0, None)
    assert RebalanceRequest.decode("g", b"{}") == RebalanceRequest(None, None)
    assert RebalanceRequest.decode("g", b'{"reason":""}').reason is None
    assert ClusterConfig.decode(b'{"group_partitions":%d}' % MAX_GROUP_PARTITIONS).group_partitions == MAX_GROUP_PARTITIONS


def test_names_are_percent_encoded_into_one_path_component_and_back():
    for name in ("orders-v2.eu_1", "a/b", "", ".", "..", "ü ber", "%"):
        component = encode_name(name)
        assert "/" not in component and component not in ("", ".", "..")
        assert decode_name(component) == name
    assert encode_name("orders-v2.eu_1") == "orders-v2.eu_1"


def test_every_path_is_where_docs_zookeeper_layout_puts_it():
    assert group_path("a/b") == "/groups/a%2Fb"
    assert offset_topic_path("g", "t/1") == "/groups/g/offsets/t%2F1"
    assert topic_path("orders") == "/brokers/topics/orders"
    assert (partition_path(7), leader_path(7)) == ("/coordinators/partitions/7", "/coordinators/partitions/7/leader")
    assert rebalance_request_path("a/b") == "/coordinators/rebalance-requests/a%2Fb"
    assert legacy_group_path("g") == "/consumers/g" and legacy_group_path("a/b") is None
    assert (node_id_of("12"), node_id_of("x"), node_id_of("-1")) == (12, None, None)
