"""The node's transaction coordinator: the sans-IO `TransactionCoordinator` driven with the
metadata store, the partition logs, the election and a timer.

A transactional id is coordinated by the leader of its group partition (the id is placed as a
group id is, `Placement.partition_of`), so a cluster's failover moves transactions with groups:
the node loads the ids of a partition it gains (`load`, which resumes the completions of the
transactions found preparing) and drops those of a partition it loses (`unload`).

Invariants:
- A record the core hands out is written (with the election's fence of its partition, so a
  node that lost the partition cannot write it) before the core is told `written` and before the
  request is answered; a write that fails is `write_failed` and the request answers
  COORDINATOR_NOT_AVAILABLE (NOT_COORDINATOR once the partition is lost), which clients retry.
- Completing a transaction: every marker is in its partition log, the group offsets it commits
  are completed (`Node.complete_txn_offsets`), then CompleteCommit/CompleteAbort is written. A
  step that fails is retried after a pause, at most COMPLETION_ATTEMPTS times; after that the
  transaction stays preparing and is completed again when its partition is next loaded.
- The timer is armed for the core's `next_timeout_ms` after every change, so a transaction open
  longer than its timeout is aborted (its producer fenced) within a timer tick of the deadline.

Deliberate differences from Apache Kafka (the slice this module is):
- Markers are written to partitions this node leads (`PartitionLog.append_marker`, the job of
  Kafka's WriteTxnMarkers); AddPartitionsToTxn refuses partitions led by another node
  (NOT_LEADER_OR_FOLLOWER) until markers travel between nodes.
- The groups a transaction commits offsets for (AddOffsetsToTxn) are remembered in memory: a
  transaction completed after a restart completes the partitions' markers, not the groups'
  pending offsets (Kafka finds them by reading its __consumer_offsets partitions).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable, Optional

from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.transactions import MarkerWrite, Outcome, TransactionCoordinator, TransactionRecord, TxnReply
from groupctl.log import InvalidProducerEpochError, PartitionDeletedError, TransactionCoordinatorFencedError
from groupctl.server.election import NotLeader

log = logging.getLogger(__name__)

OFFSETS_TOPIC = "__consumer_offsets"
"""The name the partition holding a group's offsets has in a transaction (Kafka's topic; this
node keeps offsets in the metadata store, so no marker is written to it)."""
COMPLETION_ATTEMPTS = 20
RETRY_PAUSE_S = 0.5


class Transactions:
    """The transactional ids this node coordinates. `node` is the running `Node`."""

    def __init__(self, node: Any) -> None:
        self._node = node
        self.core = TransactionCoordinator(allocate_producer_id=self._allocate,
                                           offsets_partition_for=self._offsets_partition,
                                           node_id=node.config.node_id)
        self._groups: dict[str, set[str]] = {}  # transactional id -> groups of its AddOffsetsToTxn
        self._timer: Optional[asyncio.TimerHandle] = None
        self._tasks: set[asyncio.Task] = set()

    def _allocate(self) -> Optional[int]:
        return self._node.logs.producer_ids.allocate(self._node.now_ms())[0]

    def _offsets_partition(self, group_id: str) -> tuple[str, int]:
        return (OFFSETS_TOPIC, self._node.placement.partition_of(group_id))

    def error(self, transactional_id: str) -> ErrorCode:
        """NONE when this node coordinates `transactional_id` now, else what to answer."""
        return self._node.placement.error(transactional_id)

    # -- requests ---------------------------------------------------------------------------------

    async def run(self, operation: Callable[[TransactionCoordinator, int], Outcome]) -> TxnReply:
        """Apply `operation(core, now_ms)`, persist its record, answer."""
        outcome = operation(self.core, self._node.now_ms())
        if outcome.record is not None:
            error = await self._persist(outcome.record)
            if error is not ErrorCode.NONE:
                return TxnReply(error)
        self._arm_timer()
        return outcome.reply

    def offsets_added(self, transactional_id: str, group_id: str) -> None:
        """AddOffsetsToTxn succeeded: complete the group's pending offsets with the transaction."""
        self._groups.setdefault(transactional_id, set()).add(group_id)

    async def _persist(self, record: TransactionRecord) -> ErrorCode:
        try:
            checks = self._node.election.fence(record.transactional_id)
            await self._node.writer.write([record], checks)
        except NotLeader:
            self.core.write_failed(record)
            return ErrorCode.NOT_COORDINATOR
        except Exception as exc:  # noqa: BLE001 - the store failed: the id stays as it was
            log.error("store did not accept the state of transactional id %r: %s", record.transactional_id, exc)
            self.core.write_failed(record)
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        marker = self.core.written(record, self._node.now_ms())
        if marker is not None:
            self._spawn(self._complete(marker))
        return ErrorCode.NONE

    # -- completing transactions ------------------------------------------------------------------

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _complete(self, marker: MarkerWrite) -> None:
        for _ in range(COMPLETION_ATTEMPTS):
            try:
                await self._write_markers(marker)
                break
            except Exception as exc:  # noqa: BLE001 - a log that cannot be opened or written
                log.warning("markers of transactional id %r not written yet: %s", marker.transactional_id, exc)
                await asyncio.sleep(RETRY_PAUSE_S)
        else:
            log.error("gave up writing the markers of transactional id %r; they are written again when its "
                      "partition is next loaded", marker.transactional_id)
            return
        for group_id in sorted(self._groups.pop(marker.transactional_id, ())):
            await self._complete_group(group_id, marker)
        for _ in range(COMPLETION_ATTEMPTS):
            if self.error(marker.transactional_id) is ErrorCode.NOT_COORDINATOR:
                return  # moved: the new coordinator completes it from the store
            outcome = self.core.markers_written(marker.transactional_id, self._node.now_ms())
            if await self._persist(outcome.record) is ErrorCode.NONE:
                self._node.journal_events(outcome.events)
                self._arm_timer()
                return
            await asyncio.sleep(RETRY_PAUSE_S)

    async def _complete_group(self, group_id: str, marker: MarkerWrite) -> None:
        """The marker of a group the transaction added (AddOffsetsToTxn): its pending offsets
        applied or dropped, retried while the group's coordinator is loading or its store write
        fails. A group served by another node is left pending and logged (markers between nodes
        are the next slice)."""
        for _ in range(COMPLETION_ATTEMPTS):
            try:
                code = await self._node.complete_txn_offsets(group_id, marker.producer_id, marker.producer_epoch,
                                                             marker.commit)
            except Exception as exc:  # noqa: BLE001 - the node's CoordinatorUnavailable: a store write failed
                log.warning("offsets of group %r for transactional id %r not completed yet: %s", group_id,
                            marker.transactional_id, exc)
                await asyncio.sleep(RETRY_PAUSE_S)
                continue
            if code is not ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
                break
            await asyncio.sleep(RETRY_PAUSE_S)
        else:
            code = ErrorCode.REQUEST_TIMED_OUT
        if code is not ErrorCode.NONE:
            log.error("the %s marker of transactional id %r did not complete group %r's offsets: %s",
                      "commit" if marker.commit else "abort", marker.transactional_id, group_id, code.name)

    async def _write_markers(self, marker: MarkerWrite) -> None:
        """The marker in the log of every data partition of the transaction (an epoch or a
        coordinator epoch the log has seen newer of means a later transaction's marker is
        there already: that partition is done)."""
        coordinator_epoch = self._node.election.epoch_of(marker.transactional_id)
        if coordinator_epoch is None:
            raise NotLeader(f"transactional id {marker.transactional_id!r} moved to another node")
        for topic, partition in sorted(marker.partitions):
            if topic == OFFSETS_TOPIC:
                continue
            try:
                partition_log = await self._node.logs.open(topic, partition)
            except PartitionDeletedError:
                continue  # Kafka drops the markers of deleted partitions
            try:
                partition_log.append_marker(marker.producer_id, marker.producer_epoch, marker.commit,
                                            coordinator_epoch)
            except (InvalidProducerEpochError, TransactionCoordinatorFencedError) as exc:
                log.warning("marker of transactional id %r on %s-%d not needed: %s",
                            marker.transactional_id, topic, partition, exc)

    # -- timeouts -----------------------------------------------------------------------------------

    def _arm_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        due = self.core.next_timeout_ms()
        if due is None:
            return
        delay_s = max(0, due - self._node.now_ms()) / 1000
        self._timer = asyncio.get_running_loop().call_later(delay_s, self._expire)

    def _expire(self) -> None:
        self._timer = None
        for outcome in self.core.expire(self._node.now_ms()):
            self._spawn(self._persist(outcome.record))
        self._arm_timer()

    # -- partitions gained and lost -------------------------------------------------------------------

    def load(self, records: list[TransactionRecord]) -> None:
        """The ids of partitions this node now coordinates, as the store holds them."""
        for marker in self.core.load(records):
            self._spawn(self._complete(marker))
        self._arm_timer()

    def unload(self, belongs: Callable[[str], bool]) -> None:
        self.core.unload(belongs)
        for transactional_id in [i for i in self._groups if belongs(i)]:
            del self._groups[transactional_id]
        self._arm_timer()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        for task in list(self._tasks):
            task.cancel()
