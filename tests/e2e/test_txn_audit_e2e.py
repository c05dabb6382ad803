"""Transactions in the coordinator's journal, audited as an operator would: a real node with a
data dir (so it journals), a confluent-kafka consume-transform-produce that commits one
transaction with send_offsets_to_transaction and aborts the next, then the installed
`groupctl analyze audit` over the journal: the committed transaction's offset is the only one made
visible, and the audit reads every event (transaction_completed, which concerns no group, too)
and checks both completions with no violation and nothing unverified."""

from __future__ import annotations

import json
from pathlib import Path

from confluent_kafka import Producer

from tests.e2e.test_analytics_e2e import groupctl
from tests.e2e.test_exactly_once_e2e import CLIENT_TIMEOUT_S, GROUP, consume, input_consumer, transform
from tests.support.coordinator import InProcessCoordinator, node_config


def journal_events(directory: Path) -> list[dict]:
    return [json.loads(line) for segment in sorted(directory.glob("events-*.jsonl"))
            for line in segment.read_text().splitlines()]


def test_a_committed_and_an_aborted_transaction_are_journaled_and_audit_clean(tmp_path):
    node = InProcessCoordinator(node_config(data_dir=tmp_path / "data")).start()
    try:
        source = Producer({"bootstrap.servers": node.bootstrap})
        for value in (b"a", b"b", b"c", b"d"):
            source.produce("eos-in", value=value, partition=0)
        assert source.flush(CLIENT_TIMEOUT_S) == 0
        producer = Producer({"bootstrap.servers": node.bootstrap, "transactional.id": "eos-audit"})
        producer.init_transactions(CLIENT_TIMEOUT_S)
        consumer = input_consumer(node.bootstrap)
        try:
            transform(producer, consumer, consume(consumer, 2), commit=True)
            transform(producer, consumer, consume(consumer, 2), commit=False)
        finally:
            consumer.close()
    finally:
        node.stop()

    journal = tmp_path / "data" / "journal"
    events = journal_events(journal)
    completed = [(e["outcome"], e["reason"]) for e in events if e["event"] == "transaction_completed"]
    assert completed == [("commit", "end txn"), ("abort", "end txn")]
    kinds = ("txn_offset_commit", "txn_offsets_completed", "offset_commit")
    group_side = [(e["event"], e.get("outcome"), e.get("offset")) for e in events
                  if e["group"] == GROUP and e["event"] in kinds]
    assert group_side == [("txn_offset_commit", None, 2), ("txn_offsets_completed", "commit", None),
                          ("offset_commit", None, 2), ("txn_offset_commit", None, 4),
                          ("txn_offsets_completed", "abort", None)]

    audit = groupctl("analyze", "audit", str(journal), "--master", "local[2]", "--output", "json")
    assert audit.returncode == 0, audit.stdout + audit.stderr
    report = json.loads(audit.stdout)
    assert report["violations"] == []
    assert report["skipped"] == {"malformed": 0, "unsupported_version": 0}  # transaction_completed is read too
    txn = next(row for row in report["summary"] if row["invariant"] == "txn_offsets")
    assert (txn["checked"], txn["violations"], txn["unverified"]) == (3, 0, 0)  # 2 completions, 1 made visible
