"""Completing a transaction on a running node (`groupctl.server.transactions`): its markers and
its CompleteCommit/CompleteAbort are retried for as long as the node coordinates the id, a
timed-out transaction's abort is retried when the store refused it, only partitions a leader
answered as written count as written, a peer refusing markers for want of ClusterAction is
reported, and marker writes do not hold up the verifications of transactional produces.

A peer that leaves a partition out of its answer or refuses markers cannot be made from a real
node, so `Peers.write_txn_markers` is replaced where a test needs such a peer."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest

import groupctl.server.handlers.write_txn_markers as write_txn_markers_handler
import groupctl.server.transactions as transactions_module
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.transactions import TxnState
from groupctl.server.markers import Marker, write
from tests.server.test_transaction_handlers import (
    TOPIC,
    add_partitions,
    end,
    eventually,
    init,
    produce,
    transactional_batch,
)
from tests.support.coordinator import InProcessCoordinator, node_config

FAR_PEER = 7
"""A node id no node has: the leader the tests route a partition to when a peer answers."""


@pytest.fixture
def node(monkeypatch):
    monkeypatch.setattr(transactions_module, "RETRY_PAUSE_S", 0.001)
    monkeypatch.setattr(transactions_module, "MAX_RETRY_PAUSE_S", 0.001)
    started = InProcessCoordinator(node_config(topics=((TOPIC, 2),))).start()
    yield started
    started.stop()


def state(node, transactional_id: str) -> str:
    return node.node.transactions.core.describe(transactional_id).view.state


def partition_log(node, partition: int):
    async def opened():
        return await node.node.logs.open(TOPIC, partition)
    return node.call(opened())


def committing(node, transactional_id: str, partitions):
    """A producer whose transaction on `partitions` (a batch on each) is being committed."""
    producer = init(node, transactional_id)
    assert set(add_partitions(node, transactional_id, producer, [(TOPIC, p) for p in partitions]).values()) == {0}
    for partition in partitions:
        assert produce(node, transactional_id, partition, transactional_batch(producer)) == ErrorCode.NONE
    assert end(node, transactional_id, producer, True) == ErrorCode.NONE
    return producer


def route_partition_one_to(monkeypatch, leader):
    """Partition 1's leader, as the completion sees it, is `leader()` (None: no live leader)."""
    real = transactions_module.leader_in

    def leader_in(n):
        inner = real(n)
        return lambda partition: leader() if partition == (TOPIC, 1) else inner(partition)

    monkeypatch.setattr(transactions_module, "leader_in", leader_in)


def far_peer(node, answers):
    """Make FAR_PEER answer WriteTxnMarkers: `answers(call_number, partitions)` gives its answer,
    or None to have this node write the markers (a peer that works). Returns the calls made."""
    calls = []

    async def write_txn_markers(node_id, marker, partitions):
        assert node_id == FAR_PEER
        calls.append(set(partitions))
        answer = answers(len(calls), set(partitions))
        return answer if answer is not None else await write(node.node, marker, partitions)

    node.node.peers.write_txn_markers = write_txn_markers
    return calls


def test_markers_without_a_leader_are_retried_past_any_count_and_written_once_it_is_back(node, monkeypatch):
    rounds = {"n": 0}

    def leader():
        rounds["n"] += 1
        return None if rounds["n"] <= 250 else node.node.config.node_id

    route_partition_one_to(monkeypatch, leader)
    committing(node, "leaderless", [0, 1])
    eventually(lambda: state(node, "leaderless") == "CompleteCommit", timeout_s=30)
    assert rounds["n"] > 250
    assert partition_log(node, 1).last_stable_offset == partition_log(node, 1).log_end_offset
    assert init(node, "leaderless").error_code == ErrorCode.NONE


def test_storing_the_end_of_a_transaction_is_retried_until_the_store_takes_it(node):
    writer = node.node.writer
    real = writer.write
    refused = {"n": 0}

    async def flaky(records, checks=()):
        if any(getattr(r, "state", None) is TxnState.COMPLETE_COMMIT for r in records) and refused["n"] < 250:
            refused["n"] += 1
            raise RuntimeError("store hiccup")
        return await real(records, checks)

    writer.write = flaky
    committing(node, "hiccups", [0])
    eventually(lambda: state(node, "hiccups") == "CompleteCommit", timeout_s=30)
    assert refused["n"] == 250


def test_a_timeout_abort_the_store_refused_is_tried_again_and_aborts_the_transaction(node):
    writer = node.node.writer
    real = writer.write
    refused = {"n": 0}

    async def flaky(records, checks=()):
        if any(getattr(r, "state", None) is TxnState.PREPARE_ABORT for r in records) and refused["n"] == 0:
            refused["n"] += 1
            raise RuntimeError("store hiccup")
        return await real(records, checks)

    writer.write = flaky
    producer = init(node, "hung", timeout_ms=200)
    add_partitions(node, "hung", producer, [(TOPIC, 0)])
    eventually(lambda: state(node, "hung") == "CompleteAbort")
    assert refused["n"] == 1
    assert node.node.transactions.core.describe("hung").view.producer_epoch == producer.producer_epoch + 1


