"""The consumer-group wire handlers: kafka-python messages in, core dataclasses out, and back.

Each test builds a request with kafka-python's class at a given version, encodes and decodes it
(as the server would receive it), runs the registered handler with a fake node whose
`call_groups` records what the core was asked and answers with a canned core reply, then
encodes and decodes the response at the same version (as the client would read it).
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, Callable

import pytest
from kafka.protocol.admin.groups import (
    DeleteGroupsRequest,
    DescribeGroupsRequest,
    ListGroupsRequest,
)
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetDeleteRequest,
    OffsetFetchRequest,
    SyncGroupRequest,
)

import groupctl.server.handlers.delete_groups  # noqa: F401  (registers the handlers)
import groupctl.server.handlers.describe_groups  # noqa: F401
import groupctl.server.handlers.heartbeat  # noqa: F401
import groupctl.server.handlers.join_group  # noqa: F401
import groupctl.server.handlers.leave_group  # noqa: F401
import groupctl.server.handlers.list_groups  # noqa: F401
import groupctl.server.handlers.offset_commit  # noqa: F401
import groupctl.server.handlers.offset_delete  # noqa: F401
import groupctl.server.handlers.offset_fetch  # noqa: F401
import groupctl.server.handlers.sync_group  # noqa: F401
from groupctl.coordinator.classic.messages import (
    DeletedGroup,
    DescribedMember,
    GroupDescription,
    Heartbeat,
    HeartbeatResult,
    JoinedMember,
    JoinGroup,
    JoinGroupResult,
    LeaveGroup,
    LeaveGroupResult,
    LeavingMember,
    LeftMember,
    ListedGroup,
    SyncGroup,
    SyncGroupResult,
)
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
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.records import TopicRecord
from groupctl.coordinator.results import Result
from groupctl.protocol import schemas
from groupctl.protocol.registry import REGISTRY
from groupctl.server.context import RequestContext

NOW_MS = 1_763_750_000_000
ORDERS = TopicRecord(name="orders", topic_id=str(uuid.uuid4()), replicas={0: [0], 1: [0], 2: [0]})
PAYMENTS = TopicRecord(name="payments", topic_id=str(uuid.uuid4()), replicas={0: [0]})


# --- fakes ---------------------------------------------------------------------------------

class FakeCore:
    """Stands in for GroupCoordinator: records each call and replies to its token with
    `answer(request)` (or `answer` itself when it is not callable)."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.calls: list[tuple[str, Any, int]] = []

    def __getattr__(self, operation: str) -> Callable[[Any, Any, int], Result]:
        if operation.startswith("_"):
            raise AttributeError(operation)

        def run(token: Any, request: Any, now_ms: int) -> Result:
            self.calls.append((operation, request, now_ms))
            reply = self.answer(request) if callable(self.answer) else self.answer
            return Result().reply(object(), "a reply to another request").reply(token, reply)

        return run


class FakeTopics:
    def __init__(self, records: tuple[TopicRecord, ...]) -> None:
        self._by_name = {r.name: r for r in records}

    def get(self, name: str) -> TopicRecord | None:
        return self._by_name.get(name)

    def by_id(self, topic_id: str) -> TopicRecord | None:
        return next((r for r in self._by_name.values() if r.topic_id == topic_id), None)


class FakeNode:
    config = None
    logs = None

    def __init__(self, answer: Any, topics: tuple[TopicRecord, ...]) -> None:
        self.core = FakeCore(answer)
        self.topics = FakeTopics(topics)

    def now_ms(self) -> int:
        return NOW_MS

    async def call_groups(self, op: Callable[[Any, Any, int], Result]) -> Any:
        token = ("request", len(self.core.calls))
        result = op(self.core, token, self.now_ms())
        (reply,) = [r.response for r in result.replies if r.token == token]
        return reply


def roundtrip(message: Any, version: int) -> Any:
    return type(message)[None].decode(bytes(message.encode(version=version)), version=version)


def serve(
    key: int,
    request: Any,
    version: int,
    answer: Any,
    topics: tuple[TopicRecord, ...] = (ORDERS, PAYMENTS),
) -> tuple[list[tuple[str, Any, int]], Any]:
    """Run API `key`'s registered handler on `request` at `version`: (core calls, response)."""
    node = FakeNode(answer, topics)
    ctx = RequestContext(
        node=node,
        api_key=key,
        version=version,
        correlation_id=7,
        client_id="app-1",
        client_host="/127.0.0.1",
        response_class=schemas.response_class(key)[version],
    )
    response = asyncio.run(REGISTRY[key].handler(ctx, roundtrip(request, version)))
    return node.core.calls, roundtrip(response, version)


def only_call(calls: list[tuple[str, Any, int]], operation: str) -> Any:
    assert [(name, now) for name, _, now in calls] == [(operation, NOW_MS)]
    return calls[0][1]


