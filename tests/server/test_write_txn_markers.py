"""WriteTxnMarkers (27) on a running node, spoken raw (kafka-python's classes) as a peer's
transaction coordinator or an admin client sends it: a marker ends the producer's open
transaction in a data partition's log, a marker on a `__consumer_offsets` partition commits or
drops the pending offsets of every group placed there, per-partition errors are Kafka's, and
ClusterAction on the Cluster is required."""

from __future__ import annotations

import pytest
from kafka.protocol.consumer.group import OffsetFetchRequest
from kafka.protocol.producer.transaction import AddOffsetsToTxnRequest, TxnOffsetCommitRequest, WriteTxnMarkersRequest

from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.placement import group_partition
from tests.server.test_transaction_handlers import add_partitions, init, produce, transactional_batch
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.wire import exchange

TOPIC = "txn-out"
OFFSETS = "__consumer_offsets"
PID = 4242


@pytest.fixture
def node():
    started = InProcessCoordinator(node_config(topics=((TOPIC, 2), ("jobs", 1)))).start()
    yield started
    started.stop()


def write_markers(node, producer_id: int, epoch: int, commit: bool, partitions, version: int = 1,
                  coordinator_epoch: int = 0) -> dict[tuple[str, int], ErrorCode]:
    entry = WriteTxnMarkersRequest.WritableTxnMarker
    by_topic: dict[str, list[int]] = {}
    for topic, index in partitions:
        by_topic.setdefault(topic, []).append(index)
    request = WriteTxnMarkersRequest(version=version, markers=[entry(
        producer_id=producer_id, producer_epoch=epoch, transaction_result=commit, coordinator_epoch=coordinator_epoch,
        topics=[entry.WritableTxnMarkerTopic(name=name, partition_indexes=indexes) for name, indexes in by_topic.items()])])
    response = exchange(node, request, version)
    (result,) = response.markers
    assert result.producer_id == producer_id
    return {(t.name, p.partition_index): ErrorCode(p.error_code) for t in result.topics for p in t.partitions}


def partition_log(node, partition: int):
    async def opened():
        return await node.node.logs.open(TOPIC, partition)
    return node.call(opened())


@pytest.mark.parametrize("version", [1, 2])
def test_an_abort_marker_ends_the_producers_open_transaction_in_the_log(node, version):
    producer = init(node, "admin-abort")
    add_partitions(node, "admin-abort", producer, [(TOPIC, 0)])
    assert produce(node, "admin-abort", 0, transactional_batch(producer)) == ErrorCode.NONE
    assert partition_log(node, 0).last_stable_offset == 0  # the open transaction holds it
    answer = write_markers(node, producer.producer_id, producer.producer_epoch, False, [(TOPIC, 0)], version)
    assert answer == {(TOPIC, 0): ErrorCode.NONE}
    log = partition_log(node, 0)
    assert (log.log_end_offset, log.last_stable_offset) == (2, 2)  # the batch, then the marker
    assert [a.producer_id for a in log.aborted_transactions(0, 2)] == [producer.producer_id]


def test_each_partition_answers_kafkas_error(node):
    producer = init(node, "errors-tx")
    add_partitions(node, "errors-tx", producer, [(TOPIC, 1)])
    assert produce(node, "errors-tx", 1, transactional_batch(producer)) == ErrorCode.NONE
    answer = write_markers(node, producer.producer_id, producer.producer_epoch - 1, True, [
        (TOPIC, 1), (TOPIC, 7), ("no-such-topic", 0), (OFFSETS, node.node.placement.partitions)])
    assert answer == {(TOPIC, 1): ErrorCode.INVALID_PRODUCER_EPOCH, (TOPIC, 7): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                      ("no-such-topic", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                      (OFFSETS, node.node.placement.partitions): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert partition_log(node, 1).last_stable_offset == 0  # nothing written


def txn_commit(node, producer, group: str, offset: int) -> None:
    Topic = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
    request = TxnOffsetCommitRequest(
        transactional_id="offsets-tx", group_id=group, producer_id=producer.producer_id,
        producer_epoch=producer.producer_epoch, generation_id=-1, member_id="", group_instance_id=None,
        topics=[Topic(name="jobs", partitions=[Topic.TxnOffsetCommitRequestPartition(
            partition_index=0, committed_offset=offset, committed_leader_epoch=-1, committed_metadata="")])])
    (topic,) = exchange(node, request, 3).topics
    assert topic.partitions[0].error_code == ErrorCode.NONE


def add_offsets(node, producer, group: str) -> None:
    answer = exchange(node, AddOffsetsToTxnRequest(
        version=3, transactional_id="offsets-tx", producer_id=producer.producer_id,
        producer_epoch=producer.producer_epoch, group_id=group), 3)
    assert answer.error_code == ErrorCode.NONE


def committed(node, group: str) -> int:
    Group = OffsetFetchRequest.OffsetFetchRequestGroup
    request = OffsetFetchRequest(groups=[Group(group_id=group, topics=[
        Group.OffsetFetchRequestTopics(name="jobs", partition_indexes=[0])])], require_stable=False)
    (answer,) = exchange(node, request, 8).groups
    return answer.topics[0].partitions[0].committed_offset


def test_a_marker_on_an_offsets_partition_completes_every_group_placed_there(node):
    partition = group_partition("etl")
    neighbour = next(g for g in (f"etl-{i}" for i in range(2000)) if group_partition(g) == partition)
    elsewhere = next(g for g in (f"other-{i}" for i in range(100)) if group_partition(g) != partition)
    producer = init(node, "offsets-tx")
    for group, offset in (("etl", 10), (neighbour, 20), (elsewhere, 30)):
        add_offsets(node, producer, group)
        txn_commit(node, producer, group, offset)
    pid, epoch = producer.producer_id, producer.producer_epoch
    assert write_markers(node, pid, epoch, True, [(OFFSETS, partition)]) == {(OFFSETS, partition): ErrorCode.NONE}
    assert (committed(node, "etl"), committed(node, neighbour), committed(node, elsewhere)) == (10, 20, -1)
    assert write_markers(node, pid, epoch, False, [(OFFSETS, group_partition(elsewhere))]) == {
        (OFFSETS, group_partition(elsewhere)): ErrorCode.NONE}
    assert committed(node, elsewhere) == -1  # aborted: dropped
    assert write_markers(node, pid, epoch, True, [(OFFSETS, group_partition(elsewhere))]) == {
        (OFFSETS, group_partition(elsewhere)): ErrorCode.NONE}
    assert committed(node, elsewhere) == -1  # nothing of the aborted offsets was left to commit


@pytest.mark.parametrize("super_user, expected", [
    ((), ErrorCode.CLUSTER_AUTHORIZATION_FAILED), (("User:ANONYMOUS",), ErrorCode.NONE)])
def test_writing_markers_needs_cluster_action_on_the_cluster(super_user, expected):
    node = InProcessCoordinator(node_config(authorizer=True, super_users=super_user)).start()
    try:
        partition = group_partition("etl")
        assert write_markers(node, PID, 0, True, [(OFFSETS, partition)]) == {(OFFSETS, partition): expected}
    finally:
        node.stop()
