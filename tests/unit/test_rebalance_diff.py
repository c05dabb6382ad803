"""Consecutive group documents -> RebalanceEvent (pure): who joined and left, which partitions
moved, timing and reason from the document's "rebalance" block."""

from __future__ import annotations

import json

import pytest

from groupctl.errors import OpsError
from groupctl.layout.groups import GroupDocument, GroupMember, LastRebalance
from groupctl.ops.documents import StoredDocument, read_group_document
from groupctl.ops.rebalance import diff_documents, events


def member(member_id: str, client_id: str, assignment: dict[str, list[int]]) -> GroupMember:
    return GroupMember(member_id=member_id, group_instance_id=None, client_id=client_id, client_host="/127.0.0.1",
                       session_timeout_ms=10000, rebalance_timeout_ms=30000, subscription=sorted(assignment),
                       assignment=assignment, metadata_bytes=b"", assignment_bytes=b"")


def document(generation: int, *members: GroupMember, rebalance: dict | None = None,
             state: str | None = None) -> GroupDocument:
    ownership: dict[str, dict[str, str]] = {}
    for m in members:
        for topic, partitions in m.assignment.items():
            for p in partitions:
                ownership.setdefault(topic, {})[str(p)] = m.member_id
    return GroupDocument(
        group="orders", protocol_type="consumer", protocol="range" if members else None, generation=generation,
        state=state or ("Stable" if members else "Empty"), leader=members[0].member_id if members else None,
        members=members, ownership=ownership, coordinator=0, updated_at_ms=1_000 + generation,
        rebalance=LastRebalance(**rebalance) if rebalance is not None else None)


def stored(doc: GroupDocument | None) -> StoredDocument | None:
    return StoredDocument(doc, doc.to_json()) if doc is not None else None


A = member("app-1-aaa", "app-1", {"payments": [0, 1, 2, 3]})
A_HALF = member("app-1-aaa", "app-1", {"payments": [0, 1]})
B_HALF = member("app-2-bbb", "app-2", {"payments": [2, 3]})
B_ALL = member("app-2-bbb", "app-2", {"payments": [0, 1, 2, 3]})


def test_a_second_member_joining_moves_half_the_partitions_to_it():
    event = diff_documents(document(1, A), document(2, A_HALF, B_HALF))

    assert (event.generation, event.previous_generation) == (2, 1)
    assert [(m.member_id, m.client_id) for m in event.members_joined] == [("app-2-bbb", "app-2")]
    assert event.members_left == ()
    assert [(p.topic, p.partition, p.from_member, p.to_member) for p in event.partitions_moved] == [
        ("payments", 2, "app-1-aaa", "app-2-bbb"),
        ("payments", 3, "app-1-aaa", "app-2-bbb"),
    ]
    assert event.members == 2
    assert event.state == "Stable"
    assert event.group == "orders"


def test_a_member_leaving_hands_its_partitions_to_the_one_that_stays():
    event = diff_documents(document(2, A_HALF, B_HALF), document(3, B_ALL))

    assert [m.member_id for m in event.members_left] == ["app-1-aaa"]
    assert event.members_joined == ()
    assert [(p.partition, p.from_member, p.to_member) for p in event.partitions_moved] == [
        (0, "app-1-aaa", "app-2-bbb"), (1, "app-1-aaa", "app-2-bbb"),
    ]
    assert event.members == 1


def test_the_last_member_leaving_revokes_every_partition_and_empties_the_group():
    event = diff_documents(document(3, B_ALL), document(4))

    assert event.state == "Empty"
    assert event.members == 0
    assert [m.member_id for m in event.members_left] == ["app-2-bbb"]
    assert {(p.from_member, p.to_member) for p in event.partitions_moved} == {("app-2-bbb", None)}
    assert len(event.partitions_moved) == 4


def test_the_first_document_seen_has_every_member_joining_and_no_previous_generation():
    event = diff_documents(None, document(1, A))

    assert event.previous_generation is None
    assert [m.member_id for m in event.members_joined] == ["app-1-aaa"]
    assert [(p.partition, p.from_member, p.to_member) for p in event.partitions_moved] == [
        (0, None, "app-1-aaa"), (1, None, "app-1-aaa"), (2, None, "app-1-aaa"), (3, None, "app-1-aaa"),
    ]


def test_a_rebalance_with_the_same_members_and_assignment_moves_nothing():
    event = diff_documents(document(4, A_HALF, B_HALF), document(5, A_HALF, B_HALF))

    assert event.members_joined == event.members_left == event.partitions_moved == ()
    assert (event.generation, event.previous_generation) == (5, 4)


