"""The event journal on disk: segments, rotation, keep, seq continuity, crash recovery, and what a
running node journals (only what the store accepted; a real consumer's join and commit)."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import time
from pathlib import Path

import pytest
from kafka import KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata

from groupctl.coordinator.offsets.messages import CommitOffsets, PartitionOffset
from groupctl.coordinator.journal import offset_commit
from groupctl.server import journal as journal_module
from groupctl.server.journal import Journal, JournalError, segment_name
from groupctl.server.runtime import CoordinatorUnavailable, Node
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.held_writes import HeldWrites
from tests.support.polling import run_ready_tasks

SCENARIO_TIMEOUT_S = 30


def event(offset: int = 0, group: str = "g") -> dict:
    return offset_commit(0, 1_000, group, member_id="m", generation=1, topic="t", partition=0, offset=offset)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def journal_events(directory: Path) -> list[dict]:
    """Every event in the directory's segments, oldest segment first."""
    return [e for path in sorted(directory.glob("events-*.jsonl")) for e in lines(path)]


def segments(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.glob("events-*.jsonl"))


# --- files, seq, rotation ----------------------------------------------------------------------

def test_events_are_numbered_compact_json_lines_in_the_first_segment(tmp_path):
    journal = Journal(tmp_path / "j")
    journal.append([event(1), event(2)])
    journal.append([])
    journal.close()
    text = (tmp_path / "j" / "events-00000001.jsonl").read_text()
    assert text.endswith("\n") and " " not in text
    assert lines(tmp_path / "j" / "events-00000001.jsonl") == [{"seq": 1, **event(1)}, {"seq": 2, **event(2)}]


def test_the_active_segment_rotates_once_it_reaches_the_segment_size_and_never_splits_a_batch(tmp_path):
    size = len(json.dumps({"seq": 1, **event()}, separators=(",", ":"))) + 1
    journal = Journal(tmp_path, segment_bytes=2 * size, keep_segments=0)
    journal.append([event(1)])
    journal.append([event(2), event(3)])  # reaches 3 lines: over the size, but one batch
    journal.append([event(4)])  # the segment has reached the size: a new one first
    journal.close()
    assert segments(tmp_path) == [segment_name(1), segment_name(2)]
    assert [e["seq"] for e in lines(tmp_path / segment_name(1))] == [1, 2, 3]
    assert [e["seq"] for e in lines(tmp_path / segment_name(2))] == [4]


def test_only_the_newest_keep_segments_files_are_kept(tmp_path):
    journal = Journal(tmp_path, segment_bytes=1, keep_segments=3)
    for offset in range(10):
        journal.append([event(offset)])
    journal.close()
    assert segments(tmp_path) == [segment_name(n) for n in (8, 9, 10)]
    assert [e["seq"] for e in journal_events(tmp_path)] == [8, 9, 10]


def test_keep_segments_zero_keeps_every_segment(tmp_path):
    journal = Journal(tmp_path, segment_bytes=1, keep_segments=0)
    for offset in range(20):
        journal.append([event(offset)])
    journal.close()
    assert len(segments(tmp_path)) == 20


def test_seq_continues_across_rotation_and_reopening(tmp_path):
    for _ in range(3):
        journal = Journal(tmp_path, segment_bytes=300, keep_segments=0)
        for offset in range(4):
            journal.append([event(offset), event(offset)])
        journal.close()
    assert [e["seq"] for e in journal_events(tmp_path)] == list(range(1, 25))
    assert len(segments(tmp_path)) > 3


def test_reopening_with_a_smaller_keep_deletes_the_oldest_segments(tmp_path):
    journal = Journal(tmp_path, segment_bytes=1, keep_segments=0)
    for offset in range(5):
        journal.append([event(offset)])
    journal.close()
    Journal(tmp_path, segment_bytes=1, keep_segments=2).close()
    assert segments(tmp_path) == [segment_name(4), segment_name(5)]


# --- crash recovery ----------------------------------------------------------------------------