# --- registry --------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "key, versions",
    [
        (11, (0, 9)), (14, (0, 5)), (12, (0, 4)), (13, (0, 5)), (8, (2, 10)),
        (9, (1, 10)), (16, (0, 5)), (15, (0, 6)), (42, (0, 2)), (47, (0, 0)),
    ],
)
def test_each_group_api_is_registered_from_oldest_client_version_to_newest_schema(key, versions):
    spec = REGISTRY[key]
    assert (spec.min_version, spec.max_version) == versions


# --- JoinGroup -------------------------------------------------------------------------------

def join_request(version: int) -> Any:
    cls = JoinGroupRequest
    return cls[version](
        group_id="orders-app",
        session_timeout_ms=10_000,
        rebalance_timeout_ms=30_000,
        member_id="",
        group_instance_id="host-1" if version >= 5 else None,
        protocol_type="consumer",
        protocols=[
            cls.JoinGroupRequestProtocol(name="range", metadata=b"sub-range"),
            cls.JoinGroupRequestProtocol(name="roundrobin", metadata=b"sub-rr"),
        ],
        reason="rebalance needed" if version >= 8 else None,
    )


@pytest.mark.parametrize("version", [0, 1, 3, 4, 5, 7, 8, 9])
def test_join_group_request_becomes_the_core_join_with_client_identity_from_the_connection(version):
    calls, _ = serve(11, join_request(version), version, JoinGroupResult(error=ErrorCode.NONE))
    join = only_call(calls, "join_group")
    assert join == JoinGroup(
        group_id="orders-app",
        member_id="",
        group_instance_id="host-1" if version >= 5 else None,
        session_timeout_ms=10_000,
        rebalance_timeout_ms=30_000 if version >= 1 else 10_000,  # v0: the session timeout
        protocol_type="consumer",
        protocols=(("range", b"sub-range"), ("roundrobin", b"sub-rr")),
        client_id="app-1",
        client_host="/127.0.0.1",
        require_known_member_id=version >= 4,
        reason="rebalance needed" if version >= 8 else None,
    )


@pytest.mark.parametrize("version", [0, 2, 5, 6, 7, 9])
def test_join_group_leader_response_lists_the_members_with_what_the_version_carries(version):
    result = JoinGroupResult(
        error=ErrorCode.NONE,
        generation_id=3,
        protocol_type="consumer",
        protocol_name="range",
        leader="app-1-aaa",
        member_id="app-1-aaa",
        members=(
            JoinedMember("app-1-aaa", "host-1", b"meta-a"),
            JoinedMember("app-2-bbb", None, b"meta-b"),
        ),
        skip_assignment=True,
    )
    _, response = serve(11, join_request(version), version, result)
    assert response.error_code == 0
    assert response.generation_id == 3
    assert response.protocol_name == "range"
    assert response.leader == response.member_id == "app-1-aaa"
    assert [(m.member_id, bytes(m.metadata)) for m in response.members] == [
        ("app-1-aaa", b"meta-a"),
        ("app-2-bbb", b"meta-b"),
    ]
    if version >= 5:
        assert [m.group_instance_id for m in response.members] == ["host-1", None]
    if version >= 7:
        assert response.protocol_type == "consumer"
    if version >= 9:
        assert response.skip_assignment is True


@pytest.mark.parametrize("version", [0, 4, 6])
def test_join_group_error_without_protocol_is_an_empty_protocol_name_before_v7(version):
    result = JoinGroupResult(error=ErrorCode.MEMBER_ID_REQUIRED, member_id="app-1-new")
    _, response = serve(11, join_request(version), version, result)
    assert (response.error_code, response.protocol_name) == (79, "")
    assert response.member_id == "app-1-new"
    assert response.members == []


@pytest.mark.parametrize("version", [7, 9])
def test_join_group_error_without_protocol_is_a_null_protocol_from_v7(version):
    result = JoinGroupResult(error=ErrorCode.UNKNOWN_MEMBER_ID)
    _, response = serve(11, join_request(version), version, result)
    assert (response.error_code, response.protocol_type, response.protocol_name) == (25, None, None)
    assert response.generation_id == -1


# --- SyncGroup -------------------------------------------------------------------------------

def sync_request(version: int) -> Any:
    cls = SyncGroupRequest
    return cls[version](
        group_id="orders-app",
        generation_id=3,
        member_id="app-1-aaa",
        group_instance_id="host-1" if version >= 3 else None,
        protocol_type="consumer" if version >= 5 else None,
        protocol_name="range" if version >= 5 else None,
        assignments=[
            cls.SyncGroupRequestAssignment(member_id="app-1-aaa", assignment=b"asg-a"),
            cls.SyncGroupRequestAssignment(member_id="app-2-bbb", assignment=b"asg-b"),
        ],
    )


