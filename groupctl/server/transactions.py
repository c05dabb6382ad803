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
- Completing a transaction (Kafka's TransactionMarkerChannelManager): its partitions are
  grouped by the node leading each now (`groupctl.server.markers.route`): this node's are
  written directly (`markers.write`, the WriteTxnMarkers handler's code), every other node's
  with one WriteTxnMarkers request to it (`Node.peers`). The partition holding a group's offsets
  (`__consumer_offsets` p, which AddOffsetsToTxn adds to the transaction's stored record) is
  one of them: its leader completes the pending offsets of every group placed on p, so a
  completion resumed after a restart or a failover completes the groups too. A partition that
  is not written (no live leader, its leader moved, a node that cannot be reached, an answer
  that is not NONE or a "later marker is there" code, a partition the answer leaves out) is
  tried again after a pause (doubling up to MAX_RETRY_PAUSE_S), at its leader then; a topic
  deleted meanwhile is dropped. Only when every marker is written is CompleteCommit/
  CompleteAbort written, itself retried until stored. Both steps go on, with no limit of
  attempts, for as long as this node coordinates the id (`election.epoch_of`) and the
  completion is still its transaction's (`TransactionCoordinator.completing`: not unloaded,
  not loaded again, not completed); a node that loses the id leaves it to the next
  coordinator, which resumes it from the store.
- A peer refusing markers with CLUSTER_AUTHORIZATION_FAILED is logged as an error naming the
  inter-node principal and the fix, once per peer per change (`MarkerRefusals`).
- The timer is armed for the core's `next_timeout_ms` after every change, so a transaction open
  longer than its timeout is aborted (its producer fenced) within a timer tick of the deadline;
  after its fence is persisted or refused the timer is armed again, so an abort the store
  refused is tried again (after RETRY_PAUSE_S).
- `close` cancels the completions and timeout aborts under way and waits for them to end
  (at most CLOSE_TIMEOUT_S).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable, Optional

from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.transactions import MarkerWrite, Outcome, TransactionCoordinator, TransactionRecord, TxnReply
from groupctl.coordinator.transactions.records import Partition
from groupctl.server.election import NotLeader
from groupctl.server.marker_refusals import MarkerRefusals
from groupctl.server.markers import OFFSETS_TOPIC, Marker, describe, leader_in, route, still_to_write, write

log = logging.getLogger(__name__)

RETRY_PAUSE_S = 0.5
MAX_RETRY_PAUSE_S = 5.0
CLOSE_TIMEOUT_S = 5.0
"""How long `close` waits for the cancelled completions and timeout aborts to finish."""


def retry_pause_s(attempt: int) -> float:
    """The pause before retry `attempt` + 1 of a completion step: doubling, capped."""
    return min(RETRY_PAUSE_S * 2 ** min(attempt, 16), MAX_RETRY_PAUSE_S)


class Transactions:
    """The transactional ids this node coordinates. `node` is the running `Node`."""

    def __init__(self, node: Any) -> None:
        self._node = node
        self.core = TransactionCoordinator(allocate_producer_id=self._allocate,
                                           offsets_partition_for=self._offsets_partition,
                                           node_id=node.config.node_id)
        self._timer: Optional[asyncio.TimerHandle] = None
        self._tasks: set[asyncio.Task] = set()
        self._refusals = MarkerRefusals()

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

    def _coordinating(self, marker: MarkerWrite) -> bool:
        """Whether this node still coordinates `marker`'s id and it is still that transaction's
        completion (not unloaded, not loaded again, not completed)."""
        return (self._node.election.epoch_of(marker.transactional_id) is not None
                and self.core.completing(marker))

    async def _complete(self, marker: MarkerWrite) -> None:
        """Write the transaction's markers at the partitions' leaders, then CompleteCommit/
        CompleteAbort; each step retried, after a pause that doubles up to MAX_RETRY_PAUSE_S, for
        as long as this node coordinates the id and `marker` is its transaction's completion."""
        remaining = set(marker.partitions)
        attempt = 0
        while self._coordinating(marker):
            coordinator_epoch = self._node.election.epoch_of(marker.transactional_id)
            remaining = await self._write_markers(marker, coordinator_epoch, remaining)
            if not remaining:
                break
            if attempt & (attempt + 1) == 0:  # rounds 1, 2, 4, 8...: a stuck completion does not flood the log
                log.warning("markers of transactional id %r not written yet to %s (round %d); trying again",
                            marker.transactional_id, describe(remaining), attempt + 1)
            await asyncio.sleep(retry_pause_s(attempt))
            attempt += 1
        attempt = 0
        while self._coordinating(marker):
            outcome = self.core.markers_written(marker, self._node.now_ms())
            if await self._persist(outcome.record) is ErrorCode.NONE:
                self._node.journal_events(outcome.events)
                self._arm_timer()
                return
            await asyncio.sleep(retry_pause_s(attempt))
            attempt += 1

    async def _write_markers(self, marker: MarkerWrite, coordinator_epoch: int,
                             partitions: set[Partition]) -> set[Partition]:
        """One round (Kafka's marker channel): `partitions` grouped by the node leading each now,
        this node's written directly, every other node's with one WriteTxnMarkers request, all at
        once; a partition that no longer exists is dropped. Returns the partitions to try again
        (no live leader, an error the leader answered, a node that could not be reached)."""
        routes = route(partitions, leader_in(self._node))
        if routes.dropped:
            log.info("markers of transactional id %r dropped for %s: no longer exists", marker.transactional_id,
                     describe(routes.dropped))
        request = Marker(marker.producer_id, marker.producer_epoch, marker.commit, coordinator_epoch)
        own = self._node.config.node_id
        nodes = list(routes.by_node)
        answers = await asyncio.gather(*(
            write(self._node, request, routes.by_node[node_id]) if node_id == own
            else self._node.peers.write_txn_markers(node_id, request, routes.by_node[node_id])
            for node_id in nodes), return_exceptions=True)
        remaining = set(routes.waiting)
        for node_id, answer in zip(nodes, answers):
            if isinstance(answer, BaseException):
                if isinstance(answer, asyncio.CancelledError):
                    raise answer
                log.warning("node %d did not take the markers of transactional id %r: %s", node_id,
                            marker.transactional_id, answer)
                remaining |= routes.by_node[node_id]
                continue
            for partition, error in answer.items():
                if error in (ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.TRANSACTION_COORDINATOR_FENCED):
                    log.warning("marker of transactional id %r on %s not needed: %s", marker.transactional_id,
                                describe([partition]), error.name)
            self._refusals.saw(node_id, answer, self._node.peers.principal)
            asked = routes.by_node[node_id]
            # A partition the answer leaves out is not written: it is tried again.
            again = (still_to_write(answer) & asked) | (asked - answer.keys())
            if again:
                log.warning("node %d did not write the markers of transactional id %r on %s: %s", node_id,
                            marker.transactional_id, describe(again),
                            ", ".join(sorted({answer[p].name if p in answer else "not answered" for p in again})))
            remaining |= again
        return remaining

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
            self._spawn(self._abort_timed_out(outcome.record))
        self._arm_timer()

    async def _abort_timed_out(self, record: TransactionRecord) -> None:
        """Persist a timed-out transaction's fence, then arm the timer again: when the store
        refused it the transaction is open again, its deadline past, and the abort is retried
        after a pause (not at once, so a failing store is not hammered)."""
        if await self._persist(record) is not ErrorCode.NONE:
            await asyncio.sleep(RETRY_PAUSE_S)
        self._arm_timer()

    # -- partitions gained and lost -------------------------------------------------------------------

    def load(self, records: list[TransactionRecord]) -> None:
        """The ids of partitions this node now coordinates, as the store holds them."""
        for marker in self.core.load(records):
            self._spawn(self._complete(marker))
        self._arm_timer()

    def unload(self, belongs: Callable[[str], bool]) -> None:
        self.core.unload(belongs)
        self._arm_timer()

    async def close(self) -> None:
        """Stop the timer and the completions under way, waiting (at most CLOSE_TIMEOUT_S) for
        them to end; the store holds what the next coordinator of each id resumes."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=CLOSE_TIMEOUT_S)
