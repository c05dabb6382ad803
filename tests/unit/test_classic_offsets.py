"""OffsetCommit fencing, OffsetFetch in every state, OffsetDelete, deleted topics' offsets."""

import pytest

from groupctl.coordinator.classic.messages import LeavingMember

from groupctl.coordinator.offsets.messages import (

    CommittedOffset,

    DeleteOffsets,

    DeleteOffsetsResult,

    FetchOffsets,

    PartitionError,

    PartitionOffset,

)
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.records import OffsetCommitRecord, OffsetTombstone
from tests.unit.classic_harness import Harness, subscription

P0 = PartitionOffset("t", 0, 42, leader_epoch=3, metadata="m")
P1 = PartitionOffset("t", 1, 7)


def fetch(h: Harness, group: str, partitions=None):
    return h.ask("fetch_offsets", FetchOffsets(group, partitions))


def test_commit_from_a_stable_member_is_stored_as_one_record_per_partition():
    h = Harness()
    a, _ = h.stable_group(count=2)
    assert h.commit("g", 1, a.member_id, P0, P1) == [ErrorCode.NONE, ErrorCode.NONE]
    assert h.results[-1].records == [
        OffsetCommitRecord("g", "t", 0, 42, 3, "m", h.now),
        OffsetCommitRecord("g", "t", 1, 7, -1, "", h.now),
    ]
    assert fetch(h, "g").offsets == (CommittedOffset("t", 0, 42, 3, "m"), CommittedOffset("t", 1, 7))


def test_commit_with_a_wrong_generation_is_illegal_generation():
    h = Harness()
    a, _ = h.stable_group(count=2)
    assert h.commit("g", 0, a.member_id, P0) == [ErrorCode.ILLEGAL_GENERATION]
    assert h.results[-1].records == []


def test_commit_from_an_unknown_member_is_unknown_member():
    h = Harness()
    h.stable_group(count=1)
    assert h.commit("g", 1, "c-ghost", P0) == [ErrorCode.UNKNOWN_MEMBER_ID]


def test_commit_during_completing_rebalance_is_rebalance_in_progress():
    h = Harness()
    a, _ = h.joined_members("g", 2)
    assert h.commit("g", 1, a.member_id, P0) == [ErrorCode.REBALANCE_IN_PROGRESS]


def test_commit_during_preparing_rebalance_is_accepted_from_the_previous_generation():
    h = Harness()
    a, b = h.stable_group(count=2)
    h.join(member_id=a.member_id, client_id="c0")
    assert h.state() == "PreparingRebalance"
    assert h.commit("g", 1, b.member_id, P0) == [ErrorCode.NONE]


def test_simple_commit_to_a_new_group_creates_an_empty_group():
    h = Harness()
    assert h.commit("fresh", -1, "", P0) == [ErrorCode.NONE]
    assert h.state("fresh") == "Empty"
    assert fetch(h, "fresh").offsets == (CommittedOffset("t", 0, 42, 3, "m"),)


def test_simple_commit_to_an_empty_group_is_accepted():
    h = Harness()
    (a,) = h.stable_group(count=1)
    h.leave("g", LeavingMember(a.member_id))
    assert h.commit("g", -1, "", P0) == [ErrorCode.NONE]


def test_simple_commit_to_a_group_with_members_is_unknown_member():
    h = Harness()
    h.stable_group(count=1)
    assert h.commit("g", -1, "", P0) == [ErrorCode.UNKNOWN_MEMBER_ID]


def test_commit_without_generation_but_with_a_member_id_is_checked_like_a_member_commit():
    h = Harness()
    (a,) = h.stable_group(count=1)
    assert h.commit("g", -1, a.member_id, P0) == [ErrorCode.ILLEGAL_GENERATION]


@pytest.mark.parametrize("version, error", [(8, ErrorCode.ILLEGAL_GENERATION), (9, ErrorCode.GROUP_ID_NOT_FOUND)])
def test_commit_with_a_generation_to_an_unknown_group_is_refused_as_its_version_says(version, error):
    h = Harness()
    assert h.commit("nope", 3, "c-ghost", P0, version=version) == [error]
    assert h.state("nope") == "Dead"


@pytest.mark.parametrize("version", [2, 7, 8, 9, 10])
def test_a_classic_groups_verdict_is_the_same_at_every_version(version):
    h = Harness()
    a, _ = h.stable_group(count=2)
    assert h.commit("g", 1, a.member_id, P0, version=version) == [ErrorCode.NONE]
    assert h.commit("g", 0, a.member_id, P0, version=version) == [ErrorCode.ILLEGAL_GENERATION]
    assert h.commit("g", 1, "c-ghost", P0, version=version) == [ErrorCode.UNKNOWN_MEMBER_ID]