def test_a_partial_last_line_is_truncated_on_open_and_seq_continues_after_the_last_whole_line(tmp_path):
    journal = Journal(tmp_path)
    journal.append([event(1), event(2), event(3)])
    journal.close()
    active = tmp_path / segment_name(1)
    whole = active.read_bytes()
    with open(active, "ab") as f:
        f.write(b'{"seq":4,"v":1,"ts":10')  # a write cut short
    journal = Journal(tmp_path)
    assert active.read_bytes() == whole and journal.next_seq == 4
    journal.append([event(4)])
    journal.close()
    assert [e["seq"] for e in lines(active)] == [1, 2, 3, 4]


def test_a_newest_segment_with_nothing_whole_in_it_is_removed_and_seq_continues_from_the_one_before(tmp_path):
    journal = Journal(tmp_path)
    journal.append([event(1), event(2)])
    journal.close()
    (tmp_path / segment_name(2)).write_bytes(b"")  # a rotation that crashed before its first write
    (tmp_path / segment_name(3)).write_bytes(b'{"seq":3,"v"')  # ... or during it
    journal = Journal(tmp_path)
    assert (journal.active_path.name, journal.next_seq) == (segment_name(1), 3)
    journal.close()
    assert segments(tmp_path) == [segment_name(1)]


def test_a_last_line_longer_than_one_read_chunk_is_recovered(tmp_path):
    journal = Journal(tmp_path)
    journal.append([event(1), {**event(2), "group": "g" * 200_000}])
    journal.close()
    assert Journal(tmp_path).next_seq == 3


def test_a_newest_line_that_is_not_a_journal_event_refuses_to_open(tmp_path):
    (tmp_path / segment_name(1)).write_text('{"seq":1}\nnot json\n')
    with pytest.raises(JournalError, match="not a journal event"):
        Journal(tmp_path)


def test_a_second_journal_on_the_same_directory_is_refused(tmp_path):
    journal = Journal(tmp_path)
    try:
        with pytest.raises(JournalError, match="in use"):
            Journal(tmp_path)
    finally:
        journal.close()
    Journal(tmp_path).close()  # released by close


