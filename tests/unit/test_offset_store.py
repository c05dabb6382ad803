"""The offset store on its own: committed offsets of any group type, judged by the group's verdict.

The groups here are fakes implementing `OffsetGroup` with fixed verdicts; the classic group's own
verdicts are specified through the classic core (test_classic_offsets.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pytest

from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.journal import offset_commit, offset_delete
from groupctl.coordinator.offsets import OFFSET_METADATA_MAX_CHARS, OffsetStore, UnknownOffset
from groupctl.coordinator.offsets.messages import (
    CommitOffsets,
    CommitOffsetsResult,
    CommittedOffset,
    DeleteOffsets,
    DeleteOffsetsResult,
    FetchOffsets,
    FetchOffsetsResult,
    PartitionError,
    PartitionOffset,
)
from groupctl.coordinator.records import OffsetCommitRecord, OffsetTombstone
from groupctl.coordinator.results import Result

NODE = 7
NOW = 1_000
P0 = PartitionOffset("t", 0, 42, leader_epoch=3, metadata="m")
P1 = PartitionOffset("t", 1, 7)


@dataclass
class FakeGroup:
    """A group of any type: its verdicts are whatever the test sets."""

    commit_verdict: ErrorCode = ErrorCode.NONE
    delete_verdict: ErrorCode = ErrorCode.NONE
    fetch_verdict: ErrorCode = ErrorCode.NONE
    subscribed: frozenset[str] = frozenset()
    asked: list[tuple[str, Optional[str], int, int]] = field(default_factory=list)
    asked_fetch: list[tuple[Optional[str], int]] = field(default_factory=list)

    def validate_commit(self, member_id: str, instance_id: Optional[str],
                        generation_or_member_epoch: int, api_version: int) -> ErrorCode:
        self.asked.append((member_id, instance_id, generation_or_member_epoch, api_version))
        return self.commit_verdict

    def validate_fetch(self, member_id: Optional[str], member_epoch: int) -> ErrorCode:
        self.asked_fetch.append((member_id, member_epoch))
        return self.fetch_verdict

    def validate_delete(self) -> ErrorCode:
        return self.delete_verdict

    def is_subscribed_to(self, topic: str) -> bool:
        return topic in self.subscribed


class Groups:
    """The lookup and the simple-group factory a core hands the store."""

    def __init__(self, **groups: FakeGroup) -> None:
        self.groups: dict[str, FakeGroup] = dict(groups)
        self.created: list[str] = []

    def create(self, group_id: str) -> FakeGroup:
        self.created.append(group_id)
        group = self.groups[group_id] = FakeGroup()
        return group

    def store(self) -> OffsetStore:
        return OffsetStore(NODE, group=self.groups.get, create_group=self.create)


def reply(result: Result):
    (answer,) = result.replies
    assert answer.token == "tok"
    return answer.response


def commit(store: OffsetStore, group: str, *offsets: PartitionOffset, generation: int = 1,
           member_id: str = "m1", instance_id: Optional[str] = None, version: int = 9) -> Result:
    return store.commit("tok", CommitOffsets(group, generation, member_id, instance_id, offsets, version), NOW)


def fetch(store: OffsetStore, group: str, partitions=None, member_id: Optional[str] = None,
          member_epoch: int = -1) -> FetchOffsetsResult:
    request = FetchOffsets(group, partitions, member_id=member_id, member_epoch=member_epoch)
    return reply(store.fetch("tok", request, NOW))


def delete(store: OffsetStore, group: str, *partitions: tuple[str, int]) -> Result:
    return store.delete("tok", DeleteOffsets(group, partitions), NOW)


# --- OffsetCommit ------------------------------------------------------------------------------

def test_an_accepted_commit_is_one_record_and_one_event_per_partition_and_is_fetched_back():
    store = Groups(g=FakeGroup()).store()
    result = commit(store, "g", P0, P1)
    assert reply(result) == CommitOffsetsResult((PartitionError("t", 0, ErrorCode.NONE),
                                                 PartitionError("t", 1, ErrorCode.NONE)))
    assert result.records == [OffsetCommitRecord("g", "t", 0, 42, 3, "m", NOW),
                              OffsetCommitRecord("g", "t", 1, 7, -1, "", NOW)]
    assert result.events == [
        offset_commit(NODE, NOW, "g", member_id="m1", generation=1, topic="t", partition=0, offset=42),
        offset_commit(NODE, NOW, "g", member_id="m1", generation=1, topic="t", partition=1, offset=7),
    ]
    assert fetch(store, "g").offsets == (CommittedOffset("t", 0, 42, 3, "m"), CommittedOffset("t", 1, 7))


def test_the_group_is_asked_with_the_committers_member_id_instance_id_generation_and_version():
    group = FakeGroup()
    store = Groups(g=group).store()
    commit(store, "g", P0, generation=5, member_id="m9", instance_id="i9", version=7)
    assert group.asked == [("m9", "i9", 5, 7)]


@pytest.mark.parametrize("verdict", [ErrorCode.ILLEGAL_GENERATION, ErrorCode.UNKNOWN_MEMBER_ID,
                                     ErrorCode.FENCED_INSTANCE_ID, ErrorCode.REBALANCE_IN_PROGRESS,
                                     ErrorCode.STALE_MEMBER_EPOCH, ErrorCode.UNSUPPORTED_VERSION])
def test_a_refused_commit_answers_the_groups_verdict_for_every_partition_and_changes_nothing(verdict):
    store = Groups(g=FakeGroup(commit_verdict=verdict)).store()
    result = commit(store, "g", P0, P1)
    assert reply(result).partitions == (PartitionError("t", 0, verdict), PartitionError("t", 1, verdict))
    assert (result.records, result.events) == ([], [])
    assert fetch(store, "g").offsets == ()


@pytest.mark.parametrize("version", [2, 8, 9, 10])
def test_a_simple_commit_to_an_unknown_group_is_accepted_and_creates_the_group(version):
    groups = Groups()
    store = groups.store()
    result = commit(store, "s", P0, generation=-1, member_id="", version=version)
    assert reply(result).partitions == (PartitionError("t", 0, ErrorCode.NONE),)
    assert groups.created == ["s"]
    assert result.events == [offset_commit(NODE, NOW, "s", member_id="", generation=-1,
                                           topic="t", partition=0, offset=42)]
    assert fetch(store, "s", (("t", 0),)).offsets == (CommittedOffset("t", 0, 42, 3, "m"),)


@pytest.mark.parametrize("version, error", [
    (2, ErrorCode.ILLEGAL_GENERATION), (8, ErrorCode.ILLEGAL_GENERATION),  # Kafka's backward compatibility
    (9, ErrorCode.GROUP_ID_NOT_FOUND), (10, ErrorCode.GROUP_ID_NOT_FOUND),
])
def test_a_commit_with_a_generation_to_an_unknown_group_is_refused_by_version_and_creates_nothing(version, error):
    groups = Groups()
    store = groups.store()
    result = commit(store, "nope", P0, P1, generation=0, version=version)
    assert reply(result).partitions == (PartitionError("t", 0, error), PartitionError("t", 1, error))
    assert (result.records, result.events, groups.created) == ([], [], [])


def test_metadata_over_the_limit_refuses_only_its_partition():
    store = Groups(g=FakeGroup()).store()
    at_limit = PartitionOffset("t", 0, 1, metadata="x" * OFFSET_METADATA_MAX_CHARS)
    over = PartitionOffset("t", 1, 1, metadata="x" * (OFFSET_METADATA_MAX_CHARS + 1))
    result = commit(store, "g", at_limit, over)
    assert reply(result).partitions == (PartitionError("t", 0, ErrorCode.NONE),
                                        PartitionError("t", 1, ErrorCode.OFFSET_METADATA_TOO_LARGE))
    assert [(r.topic, r.partition) for r in result.records] == [("t", 0)]
    assert len(result.events) == 1


def test_a_refused_group_verdict_wins_over_the_metadata_limit():
    store = Groups(g=FakeGroup(commit_verdict=ErrorCode.UNKNOWN_MEMBER_ID)).store()
    over = PartitionOffset("t", 0, 1, metadata="x" * (OFFSET_METADATA_MAX_CHARS + 1))
    assert reply(commit(store, "g", over)).partitions == (PartitionError("t", 0, ErrorCode.UNKNOWN_MEMBER_ID),)


def test_a_simple_commit_with_no_partition_accepted_creates_no_group():
    groups = Groups()
    store = groups.store()
    over = PartitionOffset("t", 0, 1, metadata="x" * (OFFSET_METADATA_MAX_CHARS + 1))
    commit(store, "s", over, generation=-1, member_id="")
    assert groups.created == []


def test_a_later_commit_replaces_the_earlier_one():
    store = Groups(g=FakeGroup()).store()
    commit(store, "g", P0)
    commit(store, "g", PartitionOffset("t", 0, 50))
    assert fetch(store, "g").offsets == (CommittedOffset("t", 0, 50),)


# --- OffsetFetch -------------------------------------------------------------------------------

def test_fetch_of_an_unknown_group_answers_minus_one_offsets_and_no_error():
    store = Groups().store()
    assert fetch(store, "nope", (("t", 0), ("u", 3))) == FetchOffsetsResult(
        ErrorCode.NONE, (CommittedOffset("t", 0, -1), CommittedOffset("u", 3, -1)))
    assert fetch(store, "nope") == FetchOffsetsResult(ErrorCode.NONE, ())


def test_fetch_of_an_unknown_group_checks_no_member():
    store = Groups().store()
    assert fetch(store, "nope", (("t", 0),), member_id="m1", member_epoch=4) == FetchOffsetsResult(
        ErrorCode.NONE, (CommittedOffset("t", 0, -1),))


def test_the_group_is_asked_with_the_fetching_member_id_and_epoch():
    group = FakeGroup()
    store = Groups(g=group).store()
    fetch(store, "g", member_id="m9", member_epoch=4)
    fetch(store, "g")
    assert group.asked_fetch == [("m9", 4), (None, -1)]


@pytest.mark.parametrize("verdict", [ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.STALE_MEMBER_EPOCH])
def test_a_refused_fetch_answers_the_groups_verdict_and_no_offsets(verdict):
    group = FakeGroup()
    store = Groups(g=group).store()
    commit(store, "g", P0)
    group.fetch_verdict = verdict
    assert fetch(store, "g", (("t", 0),), member_id="m1", member_epoch=1) == FetchOffsetsResult(verdict)
    assert fetch(store, "g") == FetchOffsetsResult(verdict)


def test_fetch_of_named_partitions_answers_minus_one_for_the_uncommitted_ones():
    store = Groups(g=FakeGroup()).store()
    commit(store, "g", P1)
    assert fetch(store, "g", (("t", 0), ("t", 1))).offsets == (CommittedOffset("t", 0, -1),
                                                              CommittedOffset("t", 1, 7))


def test_fetch_of_every_partition_lists_the_committed_ones_in_topic_partition_order():
    store = Groups(g=FakeGroup()).store()
    commit(store, "g", PartitionOffset("u", 0, 1), P1, P0)
    assert [(o.topic, o.partition) for o in fetch(store, "g").offsets] == [("t", 0), ("t", 1), ("u", 0)]


# --- OffsetDelete ------------------------------------------------------------------------------

def test_delete_in_an_unknown_group_is_group_id_not_found():
    store = Groups().store()
    assert reply(delete(store, "nope", ("t", 0))) == DeleteOffsetsResult(ErrorCode.GROUP_ID_NOT_FOUND)


def test_a_refused_delete_answers_the_groups_verdict_and_keeps_every_offset():
    group = FakeGroup()
    store = Groups(g=group).store()
    commit(store, "g", P0)
    group.delete_verdict = ErrorCode.NON_EMPTY_GROUP
    result = delete(store, "g", ("t", 0))
    assert reply(result) == DeleteOffsetsResult(ErrorCode.NON_EMPTY_GROUP)
    assert (result.records, result.events) == ([], [])
    assert fetch(store, "g").offsets == (CommittedOffset("t", 0, 42, 3, "m"),)


def test_delete_keeps_the_offsets_of_topics_the_group_is_subscribed_to():
    store = Groups(g=FakeGroup(subscribed=frozenset({"t"}))).store()
    commit(store, "g", P0, PartitionOffset("u", 0, 5))
    result = delete(store, "g", ("t", 0), ("u", 0))
    assert reply(result) == DeleteOffsetsResult(ErrorCode.NONE, (
        PartitionError("t", 0, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC), PartitionError("u", 0, ErrorCode.NONE)))
    assert result.records == [OffsetTombstone("g", "u", 0)]
    assert result.events == [offset_delete(NODE, NOW, "g", topic="u", partition=0)]
    assert fetch(store, "g").offsets == (CommittedOffset("t", 0, 42, 3, "m"),)


def test_deleting_an_uncommitted_or_repeated_partition_succeeds_with_one_tombstone_at_most():
    store = Groups(g=FakeGroup()).store()
    commit(store, "g", P0)
    result = delete(store, "g", ("t", 0), ("t", 0), ("t", 9))
    assert reply(result).partitions == (PartitionError("t", 0, ErrorCode.NONE),
                                        PartitionError("t", 0, ErrorCode.NONE),
                                        PartitionError("t", 9, ErrorCode.NONE))
    assert result.records == [OffsetTombstone("g", "t", 0)]
    assert len(result.events) == 1
    assert fetch(store, "g").offsets == ()


# --- deleted topics ----------------------------------------------------------------------------

def test_deleted_topics_lose_their_offsets_in_every_group_in_group_topic_partition_order():
    store = Groups(a=FakeGroup(), b=FakeGroup()).store()
    commit(store, "b", P1, P0)
    commit(store, "a", PartitionOffset("t", 2, 1), PartitionOffset("keep", 0, 1))
    result = store.delete_topics(("t", "never-committed"), NOW)
    assert result.replies == []
    assert result.records == [OffsetTombstone("a", "t", 2), OffsetTombstone("b", "t", 0),
                              OffsetTombstone("b", "t", 1)]
    assert result.events == [offset_delete(NODE, NOW, r.group, topic=r.topic, partition=r.partition)
                             for r in result.records]
    assert fetch(store, "a").offsets == (CommittedOffset("keep", 0, 1),)
    assert fetch(store, "b").offsets == ()


def test_deleting_topics_nobody_committed_to_changes_nothing():
    store = Groups(g=FakeGroup()).store()
    commit(store, "g", P0)
    result = store.delete_topics(("other",), NOW)
    assert (result.records, result.events) == ([], [])


# --- records and the group's lifetime ----------------------------------------------------------

def test_an_operations_records_rebuild_the_same_offsets_in_another_store():
    groups = Groups(g=FakeGroup())
    store = groups.store()
    records = [*commit(store, "g", P0, P1).records, *delete(store, "g", ("t", 1)).records,
               *commit(store, "s", PartitionOffset("u", 0, 3), generation=-1, member_id="").records]
    loaded_groups = Groups(g=FakeGroup())
    loaded = loaded_groups.store()
    for record in records:
        loaded.replay(record)
    assert loaded_groups.created == ["s"]
    for group_id in ("g", "s"):
        assert dict(loaded.committed(group_id)) == dict(store.committed(group_id))


def test_a_tombstone_for_an_offset_that_is_not_committed_is_unknown_offset():
    store = Groups(g=FakeGroup()).store()
    commit(store, "g", P0)
    with pytest.raises(UnknownOffset):
        store.replay(OffsetTombstone("g", "t", 1))
    with pytest.raises(UnknownOffset):
        store.replay(OffsetTombstone("nope", "t", 0))


def test_a_dropped_group_loses_its_offsets():
    store = Groups(g=FakeGroup(), h=FakeGroup()).store()
    commit(store, "g", P0)
    commit(store, "h", P0)
    store.drop_group("g")
    assert fetch(store, "g", (("t", 0),)).offsets == (CommittedOffset("t", 0, -1),)
    assert store.delete_topics(("t",), NOW).records == [OffsetTombstone("h", "t", 0)]


def test_unload_forgets_only_the_offsets_of_the_groups_given_up():
    store = Groups(a1=FakeGroup(), a2=FakeGroup(), b1=FakeGroup()).store()
    for group_id in ("a1", "a2", "b1"):
        commit(store, group_id, P0)
    store.unload(lambda group_id: group_id.startswith("a"))
    assert [bool(store.committed(g)) for g in ("a1", "a2", "b1")] == [False, False, True]


def test_groups_of_any_type_plug_in_through_the_lookup():
    classic, consumer = {"c": FakeGroup()}, {"k": FakeGroup(commit_verdict=ErrorCode.STALE_MEMBER_EPOCH)}
    store = OffsetStore(NODE, group=lambda g: classic.get(g) or consumer.get(g),
                        create_group=lambda g: classic.setdefault(g, FakeGroup()))
    assert reply(commit(store, "c", P0)).partitions[0].error is ErrorCode.NONE
    assert reply(commit(store, "k", P0, generation=3)).partitions[0].error is ErrorCode.STALE_MEMBER_EPOCH
    assert consumer["k"].asked == [("m1", None, 3, 9)]
