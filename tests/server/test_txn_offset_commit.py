"""TxnOffsetCommit and OffsetFetch require_stable through a real node, with raw requests on the
wire (kafka-python's classes), in both stores: an acknowledged TxnOffsetCommit is pending,
durably (it survives a restart and kill -9), invisible to OffsetFetch until `Node.complete_txn_partition`
commits it (the transaction coordinator calls it at marker time; here the test does), and
dropped by an abort."""

from __future__ import annotations

import pytest
from kafka.protocol.consumer.group import OffsetFetchRequest
from kafka.protocol.producer.transaction import TxnOffsetCommitRequest

from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.placement import group_partition
from groupctl.security.acls import (
    AccessControlEntry,
    AclBinding,
    Operation,
    PatternType,
    Permission,
    ResourcePattern,
    ResourceType,
)
from tests.support.coordinator import CoordinatorProcess, InProcessCoordinator, node_config
from tests.support.wire import exchange

pytestmark = pytest.mark.zookeeper

PID = 4000


@pytest.fixture(params=["embedded", "zookeeper"])
def config(request, tmp_path):
    zk = request.getfixturevalue("zk_connect") if request.param == "zookeeper" else None
    return node_config(data_dir=tmp_path / "data", zk=zk, topics=(("jobs", 3),))


@pytest.fixture
def started():
    """Start a node on `config`; the one still running at the end is stopped (a test stops the
    earlier ones itself, before it restarts on the same store)."""
    nodes: list[InProcessCoordinator] = []

    def start(config) -> InProcessCoordinator:
        node = InProcessCoordinator(config).start()
        nodes.append(node)
        return node

    yield start
    if nodes:
        nodes[-1].stop()


def txn_commit(node, offsets: dict[tuple[str, int], int], version: int = 3, group: str = "etl",
               generation: int = -1, member: str = "", epoch: int = 0) -> dict[tuple[str, int], ErrorCode]:
    Topic = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
    topics = {}
    for (topic, partition), offset in offsets.items():
        topics.setdefault(topic, []).append(Topic.TxnOffsetCommitRequestPartition(
            partition_index=partition, committed_offset=offset, committed_leader_epoch=-1, committed_metadata=""))
    request = TxnOffsetCommitRequest(
        transactional_id="tx-1", group_id=group, producer_id=PID, producer_epoch=epoch, generation_id=generation,
        member_id=member, group_instance_id=None,
        topics=[Topic(name=name, partitions=partitions) for name, partitions in topics.items()])
    response = exchange(node, request, version)
    return {(t.name, p.partition_index): ErrorCode(p.error_code) for t in response.topics for p in t.partitions}


def fetch(node, require_stable: bool, group: str = "etl") -> dict[int, tuple[int, ErrorCode]]:
    Group = OffsetFetchRequest.OffsetFetchRequestGroup
    request = OffsetFetchRequest(groups=[Group(group_id=group, topics=[
        Group.OffsetFetchRequestTopics(name="jobs", partition_indexes=[0, 1])])], require_stable=require_stable)
    (answer,) = exchange(node, request, 8).groups
    return {p.partition_index: (p.committed_offset, ErrorCode(p.error_code))
            for t in answer.topics for p in t.partitions}


def complete(node, commit: bool, epoch: int = 0) -> ErrorCode:
    return node.call(node.node.complete_txn_partition(group_partition("etl"), PID, epoch, commit))


@pytest.mark.parametrize("version", [3, 4, 5])
def test_committed_transactional_offsets_become_visible_only_at_the_commit_marker(config, started, version):
    node = started(config)
    assert txn_commit(node, {("jobs", 0): 10}, version=version) == {("jobs", 0): ErrorCode.NONE}
    assert fetch(node, require_stable=False) == {0: (-1, ErrorCode.NONE), 1: (-1, ErrorCode.NONE)}
    assert fetch(node, require_stable=True)[0] == (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)
    assert complete(node, commit=True) is ErrorCode.NONE
    assert complete(node, commit=True) is ErrorCode.NONE  # a retried marker
    assert fetch(node, require_stable=True) == {0: (10, ErrorCode.NONE), 1: (-1, ErrorCode.NONE)}


