"""Lag windows at scale: the recorded lag dataset -> one `PartitionWindow` per partition, on Spark.

Invariants:
- The windows are exactly `groupctl.lag.window.partition_window`'s (the tests check the two agree
  on random histories); the job evaluates them in the driver with `groupctl.lag.rules` and
  `groupctl.lag.report`, so the rules have one implementation.
- A partition is keyed by (cluster, group, topic, partition): the same group name on two clusters
  is two groups. Input rows are `schemas.LAG_SAMPLE_SCHEMA`'s.
- Built-in functions only (no Python UDFs), and what is collected is one row per partition.

Plan shape, what keeps large datasets parsed once and shuffled once (bench/lag_analysis.py
measures it): one shuffle and one sort per partition, invalid rows first and valid rows in sample
order, so the previous valid row is a plain `lag()`; two window passes over that same order
(duplicates and previous-row values, then entry and window membership); one aggregation on the
window's keys.
"""

from __future__ import annotations

from functools import reduce
from typing import Optional

from pyspark.sql import Column, DataFrame, Row, Window
from pyspark.sql import functions as F

from groupctl.lag.report import PARTITION_KEY
from groupctl.lag.window import PartitionWindow, Reading

SAMPLE_ORDER = ("ts", "committed", "log_end", "members", "owner")
READING = ("ts", "committed", "log_end")


def partition_windows(samples: DataFrame, *, size: int, now: Optional[int] = None) -> DataFrame:
    """One row per partition with a sample at or before `now` (every sample when None): its key
    and what `window_of` needs. `last_sample_ts` is the row's latest sample time, so the newest
    sample's time (the default evaluation time) is their maximum."""
    if size < 1:
        raise ValueError(f"the window must hold at least 1 entry, got {size}")
    rows = samples if now is None else samples.where(F.col("ts") <= F.lit(now))
    return _summarise(_window_membership(_previous_values(rows), size))


def window_of(row: Row, *, size: int, now: int) -> tuple[tuple, PartitionWindow]:
    """A collected `partition_windows` row -> ((cluster, group, topic, partition), its window)."""
    between = row["produced_between"]
    return tuple(row[name] for name in PARTITION_KEY), PartitionWindow(
        now=now, size=size, samples=row["samples"],
        entries=tuple(_reading(entry) for entry in row["entries"]),
        recent_log_ends=tuple(entry["log_end"] for entry in row["recent"]),
        latest=_reading(row["latest"]) if row["latest"] is not None else None,
        lagging_since=row["lagging_since"],
        first_valid_ts=row["first_valid_ts"],
        produced_between=(Reading(between["t0"], between["c0"], between["e0"]), _reading(between))
        if between is not None else None,
        last_sample_ts=row["last_sample_ts"], owner=row["owner"])


def lag_history(samples: DataFrame) -> DataFrame:
    """(cluster, group, ts, total_lag): per group and sample round, the summed lag of its
    partitions with a known lag (`groupctl.lag.offsets.consumer_lag`: never negative; rounds
    without one are absent), each sample counted once however often it was read. Unordered: sort
    by ts to plot."""
    known = (samples.where(F.col("committed").isNotNull() & F.col("log_end").isNotNull())
             .dropDuplicates([*PARTITION_KEY, *SAMPLE_ORDER]))
    return known.groupBy("cluster", "group", "ts").agg(
        F.sum(F.greatest(F.col("log_end") - F.col("committed"), F.lit(0))).alias("total_lag"))


def _reading(struct: Row) -> Reading:
    return Reading(struct["ts"], struct["committed"], struct["log_end"])


def _sample_window() -> Window:
    """Per partition, invalid rows first, then valid rows in sample order: each valid row's
    predecessor in this order is the previous valid row (or an invalid one, for the first)."""
    return Window.partitionBy(*PARTITION_KEY).orderBy(
        "valid", *(F.col(name).asc_nulls_first() for name in SAMPLE_ORDER))