def test_fetch_from_a_classic_group_ignores_a_member_id_and_epoch():
    h = Harness()
    a, _ = h.stable_group(count=2)
    h.commit("g", 1, a.member_id, P0)
    answer = h.ask("fetch_offsets", FetchOffsets("g", (("t", 0),), member_id="c-ghost", member_epoch=99))
    assert (answer.error, answer.offsets) == (ErrorCode.NONE, (CommittedOffset("t", 0, 42, 3, "m"),))


def test_commit_by_a_static_member_with_another_instance_is_fenced():
    h = Harness()
    (a,) = h.stable_group(count=1, instance="i-0")
    assert h.commit("g", 1, "c-other", P0, instance="i-0") == [ErrorCode.FENCED_INSTANCE_ID]
    assert h.commit("g", 1, a.member_id, P0, instance="i-0") == [ErrorCode.NONE]


def test_commit_with_oversized_metadata_fails_only_that_partition():
    h = Harness()
    big = PartitionOffset("t", 2, 1, metadata="x" * 4097)
    assert h.commit("s", -1, "", P1, big) == [ErrorCode.NONE, ErrorCode.OFFSET_METADATA_TOO_LARGE]
    assert [r.partition for r in h.results[-1].records] == [1]


def test_fetch_from_an_unknown_group_answers_minus_one_offsets():
    h = Harness()
    answer = fetch(h, "nope", (("t", 0),))
    assert answer.error is ErrorCode.NONE
    assert answer.offsets == (CommittedOffset("t", 0, -1),)
    assert fetch(h, "nope").offsets == ()


def test_fetch_of_uncommitted_partitions_answers_minus_one():
    h = Harness()
    h.commit("s", -1, "", P0)
    assert fetch(h, "s", (("t", 0), ("t", 5))).offsets == (
        CommittedOffset("t", 0, 42, 3, "m"), CommittedOffset("t", 5, -1))


def test_fetch_works_during_a_rebalance():
    h = Harness()
    a, b = h.stable_group(count=2)
    h.commit("g", 1, a.member_id, P0)
    h.join(member_id=a.member_id, client_id="c0")
    assert fetch(h, "g", (("t", 0),)).offsets[0].offset == 42


def delete(h: Harness, group: str, *partitions):
    return h.ask("delete_offsets", DeleteOffsets(group, tuple(partitions)))


def test_delete_offsets_of_an_unknown_group_is_group_id_not_found():
    assert delete(Harness(), "nope", ("t", 0)).error is ErrorCode.GROUP_ID_NOT_FOUND


def test_delete_offsets_of_an_empty_group_tombstones_the_committed_ones():
    h = Harness()
    h.commit("s", -1, "", P0)
    answer = delete(h, "s", ("t", 0), ("t", 9))
    assert answer == DeleteOffsetsResult(ErrorCode.NONE, (
        PartitionError("t", 0, ErrorCode.NONE), PartitionError("t", 9, ErrorCode.NONE)))
    assert h.results[-1].records == [OffsetTombstone("s", "t", 0)]
    assert fetch(h, "s").offsets == ()


def test_delete_offsets_of_a_subscribed_topic_is_refused_per_partition():
    h = Harness()
    a, _ = h.stable_group(count=2, protocols=(("range", subscription("t")),))
    h.commit("g", 1, a.member_id, P0, PartitionOffset("other", 0, 1))
    answer = delete(h, "g", ("t", 0), ("other", 0))
    assert [p.error for p in answer.partitions] == [ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, ErrorCode.NONE]
    assert h.results[-1].records == [OffsetTombstone("g", "other", 0)]


def test_delete_offsets_of_a_consumer_group_with_undecodable_subscriptions_counts_as_subscribed():
    h = Harness()
    h.stable_group(count=1, protocols=(("range", b"garbage"),))
    assert delete(h, "g", ("anything", 0)).partitions[0].error is ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC


def test_delete_offsets_of_a_non_consumer_group_with_members_is_non_empty_group():
    h = Harness()
    h.stable_group(count=1, protocol_type="connect", protocols=(("s", b""),))
    assert delete(h, "g", ("t", 0)).error is ErrorCode.NON_EMPTY_GROUP


def test_deleted_topics_lose_their_offsets_in_every_group():
    h = Harness()
    h.commit("a", -1, "", P0, PartitionOffset("keep", 0, 1))
    h.commit("b", -1, "", P1)
    result = h.absorb(h.core.delete_topic_offsets(("t",), h.now))
    assert result.replies == []
    assert result.records == [OffsetTombstone("a", "t", 0), OffsetTombstone("b", "t", 1)]
    assert fetch(h, "a").offsets == (CommittedOffset("keep", 0, 1),)
    assert fetch(h, "b").offsets == ()