@pytest.mark.parametrize("version", [0, 2, 3, 4, 5])
def test_sync_group_request_carries_the_leaders_assignments_to_the_core(version):
    calls, _ = serve(14, sync_request(version), version, SyncGroupResult(error=ErrorCode.NONE))
    assert only_call(calls, "sync_group") == SyncGroup(
        group_id="orders-app",
        generation_id=3,
        member_id="app-1-aaa",
        group_instance_id="host-1" if version >= 3 else None,
        protocol_type="consumer" if version >= 5 else None,
        protocol_name="range" if version >= 5 else None,
        assignments=(("app-1-aaa", b"asg-a"), ("app-2-bbb", b"asg-b")),
    )


@pytest.mark.parametrize("version", [0, 1, 4, 5])
def test_sync_group_response_returns_the_members_assignment(version):
    result = SyncGroupResult(
        error=ErrorCode.NONE, protocol_type="consumer", protocol_name="range", assignment=b"asg-a"
    )
    _, response = serve(14, sync_request(version), version, result)
    assert (response.error_code, bytes(response.assignment)) == (0, b"asg-a")
    if version >= 5:
        assert (response.protocol_type, response.protocol_name) == ("consumer", "range")


def test_sync_group_rebalance_error_reaches_the_member():
    result = SyncGroupResult(error=ErrorCode.REBALANCE_IN_PROGRESS)
    _, response = serve(14, sync_request(3), 3, result)
    assert (response.error_code, bytes(response.assignment)) == (27, b"")


# --- Heartbeat -------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [0, 1, 3, 4])
def test_heartbeat_is_passed_to_the_core_and_its_error_answered(version):
    request = HeartbeatRequest[version](
        group_id="orders-app",
        generation_id=3,
        member_id="app-1-aaa",
        group_instance_id="host-1" if version >= 3 else None,
    )
    result = HeartbeatResult(error=ErrorCode.ILLEGAL_GENERATION)
    calls, response = serve(12, request, version, result)
    assert only_call(calls, "heartbeat") == Heartbeat(
        "orders-app", 3, "app-1-aaa", "host-1" if version >= 3 else None
    )
    assert response.error_code == 22


# --- LeaveGroup ------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [0, 1, 2])
def test_leave_group_before_v3_leaves_the_one_named_member(version):
    request = LeaveGroupRequest[version](group_id="orders-app", member_id="app-1-aaa")
    result = LeaveGroupResult(ErrorCode.NONE, (LeftMember("app-1-aaa", None, ErrorCode.NONE),))
    calls, response = serve(13, request, version, result)
    leave = only_call(calls, "leave_group")
    assert leave == LeaveGroup("orders-app", (LeavingMember("app-1-aaa"),))
    assert response.error_code == 0


@pytest.mark.parametrize("version", [0, 2])
def test_leave_group_before_v3_reports_the_members_error_at_the_top_level(version):
    request = LeaveGroupRequest[version](group_id="orders-app", member_id="gone")
    gone = LeftMember("gone", None, ErrorCode.UNKNOWN_MEMBER_ID)
    result = LeaveGroupResult(ErrorCode.NONE, (gone,))
    _, response = serve(13, request, version, result)
    assert response.error_code == 25


def test_leave_group_before_v3_prefers_the_group_wide_error():
    request = LeaveGroupRequest[1](group_id="orders-app", member_id="gone")
    result = LeaveGroupResult(
        error=ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        members=(LeftMember("gone", None, ErrorCode.UNKNOWN_MEMBER_ID),),
    )
    _, response = serve(13, request, 1, result)
    assert response.error_code == 14


@pytest.mark.parametrize("version", [3, 4, 5])
def test_leave_group_from_v3_leaves_a_batch_and_answers_each_member(version):
    identity = LeaveGroupRequest.MemberIdentity
    request = LeaveGroupRequest[version](
        group_id="orders-app",
        members=[
            identity(
                member_id="app-1-aaa",
                group_instance_id=None,
                reason="closing" if version >= 5 else None,
            ),
            identity(member_id="", group_instance_id="host-2", reason=None),
        ],
    )
    result = LeaveGroupResult(
        error=ErrorCode.NONE,
        members=(
            LeftMember("app-1-aaa", None, ErrorCode.NONE),
            LeftMember("", "host-2", ErrorCode.UNKNOWN_MEMBER_ID),
        ),
    )
    calls, response = serve(13, request, version, result)
    assert only_call(calls, "leave_group") == LeaveGroup(
        "orders-app",
        (
            LeavingMember("app-1-aaa", None, "closing" if version >= 5 else None),
            LeavingMember("", "host-2", None),
        ),
    )
    assert response.error_code == 0
    assert [(m.member_id, m.group_instance_id, m.error_code) for m in response.members] == [
        ("app-1-aaa", None, 0),
        ("", "host-2", 25),
    ]


