"""TxnOffsetCommit's verification is guarded as Kafka's (KIP-890 part 1, VerificationGuard on the
group's `__consumer_offsets` partition): a transaction marker that reaches the group while the
transaction coordinator is being asked voids the answer, so offsets verified in a transaction
that ended meanwhile are refused instead of being held after its marker (OffsetFetch would
answer UNSTABLE_OFFSET_COMMIT until the producer's next transaction's marker committed them)."""

from __future__ import annotations

import pytest

import groupctl.server.handlers.txn_offset_commit as txn_offset_commit_handler
from groupctl.coordinator.errors import ErrorCode
from tests.server.test_produce_verification_guard import abort_during_the_first_verification
from tests.server.test_txn_offset_commit import begin, fetch, txn_commit
from tests.support.coordinator import InProcessCoordinator, node_config


@pytest.fixture
def node(tmp_path):
    started = InProcessCoordinator(node_config(data_dir=tmp_path / "data", topics=(("jobs", 3),))).start()
    yield started
    started.stop()




def test_offsets_verified_before_their_transaction_aborted_are_refused_after_its_marker(node, monkeypatch):
    abort_during_the_first_verification(txn_offset_commit_handler, monkeypatch)
    producer = begin(node)
    assert txn_commit(node, producer, {("jobs", 0): 5}) == {("jobs", 0): ErrorCode.INVALID_TXN_STATE}
    assert dict(node.node.core.pending_offsets("etl")) == {}
    assert fetch(node, True)[0] == (-1, ErrorCode.NONE)  # stable: nothing held after the abort


def test_offsets_verified_while_the_transaction_stays_open_are_held(node):
    producer = begin(node)
    assert txn_commit(node, producer, {("jobs", 0): 5}) == {("jobs", 0): ErrorCode.NONE}
    assert fetch(node, True)[0] == (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)
