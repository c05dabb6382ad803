"""The lag rules of groupctl/analytics/lag.py, again, in plain single-process Python.

The reference that the Spark transforms are checked against (tests/analytics/test_lag_rules.py
property test, bench/lag_analysis.py): the same rules, extras and output fields (see lag.py's
docstring), written as loops over each partition's rows in sample order, for the reader to check
line by line against the rules rather than for speed. No Spark.

Input rows are mappings with the fields of the lag dataset (README, "Recording lag"); missing fields read as
null. Output rows are dicts with the columns of lag.PARTITION_COLUMNS / GROUP_COLUMNS.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Mapping, NamedTuple, Optional

STATUS_ORDER = ("OK", "WARN", "STOP", "STALL", "REWIND")
ERR_STATUSES = ("STOP", "STALL", "REWIND")


class Sample(NamedTuple):
    """One row of one partition (the partition's key is held by whoever groups the rows)."""
    ts: int
    committed: Optional[int]
    log_end: Optional[int]
    members: Optional[int]
    owner: Optional[str]

    @property
    def valid(self) -> bool:
        return self.committed is not None and self.log_end is not None

    @property
    def lag(self) -> int:
        return self.log_end - self.committed


def sample_order(sample: Sample) -> tuple:
    """ts, committed, log_end, members, owner ascending, a missing value before any value."""
    return tuple((False, 0) if value is None else (True, value) for value in sample)


def group_rows(rows: Iterable[Mapping]) -> dict[tuple, list[Sample]]:
    """(cluster, group, topic, partition) -> its samples, in input order."""
    partitions: dict[tuple, list[Sample]] = defaultdict(list)
    for row in rows:
        key = (row.get("cluster"), row.get("group"), row.get("topic"), row.get("partition"))
        partitions[key].append(Sample(row["ts"], row.get("committed"), row.get("log_end"),
                                      row.get("members"), row.get("owner")))
    return partitions


def partition_status(rows: Iterable[Mapping], *, window: int = 10, allowed_lag: int = 0,
                     at_ms: Optional[int] = None) -> list[dict]:
    """One dict per partition that has a row at or before the evaluation time."""
    return evaluate_partitions(group_rows(rows), window=window, allowed_lag=allowed_lag, at_ms=at_ms)


def evaluate_partitions(partitions: Mapping[tuple, list[Sample]], *, window: int = 10, allowed_lag: int = 0,
                        at_ms: Optional[int] = None) -> list[dict]:
    """partition_status over rows already grouped by partition (see group_rows)."""
    if at_ms is None:
        now = max((sample.ts for samples in partitions.values() for sample in samples), default=None)
    else:
        now = at_ms
    results = []
    for key, samples in partitions.items():
        seen = sorted((sample for sample in samples if sample.ts <= now), key=sample_order)
        if seen:
            results.append(evaluate_partition(key, seen, now=now, window=window, allowed_lag=allowed_lag))
    return results


def evaluate_partition(key: tuple, samples: list[Sample], *, now: int, window: int, allowed_lag: int) -> dict:
    """The status and extras of one partition; `samples` are its rows at or before now, in sample order."""
    valid = [sample for sample in samples if sample.valid]

    entries = []
    previous = None
    for sample in valid:
        idle_repeat = sample.members == 0 and previous is not None and sample.committed == previous.committed
        if not idle_repeat:
            entries.append(sample)
        previous = sample
    in_window = entries[-window:]

    latest = valid[-1] if valid else None
    current_lag = latest.lag if latest else None

    first_entry = in_window[0] if in_window else None
    last_entry = in_window[-1] if in_window else None
    consume_rate = produce_rate = None
    if in_window and last_entry.ts > first_entry.ts:
        span_ms = last_entry.ts - first_entry.ts
        consume_rate = (last_entry.committed - first_entry.committed) * 1000.0 / span_ms
        produce_rate = (last_entry.log_end - first_entry.log_end) * 1000.0 / span_ms

    result = {
        "cluster": key[0], "group": key[1], "topic": key[2], "partition": key[3],
        "status": status_of(in_window, len(valid), current_lag, now=now, window=window, allowed_lag=allowed_lag),
        "complete": len(in_window) / window,
        "committed": latest.committed if latest else None,
        "log_end": latest.log_end if latest else None,
        "current_lag": current_lag,
        "lag_seconds": None,
        "lag_seconds_is_lower_bound": None,
        "consume_rate": consume_rate,
        "produce_rate": produce_rate,
        "lag_trend": produce_rate - consume_rate if consume_rate is not None else None,
        "catch_up_seconds": None,
        "window_start_ts": first_entry.ts if first_entry else None,
        "window_end_ts": last_entry.ts if last_entry else None,
        "last_sample_ts": samples[-1].ts,
        "owner": samples[-1].owner,
        "evaluated_at": now,
    }
    if latest is not None:
        result["lag_seconds"], result["lag_seconds_is_lower_bound"] = lag_seconds(valid, latest, now)
        if current_lag <= 0:
            result["catch_up_seconds"] = 0.0
        elif result["status"] != "STOP" and consume_rate is not None and consume_rate - produce_rate > 0:
            result["catch_up_seconds"] = current_lag / (consume_rate - produce_rate)
    return result


def status_of(in_window: list[Sample], samples: int, current_lag: Optional[int], *, now: int, window: int,
              allowed_lag: int) -> str:
    """The rules, in order; the first that matches decides (`samples`: the partition's valid rows)."""
    if samples < window:
        return "OK"
    if current_lag <= allowed_lag:
        return "OK"
    for before, after in zip(in_window, in_window[1:]):
        if after.committed < before.committed:
            return "REWIND"
    first, last = in_window[0], in_window[-1]
    caught_up = any(entry.lag <= 0 for entry in in_window)
    if now - last.ts > last.ts - first.ts and not caught_up:
        return "STOP"
    if not caught_up:
        if all(entry.committed == first.committed for entry in in_window):
            return "STALL"
        if all(after.lag >= before.lag for before, after in zip(in_window, in_window[1:])):
            return "WARN"
    return "OK"


def lag_seconds(valid: list[Sample], latest: Sample, now: int) -> tuple[float, bool]:
    """(seconds since the oldest unconsumed message was produced, whether that is a lower bound)."""
    if latest.lag <= 0:
        return 0.0, False
    committed = latest.committed
    last_below = None
    for index, sample in enumerate(valid):
        if sample.log_end <= committed:
            last_below = index
    if last_below is None:
        return (now - valid[0].ts) / 1000.0, True
    before, after = valid[last_below], valid[last_below + 1]
    produced_at = before.ts + (after.ts - before.ts) * ((committed + 1 - before.log_end)
                                                        / (after.log_end - before.log_end))
    return (now - produced_at) / 1000.0, False


def group_status(partitions: Iterable[Mapping]) -> list[dict]:
    """One dict per (cluster, group): the worst partition's status rolled up, and the sums."""
    groups: dict[tuple, list[Mapping]] = defaultdict(list)
    for partition in partitions:
        groups[(partition["cluster"], partition["group"])].append(partition)
    return [summarise_group(key, members) for key, members in groups.items()]


def summarise_group(key: tuple, partitions: list[Mapping]) -> dict:
    """One group's row (see lag.group_status for what each field means)."""
    statuses = {partition["status"] for partition in partitions}
    if statuses & set(ERR_STATUSES):
        status = "ERR"
    elif "WARN" in statuses:
        status = "WARN"
    else:
        status = "OK"

    known = [partition for partition in partitions if partition["current_lag"] is not None]
    largest = min(known, key=lambda p: (-p["current_lag"], p["topic"], p["partition"])) if known else None
    lagging = [partition for partition in known if partition["current_lag"] > 0]
    if any(partition["catch_up_seconds"] is None for partition in lagging):
        catch_up = None
    else:
        catch_up = max((partition["catch_up_seconds"] for partition in lagging), default=0.0)
    lag_seconds = [p["lag_seconds"] for p in partitions if p["lag_seconds"] is not None]
    trends = [p["lag_trend"] for p in partitions if p["lag_trend"] is not None]
    not_ok = sorted((p for p in partitions if p["status"] != "OK"),
                    key=lambda p: (-STATUS_ORDER.index(p["status"]), p["topic"], p["partition"]))
    return {
        "cluster": key[0], "group": key[1], "status": status,
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