def test_an_aborted_transaction_leaves_the_committed_offsets_as_they_were(config, started):
    node = started(config)
    txn_commit(node, {("jobs", 0): 10})
    complete(node, commit=True)
    txn_commit(node, {("jobs", 0): 20, ("jobs", 1): 5})
    assert complete(node, commit=False) is ErrorCode.NONE
    assert fetch(node, require_stable=True) == {0: (10, ErrorCode.NONE), 1: (-1, ErrorCode.NONE)}


def test_pending_offsets_survive_a_restart_and_commit_afterwards(config, started):
    first = started(config)
    txn_commit(first, {("jobs", 0): 10, ("jobs", 1): 3})
    first.stop()
    second = started(config)
    assert fetch(second, require_stable=True) == {
        0: (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT), 1: (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)}
    assert complete(second, commit=True) is ErrorCode.NONE
    second.stop()
    third = started(config)
    assert fetch(third, require_stable=True) == {0: (10, ErrorCode.NONE), 1: (3, ErrorCode.NONE)}


def test_unknown_partitions_an_empty_group_id_and_a_member_of_no_group_are_refused(config, started):
    node = started(config)
    assert txn_commit(node, {("jobs", 0): 1, ("jobs", 7): 1, ("nope", 0): 1}) == {
        ("jobs", 0): ErrorCode.NONE, ("jobs", 7): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ("nope", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert txn_commit(node, {("jobs", 0): 1}, group="") == {("jobs", 0): ErrorCode.INVALID_GROUP_ID}
    assert txn_commit(node, {("jobs", 0): 1}, group="other", generation=2, member="m") == {
        ("jobs", 0): ErrorCode.ILLEGAL_GENERATION}


def test_authorization_needs_write_on_the_transactional_id_then_read_on_the_group_and_the_topic(started):
    node = started(node_config(authorizer=True, topics=(("jobs", 3),)))

    def grant(resource_type, name, operation):
        binding = AclBinding(ResourcePattern(resource_type, name, PatternType.LITERAL),
                             AccessControlEntry("User:ANONYMOUS", "*", operation, Permission.ALLOW))
        assert node.call(node.node.authorizer.create([binding])) == [None]

    def answer() -> ErrorCode:
        return txn_commit(node, {("jobs", 0): 1})[("jobs", 0)]

    assert answer() is ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    grant(ResourceType.TRANSACTIONAL_ID, "tx-1", Operation.WRITE)
    assert answer() is ErrorCode.GROUP_AUTHORIZATION_FAILED
    grant(ResourceType.GROUP, "etl", Operation.READ)
    assert answer() is ErrorCode.TOPIC_AUTHORIZATION_FAILED
    grant(ResourceType.TOPIC, "jobs", Operation.READ)
    assert answer() is ErrorCode.NONE


@pytest.fixture(params=["embedded", "zookeeper"])
def store_args(request, tmp_path):
    zk = ["--zk", request.getfixturevalue("zk_connect")] if request.param == "zookeeper" else []
    return ["--data-dir", str(tmp_path / "data"), *zk]


def test_an_acknowledged_txn_offset_commit_survives_kill_9(store_args, tmp_path):
    log = tmp_path / "coordinator.log"
    first = CoordinatorProcess(*store_args, "--topic", "jobs:3", log_path=log).start()
    try:
        assert txn_commit(first, {("jobs", 1): 8}) == {("jobs", 1): ErrorCode.NONE}
    finally:
        first.kill()
    again = CoordinatorProcess(*store_args, log_path=log).start()
    try:
        assert fetch(again, require_stable=True)[1] == (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)
    finally:
        again.kill()