def test_timing_and_cause_come_from_the_rebalance_block():
    block = {"started_at_ms": 10_000, "completed_at_ms": 10_250, "reason": "join", "member_id": "app-2-bbb",
             "client_id": "app-2", "detail": "member app-2-bbb (client app-2) joined"}
    event = diff_documents(document(1, A), document(2, A_HALF, B_HALF, rebalance=block))

    assert (event.started_at_ms, event.completed_at_ms, event.duration_ms) == (10_000, 10_250, 250)
    assert (event.reason, event.detail) == ("join", "member app-2-bbb (client app-2) joined")
    assert (event.caused_by.member_id, event.caused_by.client_id) == ("app-2-bbb", "app-2")


def test_a_trigger_is_caused_by_the_requesting_client_and_carries_the_operators_reason():
    block = {"started_at_ms": 1, "completed_at_ms": 2, "reason": "trigger", "member_id": None,
             "client_id": "groupctl", "detail": "moving off a hot node"}
    event = diff_documents(document(1, A), document(2, A, rebalance=block))

    assert (event.reason, event.detail) == ("trigger", "moving off a hot node")
    assert event.caused_by.to_json() == {"member_id": None, "client_id": "groupctl"}


def test_a_document_without_a_rebalance_block_has_null_timing_and_cause():
    event = diff_documents(document(1, A), document(2, A))

    assert (event.started_at_ms, event.completed_at_ms, event.duration_ms) == (None,) * 3
    assert (event.reason, event.detail, event.caused_by) == (None,) * 3


def test_a_null_rebalance_block_reads_as_none():
    doc = read_group_document("orders", json.dumps({**document(1, A).to_json(), "rebalance": None})).document

    assert diff_documents(None, doc).reason is None


def test_a_block_without_a_completion_time_is_a_malformed_document():
    malformed = {**document(1, A).to_json(), "rebalance": {"started_at_ms": 5, "completed_at_ms": None,
                                                            "reason": None}}

    with pytest.raises(OpsError, match='^coordinator: /groups/orders: rebalance: "completed_at_ms" must be an integer'):
        read_group_document("orders", json.dumps(malformed), "coordinator")


def test_partitions_are_listed_in_topic_then_numeric_partition_order():
    wide = member("m-1", "c", {"b": [10, 2], "a": [1]})
    event = diff_documents(None, document(1, wide))

    assert [(p.topic, p.partition) for p in event.partitions_moved] == [("a", 1), ("b", 2), ("b", 10)]


def test_the_json_form_has_the_documented_keys():
    block = {"started_at_ms": 1, "completed_at_ms": 3, "reason": "leave", "member_id": None,
             "client_id": None, "detail": "d"}
    as_json = diff_documents(document(1, A), document(2, A_HALF, B_HALF, rebalance=block)).to_json()

    assert as_json == {
        "group": "orders", "group_type": "classic", "generation": 2, "previous_generation": 1,
        "assignment_epoch": None, "state": "Stable", "members": 2,
        "reason": "leave", "detail": "d", "caused_by": None,
        "started_at_ms": 1, "completed_at_ms": 3, "duration_ms": 2,
        "members_joined": [{"member_id": "app-2-bbb", "client_id": "app-2"}],
        "members_left": [],
        "partitions_moved": [{"topic": "payments", "partition": 2, "from": "app-1-aaa", "to": "app-2-bbb"},
                             {"topic": "payments", "partition": 3, "from": "app-1-aaa", "to": "app-2-bbb"}],
    }


def test_a_document_of_a_group_type_this_groupctl_does_not_read_is_an_error_naming_its_path():
    share = {**document(1, A).to_json(), "type": "share", "group_epoch": 9}

    with pytest.raises(OpsError, match="^/groups/orders: group type 'share' is not one this groupctl reads"):
        read_group_document("orders", json.dumps(share))
    assert read_group_document("orders", None) is None


def test_events_diff_each_document_against_the_one_before_starting_from_the_baseline():
    stream = iter([stored(document(1, A)), stored(document(2, A_HALF, B_HALF)), stored(document(3, B_ALL))])

    seen = [(e.previous_generation, e.generation, len(e.members_joined), len(e.members_left))
            for e in events(stream)]

    assert seen == [(1, 2, 1, 0), (2, 3, 0, 1)]


def test_events_start_from_nothing_when_there_is_no_baseline_and_after_a_deletion():
    stream = iter([None, stored(document(1, A)), None, stored(document(1, B_ALL))])

    seen = [(e.previous_generation, [m.member_id for m in e.members_joined], [m.member_id for m in e.members_left])
            for e in events(stream)]

    assert seen == [(None, ["app-1-aaa"], []), (None, ["app-2-bbb"], [])]