def test_a_failed_write_drops_its_batch_leaving_whole_lines_and_no_seq_used(tmp_path, monkeypatch, caplog):
    journal = Journal(tmp_path)
    journal.append([event(1)])
    real_write = os.write

    def half_then_full(fd, data):
        if len(data) > 10:
            real_write(fd, data[: len(data) // 2])
            return len(data) // 2
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(journal_module.os, "write", half_then_full)
    journal.append([event(2), event(3)])
    journal.append([event(4)])
    assert journal.dropped == 3
    monkeypatch.setattr(journal_module.os, "write", real_write)
    journal.append([event(5)])
    journal.close()
    assert [(e["seq"], e["offset"]) for e in lines(tmp_path / segment_name(1))] == [(1, 1), (2, 5)]
    failures = [r for r in caplog.records if r.name == "groupctl.journal"]
    assert [r.levelname for r in failures] == ["ERROR", "WARNING"]  # once per streak, then the count
    assert "3 event(s) were dropped" in failures[1].getMessage()


# --- a running node ----------------------------------------------------------------------------

def run(scenario):
    async def bounded():
        return await asyncio.wait_for(scenario, SCENARIO_TIMEOUT_S)

    return asyncio.run(bounded())


def simple_commit(offset: int) -> CommitOffsets:
    return CommitOffsets(group_id="g", generation_id=-1, member_id="", group_instance_id=None,
                         offsets=(PartitionOffset("t", 0, offset),), api_version=9)


def commits(directory: Path) -> list[int]:
    return [e["offset"] for e in journal_events(directory) if e["event"] == "offset_commit"]


def test_a_commit_is_journaled_once_the_store_accepted_it_and_never_when_the_write_failed(tmp_path):
    directory = tmp_path / "journal"

    async def scenario():
        node = Node(node_config(topics=(("t", 1),), journal_dir=directory))
        await node.load()
        node.bound_ports["PLAINTEXT"] = 9999
        await node.join_cluster()
        held = HeldWrites(node)
        accepted = asyncio.ensure_future(node.call_groups(
            lambda core, token, now: core.commit_offsets(token, simple_commit(7), now)))
        await run_ready_tasks()
        assert commits(directory) == []  # computed by the core, not yet in the store
        held.release.set()
        await accepted
        assert commits(directory) == [7]

        held.fail = True
        with pytest.raises(CoordinatorUnavailable):
            await node.call_groups(lambda core, token, now: core.commit_offsets(token, simple_commit(42), now))
        await node.close()

    run(scenario())
    assert commits(directory) == [7]


def test_a_node_without_a_data_dir_or_journal_dir_writes_no_journal():
    assert node_config().journal_path() is None


def test_the_journal_defaults_to_the_data_dirs_journal_directory(tmp_path):
    assert node_config(data_dir=tmp_path).journal_path() == tmp_path / "journal"
    assert node_config(data_dir=tmp_path, journal_dir=tmp_path / "elsewhere").journal_path() == tmp_path / "elsewhere"


def consume_and_commit(bootstrap: str) -> None:
    """A kafka-python consumer joins group "orders", gets both partitions of "payments", commits
    offset 5 on partition 0 and leaves."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id="orders", client_id="journal-test",
                             enable_auto_commit=False, session_timeout_ms=6000)
    try:
        # Known before joining, so the leader's first assignment has the topic's partitions (a
        # leader that assigns without them rejoins at once, and kafka-python 3.0.12 may then
        # never apply the answer; see tests/server/test_kafka_python_rejoin.py).
        assert consumer.partitions_for_topic("payments") == {0, 1}
        consumer.subscribe(["payments"])
        deadline = time.monotonic() + 20
        while not consumer.assignment() and time.monotonic() < deadline:
            consumer.poll(timeout_ms=200)
        assert consumer.assignment() == {TopicPartition("payments", 0), TopicPartition("payments", 1)}
        consumer.commit({TopicPartition("payments", 0): OffsetAndMetadata(5, "", -1)})
    finally:
        consumer.close()


@pytest.mark.parametrize("store", ["embedded", pytest.param("zookeeper", marks=pytest.mark.zookeeper)])
def test_a_node_with_a_data_dir_journals_a_kafka_python_consumers_join_and_commit(store, tmp_path, request):
    zk = request.getfixturevalue("zk_connect") if store == "zookeeper" else None
    node = InProcessCoordinator(node_config(data_dir=tmp_path / "data", zk=zk, topics=(("payments", 2),))).start()
    try:
        consume_and_commit(node.bootstrap)
    finally:
        node.stop()

    events = [e for e in journal_events(tmp_path / "data" / "journal") if e["group"] == "orders"]
    assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)
    assert all(e["node"] == 0 and e["v"] == 1 for e in events)
    joined, started = events[:2]
    member_id = joined["member_id"]
    assert (joined["event"], joined["client_id"], joined["generation"]) == ("member_joined", "journal-test", 0)
    assert member_id.startswith("journal-test-") and joined["client_host"].endswith("127.0.0.1")
    assert (started["event"], started["reason"], started["member_id"], started["generation"]) == (
        "rebalance_started", "join", member_id, 0)
    # kafka-python's leader may assign before it knows the topic and rejoin at once ("leader
    # rejoin", see groupctl.coordinator.classic.topic_changes): every rebalance completes, and
    # the commit comes from the generation that assigned both partitions.
    kinds = [e["event"] for e in events]
    (at,) = [i for i, kind in enumerate(kinds) if kind == "offset_commit"]
    assert kinds[2:at] in (["rebalance_completed"],
                           ["rebalance_completed", "rebalance_started", "rebalance_completed"])
    completed, commit = events[at - 1], events[at]
    assert {k: completed[k] for k in ("state", "leader", "members", "member_ids")} == {
        "state": "Stable", "leader": member_id, "members": 1, "member_ids": [member_id]}
    assert completed["protocol"] in ("range", "roundrobin", "sticky")
    assert completed["assignment"] == [
        {"member_id": member_id, "client_id": "journal-test", "topic": "payments", "partition": p} for p in (0, 1)]
    assert completed["duration_ms"] == completed["ts"] - completed["started_ts"] >= 0
    assert {k: commit[k] for k in ("member_id", "generation", "topic", "partition", "offset")} == {
        "member_id": member_id, "generation": completed["generation"], "topic": "payments", "partition": 0,
        "offset": 5}
    assert kinds[at + 1:] == ["member_left", "rebalance_started", "rebalance_completed"]
    assert events[-2]["reason"] == "leave" and events[-1]["state"] == "Empty"
