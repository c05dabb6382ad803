"""Raising the leader epochs of the partitions this node leads, each time it starts leading them.

A partition is led by its first replica, so its leadership changes only when that node starts
(or, with ZooKeeper, registers again after its session expired: meanwhile Metadata showed the
partition leaderless). Kafka's controller raises a partition's leader epoch on every leader
change (KIP-101); `LeaderEpochs.lead` does the same for this node's partitions:

1. `LogManager.leading` turns False: handlers answer the node's partitions NOT_LEADER_OR_FOLLOWER
   (Metadata: leader -1, LEADER_NOT_AVAILABLE), so nothing is appended at the old epoch;
2. every topic with a partition the node leads gets one compare-and-set write raising those
   epochs to one above max(stored epoch, the latest epoch the partition's local log has led at)
   (`TopicRegistry.raise_leader_epochs`, all topics at once so the record writer coalesces
   them; the local epochs come from `LogManager.latest_epochs`, so a stored epoch that fell
   behind the log, e.g. after ZooKeeper was wiped, catches up and never goes back); a topic
   another node changed meanwhile, or a store failure, is retried with the store backoff until
   it succeeds (or the node stops);
3. the open logs move to their new epochs (`LogManager.lead_all`: the epoch cache records
   (epoch, log end offset), as Kafka's makeLeader does, its checkpoint written in worker
   threads, off the loop) and `leading` turns True again.

Other nodes learn the new epochs through their topic watch (`sync` applies them to logs there,
which matters only after a node stops leading and starts again). One `lead` runs at a time; a
second waits and raises the epochs once more (it is another leadership change).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Callable

from groupctl.coordinator.backoff import Backoff
from groupctl.coordinator.records import TopicRecord
from groupctl.log import LogManager
from groupctl.server.topics import TopicError, TopicRegistry
from groupctl.store.base import StoreError

log = logging.getLogger("groupctl.leader_epochs")


class LeaderEpochs:
    def __init__(self, topics: TopicRegistry, logs: LogManager, node_id: int, stopping: Callable[[], bool]) -> None:
        self._topics = topics
        self._logs = logs
        self._node_id = node_id
        self._stopping = stopping
        self._lock = asyncio.Lock()

    async def lead(self) -> None:
        """Raise the epochs of every partition this node leads, durably, before serving them."""
        async with self._lock:
            self._logs.leading = False
            pending = self._topics.led_by(self._node_id)
            local = await self._logs.latest_epochs(self._led_partitions(pending))
            raised: list[TopicRecord] = []
            backoff = Backoff.store_retries()
            while pending and not self._stopping():
                outcomes = await asyncio.gather(
                    *(self._topics.raise_leader_epochs(name, self._node_id, local) for name in pending),
                    return_exceptions=True)
                failed = []
                for name, outcome in zip(pending, outcomes):
                    if isinstance(outcome, (TopicError, StoreError)):
                        failed.append(name)
                        log.warning("raising the leader epochs of topic %r failed (%s); retrying", name, outcome)
                    elif isinstance(outcome, BaseException):
                        raise outcome
                    elif outcome is not None:
                        raised.append(outcome)
                pending = failed
                if pending:
                    await asyncio.sleep(backoff.failed() / 1000)
            if pending:
                return  # stopping: the partitions stay unserved
            await self._logs.lead_all(epoch for record in raised for epoch in self._led_epochs(record))
            self._logs.leading = True
            log.info("node %d leads its partitions at their new leader epochs", self._node_id)

    def sync(self, record: TopicRecord) -> None:
        """Move the open logs of `record`'s partitions this node leads to the epochs it holds.
        Nothing while `leading` is False: `lead` then moves them itself, with the checkpoint
        writes off the loop, before serving (the watch echoes its raises in the meantime)."""
        if not self._logs.leading:
            return
        for topic, partition, epoch in self._led_epochs(record):
            self._logs.lead(topic, partition, epoch)

    def _led_epochs(self, record: TopicRecord) -> list[tuple[str, int, int]]:
        """(topic, partition, leader epoch) of `record`'s partitions this node leads."""
        return [(record.name, partition, record.leader_epoch(partition))
                for partition, nodes in record.replicas.items() if nodes and nodes[0] == self._node_id]

    def _led_partitions(self, names: list[str]) -> list[tuple[str, int]]:
        """(topic, partition) of the partitions of topics `names` this node leads."""
        return [(topic, partition) for record in filter(None, map(self._topics.get, names))
                for topic, partition, _ in self._led_epochs(record)]
