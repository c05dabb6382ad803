"""The stored formats (groupctl.layout): each codec writes what earlier releases wrote, byte for
byte, reads it back equal, and turns a malformed document or one from a newer groupctl into a
LayoutError naming its path (never a KeyError). The files of tests/fixtures/layout are what
releases before groupctl.layout stored (its README says how they were captured)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groupctl.layout import journal
from groupctl.layout.brokers import BrokerRegistration, node_id_of
from groupctl.layout.codec import LayoutError
from groupctl.layout.configs import decode_config, encode_config
from groupctl.layout.coordinators import MAX_GROUP_PARTITIONS, ClusterConfig, PartitionElection, PartitionLeader
from groupctl.layout.groups import GROUP_TYPES, GroupDocument, GroupMember, LastRebalance
from groupctl.layout.paths import (
    CONFIG_BROKERS,
    CONFIG_GROUPS,
    CONFIG_TOPICS,
    config_path,
    decode_name,
    encode_name,
    group_path,
    leader_path,
    legacy_group_path,
    offset_topic_path,
    partition_path,
    rebalance_request_path,
    topic_path,
    transaction_path,
)
from groupctl.layout.offsets import OffsetsDocument
from groupctl.layout.pending_offsets import NO_COORDINATOR_EPOCH, PendingOffsetsDocument
from groupctl.layout.rebalance_requests import RebalanceRequest
from groupctl.layout.topics import TopicDocument
from groupctl.layout.transactions import TransactionDocument

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
    (TopicDocument("5f1c0de2-7a8e-4b3c-9d21-0a1b2c3d4e5f", {0: [1], 1: [2]}, {1: 3}), ("orders",),
     b'{"version":1,"topic_id":"5f1c0de2-7a8e-4b3c-9d21-0a1b2c3d4e5f","partitions":{"0":[1],"1":[2]},'
     b'"leader_epochs":{"1":3}}'),
]

# Documents introduced since, with the bytes they are written as (a change to these is a format change).
WRITTEN_SINCE = [
    (TransactionDocument("payments-tx/1", 4001, -1, 3, 2, 60000, "Ongoing",
                         frozenset({("payments", 2), ("payments", 0), ("audit", 0)}), 1764090000000, 1764090000050),
     ("payments-tx/1",),
     b'{"version":1,"transactional_id":"payments-tx/1","producer_id":4001,"previous_producer_id":-1,'
     b'"producer_epoch":3,"last_producer_epoch":2,"timeout_ms":60000,"state":"Ongoing",'
     b'"partitions":{"audit":[0],"payments":[0,2]},"start_ms":1764090000000,"last_update_ms":1764090000050}'),
    (TransactionDocument("t", 7, 6, 0, -1, 1, "CompleteAbort", frozenset(), -1, 0), ("t",),
     b'{"version":1,"transactional_id":"t","producer_id":7,"previous_producer_id":6,"producer_epoch":0,'
     b'"last_producer_epoch":-1,"timeout_ms":1,"state":"CompleteAbort","partitions":{},"start_ms":-1,'
     b'"last_update_ms":0}'),
]
TX = (b'{"version":1,"transactional_id":"t","producer_id":7,"previous_producer_id":-1,"producer_epoch":0,'
      b'"last_producer_epoch":-1,"timeout_ms":1,"state":"Ongoing","partitions":{"p":[0]},"start_ms":5,'
      b'"last_update_ms":5}')


@pytest.mark.parametrize("document, where, data", WRITTEN_BEFORE + WRITTEN_SINCE, ids=lambda value: type(value).__name__)
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
    (TopicDocument, ("t",), b'{"topic_id": "x", "partitions": {"0": [0]}, "leader_epochs": {"1": 2}}',
     '"leader_epochs" must map partitions to epochs >= 0'),
    (TopicDocument, ("t",), b'{"topic_id": "x", "partitions": {"0": [0]}, "leader_epochs": {"0": -1}}',
     '"leader_epochs" must map partitions to epochs >= 0'),
    (OffsetsDocument.decode, ("/groups/g/offsets/t",), b'{"version": 1, "partitions": [1]}',
     '/groups/g/offsets/t: "partitions" must be an object of entries'),
    (OffsetsDocument.decode, ("/groups/g/offsets/t",), b'{"version": 3, "partitions": {}}', "version 3 is newer"),
    (OffsetsDocument.decode, ("/groups/g/offsets/t",), b'{"partitions": {"0": {"leader_epoch": -1}}}',
     '/groups/g/offsets/t: partition 0: "offset" must be an integer, not None'),
    (OffsetsDocument.decode, ("/groups/g/offsets/t",),
     b'{"partitions": {"0": {"offset": 1, "leader_epoch": -1, "metadata": 5, "commit_timestamp_ms": 0}}}',
     'partition 0: "metadata" must be a string'),
    (OffsetsDocument.decode, ("/groups/g/offsets/t",), b'{"partitions": {"x": {}}}', "partition 'x' is not a"),
    (OffsetsDocument.decode, ("/groups/g/offsets/t",), '{"partitions": {"²": {}}}'.encode(), "is not a partition"),
    (OffsetsDocument.decode, ("/groups/g/offsets/t",), b'{"partitions": {"0": 7}}', "partition 0: the entry must"),
    (TransactionDocument, ("a/b",), TX, '/transactions/a%2Fb: "transactional_id" is \'t\', not the id of its path'),
    (TransactionDocument, ("t",), TX.replace(b'"version":1', b'"version":2'), "version 2 is newer"),
    (TransactionDocument, ("t",), TX.replace(b'"Ongoing"', b'"Open"'), '/transactions/t: "state" must be one of'),
    (TransactionDocument, ("t",), TX.replace(b'"producer_epoch":0', b'"producer_epoch":32768'),
     '"producer_epoch" must be within -1..32767'),
    (TransactionDocument, ("t",), TX.replace(b'"timeout_ms":1', b'"timeout_ms":0'), '"timeout_ms" must be within'),
    (TransactionDocument, ("t",), TX.replace(b'[0]', b'[-1]'), '/transactions/t: "partitions" must be an object'),
    (TransactionDocument, ("t",), TX.replace(b'[0]', b'[true]'), '"partitions" must be an object'),
    (TransactionDocument, ("t",), TX.replace(b'"start_ms":5,', b''), '"start_ms" must be an integer, not None'),
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


def test_a_partition_not_listed_in_leader_epochs_is_at_epoch_0():
    document = TopicDocument.decode("t", b'{"topic_id": "x", "partitions": {"0": [0], "1": [0]}, "leader_epochs": {"0": 0}}')
    assert document.leader_epochs == {}
    assert TopicDocument.decode("t", b'{"topic_id": "x", "partitions": {"0": [0]}}').leader_epochs == {}


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
    assert transaction_path("a/b") == "/transactions/a%2Fb"
    assert legacy_group_path("g") == "/consumers/g" and legacy_group_path("a/b") is None
    assert (node_id_of("12"), node_id_of("x"), node_id_of("-1")) == (12, None, None)


# --- stored by earlier releases (tests/fixtures/layout) -----------------------------------------

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "layout"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


STORED_BEFORE = {
    "52f3efb-broker-registration.json": lambda data: BrokerRegistration.decode(3, data),
    "52f3efb-topic.json": lambda data: TopicDocument.decode("payments", data),
    "52f3efb-offsets-stable-consumer.json": lambda data: OffsetsDocument.decode(
        offset_topic_path("orders-app", "payments"), data),
    "52f3efb-offsets-simple-commits.json": lambda data: OffsetsDocument.decode(
        offset_topic_path("simple-commits", "payments"), data),
    "52f3efb-cluster-config.json": ClusterConfig.decode,
    "52f3efb-partition-election.json": lambda data: PartitionElection.decode(0, data),
    "52f3efb-partition-leader.json": lambda data: PartitionLeader.decode(0, data),
    "52f3efb-rebalance-request.json": lambda data: RebalanceRequest.decode("orders-app", data),
}
GROUP_FIXTURES = sorted(path.name for path in FIXTURES.glob("*-group-*.json"))


def test_every_fixture_is_read_by_a_test():
    assert {path.name for path in FIXTURES.glob("*.json*")} == {
        *STORED_BEFORE, *GROUP_FIXTURES, "52f3efb-journal.jsonl"}
    assert {name.split("-", 1)[0] for name in GROUP_FIXTURES} == {"52f3efb", "9dc0796"}


@pytest.mark.parametrize("name", sorted(STORED_BEFORE))
def test_every_document_an_earlier_release_stored_decodes_and_encodes_to_the_same_bytes(name):
    data = fixture(name)
    document = STORED_BEFORE[name](data)
    assert document.encode() == data
    assert STORED_BEFORE[name](document.encode()).encode() == data


def stored_group(name: str) -> tuple[bytes, dict]:
    data = fixture(name)
    return data, json.loads(data)


@pytest.mark.parametrize("name", GROUP_FIXTURES)
def test_every_group_document_an_earlier_release_stored_decodes_and_encodes_the_same_plus_its_type(name):
    data, stored = stored_group(name)
    document = GroupDocument.decode(stored["group"], data)
    version = stored.pop("version")
    expected = json.dumps({"version": version, "type": "classic", **stored}, separators=(",", ":")).encode()
    assert document.encode() == expected
    assert GroupDocument.decode(document.group, document.encode()) == document
    assert document.to_json() == json.loads(expected)


def test_the_fields_of_earlier_group_documents_are_read_as_they_were_written():
    document = GroupDocument.decode("orders-app", fixture("52f3efb-group-stable-consumer.json"))
    first = document.members[0]
    assert (document.protocol_type, document.protocol, document.generation, document.state, document.leader,
            document.coordinator) == ("consumer", "range", 1, "Stable", first.member_id, 2)
    assert (first.client_id, first.subscription, first.assignment) == (
        "app-0", ["payments", "orders"], {"payments": [0, 1], "orders": [0]})
    assert document.ownership["payments"] == {"0": first.member_id, "1": first.member_id,
                                              "2": document.members[1].member_id}
    assert document.rebalance == LastRebalance(1764090000000, 1764090000120, "join", first.member_id, "app-0",
                                               f"member {first.member_id} (client app-0) joined")
    static = GroupDocument.decode("static-app", fixture("52f3efb-group-static-member.json"))
    assert [m.group_instance_id for m in static.members] == ["svc-0-instance", None]
    other = GroupDocument.decode("connect-cluster", fixture("52f3efb-group-other-protocol-type.json"))
    assert (other.members[0].metadata_bytes, other.members[0].assignment_bytes) == (
        b"\x00\x01connect-metadata", b"\x00\x02opaque")
    assert (other.members[0].subscription, other.members[0].assignment, other.ownership) == ([], {}, {})
    for name in ("52f3efb-group-simple-commits.json", "9dc0796-group-stable-consumer.json"):
        without = GroupDocument.decode(json.loads(fixture(name))["group"], fixture(name))
        assert (without.rebalance, without.rebalance_key) == (None, False)
        assert b'"rebalance"' not in without.encode()


def test_the_journal_an_earlier_release_wrote_is_what_the_schema_declares_and_is_written_again_the_same(tmp_path):
    from groupctl.server.journal import Journal

    data = fixture("52f3efb-journal.jsonl")
    events = [json.loads(line) for line in data.splitlines()]
    kinds = dict(journal.FIELDS)
    checks = {"int": lambda v: isinstance(v, int), "long": lambda v: isinstance(v, int),
              "string": lambda v: isinstance(v, str),
              "string[]": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
              "assignment[]": lambda v: isinstance(v, list) and all(set(row) == {n for n, _ in journal.ASSIGNMENT_ROW}
                                                                    for row in v)}
    assert {event["event"] for event in events} >= {"member_joined", "rebalance_started", "rebalance_completed",
                                                    "member_left", "offset_commit"}
    for event in events:
        added = set(journal.ADDED.get(event["event"], ()))
        assert set(event) == {*journal.COMMON, *journal.EVENTS[event["event"]]} - added, event
        assert all(value is None or checks[kinds[name]](value) for name, value in event.items()), event
    written = Journal(tmp_path)
    written.append([{k: v for k, v in event.items() if k != "seq"} for event in events])
    written.close()
    assert written.active_path.read_bytes() == data


# --- the group document ------------------------------------------------------------------------

def member(member_id: str = "m-1", **changes) -> GroupMember:
    fields = dict(member_id=member_id, group_instance_id="instance-1", client_id="app", client_host="/10.0.0.1",
                  session_timeout_ms=45_000, rebalance_timeout_ms=300_000, subscription=["t", "u"],
                  assignment={"t": [0, 2], "u": []}, metadata_bytes=b"\x00meta", assignment_bytes=b"\x00\xffassigned")
    return GroupMember(**{**fields, **changes})


EVERY_FIELD = GroupDocument(
    group="a/b", protocol_type="consumer", protocol="cooperative-sticky", generation=12, state="Stable",
    leader="m-1", members=(member(), member("m-2", group_instance_id=None, assignment={"t": [1]})),
    ownership={"t": {"0": "m-1", "1": "m-2", "2": "m-1"}}, coordinator=4, updated_at_ms=1764090000000,
    rebalance=LastRebalance(1764089999000, 1764090000000, "trigger", None, "groupctl", "moving off a hot node"))


@pytest.mark.parametrize("document", [
    EVERY_FIELD,
    replace(EVERY_FIELD, rebalance=None),
    replace(EVERY_FIELD, rebalance=None, rebalance_key=False),
    replace(EVERY_FIELD, members=(), ownership={}, leader=None, protocol=None, state="Empty", protocol_type=None),
    replace(EVERY_FIELD, state="PreparingRebalance", generation=0),
], ids=["every field", "null rebalance", "no rebalance key", "empty", "any state"])
def test_a_group_document_is_read_back_equal_field_for_field(document):
    data = document.encode()
    assert GroupDocument.decode(document.group, data) == document
    assert list(json.loads(data)) == ["version", "type", "group", "protocol_type", "protocol", "generation", "state",
                                      "leader", "members", "ownership",
                                      *(["rebalance"] if document.rebalance_key else []),
                                      "coordinator", "updated_at_ms"]
    assert json.loads(data)["type"] == "classic" == GroupDocument.TYPE and GROUP_TYPES == ("classic", "consumer")


texts = st.text(max_size=8)
members = st.builds(
    GroupMember, member_id=texts, group_instance_id=st.none() | texts, client_id=texts, client_host=texts,
    session_timeout_ms=st.integers(), rebalance_timeout_ms=st.integers(), subscription=st.lists(texts, max_size=3),
    assignment=st.dictionaries(texts, st.lists(st.integers(), max_size=3), max_size=3),
    metadata_bytes=st.binary(max_size=16), assignment_bytes=st.binary(max_size=16))
rebalances = st.builds(LastRebalance, started_at_ms=st.integers(), completed_at_ms=st.integers(), reason=texts,
                       member_id=st.none() | texts, client_id=st.none() | texts, detail=st.none() | texts)
documents = st.builds(
    GroupDocument, group=texts, protocol_type=st.none() | texts, protocol=st.none() | texts,
    generation=st.integers(min_value=0), state=texts, leader=st.none() | texts,
    members=st.lists(members, max_size=3).map(tuple),
    ownership=st.dictionaries(texts, st.dictionaries(st.integers(0, 999).map(str), texts, max_size=3), max_size=3),
    coordinator=st.integers(), updated_at_ms=st.integers(), rebalance=st.none() | rebalances, rebalance_key=st.booleans(),
).filter(lambda document: document.rebalance_key or document.rebalance is None)


@given(documents)
def test_any_group_document_is_read_back_equal(document):
    assert GroupDocument.decode(document.group, document.encode()) == document


def group_json(**changes) -> bytes:
    stored = json.loads(fixture("52f3efb-group-stable-consumer.json"))
    return json.dumps({**stored, **changes}).encode()


def member_json(**changes) -> bytes:
    stored = json.loads(fixture("52f3efb-group-stable-consumer.json"))
    first = {k: v for k, v in {**stored["members"][0], **changes}.items() if v is not ...}
    return json.dumps({**stored, "members": [first]}).encode()


@pytest.mark.parametrize("data, problem", [
    (b"[]", "/groups/orders-app: not a JSON object but list"),
    (group_json(version=2), "/groups/orders-app: version 2 is newer than this groupctl reads (up to 1)"),
    (group_json(type="consumer"), "/groups/orders-app: a consumer group's document, not a classic group's"),
    (group_json(type="share"), "/groups/orders-app: group type 'share' is not one this groupctl reads (classic, consumer)"),
    (group_json(type=None), "/groups/orders-app: group type None is not one"),
    (group_json(group="other"), '/groups/orders-app: "group" is \'other\', not the group stored here'),
    (group_json(generation="7"), '/groups/orders-app: "generation" must be an integer'),
    (group_json(members={"m": {}}), '/groups/orders-app: "members" must be a list'),
    (group_json(members=[5]), "/groups/orders-app: members[0]: must be an object, not 5"),
    (member_json(metadata_base64=...), '/groups/orders-app: members[0]: "metadata_base64" must be a string, not None'),
    (member_json(assignment_base64="not base64!"), '/groups/orders-app: members[0]: "assignment_base64" is not base64'),
    (member_json(member_id=None), '/groups/orders-app: members[0]: "member_id" must be a string'),
    (member_json(session_timeout_ms=True), '/groups/orders-app: members[0]: "session_timeout_ms" must be an integer'),
    (member_json(subscription="t"), '/groups/orders-app: members[0]: "subscription" must be a list of strings'),
    (member_json(assignment={"t": ["0"]}), '/groups/orders-app: members[0]: "assignment" must be an object of'),
    (group_json(ownership={"t": {"0": 1}}), '/groups/orders-app: "ownership" must be an object of'),
    (group_json(ownership={"t": {"x": "m-1"}}), '/groups/orders-app: "ownership" must be an object of'),
    (group_json(ownership={"t": {"²": "m-1"}}), '/groups/orders-app: "ownership" must be an object of'),
    (group_json(rebalance="yesterday"), "/groups/orders-app: rebalance: must be an object or null"),
    (group_json(rebalance={"started_at_ms": 1, "completed_at_ms": 2}),
     '/groups/orders-app: rebalance: "reason" must be a string, not None'),
    (group_json(updated_at_ms=None), '/groups/orders-app: "updated_at_ms" must be an integer, not None'),
])
def test_a_malformed_or_newer_group_document_is_a_layout_error_naming_its_path(data, problem):
    with pytest.raises(LayoutError) as raised:
        GroupDocument.decode("orders-app", data)
    assert str(raised.value).startswith(problem), str(raised.value)
    assert raised.value.path == "/groups/orders-app"


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=4),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                      max_size=3), max_leaves=8)


@given(st.sampled_from(["group", "generation", "members", "ownership", "rebalance", "coordinator", "type"]),
       st.sampled_from(["member_id", "client_id", "subscription", "assignment", "metadata_base64", None]),
       json_values)
def test_any_value_in_any_field_decodes_or_is_a_layout_error(field, member_field, value):
    data = member_json(**{member_field: value}) if member_field else group_json(**{field: value})
    try:
        GroupDocument.decode("orders-app", data)
    except LayoutError as exc:
        assert exc.path == "/groups/orders-app"


# --- dynamic configs (Kafka's ConfigEntityZNode) ------------------------------------------------

def test_a_config_document_as_kafka_writes_it_decodes_and_encodes_to_the_same_bytes():
    kafka_wrote = b'{"version":1,"config":{"retention.ms":"3600000","segment.bytes":"1048576"}}'
    assert decode_config("/config/topics/orders", kafka_wrote) == {"retention.ms": "3600000", "segment.bytes": "1048576"}
    assert encode_config({"segment.bytes": "1048576", "retention.ms": "3600000"}) == kafka_wrote


def test_a_config_document_without_data_is_no_config_and_a_non_string_value_names_its_path():
    assert decode_config("/config/groups/g", b"") == {}
    with pytest.raises(LayoutError, match="^/config/topics/t: "):
        decode_config("/config/topics/t", b'{"version":1,"config":{"retention.ms":60000}}')


def test_config_paths_are_kafkas_sanitized_names():
    assert config_path(CONFIG_TOPICS, "orders") == "/config/topics/orders"
    assert config_path(CONFIG_BROKERS, "<default>") == "/config/brokers/<default>"
    assert config_path(CONFIG_GROUPS, "a/b~") == "/config/groups/a%2Fb%7E"


def test_a_pending_offsets_document_without_a_coordinator_epoch_reads_as_none_known():
    old = b'{"version": 1, "producer_epoch": 2, "topics": {}}'
    assert PendingOffsetsDocument.decode("/p", old).coordinator_epoch == NO_COORDINATOR_EPOCH
    assert PendingOffsetsDocument.decode("/p", old).encode() == PendingOffsetsDocument(2, ()).encode()
    fenced = PendingOffsetsDocument(2, (), coordinator_epoch=7)
    assert PendingOffsetsDocument.decode("/p", fenced.encode()) == fenced
    with pytest.raises(LayoutError):
        PendingOffsetsDocument.decode("/p", b'{"version": 1, "producer_epoch": 2, "coordinator_epoch": "x", "topics": {}}')
