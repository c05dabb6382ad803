"""The rows `analyze lag` reports: a partition's status with the figures an operator asks for
next (how far behind in time, is it catching up, when), and each group's roll-up.

Rows are plain dicts with exactly the fields of PARTITION_FIELDS / GROUP_FIELDS
(docs/lag-and-rebalances.md, "analyze lag"), ready for JSON and Parquet. Beyond the status:
- `current_lag` is the latest valid sample's (`offsets.consumer_lag`), commit or not: no frozen lag.
- `lag_seconds` = now - the estimated produce time of the message at offset `committed`,
  interpolated between the two valid samples whose log ends straddle it
  (`produced_between`: t0, e0 and t1, e1): t0 + (t1 - t0) * (committed + 1 - e0) / (e1 - e0);
  0 when nothing is unconsumed; when the message predates the recording, now - the first valid
  sample's time, flagged by `lag_seconds_is_lower_bound`.
- `consume_rate` / `produce_rate`: committed / log-end deltas per second between the window's
  first and last entries (None for a zero span); `lag_trend` = produce_rate - consume_rate;
  `catch_up_seconds` = current_lag / (consume_rate - produce_rate) while that is positive, 0 when
  nothing is unconsumed, else None, and None for STOP (its rates predate the stop).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Mapping, Optional

from groupctl.lag.offsets import ahead_of_log_end
from groupctl.lag.rules import Rules, group_status, partition_status, severity
from groupctl.lag.window import PartitionWindow

PARTITION_KEY = ("cluster", "group", "topic", "partition")
PARTITION_FIELDS = (
    *PARTITION_KEY, "status", "complete", "committed", "log_end", "current_lag", "ahead_of_log_end",
    "lag_seconds", "lag_seconds_is_lower_bound", "consume_rate", "produce_rate", "lag_trend", "catch_up_seconds",
    "window_start_ts", "window_end_ts", "last_sample_ts", "owner", "evaluated_at",
)
GROUP_FIELDS = (
    "cluster", "group", "status", "partitions", "complete", "total_lag", "max_lag", "max_lag_topic",
    "max_lag_partition", "max_lag_seconds", "catch_up_seconds", "lag_trend", "worst", "evaluated_at",
)


def partition_report(key: tuple, window: PartitionWindow, *, rules: Rules = Rules.GROUPCTL,
                     allowed_lag: int = 0) -> dict:
    """One partition's row; `key` is its (cluster, group, topic, partition)."""
    status = partition_status(window, rules=rules, allowed_lag=allowed_lag)
    first, last = (window.entries[0], window.entries[-1]) if window.entries else (None, None)
    latest = window.latest
    consume_rate = produce_rate = None
    if first is not None and last.ts > first.ts:
        span_ms = last.ts - first.ts
        consume_rate = (last.committed - first.committed) * 1000.0 / span_ms
        produce_rate = (last.log_end - first.log_end) * 1000.0 / span_ms
    current_lag = latest.lag if latest else None
    lag_seconds = lower_bound = catch_up = None
    if latest is not None:
        lag_seconds, lower_bound = _lag_seconds(window)
        if current_lag == 0:
            catch_up = 0.0
        elif status != "STOP" and consume_rate is not None and consume_rate > produce_rate:
            catch_up = current_lag / (consume_rate - produce_rate)
    return dict(zip(PARTITION_KEY, key)) | {
        "status": status,
        "complete": len(window.entries) / window.size,
        "committed": latest.committed if latest else None,
        "log_end": latest.log_end if latest else None,
        "current_lag": current_lag,
        "ahead_of_log_end": ahead_of_log_end(latest.committed, latest.log_end) if latest else None,
        "lag_seconds": lag_seconds,
        "lag_seconds_is_lower_bound": lower_bound,
        "consume_rate": consume_rate,
        "produce_rate": produce_rate,
        "lag_trend": produce_rate - consume_rate if consume_rate is not None else None,
        "catch_up_seconds": catch_up,
        "window_start_ts": first.ts if first else None,
        "window_end_ts": last.ts if last else None,
        "last_sample_ts": window.last_sample_ts,
        "owner": window.owner,
        "evaluated_at": window.now,
    }


def _lag_seconds(window: PartitionWindow) -> tuple[float, bool]:
    """(seconds since the oldest unconsumed message was produced, whether that is a lower bound)."""
    latest = window.latest
    if latest.lag == 0:
        return 0.0, False
    if window.produced_between is None:
        return (window.now - window.first_valid_ts) / 1000.0, True
    before, after = window.produced_between
    produced_at = before.ts + (after.ts - before.ts) * ((latest.committed + 1 - before.log_end)
                                                        / (after.log_end - before.log_end))
    return (window.now - produced_at) / 1000.0, False


def group_reports(partitions: Iterable[Mapping]) -> list[dict]:
    """One row per (cluster, group) of partition rows, in the order groups first appear.

    status: `rules.group_status`. complete: the fraction of partitions with a full window.
    total_lag / max_lag over partitions with a known lag; max_lag_topic / max_lag_partition name
    the partition with the largest (the first by topic, partition on ties). max_lag_seconds: the
    largest lag_seconds. catch_up_seconds: the slowest of the lagging partitions, None if one of
    them is not catching up, 0 if none lags. lag_trend: the sum of the partitions'. worst:
    "topic/partition STATUS" of every partition not OK, most severe first, then by topic and
    partition.
    """
    groups: dict[tuple, list[Mapping]] = defaultdict(list)
    for partition in partitions:
        groups[(partition["cluster"], partition["group"])].append(partition)
    return [_group_report(key, members) for key, members in groups.items()]


def _group_report(key: tuple, partitions: list[Mapping]) -> dict:
    known = [p for p in partitions if p["current_lag"] is not None]
    largest = min(known, key=lambda p: (-p["current_lag"], p["topic"], p["partition"])) if known else None
    lagging = [p for p in known if p["current_lag"] > 0]
    catch_up: Optional[float]
    if any(p["catch_up_seconds"] is None for p in lagging):
        catch_up = None
    else:
        catch_up = max((p["catch_up_seconds"] for p in lagging), default=0.0)
    lag_seconds = [p["lag_seconds"] for p in partitions if p["lag_seconds"] is not None]
    trends = [p["lag_trend"] for p in partitions if p["lag_trend"] is not None]
    not_ok = sorted((p for p in partitions if p["status"] != "OK"),
                    key=lambda p: (-severity(p["status"]), p["topic"], p["partition"]))
    return {
        "cluster": key[0], "group": key[1], "status": group_status(p["status"] for p in partitions),
        "partitions": len(partitions),
        "complete": sum(1 for p in partitions if p["complete"] >= 1) / len(partitions),
        "total_lag": sum(p["current_lag"] for p in known) if known else None,
        "max_lag": largest["current_lag"] if largest else None,
        "max_lag_topic": largest["topic"] if largest else None,
        "max_lag_partition": largest["partition"] if largest else None,
        "max_lag_seconds": max(lag_seconds) if lag_seconds else None,
        "catch_up_seconds": catch_up,
        "lag_trend": sum(trends) if trends else None,
        "worst": [f"{p['topic']}/{p['partition']} {p['status']}" for p in not_ok],
        "evaluated_at": max(p["evaluated_at"] for p in partitions),
    }