def test_a_partition_a_peer_leaves_out_of_its_answer_is_not_counted_as_written(node, monkeypatch):
    route_partition_one_to(monkeypatch, lambda: FAR_PEER)
    calls = far_peer(node, lambda n, partitions: {} if n == 1 else None)
    committing(node, "left-out", [0, 1])
    eventually(lambda: state(node, "left-out") == "CompleteCommit")
    assert calls == [{(TOPIC, 1)}, {(TOPIC, 1)}]
    assert partition_log(node, 1).last_stable_offset == partition_log(node, 1).log_end_offset


def test_a_peer_refusing_markers_for_want_of_cluster_action_is_reported_once_naming_the_principal(
        node, monkeypatch, caplog):
    route_partition_one_to(monkeypatch, lambda: FAR_PEER)
    calls = far_peer(node, lambda n, partitions: (
        dict.fromkeys(partitions, ErrorCode.CLUSTER_AUTHORIZATION_FAILED) if n <= 3 else None))
    with caplog.at_level(logging.INFO, logger="groupctl.server.marker_refusals"):
        committing(node, "refused", [0, 1])
        eventually(lambda: state(node, "refused") == "CompleteCommit")
    assert len(calls) == 4
    reports = [r for r in caplog.records if r.name == "groupctl.server.marker_refusals"]
    assert [r.levelno for r in reports] == [logging.ERROR, logging.INFO]
    error = reports[0].getMessage()
    assert f"node {FAR_PEER} refuses" in error and "User:ANONYMOUS" in error
    assert "--super-user" in error and "--operation ClusterAction --cluster" in error


def test_a_slow_marker_write_at_a_peer_does_not_hold_up_a_verification_there(node, monkeypatch):
    own = node.node.config.node_id
    producer = init(node, "verified")
    add_partitions(node, "verified", producer, [(TOPIC, 0)])
    entered = threading.Event()
    release = asyncio.Event()

    async def slow_write(n, marker, partitions):
        entered.set()
        await asyncio.wait_for(release.wait(), 10)
        return await write(n, marker, partitions)

    monkeypatch.setattr(write_txn_markers_handler, "write", slow_write)

    async def marker_then_verification():
        peers = node.node.peers
        marker = asyncio.ensure_future(peers.write_txn_markers(own, Marker(1, 0, False, 0), [(TOPIC, 1)]))
        while not entered.is_set():
            await asyncio.sleep(0.01)
        try:
            return await asyncio.wait_for(peers.verify_partitions(
                own, "verified", producer.producer_id, producer.producer_epoch, [(TOPIC, 0)]), 5)
        finally:
            release.set()
            await marker

    assert node.call(marker_then_verification(), timeout=20) == {(TOPIC, 0): ErrorCode.NONE}


def test_closing_waits_for_the_completions_under_way_to_end(node, monkeypatch):
    route_partition_one_to(monkeypatch, lambda: None)
    committing(node, "closing", [0, 1])
    transactions = node.node.transactions
    eventually(lambda: bool(transactions._tasks))
    under_way = list(transactions._tasks)
    node.call(transactions.close())
    assert all(task.done() for task in under_way)


def test_a_completion_from_before_the_id_was_unloaded_and_loaded_again_stops(node, monkeypatch):
    # Pauses long enough that only stopping, not running out of attempts, ends it in time.
    monkeypatch.setattr(transactions_module, "RETRY_PAUSE_S", 0.2)
    monkeypatch.setattr(transactions_module, "MAX_RETRY_PAUSE_S", 0.2)
    route_partition_one_to(monkeypatch, lambda: None)
    committing(node, "regained", [0, 1])
    transactions = node.node.transactions
    eventually(lambda: len(transactions._tasks) == 1)
    (stale,) = list(transactions._tasks)

    async def lose_and_regain():
        stored = [transactions.core._txns["regained"].record]
        transactions.unload(lambda transactional_id: True)
        transactions.load(stored)

    node.call(lose_and_regain())
    eventually(stale.done, timeout_s=5)
    assert len(transactions._tasks) == 1 and stale not in transactions._tasks
    assert state(node, "regained") == "PrepareCommit"


@pytest.mark.parametrize("super_users, in_cluster, warned", [
    ((), True, True), (("User:ANONYMOUS",), True, False), ((), False, False)])
def test_a_cluster_node_warns_at_start_when_its_inter_node_principal_lacks_cluster_action(
        super_users, in_cluster, warned, caplog, request):
    zk = request.getfixturevalue("zk_connect") if in_cluster else None
    with caplog.at_level(logging.WARNING, logger="groupctl.server.marker_refusals"):
        started = InProcessCoordinator(node_config(authorizer=True, super_users=super_users, zk=zk)).start()
        started.stop()
    warnings = [r.getMessage() for r in caplog.records if r.name == "groupctl.server.marker_refusals"]
    assert bool(warnings) == warned
    assert all("User:ANONYMOUS holds no ClusterAction" in w and "--super-user" in w for w in warnings)
