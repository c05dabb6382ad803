"""A transaction coordinator core driven as the shell will drive it: records persisted to a list
before replies are read, markers collected until the test says they are written, a manual clock."""

from __future__ import annotations

import itertools
from typing import Optional

from groupctl.coordinator.transactions import MarkerWrite, Outcome, TransactionCoordinator, TransactionRecord, TxnReply

OFFSETS_TOPIC = "__consumer_offsets"
FIRST_PRODUCER_ID = 1000


def offsets_partition_for(group_id: str) -> tuple[str, int]:
    return (OFFSETS_TOPIC, len(group_id) % 50)


class TxnHarness:
    def __init__(self, max_timeout_ms: int = 900_000, node_id: int = 0) -> None:
        self.now = 0
        self.ids_available = True
        self._ids = itertools.count(FIRST_PRODUCER_ID)
        self.persisted: list[TransactionRecord] = []
        self.markers: list[MarkerWrite] = []
        self.journal: list[dict] = []  # the events of the outcomes whose records were persisted
        self.core = TransactionCoordinator(allocate_producer_id=self._allocate,
                                           offsets_partition_for=offsets_partition_for,
                                           max_timeout_ms=max_timeout_ms, node_id=node_id)

    def _allocate(self) -> Optional[int]:
        return next(self._ids) if self.ids_available else None

    def advance(self, ms: int) -> None:
        self.now += ms

    def apply(self, outcome: Outcome, *, write_fails: bool = False) -> Optional[TxnReply]:
        """Persist the outcome's record (or fail to), then hand back its reply."""
        if outcome.record is not None:
            if write_fails:
                self.core.write_failed(outcome.record)
                return None
            self.persisted.append(outcome.record)
            self.journal.extend(outcome.events)
            marker = self.core.written(outcome.record, self.now)
            if marker is not None:
                self.markers.append(marker)
        return outcome.reply

    def init(self, tid: str = "tx", timeout_ms: int = 60_000, expected=None, **kw) -> Optional[TxnReply]:
        return self.apply(self.core.init_producer_id(tid, timeout_ms, self.now, expected), **kw)

    def add(self, reply: TxnReply, *partitions, tid: str = "tx", **kw) -> Optional[TxnReply]:
        return self.apply(self.core.add_partitions(tid, reply.producer_id, reply.producer_epoch,
                                                   partitions or [("out", 0)], self.now), **kw)

    def add_offsets(self, reply: TxnReply, group: str, tid: str = "tx") -> Optional[TxnReply]:
        return self.apply(self.core.add_offsets(tid, reply.producer_id, reply.producer_epoch, group, self.now))

    def end(self, reply: TxnReply, commit: bool, tid: str = "tx", **kw) -> Optional[TxnReply]:
        return self.apply(self.core.end_txn(tid, reply.producer_id, reply.producer_epoch, commit, self.now), **kw)

    def write_markers(self) -> list[MarkerWrite]:
        """The shell wrote every outstanding marker: complete those transactions."""
        written, self.markers = self.markers, []
        for marker in written:
            self.apply(self.core.markers_written(marker, self.now))
        return written

    def expire(self) -> list[TransactionRecord]:
        outcomes = self.core.expire(self.now)
        for outcome in outcomes:
            assert outcome.reply is None
            self.apply(outcome)
        return [outcome.record for outcome in outcomes]

    def state(self, tid: str = "tx") -> str:
        return self.core.describe(tid).view.state

    def last(self) -> TransactionRecord:
        return self.persisted[-1]
