"""Group-scoped ops follow the group when its coordinator moves (`kafka_apis.GroupCoordinator`).

Against a real in-process coordinator whose fault injector answers the next request(s) of an
API the way a node that lost (or is still loading) the group's partition answers them
(NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE), or closes the
connection: each operation must ask FindCoordinator again and still succeed, within its timeout.
"""

from __future__ import annotations

import time

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata, TopicPartition

from groupctl.ops import groups, offsets, rebalance
from groupctl.client import kafka_apis as apis
from groupctl.errors import NotFound, Unreachable
from groupctl.client.kafka import FIND_COORDINATOR, ConnectionFailed
from groupctl.ops.reset import ShiftBy, make_scope
from groupctl.protocol.extensions import DESCRIBE_GROUP_KEY, TRIGGER_REBALANCE_KEY

NOT_COORDINATOR = 16
COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
LIST_GROUPS = 16


def commit(bootstrap: str, group: str, wanted: dict[tuple[str, int], int]) -> None:
    """Commit with kafka-python's admin client (creating the topic's partitions by Metadata)."""
    client = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        client.alter_group_offsets(group, {TopicPartition(t, p): OffsetAndMetadata(o, "", -1)
                                           for (t, p), o in wanted.items()})
    finally:
        client.close()


def committed(bootstrap: str, group: str) -> dict[tuple[str, int], int]:
    client = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        fetched = client.list_group_offsets(group).get(group, {})
    finally:
        client.close()
    return {(tp.topic, tp.partition): meta.offset for tp, meta in fetched.items() if meta.offset >= 0}


@pytest.fixture
def idle(coordinator):
    """Group "idle" without members, committed at offset 3 on partition 0 of topic "events"
    (one partition of 10 records)."""
    client = KafkaAdminClient(bootstrap_servers=coordinator.bootstrap)
    try:
        client.create_topics([NewTopic("events", 1, 1)])
    finally:
        client.close()
    producer = KafkaProducer(bootstrap_servers=coordinator.bootstrap)
    try:
        for future in [producer.send("events", f"r{i}".encode(), partition=0) for i in range(10)]:
            future.get(timeout=10)
    finally:
        producer.close()
    commit(coordinator.bootstrap, "idle", {("events", 0): 3})
    return "idle"


def count_find_coordinator(coordinator) -> list:
    seen: list = []
    coordinator.node.faults.observe(FIND_COORDINATOR, lambda ctx, request: seen.append(request.key))
    return seen


def hang_up(ctx, request):
    """A replacement answer that closes the connection instead (a coordinator going away)."""
    raise ConnectionResetError("the coordinator went away")


@pytest.mark.parametrize("code", [NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE])
def test_describe_finds_the_coordinator_again_when_offset_fetch_says_it_moved(coordinator, idle, code):
    finds = count_find_coordinator(coordinator)
    coordinator.node.faults.replace_next(apis.OFFSET_FETCH, lambda ctx, request: ctx.respond(error_code=code))

    described = groups.describe_group(coordinator.bootstrap, idle)

    assert described.state == "Empty"
    assert [(o.topic, o.partition, o.committed_offset) for o in described.offsets] == [("events", 0, 3)]
    assert finds == [idle, idle]


def test_offsets_show_waits_while_the_coordinator_is_loading_the_group(coordinator, idle):
    finds = count_find_coordinator(coordinator)
    coordinator.node.faults.replace_next(
        apis.DESCRIBE_GROUPS, lambda ctx, request: ctx.respond(groups=[ctx.response_class.DescribedGroup(
            error_code=COORDINATOR_LOAD_IN_PROGRESS, group_id=idle, authorized_operations=-(1 << 31))]),
        times=2)

    shown = offsets.show_offsets(coordinator.bootstrap, idle)

    assert [o.committed_offset for o in shown.offsets] == [3]
    assert len(finds) == 3


def test_describe_survives_the_coordinator_closing_the_connection(coordinator, idle):
    finds = count_find_coordinator(coordinator)
    coordinator.node.faults.replace_next(apis.DESCRIBE_GROUPS, hang_up)

    assert groups.describe_group(coordinator.bootstrap, idle).state == "Empty"
    assert len(finds) == 2


