"""Tables of `groupctl transactions` (JSON comes from the ops results' `to_json`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from groupctl.cli import render

if TYPE_CHECKING:
    from rich.table import Table

    from groupctl.ops.transactions import Producers, Transactions

DRY_RUN = "dry run: nothing was aborted (add --execute to abort)"


def duration(ms: Optional[int]) -> Optional[str]:
    """12ms, 4.2s, 3m05s, 2h07m: an age, for people."""
    if ms is None:
        return None
    if ms < 1_000:
        return f"{ms}ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f}s"
    minutes, seconds = divmod(ms // 1000, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def _partitions(partitions: tuple[tuple[str, int], ...]) -> str:
    return ",".join(f"{topic}-{partition}" for topic, partition in partitions)


def transactions_table(result: "Transactions") -> "Table":
    return render.table(
        ["TRANSACTIONAL-ID", "COORDINATOR", "STATE", "PRODUCER-ID", "PRODUCER-EPOCH", "TIMEOUT-MS", "STARTED",
         "DURATION", "PARTITIONS"],
        [(t.transactional_id, t.coordinator_id, t.state, t.producer_id, t.producer_epoch, t.timeout_ms,
          render.utc_time(t.start_ms if t.start_ms >= 0 else None), duration(t.duration_ms(result.now_ms)),
          _partitions(t.partitions) or None)
         for t in result.transactions],
        numeric=("COORDINATOR", "PRODUCER-ID", "DURATION"))


def producers_table(result: "Producers") -> "Table":
    rows = []
    for found in result.producers:
        p = found.producer
        last = p.last_timestamp if p.last_timestamp >= 0 else None
        rows.append((found.topic, found.partition, p.producer_id, p.producer_epoch, p.last_sequence,
                     render.utc_time(last), duration(None if last is None else max(0, result.now_ms - last)),
                     p.coordinator_epoch,
                     p.current_txn_start_offset if p.current_txn_start_offset >= 0 else None))
    return render.table(
        ["TOPIC", "PARTITION", "PRODUCER-ID", "PRODUCER-EPOCH", "LAST-SEQUENCE", "LAST", "IDLE",
         "COORDINATOR-EPOCH", "TXN-START-OFFSET"],
        rows, numeric=("PRODUCER-ID", "LAST-SEQUENCE", "IDLE"))
