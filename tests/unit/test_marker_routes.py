"""Which node a completing transaction's markers go to (`groupctl.server.markers`), as Kafka's
marker channel decides it: by the leader each partition has now, waiting while a partition has no
live leader, dropping partitions that no longer exist; and which answers end a partition's
marker."""

from __future__ import annotations

from types import SimpleNamespace

from groupctl.coordinator.errors import ErrorCode
from groupctl.server.markers import DROPPED, OFFSETS_TOPIC, Routes, leader_in, route, still_to_write


def test_partitions_are_grouped_by_their_leader_waiting_without_one_and_dropped_when_gone():
    leaders = {("a", 0): 1, ("a", 1): 2, ("b", 0): 1, (OFFSETS_TOPIC, 7): 3, ("c", 0): None, ("gone", 0): DROPPED}
    assert route(leaders, leaders.get) == Routes(
        by_node={1: frozenset({("a", 0), ("b", 0)}), 2: frozenset({("a", 1)}), 3: frozenset({(OFFSETS_TOPIC, 7)})},
        waiting=frozenset({("c", 0)}), dropped=frozenset({("gone", 0)}))


def cluster(live, replicas, offsets_leaders, group_partitions=50):
    topics = {name: SimpleNamespace(replicas=by_partition) for name, by_partition in replicas.items()}
    return SimpleNamespace(
        live_nodes=lambda: sorted(live), topics=SimpleNamespace(get=topics.get),
        placement=SimpleNamespace(partitions=group_partitions),
        election=SimpleNamespace(policy=SimpleNamespace(live_leader=offsets_leaders.get)))


def test_a_data_partition_goes_to_its_first_replica_while_it_is_live_and_an_offsets_partition_to_its_elected_leader():
    leader_of = leader_in(cluster(live={1, 2}, replicas={"out": {0: [2], 1: [3], 2: []}}, offsets_leaders={4: 1}))
    assert leader_of(("out", 0)) == 2
    assert leader_of(("out", 1)) is None  # node 3 is not registered: tried again later
    assert leader_of(("out", 2)) is None
    assert leader_of(("out", 9)) == DROPPED
    assert leader_of(("deleted", 0)) == DROPPED
    assert leader_of((OFFSETS_TOPIC, 4)) == 1
    assert leader_of((OFFSETS_TOPIC, 5)) is None  # an election is pending
    assert leader_of((OFFSETS_TOPIC, 50)) == DROPPED


def test_a_partition_is_done_once_written_or_once_a_newer_producer_or_coordinator_has_written_there():
    answers = {("a", 0): ErrorCode.NONE, ("a", 1): ErrorCode.INVALID_PRODUCER_EPOCH,
               ("a", 2): ErrorCode.TRANSACTION_COORDINATOR_FENCED, ("a", 3): ErrorCode.NOT_LEADER_OR_FOLLOWER,
               ("a", 4): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ("a", 5): ErrorCode.KAFKA_STORAGE_ERROR,
               ("a", 6): ErrorCode.CLUSTER_AUTHORIZATION_FAILED}
    assert still_to_write(answers) == {("a", 3), ("a", 4), ("a", 5), ("a", 6)}
