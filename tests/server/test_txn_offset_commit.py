"""TxnOffsetCommit and OffsetFetch require_stable through a real node, with raw requests on the
wire (kafka-python's classes), in both stores: an acknowledged TxnOffsetCommit is pending,
durably (it survives a restart and kill -9), invisible to OffsetFetch until `Node.complete_txn_partition`
commits it (the transaction coordinator calls it at marker time; here the test does), and
dropped by an abort. It is accepted only from the producer whose open transaction added the group
(InitProducerId, AddOffsetsToTxn), as Kafka verifies it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from kafka.protocol.consumer.group import OffsetFetchRequest
from kafka.protocol.producer.transaction import AddOffsetsToTxnRequest, InitProducerIdRequest, TxnOffsetCommitRequest

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


def begin(node, *groups: str):
    """What a transactional producer does before TxnOffsetCommit: InitProducerId for tx-1, then
    AddOffsetsToTxn for each group (default: etl). Returns the producer (id and epoch)."""
    producer = exchange(node, InitProducerIdRequest(transactional_id="tx-1", transaction_timeout_ms=600_000), 4)
    assert producer.error_code == ErrorCode.NONE
    for group in groups or ("etl",):
        added = exchange(node, AddOffsetsToTxnRequest(
            transactional_id="tx-1", producer_id=producer.producer_id, producer_epoch=producer.producer_epoch,
            group_id=group), 3)
        assert added.error_code == ErrorCode.NONE
    return producer


def txn_commit(node, producer, offsets: dict[tuple[str, int], int], version: int = 3, group: str = "etl",
               generation: int = -1, member: str = "") -> dict[tuple[str, int], ErrorCode]:
    Topic = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
    topics = {}
    for (topic, partition), offset in offsets.items():
        topics.setdefault(topic, []).append(Topic.TxnOffsetCommitRequestPartition(
            partition_index=partition, committed_offset=offset, committed_leader_epoch=-1, committed_metadata=""))
    request = TxnOffsetCommitRequest(
        transactional_id="tx-1", group_id=group, producer_id=producer.producer_id,
        producer_epoch=producer.producer_epoch, generation_id=generation,
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


def complete(node, producer, commit: bool) -> ErrorCode:
    """The transaction's marker on etl's offsets partition, as WriteTxnMarkers writes it."""
    return node.call(node.node.complete_txn_partition(group_partition("etl"), producer.producer_id,
                                                      producer.producer_epoch, commit, 0))


@pytest.mark.parametrize("version", [3, 4, 5])
def test_committed_transactional_offsets_become_visible_only_at_the_commit_marker(config, started, version):
    node = started(config)
    producer = begin(node)
    assert txn_commit(node, producer, {("jobs", 0): 10}, version=version) == {("jobs", 0): ErrorCode.NONE}
    assert fetch(node, require_stable=False) == {0: (-1, ErrorCode.NONE), 1: (-1, ErrorCode.NONE)}
    assert fetch(node, require_stable=True)[0] == (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)
    assert complete(node, producer, commit=True) is ErrorCode.NONE
    assert complete(node, producer, commit=True) is ErrorCode.NONE  # a retried marker
    assert fetch(node, require_stable=True) == {0: (10, ErrorCode.NONE), 1: (-1, ErrorCode.NONE)}


def test_an_aborted_transaction_leaves_the_committed_offsets_as_they_were(config, started):
    node = started(config)
    producer = begin(node)
    txn_commit(node, producer, {("jobs", 0): 10})
    complete(node, producer, commit=True)
    txn_commit(node, producer, {("jobs", 0): 20, ("jobs", 1): 5})
    assert complete(node, producer, commit=False) is ErrorCode.NONE
    assert fetch(node, require_stable=True) == {0: (10, ErrorCode.NONE), 1: (-1, ErrorCode.NONE)}


def test_pending_offsets_survive_a_restart_and_commit_afterwards(config, started):
    first = started(config)
    producer = begin(first)
    txn_commit(first, producer, {("jobs", 0): 10, ("jobs", 1): 3})
    first.stop()
    second = started(config)
    assert fetch(second, require_stable=True) == {
        0: (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT), 1: (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)}
    assert complete(second, producer, commit=True) is ErrorCode.NONE
    second.stop()
    third = started(config)
    assert fetch(third, require_stable=True) == {0: (10, ErrorCode.NONE), 1: (3, ErrorCode.NONE)}


def test_unknown_partitions_an_empty_group_id_and_a_member_of_no_group_are_refused(config, started):
    node = started(config)
    producer = begin(node, "etl", "other")
    assert txn_commit(node, producer, {("jobs", 0): 1, ("jobs", 7): 1, ("nope", 0): 1}) == {
        ("jobs", 0): ErrorCode.NONE, ("jobs", 7): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ("nope", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert txn_commit(node, producer, {("jobs", 0): 1}, group="") == {("jobs", 0): ErrorCode.INVALID_GROUP_ID}
    assert txn_commit(node, producer, {("jobs", 0): 1}, group="other", generation=2, member="m") == {
        ("jobs", 0): ErrorCode.ILLEGAL_GENERATION}


@pytest.mark.parametrize("version, not_added", [(3, ErrorCode.INVALID_TXN_STATE), (4, ErrorCode.TRANSACTION_ABORTABLE)])
def test_offsets_of_a_group_the_transaction_did_not_add_are_refused_as_kafka_verifies_them(config, started, version,
                                                                                            not_added):
    node = started(config)
    producer = begin(node, "etl")
    assert txn_commit(node, producer, {("jobs", 0): 1}, version=version, group="elsewhere") == {
        ("jobs", 0): not_added}
    fenced = SimpleNamespace(producer_id=producer.producer_id, producer_epoch=producer.producer_epoch - 1)
    assert txn_commit(node, fenced, {("jobs", 0): 1}) == {("jobs", 0): ErrorCode.INVALID_PRODUCER_EPOCH}
    stranger = SimpleNamespace(producer_id=producer.producer_id + 1, producer_epoch=0)
    assert txn_commit(node, stranger, {("jobs", 0): 1}) == {("jobs", 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING}
    assert fetch(node, require_stable=True, group="elsewhere")[0] == (-1, ErrorCode.NONE)  # nothing held


def test_authorization_needs_write_on_the_transactional_id_then_read_on_the_group_and_the_topic(started):
    node = started(node_config(authorizer=True, topics=(("jobs", 3),)))

    def grant(resource_type, name, operation):
        binding = AclBinding(ResourcePattern(resource_type, name, PatternType.LITERAL),
                             AccessControlEntry("User:ANONYMOUS", "*", operation, Permission.ALLOW))
        assert node.call(node.node.authorizer.create([binding])) == [None]

    unverified = SimpleNamespace(producer_id=1, producer_epoch=0)  # authorization comes first

    def answer(producer=unverified) -> ErrorCode:
        return txn_commit(node, producer, {("jobs", 0): 1})[("jobs", 0)]

    assert answer() is ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    grant(ResourceType.TRANSACTIONAL_ID, "tx-1", Operation.WRITE)
    assert answer() is ErrorCode.GROUP_AUTHORIZATION_FAILED
    grant(ResourceType.GROUP, "etl", Operation.READ)
    assert answer() is ErrorCode.TOPIC_AUTHORIZATION_FAILED
    grant(ResourceType.TOPIC, "jobs", Operation.READ)
    assert answer(begin(node)) is ErrorCode.NONE


@pytest.fixture(params=["embedded", "zookeeper"])
def store_args(request, tmp_path):
    zk = ["--zk", request.getfixturevalue("zk_connect")] if request.param == "zookeeper" else []
    return ["--data-dir", str(tmp_path / "data"), *zk]


def test_an_acknowledged_txn_offset_commit_survives_kill_9(store_args, tmp_path):
    log = tmp_path / "coordinator.log"
    first = CoordinatorProcess(*store_args, "--topic", "jobs:3", log_path=log).start()
    try:
        assert txn_commit(first, begin(first), {("jobs", 1): 8}) == {("jobs", 1): ErrorCode.NONE}
    finally:
        first.kill()
    again = CoordinatorProcess(*store_args, log_path=log).start()
    try:
        assert fetch(again, require_stable=True)[1] == (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)
    finally:
        again.kill()