# --- OffsetCommit ----------------------------------------------------------------------------

def commit_request(
    version: int, topics: list[tuple[Any, list[tuple[int, int, str | None]]]], **group: Any
) -> Any:
    """`topics`: (name, or topic id from v10, [(partition, offset, metadata)])."""
    cls = OffsetCommitRequest
    topic_class = cls.OffsetCommitRequestTopic
    partition_class = topic_class.OffsetCommitRequestPartition
    fields = dict(group_id="orders-app", generation_id_or_member_epoch=3, member_id="app-1-aaa")
    fields.update(group)
    if version >= 7:
        fields.setdefault("group_instance_id", None)
    return cls[version](
        **fields,
        topics=[
            topic_class(
                **({"topic_id": topic} if version >= 10 else {"name": topic}),
                partitions=[
                    partition_class(
                        partition_index=p,
                        committed_offset=o,
                        committed_leader_epoch=5,
                        committed_metadata=m,
                    )
                    for p, o, m in partitions
                ],
            )
            for topic, partitions in topics
        ],
    )


def commit_errors(response: Any, version: int) -> list[tuple[Any, list[tuple[int, int]]]]:
    return [
        (
            t.topic_id if version >= 10 else t.name,
            [(p.partition_index, p.error_code) for p in t.partitions],
        )
        for t in response.topics
    ]


def all_committed(commit: CommitOffsets) -> CommitOffsetsResult:
    return CommitOffsetsResult(
        tuple(PartitionError(o.topic, o.partition, ErrorCode.NONE) for o in commit.offsets)
    )


@pytest.mark.parametrize("version", [2, 4, 5, 6, 7, 8, 9])
def test_offset_commit_passes_the_members_offsets_to_the_core(version):
    request = commit_request(
        version, [("orders", [(0, 100, "m0"), (2, 120, None)]), ("payments", [(0, 7, "")])]
    )
    calls, response = serve(8, request, version, all_committed)
    epoch = 5 if version >= 6 else -1
    assert only_call(calls, "commit_offsets") == CommitOffsets(
        group_id="orders-app",
        generation_id=3,
        member_id="app-1-aaa",
        group_instance_id=None,
        offsets=(
            PartitionOffset("orders", 0, 100, epoch, "m0"),
            PartitionOffset("orders", 2, 120, epoch, ""),  # null metadata is stored as ""
            PartitionOffset("payments", 0, 7, epoch, ""),
        ),
        api_version=version,  # the core's verdict depends on it (v9+: KIP-848 members)
    )
    assert commit_errors(response, version) == [
        ("orders", [(0, 0), (2, 0)]),
        ("payments", [(0, 0)]),
    ]


@pytest.mark.parametrize("version, error", [(8, ErrorCode.UNSUPPORTED_VERSION), (9, ErrorCode.STALE_MEMBER_EPOCH),
                                            (9, ErrorCode.UNKNOWN_MEMBER_ID), (9, ErrorCode.GROUP_ID_NOT_FOUND)])
def test_offset_commit_answers_a_consumer_groups_refusal_in_every_partition(version, error):
    request = commit_request(version, [("orders", [(0, 1, None), (2, 1, None)]), ("payments", [(0, 1, None)])])

    def refuse(commit: CommitOffsets) -> CommitOffsetsResult:
        return CommitOffsetsResult(tuple(PartitionError(o.topic, o.partition, error) for o in commit.offsets))

    calls, response = serve(8, request, version, refuse)
    assert only_call(calls, "commit_offsets").api_version == version
    code = int(error)
    assert commit_errors(response, version) == [("orders", [(0, code), (2, code)]), ("payments", [(0, code)])]


def test_offset_commit_v7_passes_the_static_members_instance_id():
    request = commit_request(7, [("orders", [(0, 1, None)])], group_instance_id="host-1")
    calls, _ = serve(8, request, 7, all_committed)
    assert only_call(calls, "commit_offsets").group_instance_id == "host-1"


def test_offset_commit_simple_commit_keeps_generation_minus_one_and_empty_member():
    request = commit_request(
        8, [("orders", [(1, 10, None)])], generation_id_or_member_epoch=-1, member_id=""
    )
    calls, _ = serve(8, request, 8, all_committed)
    commit = only_call(calls, "commit_offsets")
    assert (commit.generation_id, commit.member_id) == (-1, "")


