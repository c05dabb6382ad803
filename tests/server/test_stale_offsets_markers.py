"""A transaction marker on an offsets partition from an older transaction coordinator epoch is
fenced, as Kafka's `__consumer_offsets` producer state fences it: with transaction.version 1 the
producer epoch stays the same from one transaction to the next, so a zombie coordinator's (or a
delayed) commit of the previous transaction must not commit the next transaction's offsets."""

from __future__ import annotations

import json
import time

import pytest

from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.placement import group_partition
from groupctl.layout.paths import pending_producer_path
from tests.server.test_transaction_handlers import add_partitions, end, init, produce, transactional_batch
from tests.server.test_write_txn_markers import OFFSETS, add_offsets, committed, txn_commit, write_markers
from tests.support.coordinator import InProcessCoordinator, node_config

TOPIC = "txn-out"
TID = "offsets-tx"  # the transactional id test_write_txn_markers' helpers use


@pytest.fixture
def node():
    started = InProcessCoordinator(node_config(topics=((TOPIC, 2), ("jobs", 1)))).start()
    yield started
    started.stop()


def wait_for_state(node, state: str, timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while node.node.transactions.core.describe(TID).view.state != state:
        assert time.monotonic() < deadline, f"{TID} never reached {state}"
        time.sleep(0.02)


def commit_a_first_transaction_and_hold_the_seconds_offsets(node):
    """T1 commits etl's offset 10; T2, same producer and epoch, holds offset 20 pending."""
    producer = init(node, TID)
    add_partitions(node, TID, producer, [(TOPIC, 0)])
    assert produce(node, TID, 0, transactional_batch(producer, 0)) == ErrorCode.NONE
    add_offsets(node, producer, "etl")
    txn_commit(node, producer, "etl", 10)
    assert end(node, TID, producer, True) == ErrorCode.NONE
    wait_for_state(node, "CompleteCommit")
    assert committed(node, "etl") == 10
    add_partitions(node, TID, producer, [(TOPIC, 0)])
    assert produce(node, TID, 0, transactional_batch(producer, 1)) == ErrorCode.NONE
    add_offsets(node, producer, "etl")
    txn_commit(node, producer, "etl", 20)
    return producer


def test_a_stale_commit_marker_is_fenced_and_does_not_commit_the_next_transactions_offsets(node):
    producer = commit_a_first_transaction_and_hold_the_seconds_offsets(node)
    stale = node.node.election.epoch_of(TID) - 1
    answers = write_markers(node, producer.producer_id, producer.producer_epoch, True,
                            [(OFFSETS, group_partition("etl"))], coordinator_epoch=stale)
    assert answers == {(OFFSETS, group_partition("etl")): ErrorCode.TRANSACTION_COORDINATOR_FENCED}
    assert committed(node, "etl") == 10
    assert end(node, TID, producer, False) == ErrorCode.NONE  # T2 aborts: its offsets go
    wait_for_state(node, "CompleteAbort")
    assert committed(node, "etl") == 10


def test_the_pending_offsets_document_carries_the_fence_for_the_coordinator_that_loads_it(node):
    producer = commit_a_first_transaction_and_hold_the_seconds_offsets(node)

    async def read():
        return await node.node.store.get(pending_producer_path("etl", producer.producer_id))
    document = json.loads(node.call(read()).data)
    assert document["coordinator_epoch"] == node.node.election.epoch_of(TID)