def _previous_values(samples: DataFrame) -> DataFrame:
    """First window pass: drop a row identical to the one before it; the previous valid row's
    values; the partition's current committed offset and log end (the last row in window order is
    the latest valid row, if there is one). A row after a duplicate sees the same previous values
    as after the original, so the duplicate can go after this pass."""
    ordered = _sample_window()
    whole = ordered.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    valid = F.col("committed").isNotNull() & F.col("log_end").isNotNull()
    rows = samples.select(*PARTITION_KEY, *SAMPLE_ORDER, valid.alias("valid"))
    after_valid = F.lag("valid").over(ordered)
    duplicate = reduce(Column.__and__, (F.col(name).eqNullSafe(F.lag(name).over(ordered)) for name in SAMPLE_ORDER))

    def previous(name: str) -> Column:
        return F.when(after_valid, F.lag(name).over(ordered))

    def current(name: str) -> Column:
        return F.last(F.when(F.col("valid"), F.col(name))).over(whole)

    return rows.select(
        "*",
        previous("ts").alias("prev_ts"),
        previous("committed").alias("prev_committed"),
        previous("log_end").alias("prev_log_end"),
        current("committed").alias("current_committed"),
        current("log_end").alias("current_log_end"),
        F.coalesce(duplicate, F.lit(False)).alias("duplicate"),
    ).where(~F.col("duplicate"))


def _window_membership(rows: DataFrame, size: int) -> DataFrame:
    """Second window pass (same order, no new sort): which rows are commit observations; which of
    those, and of the valid rows, are among the last `size`; and which valid rows come from the
    last commit observation on."""
    ordered = _sample_window()
    so_far = ordered.rowsBetween(Window.unboundedPreceding, 0)
    whole = ordered.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    idle_repeat = (F.col("members") == 0) & (F.col("committed") == F.col("prev_committed"))
    observed = rows.withColumn("is_entry", F.col("valid") & ~F.coalesce(idle_repeat, F.lit(False)))

    def counts(flag: str) -> tuple[Column, Column]:
        """(flagged rows so far, flagged rows in all) of the partition."""
        count = F.col(flag).cast("int")
        return F.sum(count).over(so_far), F.sum(count).over(whole)

    (entries_so_far, entries), (valid_so_far, valid) = counts("is_entry"), counts("valid")
    return observed.select(
        "*",
        (F.col("is_entry") & (entries_so_far > entries - size)).alias("in_window"),
        (F.col("valid") & (valid_so_far > valid - size)).alias("recent"),
        (F.col("valid") & (entries > 0) & (entries_so_far == entries)).alias("since_last_entry"),
    )


def _summarise(rows: DataFrame) -> DataFrame:
    """One row per partition (grouped on the window's keys, so it reuses the window's
    partitioning). Structs led by (ts, committed, log_end) sort as sample order does, far enough
    for the values taken from them."""
    valid = F.col("valid")
    observed = F.struct(*READING)
    committed, log_end = F.col("current_committed"), F.col("current_log_end")
    crossing = valid & (F.col("prev_log_end") <= committed) & (committed < F.col("log_end")) & (committed < log_end)
    return rows.groupBy(*PARTITION_KEY).agg(
        F.count_if(valid).alias("samples"),
        F.sort_array(F.collect_list(F.when(F.col("in_window"), observed))).alias("entries"),
        F.sort_array(F.collect_list(F.when(F.col("recent"), observed))).alias("recent"),
        F.max(F.when(valid, observed)).alias("latest"),
        F.min(F.when(valid, F.col("ts"))).alias("first_valid_ts"),
        F.min(F.when(F.col("since_last_entry") & (F.col("log_end") > F.col("committed")), F.col("ts")))
         .alias("lagging_since"),
        F.max(F.when(crossing, F.struct(*READING, F.col("prev_ts").alias("t0"), F.col("prev_committed").alias("c0"),
                                        F.col("prev_log_end").alias("e0")))).alias("produced_between"),
        F.max("ts").alias("last_sample_ts"),
        F.max(F.struct(*SAMPLE_ORDER)).getField("owner").alias("owner"),
    )