@pytest.mark.parametrize("version", [2, 9])
def test_offset_commit_answers_unknown_partitions_and_large_metadata_before_the_core(version):
    request = commit_request(
        version,
        [
            ("ghost", [(0, 1, None)]),
            ("orders", [(9, 1, None), (1, 11, "x" * 4097), (0, 10, "é" * 2049)]),
            ("payments", [(0, 5, "y" * 4096)]),
        ],
    )
    calls, response = serve(8, request, version, all_committed)
    commit = only_call(calls, "commit_offsets")
    assert [(o.topic, o.partition) for o in commit.offsets] == [("payments", 0)]
    assert commit_errors(response, version) == [
        ("ghost", [(0, 3)]),  # UNKNOWN_TOPIC_OR_PARTITION
        ("orders", [(9, 3), (1, 12), (0, 12)]),  # 2049 x "é": 2049 characters, 4098 bytes
        ("payments", [(0, 0)]),
    ]


def test_offset_commit_merges_the_cores_errors_in_request_order():
    request = commit_request(
        8,
        [
            ("payments", [(0, 1, None)]),
            ("ghost", [(0, 1, None)]),
            ("orders", [(2, 1, None), (0, 1, None)]),
        ],
    )
    result = CommitOffsetsResult(
        (
            PartitionError("orders", 0, ErrorCode.ILLEGAL_GENERATION),
            PartitionError("orders", 2, ErrorCode.ILLEGAL_GENERATION),
            PartitionError("payments", 0, ErrorCode.ILLEGAL_GENERATION),
        )
    )
    _, response = serve(8, request, 8, result)
    assert commit_errors(response, 8) == [
        ("payments", [(0, 22)]),
        ("ghost", [(0, 3)]),
        ("orders", [(2, 22), (0, 22)]),
    ]


def test_offset_commit_with_no_valid_partition_does_not_reach_the_core():
    request = commit_request(8, [("ghost", [(0, 1, None), (1, 1, None)])])
    calls, response = serve(8, request, 8, all_committed)
    assert calls == []
    assert commit_errors(response, 8) == [("ghost", [(0, 3), (1, 3)])]


def test_offset_commit_v10_resolves_topic_ids_and_answers_unknown_ids():
    unknown = uuid.uuid4()
    orders_id = uuid.UUID(ORDERS.topic_id)
    request = commit_request(
        10, [(orders_id, [(1, 42, None), (7, 1, None)]), (unknown, [(0, 1, None)])]
    )
    calls, response = serve(8, request, 10, all_committed)
    assert only_call(calls, "commit_offsets").offsets == (PartitionOffset("orders", 1, 42, 5, ""),)
    assert commit_errors(response, 10) == [
        (orders_id, [(1, 0), (7, 3)]),
        (unknown, [(0, 100)]),  # UNKNOWN_TOPIC_ID
    ]


# --- OffsetFetch -----------------------------------------------------------------------------

def fetch_topics(version: int, topics: list[tuple[Any, list[int]]] | None, cls: Any) -> Any:
    if topics is None:
        return None
    key = "topic_id" if version >= 10 else "name"
    return [cls(**{key: t}, partition_indexes=ps) for t, ps in topics]


def fetch_request(version: int, topics: list[tuple[Any, list[int]]] | None, **extra: Any) -> Any:
    """A fetch for group "orders-app"; `topics` None asks for every committed partition."""
    cls = OffsetFetchRequest
    if version >= 8:
        group_class = cls.OffsetFetchRequestGroup
        wire_topics = fetch_topics(version, topics, group_class.OffsetFetchRequestTopics)
        group = group_class(group_id="orders-app", topics=wire_topics)
        return cls[version](groups=[group], **extra)
    wire_topics = fetch_topics(version, topics, cls.OffsetFetchRequestTopic)
    return cls[version](group_id="orders-app", topics=wire_topics, **extra)


def fetched(topics: Any) -> list[tuple[str, list[tuple[int, int, int, str | None, int]]]]:
    return [
        (
            t.name,
            [
                (
                    p.partition_index,
                    p.committed_offset,
                    p.committed_leader_epoch,
                    p.metadata,
                    p.error_code,
                )
                for p in t.partitions
            ],
        )
        for t in topics
    ]


def committed_answer(fetch: FetchOffsets) -> FetchOffsetsResult:
    """The core's answer: orders-0 at 100 and payments-0 at 7 are committed, nothing else."""
    stored = {
        ("orders", 0): CommittedOffset("orders", 0, 100, 4, "m0"),
        ("payments", 0): CommittedOffset("payments", 0, 7),
    }
    if fetch.partitions is None:
        return FetchOffsetsResult(ErrorCode.NONE, tuple(stored.values()))
    return FetchOffsetsResult(
        ErrorCode.NONE,
        tuple(stored.get(tp, CommittedOffset(tp[0], tp[1], -1)) for tp in fetch.partitions),
    )


