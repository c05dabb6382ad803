"""The group document (docs/zookeeper-layout.md) and rebuilding state by replaying stored records."""

import copy

import pytest

from groupctl.coordinator.classic.coordinator import GroupCoordinator
from groupctl.coordinator.classic.document import InvalidDocument
from groupctl.coordinator.classic.messages import LeavingMember, SyncGroupResult
from groupctl.coordinator.offsets.messages import FetchOffsets, PartitionOffset
from groupctl.coordinator.classic.replay import ReplayError
from groupctl.coordinator.classic.state import IllegalStateTransition
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.records import (
    GroupMetadataRecord,
    GroupTombstone,
    OffsetCommitRecord,
    OffsetTombstone,
    TopicRecord,
)
from groupctl.layout.codec import LayoutError
from groupctl.layout.groups import GroupDocument
from tests.unit.classic_harness import Harness, assignment, document_record, subscription


def test_stable_document_has_every_field_of_the_design():
    h = Harness(node_id=3)
    a, b = h.stable_group(count=2)
    doc = h.documents()[-1]
    assert list(doc) == ["version", "type", "group", "protocol_type", "protocol", "generation", "state", "leader",
                         "members", "ownership", "rebalance", "coordinator", "updated_at_ms"]
    assert (doc["version"], doc["type"], doc["group"], doc["protocol_type"], doc["protocol"], doc["generation"],
            doc["state"], doc["leader"], doc["coordinator"], doc["updated_at_ms"]) == (
        1, "classic", "g", "consumer", "range", 1, "Stable", a.member_id, 3, h.now)
    first = doc["members"][0]
    assert {k: first[k] for k in ("member_id", "group_instance_id", "client_id", "client_host",
                                  "session_timeout_ms", "rebalance_timeout_ms", "subscription", "assignment")} == {
        "member_id": a.member_id, "group_instance_id": None, "client_id": "c0", "client_host": "/127.0.0.1",
        "session_timeout_ms": 10_000, "rebalance_timeout_ms": 30_000, "subscription": ["t"], "assignment": {"t": [0]},
    }
    assert doc["ownership"] == {"t": {"0": a.member_id, "1": b.member_id}}


def test_group_document_reflects_the_current_state():
    h = Harness()
    a, b = h.stable_group(count=2)
    h.join(member_id=a.member_id, client_id="c0")
    doc = h.core.group_document("g")
    assert (doc.state, doc.generation) == ("PreparingRebalance", 1)
    assert h.core.group_document("nope") is None


def stored(h: Harness) -> list:
    """What a store would hold: the latest document per group and the live offsets."""
    latest = {}
    for record in h.records:
        if isinstance(record, GroupMetadataRecord):
            latest[record.group] = record
    offsets = {}
    for record in h.records:
        if isinstance(record, OffsetCommitRecord):
            offsets[(record.group, record.topic, record.partition)] = record
        elif isinstance(record, OffsetTombstone):
            offsets.pop((record.group, record.topic, record.partition), None)
    return [*offsets.values(), *latest.values()]


def reload(h: Harness) -> Harness:
    fresh = Harness(now_ms=h.now + 1000)
    for record in stored(h):
        fresh.core.replay(copy.deepcopy(record), fresh.now)
    return fresh


def test_replay_restores_a_stable_group_that_answers_sync_with_the_stored_assignment():
    h = Harness()
    a, b = h.stable_group(count=2)
    h.commit("g", 1, a.member_id, PartitionOffset("t", 0, 9))
    r = reload(h)
    assert r.state() == "Stable" and r.describe().generation_id == 1
    assert r.reply(r.sync("g", 1, b.member_id)) == SyncGroupResult(
        ErrorCode.NONE, "consumer", "range", assignment({"t": [1]}))
    assert r.heartbeat("g", 1, a.member_id) is ErrorCode.NONE
    assert r.commit("g", 1, a.member_id, PartitionOffset("t", 0, 10)) == [ErrorCode.NONE]
    assert r.core.group_document("g").members == h.core.group_document("g").members


def test_replayed_members_get_fresh_sessions_from_the_load_time():
    h = Harness()
    h.stable_group(count=2, session_ms=10_000)
    r = reload(h)
    assert set(r.timer.pending().values()) == {r.now + 10_000}
    r.advance(10_000)
    assert r.state() == "Empty"


def test_the_next_rebalance_after_a_reload_continues_from_the_stored_generation():
    h = Harness()
    (a,) = h.stable_group(count=1)
    h.reply(h.join(member_id=a.member_id, client_id="c0"))
    h.sync("g", 2, a.member_id)
    r = reload(h)
    assert r.reply(r.join(member_id=a.member_id, client_id="c0")).generation_id == 3


def test_the_leader_of_a_reloaded_group_sees_the_stored_metadata():
    h = Harness()
    a, b = h.stable_group(count=2, protocols=(("range", subscription("t", "u")),))
    r = reload(h)
    token = r.join(member_id=a.member_id, client_id="c0", protocols=(("range", subscription("t", "u")),))
    r.advance(30_000)
    assert {m.member_id: m.metadata for m in r.reply(token).members} == {a.member_id: subscription("t", "u")}


