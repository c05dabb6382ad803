"""The consumer group's document: what a group writes decodes back equal, a loaded group is the
stored one exactly (members keep their epochs and partitions across a failover), and a malformed
document is a LayoutError naming its path."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from groupctl.coordinator.consumer.document import build_document, load_group
from groupctl.coordinator.consumer.member import ClassicMembership, MemberState
from groupctl.layout.codec import LayoutError
from groupctl.layout.consumer_groups import ConsumerGroupDocument
from tests.unit.consumer_harness import ORDERS, Client, Harness


def reconciling_group() -> Harness:
    """Two members, the first still revoking: every field has a value worth keeping."""
    harness = Harness()
    a, b = Client(harness, "a", instance_id="i-a"), Client(harness, "b")
    a.join()
    b.join()
    a.beat()  # told to give three partitions up; still owns them
    return harness


def document_of(harness: Harness, now_ms: int = 1_000) -> ConsumerGroupDocument:
    return build_document(harness.group(), harness.core.topics, node_id=3, now_ms=now_ms)


def test_the_document_names_epochs_members_targets_and_ownership_by_topic_name():
    doc = document_of(reconciling_group())
    as_json = doc.to_json()
    assert list(as_json)[:3] == ["version", "type", "group"] and as_json["type"] == "consumer"
    assert (doc.group_epoch, doc.assignment_epoch, doc.assignor, doc.state) == (2, 2, "uniform", "Reconciling")
    assert doc.topics == {ORDERS.topic_id: "orders"}
    a = doc.members[0]
    assert (a.member_id, a.instance_id, a.member_state, a.member_epoch) == ("a", "i-a", "unrevoked_partitions", 1)
    assert len(a.assigned[ORDERS.topic_id]) == 3 and len(a.pending_revocation[ORDERS.topic_id]) == 3
    assert doc.ownership == {"orders": {str(p): "a" for p in range(6)}}
    assert doc.generation == doc.group_epoch


def test_a_document_decodes_back_equal_and_reencodes_byte_for_byte():
    doc = document_of(reconciling_group())
    data = doc.encode()
    decoded = ConsumerGroupDocument.from_json("g", json.loads(data))
    assert decoded == doc and decoded.encode() == data


def test_a_loaded_group_is_the_stored_one_and_its_members_keep_what_they_own():
    harness = reconciling_group()
    group = harness.group()
    loaded = load_group(ConsumerGroupDocument.from_json("g", json.loads(document_of(harness).encode())))
    assert (loaded.group_epoch, loaded.assignment_epoch, loaded.assignor) == (2, 2, "uniform")
    assert loaded.members == group.members
    assert loaded.target == group.target and loaded.subscribed == group.subscribed == {ORDERS.topic_id: 6}
    assert loaded.state == group.state
    assert loaded.static_member("i-a").member_id == "a"
    assert loaded.owner_epoch(ORDERS.topic_id, 0) == group.owner_epoch(ORDERS.topic_id, 0) == 1


def test_a_classic_protocol_member_keeps_its_session_timeout_and_protocols_through_the_document():
    harness = reconciling_group()
    group = harness.group()
    group.put_member(replace(group.members["b"], classic=ClassicMembership(10_000, (("range", b"\x00\x01"),
                                                                                    ("roundrobin", b"")))))
    as_json = json.loads(document_of(harness).encode())
    assert as_json["members"][1]["classic"] == {"session_timeout_ms": 10_000, "protocols": [
        {"name": "range", "metadata_base64": "AAE="}, {"name": "roundrobin", "metadata_base64": ""}]}
    assert "classic" not in as_json["members"][0]  # a consumer-protocol member
    loaded = load_group(ConsumerGroupDocument.from_json("g", as_json))
    assert loaded.members["b"].classic == group.members["b"].classic and loaded.members["a"].classic is None


def test_a_member_state_written_by_a_newer_groupctl_loads_as_unknown():
    as_json = document_of(reconciling_group()).to_json()
    as_json["members"][1]["member_state"] = "from-the-future"
    loaded = load_group(ConsumerGroupDocument.from_json("g", as_json))
    assert loaded.members["b"].state is MemberState.UNKNOWN


@pytest.mark.parametrize("change, problem", [
    (lambda d: d.update(version=2), "version 2 is newer"),
    (lambda d: d.update(group="other"), '"group" is \'other\''),
    (lambda d: d.update(assignment_epoch=d["group_epoch"] + 1), '"assignment_epoch" must be within'),
    (lambda d: d["members"][0].update(assigned={"t": ["x"]}), 'members[0]: "assigned" must be an object'),
    (lambda d: d["members"][0].pop("member_epoch"), 'members[0]: "member_epoch" must be an integer'),
    (lambda d: d.update(topics=[]), '"topics" must be an object'),
    (lambda d: d.update(subscribed={"t": 0}), '"subscribed" must be an object of partition counts'),
    (lambda d: d.update(ownership={"orders": {"0": 5}}), '"ownership" must be'),
    (lambda d: d["members"][0].update(classic={"session_timeout_ms": 10, "protocols": []}),
     'members[0]: classic: must be an object with a non-empty "protocols" list'),
    (lambda d: d["members"][0].update(classic={"session_timeout_ms": 10, "protocols": [
        {"name": "range", "metadata_base64": "!"}]}), 'classic: protocols[0]: "metadata_base64" is not base64'),
    (lambda d: d["members"][0].update(classic={"session_timeout_ms": 0, "protocols": [
        {"name": "range", "metadata_base64": ""}]}), 'classic: "session_timeout_ms" must be within'),
])
def test_a_malformed_document_is_a_layout_error_naming_its_path(change, problem):
    as_json = document_of(reconciling_group()).to_json()
    change(as_json)
    with pytest.raises(LayoutError) as raised:
        ConsumerGroupDocument.from_json("g", as_json)
    assert str(raised.value).startswith("/groups/g: ") and problem in str(raised.value)