@pytest.mark.parametrize("version", [1, 2, 5, 7])
def test_offset_fetch_single_group_asks_for_the_requested_partitions(version):
    request = fetch_request(version, [("orders", [0, 1]), ("payments", [0])])
    calls, response = serve(9, request, version, committed_answer)
    assert only_call(calls, "fetch_offsets") == FetchOffsets(
        "orders-app", (("orders", 0), ("orders", 1), ("payments", 0)), require_stable=False
    )
    epoch = 4 if version >= 5 else -1
    assert fetched(response.topics) == [
        ("orders", [(0, 100, epoch, "m0", 0), (1, -1, -1, "", 0)]),
        ("payments", [(0, 7, -1, "", 0)]),
    ]
    if version >= 2:
        assert response.error_code == 0


@pytest.mark.parametrize("version", [2, 6, 7])
def test_offset_fetch_null_topics_asks_for_every_committed_partition(version):
    calls, response = serve(9, fetch_request(version, None), version, committed_answer)
    assert only_call(calls, "fetch_offsets").partitions is None
    assert [t.name for t in response.topics] == ["orders", "payments"]


def test_offset_fetch_v1_reports_a_group_error_in_every_requested_partition():
    request = fetch_request(1, [("orders", [0, 1])])
    _, response = serve(9, request, 1, FetchOffsetsResult(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS))
    assert fetched(response.topics) == [("orders", [(0, -1, -1, "", 14), (1, -1, -1, "", 14)])]


@pytest.mark.parametrize("version", [2, 7])
def test_offset_fetch_from_v2_reports_a_group_error_at_the_top_level_without_topics(version):
    request = fetch_request(version, [("orders", [0])])
    _, response = serve(9, request, version, FetchOffsetsResult(ErrorCode.NOT_COORDINATOR))
    assert (response.error_code, response.topics) == (16, [])


def test_offset_fetch_v7_passes_require_stable():
    calls, _ = serve(9, fetch_request(7, None, require_stable=True), 7, committed_answer)
    assert only_call(calls, "fetch_offsets").require_stable is True


