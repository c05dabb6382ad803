"""Produce's verification of a transactional batch is guarded as Kafka's (KIP-890 part 1,
VerificationGuard): a transaction marker written while the transaction coordinator is being asked
voids the answer, so a batch verified in a transaction that ended meanwhile is refused instead of
opening a transaction after the marker that no coordinator knows (which would hold the last
stable offset and be committed by the producer's next transaction at the same epoch)."""

from __future__ import annotations

import asyncio
import time

import pytest

import groupctl.server.handlers.produce as produce_handler
from kafka.record.memory_records import MemoryRecords, MemoryRecordsBuilder

from groupctl.coordinator.errors import ErrorCode
from groupctl.security.acls import (
    AccessControlEntry,
    AclBinding,
    Operation,
    PatternType,
    Permission,
    ResourcePattern,
    ResourceType,
)
from tests.server.test_transaction_handlers import add_partitions, end, init, produce, transactional_batch
from tests.support.coordinator import InProcessCoordinator, node_config

TOPIC = "txn-out"


@pytest.fixture
def node():
    started = InProcessCoordinator(node_config(topics=((TOPIC, 2),))).start()
    yield started
    started.stop()


def partition_log(node, partition: int):
    async def opened():
        return await node.node.logs.open(TOPIC, partition)
    return node.call(opened())


def batch_of(producer, value: bytes) -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    builder.set_producer_state(producer.producer_id, producer.producer_epoch, 0, True)
    builder.append(1_000, None, value)
    builder.close()
    return bytes(builder.buffer())


def committed_values(log) -> list[bytes]:
    """The data records a read_committed consumer gets (no transaction here is aborted but the
    first, whose batch must not be in the log at all)."""
    records = MemoryRecords(log.read(0, 1 << 20, max_offset=log.last_stable_offset))
    values = []
    while records.has_next():
        batch = records.next_batch()
        if not batch.is_control_batch:
            values.extend(record.value for record in batch)
    return values


def transaction_state(node, transactional_id: str) -> str:
    return node.node.transactions.core.describe(transactional_id).view.state


def wait_for_state(node, transactional_id: str, state: str, timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while transaction_state(node, transactional_id) != state:
        assert time.monotonic() < deadline, f"{transactional_id} never reached {state}"
        time.sleep(0.02)


def abort_during_the_first_verification(handler, monkeypatch) -> None:
    """While the first verification's answer (`handler.verify`) is on its way back, the
    producer's transaction is aborted (its client timed out) and its markers are written, a group's
    offsets partition's among them."""
    real_verify = handler.verify
    fired = []

    async def verify(n, transactional_id, producer_id, producer_epoch, partitions):
        verdicts = await real_verify(n, transactional_id, producer_id, producer_epoch, partitions)
        if not fired:
            fired.append(True)
            await n.transactions.run(lambda core, now: core.end_txn(
                transactional_id, producer_id, producer_epoch, False, now))
            deadline = time.monotonic() + 10
            while n.transactions.core.describe(transactional_id).view.state != "CompleteAbort":
                assert time.monotonic() < deadline
                await asyncio.sleep(0.01)
        return verdicts

    monkeypatch.setattr(handler, "verify", verify)


def test_a_batch_verified_before_its_transaction_aborted_is_refused_after_the_abort_marker(node, monkeypatch):
    abort_during_the_first_verification(produce_handler, monkeypatch)
    producer = init(node, "late")
    add_partitions(node, "late", producer, [(TOPIC, 0)])
    assert produce(node, "late", 0, transactional_batch(producer, 0)) == ErrorCode.INVALID_TXN_STATE
    log = partition_log(node, 0)
    assert log.log_end_offset == 1  # the abort marker only
    assert log.last_stable_offset == log.log_end_offset  # no transaction left open behind it


def test_the_producers_next_transaction_commits_only_its_own_batches(node, monkeypatch):
    abort_during_the_first_verification(produce_handler, monkeypatch)
    producer = init(node, "late")
    add_partitions(node, "late", producer, [(TOPIC, 0)])
    produce(node, "late", 0, batch_of(producer, b"aborted"))
    # The next transaction, same producer epoch (transaction.version 1), commits.
    add_partitions(node, "late", producer, [(TOPIC, 0)])
    assert produce(node, "late", 0, batch_of(producer, b"committed")) == ErrorCode.NONE
    assert end(node, "late", producer, True) == ErrorCode.NONE
    wait_for_state(node, "late", "CompleteCommit")
    log = partition_log(node, 0)
    assert log.last_stable_offset == log.log_end_offset
    assert committed_values(log) == [b"committed"]


def test_a_topic_the_producer_may_not_write_is_refused_before_the_coordinator_is_asked(monkeypatch):
    secured = InProcessCoordinator(node_config(authorizer=True, topics=((TOPIC, 2),))).start()
    try:
        binding = AclBinding(ResourcePattern(ResourceType.TRANSACTIONAL_ID, "acl-tx", PatternType.LITERAL),
                             AccessControlEntry("User:ANONYMOUS", "*", Operation.WRITE, Permission.ALLOW))
        assert secured.call(secured.node.authorizer.create([binding])) == [None]
        asked = []

        async def verify(*args):
            asked.append(args)
            return {}

        monkeypatch.setattr(produce_handler, "verify", verify)
        producer = init(secured, "acl-tx")
        assert produce(secured, "acl-tx", 0, transactional_batch(producer)) == ErrorCode.TOPIC_AUTHORIZATION_FAILED
        assert asked == []
    finally:
        secured.stop()