def test_find_coordinator_asks_again_when_the_bootstrap_server_hangs_up(coordinator):
    coordinator.node.faults.replace_next(FIND_COORDINATOR, hang_up)

    assert groups.find_coordinator(coordinator.bootstrap, "g").node_id == 0


def test_a_coordinator_that_never_takes_the_group_fails_within_the_timeout_naming_the_error(coordinator, idle):
    coordinator.node.faults.replace_next(apis.OFFSET_FETCH, lambda ctx, request: ctx.respond(error_code=NOT_COORDINATOR),
                                         times=1000)
    started = time.monotonic()

    with pytest.raises(Unreachable, match="coordinator for group 'idle' is not available: NOT_COORDINATOR"):
        offsets.show_offsets(coordinator.bootstrap, idle, timeout=1)

    assert time.monotonic() - started < 3


def test_a_reset_whose_commit_answer_is_lost_commits_its_first_plan_again_never_a_new_one(coordinator, idle,
                                                                                       monkeypatch):
    """--shift-by is relative: planning again from the already-shifted offsets would shift twice."""
    real_commit = offsets._commit
    attempts = []

    def commit_then_lose_the_answer(client, node, group, wanted, leader_epochs):
        attempts.append(dict(wanted))
        real_commit(client, node, group, wanted, leader_epochs)
        if len(attempts) == 1:
            raise ConnectionFailed("lost connection to the coordinator: connection reset", node)

    monkeypatch.setattr(offsets, "_commit", commit_then_lose_the_answer)

    plan = offsets.reset_offsets(coordinator.bootstrap, idle, make_scope(["events"], False), ShiftBy(2), execute=True)

    assert attempts == [{("events", 0): 5}, {("events", 0): 5}]
    assert [(p.current_offset, p.new_offset) for p in plan.partitions] == [(3, 5)] and plan.executed
    assert committed(coordinator.bootstrap, idle) == {("events", 0): 5}


def test_group_delete_follows_a_moved_coordinator(coordinator, idle):
    coordinator.node.faults.replace_next(apis.DELETE_GROUPS, lambda ctx, request: ctx.respond(
        results=[ctx.response_class.DeletableGroupResult(group_id=idle, error_code=NOT_COORDINATOR)]))

    [deletion] = groups.delete_groups(coordinator.bootstrap, [idle])

    assert deletion.deleted, deletion.error
    assert committed(coordinator.bootstrap, idle) == {}


def test_group_list_asks_a_node_that_is_loading_groups_again(coordinator, idle):
    coordinator.node.faults.replace_next(
        LIST_GROUPS, lambda ctx, request: ctx.respond(error_code=COORDINATOR_LOAD_IN_PROGRESS, groups=[]))

    assert [g.group for g in groups.list_groups(coordinator.bootstrap)] == [idle]


def test_rebalance_trigger_follows_a_moved_coordinator(coordinator):
    coordinator.node.faults.replace_next(
        TRIGGER_REBALANCE_KEY, lambda ctx, request: ctx.respond(error_code=NOT_COORDINATOR, error_message=None))

    with pytest.raises(NotFound, match="group 'nobody' does not exist"):  # the real coordinator's answer
        rebalance.trigger("nobody", bootstrap=coordinator.bootstrap)


def test_rebalance_watch_follows_a_moved_coordinator_and_a_dropped_connection(coordinator, idle):
    faults = coordinator.node.faults
    faults.replace_next(DESCRIBE_GROUP_KEY, lambda ctx, request: ctx.respond(error_code=NOT_COORDINATOR, document=None))
    faults.replace_next(DESCRIBE_GROUP_KEY, hang_up)
    finds = count_find_coordinator(coordinator)

    documents = rebalance.coordinator_documents(coordinator.bootstrap, idle, deadline=time.monotonic() + 5)
    try:
        baseline = next(documents)
    finally:
        documents.close()

    assert baseline is not None and baseline.document.group == idle
    assert len(finds) == 3
