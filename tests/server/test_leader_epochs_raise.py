"""Raising the leader epochs of the partitions a node leads (groupctl/server/leader_epochs.py)
with a real topic registry and real logs on disk: the stored epochs rise above both the stored
and the local logs' epochs (so they catch up with a log that led at a later epoch than the
store remembers), the open logs move up with their epoch checkpoints written in worker threads,
and only then does the node serve its partitions again."""

from __future__ import annotations

import os
import threading

from groupctl.coordinator.records import TopicRecord
from groupctl.log import LogManager
from groupctl.log.epochs import CHECKPOINT_FILE
from groupctl.server.leader_epochs import LeaderEpochs
from tests.server.test_topic_registry import GatedWriter, registry, run
from tests.unit.test_log_epochs import records


def test_raised_epochs_start_above_the_local_logs_and_are_checkpointed_off_the_loop_before_serving(tmp_path, monkeypatch):
    earlier = LogManager(tmp_path, epoch_of=lambda topic, partition: 6)
    earlier.partition("orders", 1).append(records(2))  # a log that led at epoch 6, now closed
    earlier.close()

    async def scenario():
        topics = registry(writer=GatedWriter())
        topics.replay(TopicRecord("orders", "id-1", {0: [0], 1: [0]}, leader_epochs={0: 4}))  # 1: lost
        logs = LogManager(tmp_path, epoch_of=lambda topic, partition: topics.get(topic).leader_epoch(partition))
        try:
            open_log = await logs.open("orders", 0)
            open_log.append(records(3))
            loop_thread = threading.current_thread()
            on_loop = []
            real_fsync = os.fsync
            monkeypatch.setattr(os, "fsync", lambda fd: (threading.current_thread() is loop_thread
                                                         and on_loop.append(fd)) or real_fsync(fd))
            await LeaderEpochs(topics, logs, node_id=0, stopping=lambda: False).lead()
            monkeypatch.undo()
            assert on_loop == []
            assert [topics.get("orders").leader_epoch(p) for p in range(2)] == [5, 7]
            assert logs.leading and open_log.leader_epoch == 5
            assert (open_log.directory / CHECKPOINT_FILE).read_text() == "0\n2\n4 0\n5 3\n"
            assert logs.get("orders", 1) is None  # read from its checkpoint, not opened
            assert (await logs.open("orders", 1)).epochs.entries == [(6, 0), (7, 2)]
        finally:
            logs.close()
    run(scenario)


def test_a_topic_watch_echo_while_the_epochs_are_being_raised_leaves_the_logs_to_the_raise(tmp_path):
    async def scenario():
        topics = registry(writer=GatedWriter())
        topics.replay(TopicRecord("orders", "id-1", {0: [0]}))
        logs = LogManager(tmp_path)
        try:
            opened = await logs.open("orders", 0)
            epochs = LeaderEpochs(topics, logs, node_id=0, stopping=lambda: False)
            logs.leading = False
            epochs.sync(TopicRecord("orders", "id-1", {0: [0]}, leader_epochs={0: 3}))
            assert opened.leader_epoch == 0
            logs.leading = True
            epochs.sync(TopicRecord("orders", "id-1", {0: [0]}, leader_epochs={0: 3}))
            assert opened.leader_epoch == 3
        finally:
            logs.close()
    run(scenario)