def test_replay_restores_an_empty_group_with_its_generation_and_offsets():
    h = Harness()
    (a,) = h.stable_group(count=1)
    h.commit("g", 1, a.member_id, PartitionOffset("t", 0, 5))
    h.leave("g", LeavingMember(a.member_id))
    r = reload(h)
    assert r.state() == "Empty" and r.describe().generation_id == 2
    assert r.commit("g", -1, "", PartitionOffset("t", 0, 6)) == [ErrorCode.NONE]


def test_replay_of_a_static_members_document_keeps_the_instance_mapping():
    h = Harness()
    (a,) = h.stable_group(count=1, instance="i-0")
    r = reload(h)
    assert r.heartbeat("g", 1, "c-other", instance="i-0") is ErrorCode.FENCED_INSTANCE_ID
    assert r.heartbeat("g", 1, a.member_id, instance="i-0") is ErrorCode.NONE


def test_replay_in_any_order_of_offsets_and_document_gives_the_same_group():
    h = Harness()
    (a,) = h.stable_group(count=1)
    h.commit("g", 1, a.member_id, PartitionOffset("t", 0, 5))
    records = stored(h)
    r = Harness()
    for record in reversed(records):
        r.core.replay(record, r.now)
    assert r.state() == "Stable"
    assert r.ask("fetch_offsets", FetchOffsets("g", None)).offsets[0].offset == 5


def test_topic_records_are_not_the_group_cores_business():
    h = Harness()
    h.core.replay(TopicRecord("t", "id", {0: [0]}), h.now)
    assert h.ask("list_groups", (frozenset(), frozenset())) == ()


# --- impossible sequences ---------------------------------------------------------------------

def stable_document(h: Harness) -> dict:
    h.stable_group(count=2)
    return copy.deepcopy(h.documents()[-1])


def test_a_document_for_a_live_group_with_other_members_is_rejected():
    h = Harness()
    doc = stable_document(h)
    doc["members"] = doc["members"][:1]
    doc["ownership"] = {}
    with pytest.raises(ReplayError):
        h.core.replay(document_record("g", doc), h.now)


def test_a_document_for_a_live_group_with_another_generation_is_rejected():
    h = Harness()
    doc = stable_document(h)
    doc["generation"] = 0
    with pytest.raises(ReplayError):
        h.core.replay(document_record("g", doc), h.now)


def test_a_stable_document_applied_to_a_rebalancing_group_breaks_the_legality_table():
    h = Harness()
    doc = stable_document(h)
    h.ask("trigger_rebalance", "g")
    with pytest.raises(IllegalStateTransition):
        h.core.replay(document_record("g", doc), h.now)


def test_a_document_older_than_the_generation_in_memory_is_rejected():
    h = Harness()
    (a,) = h.stable_group(count=1)
    old = copy.deepcopy(h.documents()[-1])
    h.leave("g", LeavingMember(a.member_id))  # Empty at generation 2
    with pytest.raises(ReplayError):
        h.core.replay(document_record("g", old), h.now)


@pytest.mark.parametrize("breakage", [
    lambda d: d.update(state="CompletingRebalance"),
    lambda d: d.update(state="Empty"),
    lambda d: d.update(leader="c-nobody"),
    lambda d: d["members"].append(dict(d["members"][0])),
])
def test_documents_that_cannot_describe_a_stored_classic_group_are_rejected(breakage):
    h = Harness()
    doc = stable_document(h)
    breakage(doc)
    with pytest.raises(InvalidDocument):
        GroupCoordinator(timer=Harness().timer).replay(document_record("g", doc), 0)


@pytest.mark.parametrize("breakage", [
    lambda d: d.update(version=2),
    lambda d: d["members"][0].pop("assignment_base64"),
])
def test_malformed_documents_never_reach_the_core(breakage):
    doc = stable_document(Harness())
    breakage(doc)
    with pytest.raises(LayoutError, match="^/groups/g: "):
        document_record("g", doc)


def test_a_document_recorded_under_another_group_name_is_rejected():
    h = Harness()
    doc = stable_document(h)
    with pytest.raises(ReplayError):
        Harness().core.replay(GroupMetadataRecord("other", GroupDocument.from_json("g", doc)), 0)


def test_tombstones_for_unknown_groups_or_offsets_are_rejected():
    h = Harness()
    with pytest.raises(ReplayError):
        h.core.replay(GroupTombstone("nope"), h.now)
    with pytest.raises(ReplayError):
        h.core.replay(OffsetTombstone("nope", "t", 0), h.now)
    h.commit("s", -1, "", PartitionOffset("t", 0, 1))
    with pytest.raises(ReplayError):
        h.core.replay(OffsetTombstone("s", "t", 1), h.now)


def test_a_tombstone_for_a_group_with_members_is_rejected():
    h = Harness()
    h.stable_group(count=1)
    with pytest.raises(ReplayError):
        h.core.replay(GroupTombstone("g"), h.now)


def test_replay_of_a_group_tombstone_deletes_the_group():
    h = Harness()
    h.commit("s", -1, "", PartitionOffset("t", 0, 1))
    h.core.replay(GroupTombstone("s"), h.now)
    assert h.state("s") == "Dead"