@pytest.mark.parametrize("version", [8, 9])
def test_offset_fetch_from_v8_answers_each_group_with_its_own_core_call(version):
    cls = OffsetFetchRequest
    group_class = cls.OffsetFetchRequestGroup
    topic_class = group_class.OffsetFetchRequestTopics
    request = cls[version](
        groups=[
            group_class(
                group_id="orders-app", topics=[topic_class(name="orders", partition_indexes=[0])]
            ),
            group_class(group_id="audit", topics=None),
            group_class(
                group_id="loading", topics=[topic_class(name="payments", partition_indexes=[0])]
            ),
        ],
        require_stable=True,
    )

    def answer(fetch: FetchOffsets) -> FetchOffsetsResult:
        if fetch.group_id == "loading":
            return FetchOffsetsResult(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
        return committed_answer(fetch)

    calls, response = serve(9, request, version, answer)
    assert [(name, call) for name, call, _ in calls] == [
        ("fetch_offsets", FetchOffsets("orders-app", (("orders", 0),), True)),
        ("fetch_offsets", FetchOffsets("audit", None, True)),
        ("fetch_offsets", FetchOffsets("loading", (("payments", 0),), True)),
    ]
    assert [(g.group_id, g.error_code, fetched(g.topics)) for g in response.groups] == [
        ("orders-app", 0, [("orders", [(0, 100, 4, "m0", 0)])]),
        ("audit", 0, [("orders", [(0, 100, 4, "m0", 0)]), ("payments", [(0, 7, -1, "", 0)])]),
        ("loading", 14, []),
    ]


@pytest.mark.parametrize("version", [9, 10])
def test_offset_fetch_from_v9_passes_each_groups_member_id_and_epoch(version):
    group_class = OffsetFetchRequest.OffsetFetchRequestGroup
    request = OffsetFetchRequest[version](
        groups=[
            group_class(group_id="orders-app", member_id="m-1", member_epoch=4, topics=None),
            group_class(group_id="audit", topics=None),  # librdkafka's: null id, epoch -1
        ],
        require_stable=False,
    )
    calls, _ = serve(9, request, version, committed_answer)
    assert [(call.group_id, call.member_id, call.member_epoch) for _, call, _ in calls] == [
        ("orders-app", "m-1", 4),
        ("audit", None, -1),
    ]


def test_offset_fetch_before_v9_names_no_member():
    calls, _ = serve(9, fetch_request(8, None), 8, committed_answer)
    fetch = only_call(calls, "fetch_offsets")
    assert (fetch.member_id, fetch.member_epoch) == (None, -1)


@pytest.mark.parametrize("error", [ErrorCode.STALE_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID])
def test_offset_fetch_v9_answers_a_refused_member_in_its_groups_error_only(error):
    group_class = OffsetFetchRequest.OffsetFetchRequestGroup
    topic_class = group_class.OffsetFetchRequestTopics
    request = OffsetFetchRequest[9](
        groups=[
            group_class(group_id="orders-app", member_id="m-1", member_epoch=3,
                        topics=[topic_class(name="orders", partition_indexes=[0])]),
            group_class(group_id="audit", topics=[topic_class(name="orders", partition_indexes=[0])]),
        ],
        require_stable=False,
    )

    def answer(fetch: FetchOffsets) -> FetchOffsetsResult:
        return FetchOffsetsResult(error) if fetch.member_id else committed_answer(fetch)

    _, response = serve(9, request, 9, answer)
    assert [(g.group_id, g.error_code, fetched(g.topics)) for g in response.groups] == [
        ("orders-app", int(error), []),
        ("audit", 0, [("orders", [(0, 100, 4, "m0", 0)])]),
    ]


def test_offset_fetch_v10_resolves_topic_ids_both_ways():
    unknown = uuid.uuid4()
    orders_id = uuid.UUID(ORDERS.topic_id)
    request = fetch_request(10, [(orders_id, [0, 1]), (unknown, [3])])
    calls, response = serve(9, request, 10, committed_answer)
    assert only_call(calls, "fetch_offsets").partitions == (("orders", 0), ("orders", 1))
    (group,) = response.groups
    answered = [
        (t.topic_id, [(p.partition_index, p.committed_offset, p.error_code) for p in t.partitions])
        for t in group.topics
    ]
    assert answered == [
        (orders_id, [(0, 100, 0), (1, -1, 0)]),
        (unknown, [(3, -1, 100)]),  # UNKNOWN_TOPIC_ID
    ]


def test_offset_fetch_v10_all_partitions_names_topics_by_id_and_drops_deleted_topics():
    result = FetchOffsetsResult(
        ErrorCode.NONE,
        (
            CommittedOffset("orders", 2, 50),
            CommittedOffset("deleted-topic", 0, 9),
            CommittedOffset("orders", 0, 40),
        ),
    )
    _, response = serve(9, fetch_request(10, None), 10, result)
    (group,) = response.groups
    answered = [
        (t.topic_id, [(p.partition_index, p.committed_offset) for p in t.partitions])
        for t in group.topics
    ]
    assert answered == [
        (uuid.UUID(ORDERS.topic_id), [(2, 50), (0, 40)])
    ]


# --- ListGroups ------------------------------------------------------------------------------

LISTED = (
    ListedGroup("orders-app", "consumer", "Stable"),
    ListedGroup("connect-x", "connect", "Empty", "classic"),
)


@pytest.mark.parametrize("version", [0, 1, 3])
def test_list_groups_before_v4_lists_without_filters(version):
    calls, response = serve(16, ListGroupsRequest[version](), version, LISTED)
    assert only_call(calls, "list_groups") == (frozenset(), frozenset())
    assert response.error_code == 0
    assert [(g.group_id, g.protocol_type) for g in response.groups] == [
        ("orders-app", "consumer"),
        ("connect-x", "connect"),
    ]


def test_list_groups_v4_filters_by_state_and_reports_it():
    request = ListGroupsRequest[4](states_filter=["Stable", "Empty"])
    calls, response = serve(16, request, 4, LISTED)
    assert only_call(calls, "list_groups") == (frozenset({"Stable", "Empty"}), frozenset())
    assert [(g.group_id, g.group_state) for g in response.groups] == [
        ("orders-app", "Stable"),
        ("connect-x", "Empty"),
    ]


def test_list_groups_v5_filters_by_type_and_reports_it():
    request = ListGroupsRequest[5](states_filter=[], types_filter=["classic"])
    calls, response = serve(16, request, 5, LISTED)
    assert only_call(calls, "list_groups") == (frozenset(), frozenset({"classic"}))
    assert [(g.group_state, g.group_type) for g in response.groups] == [
        ("Stable", "classic"),
        ("Empty", "classic"),
    ]


# --- DescribeGroups --------------------------------------------------------------------------

STABLE = GroupDescription(
    group_id="orders-app",
    error=ErrorCode.NONE,
    state="Stable",
    protocol_type="consumer",
    protocol="range",
    generation_id=3,
    members=(DescribedMember("app-1-aaa", "host-1", "app-1", "/127.0.0.1", b"meta-a", b"asg-a"),),
)
UNKNOWN = GroupDescription(group_id="nobody", error=ErrorCode.NONE)  # described as Dead


def describe_request(version: int, include_operations: bool = False) -> Any:
    extra = {"include_authorized_operations": include_operations} if version >= 3 else {}
    return DescribeGroupsRequest[version](groups=["orders-app", "nobody"], **extra)


@pytest.mark.parametrize("version", [0, 3, 4, 5, 6])
def test_describe_groups_describes_each_group_and_its_members(version):
    calls, response = serve(15, describe_request(version), version, (STABLE, UNKNOWN))
    assert only_call(calls, "describe_groups") == ("orders-app", "nobody")
    group = response.groups[0]
    assert (group.error_code, group.group_id, group.group_state) == (0, "orders-app", "Stable")
    assert (group.protocol_type, group.protocol_data) == ("consumer", "range")
    (member,) = group.members
    assert (member.member_id, member.client_id) == ("app-1-aaa", "app-1")
    assert member.client_host == "/127.0.0.1"
    assert (bytes(member.member_metadata), bytes(member.member_assignment)) == (b"meta-a", b"asg-a")
    if version >= 4:
        assert member.group_instance_id == "host-1"
    if version >= 3:
        assert group.authorized_operations is None  # -2147483648 on the wire: not requested
    if version >= 6:
        assert group.error_message is None


@pytest.mark.parametrize("version", [0, 5])
def test_describe_groups_before_v6_describes_an_unknown_group_as_dead(version):
    not_found = GroupDescription(group_id="nobody", error=ErrorCode.GROUP_ID_NOT_FOUND)
    _, response = serve(15, describe_request(version), version, (UNKNOWN, not_found))
    assert [(g.group_id, g.error_code, g.group_state, g.members) for g in response.groups] == [
        ("nobody", 0, "Dead", []),
        ("nobody", 0, "Dead", []),
    ]


def test_describe_groups_v6_answers_an_unknown_group_not_found_with_a_message():
    _, response = serve(15, describe_request(6), 6, (STABLE, UNKNOWN))
    unknown = response.groups[1]
    assert (unknown.error_code, unknown.group_state) == (69, "Dead")
    assert unknown.error_message == "Group nobody not found."


@pytest.mark.parametrize("version", [3, 6])
def test_describe_groups_requested_operations_are_read_delete_describe(version):
    request = describe_request(version, include_operations=True)
    _, response = serve(15, request, version, (STABLE, UNKNOWN))
    assert response.groups[0].authorized_operations == {3, 6, 8}


def test_describe_groups_passes_a_group_error_through():
    loading = GroupDescription("orders-app", ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, state="")
    _, response = serve(15, describe_request(6), 6, (loading, STABLE))
    assert (response.groups[0].error_code, response.groups[0].error_message) == (14, None)


# --- DeleteGroups ----------------------------------------------------------------------------

@pytest.mark.parametrize("version", [0, 1, 2])
def test_delete_groups_answers_each_group_in_request_order(version):
    request = DeleteGroupsRequest[version](groups_names=["idle", "busy", "nobody"])
    result = (
        DeletedGroup("idle", ErrorCode.NONE),
        DeletedGroup("busy", ErrorCode.NON_EMPTY_GROUP),
        DeletedGroup("nobody", ErrorCode.GROUP_ID_NOT_FOUND),
    )
    calls, response = serve(42, request, version, result)
    assert only_call(calls, "delete_groups") == ("idle", "busy", "nobody")
    assert [(r.group_id, r.error_code) for r in response.results] == [
        ("idle", 0),
        ("busy", 68),
        ("nobody", 69),
    ]


# --- OffsetDelete ----------------------------------------------------------------------------

def offset_delete_request(topics: list[tuple[str, list[int]]]) -> Any:
    cls = OffsetDeleteRequest
    topic_class = cls.OffsetDeleteRequestTopic
    partition_class = topic_class.OffsetDeleteRequestPartition
    return cls[0](
        group_id="orders-app",
        topics=[
            topic_class(name=t, partitions=[partition_class(partition_index=p) for p in ps])
            for t, ps in topics
        ],
    )


def test_offset_delete_deletes_known_topics_and_answers_unknown_ones_itself():
    request = offset_delete_request([("orders", [0, 1]), ("ghost", [0]), ("payments", [0])])
    result = DeleteOffsetsResult(
        ErrorCode.NONE,
        (
            PartitionError("orders", 0, ErrorCode.NONE),
            PartitionError("orders", 1, ErrorCode.NONE),
            PartitionError("payments", 0, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC),
        ),
    )
    calls, response = serve(47, request, 0, result)
    assert only_call(calls, "delete_offsets") == DeleteOffsets(
        "orders-app", (("orders", 0), ("orders", 1), ("payments", 0))
    )
    assert response.error_code == 0
    answered = [
        (t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in response.topics
    ]
    assert answered == [
        ("orders", [(0, 0), (1, 0)]),
        ("ghost", [(0, 3)]),
        ("payments", [(0, 86)]),
    ]


def test_offset_delete_group_error_is_the_whole_answer():
    request = offset_delete_request([("orders", [0]), ("ghost", [0])])
    calls, response = serve(47, request, 0, DeleteOffsetsResult(ErrorCode.GROUP_ID_NOT_FOUND))
    assert only_call(calls, "delete_offsets").partitions == (("orders", 0),)
    assert (response.error_code, response.topics) == (69, [])
