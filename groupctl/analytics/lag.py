"""Consumer lag evaluation over the recorded lag dataset: Burrow's rules, plus what operators miss.

Input: rows of `schemas.LAG_SAMPLE_SCHEMA`, one per (cluster, group, topic, partition) per
sampling round. A partition is keyed by all four fields, so the same group name on two clusters
is two groups. Evaluation time `now` is `at_ms`, or the largest `ts` of the input.

Per partition, over its rows with `ts <= now` in sample order (ts, then committed, log_end,
members, owner ascending, nulls first: a total order, so ties between rows of equal ts are
resolved the same way everywhere):

- A row is *valid* when both `committed` and `log_end` are known; invalid rows (no commit yet,
  log end unknown) take part in nothing but `last_sample_ts` and `owner`. lag = log_end - committed.
- A valid row is a *commit observation* (a Burrow window entry) unless `members == 0` and its
  committed offset equals the previous valid row's: nobody was there to commit and the offset did
  not move. `members` null counts, so a history without membership is evaluated exactly as Burrow
  evaluates its commits. Because such rows repeat the offset before them, the previous valid row's
  offset is also the previous entry's offset.
- Window = the last `window` observations. Current values (committed, log_end, current_lag) come
  from the latest valid row, not from the latest commit, so a stopped consumer's lag keeps growing.
- Status, first match wins: 1. fewer than `window` valid rows -> OK (the window is not full yet);
  2. current lag <= `allowed_lag` -> OK; 3. REWIND if an entry's offset is below the entry before it
  (both in the window); 4. STOP if now - last entry ts > last entry ts - first entry ts and no entry
  is caught up; 5. if no entry is caught up: STALL if all entry offsets are equal, else WARN if lag
  never decreased from one entry to the next; 6. OK. `complete` = entries / window: once a
  partition has `window` samples, rows of an empty group that did not move leave its window short
  of commits, and the rules judge the commits there are (as Burrow judges a window with empty
  slots), so a consumer gone before the recording began, or soon after, is not OK forever.
  "Caught up" is lag <= 0: a log end sampled a moment before the commit it trails reads as
  negative lag and means the same as 0.

Deliberate differences from Burrow:
- No false STOP for an idle, fully consumed partition: rule 2 runs before STOP, and rows of an
  empty group whose offset did not move are not commits, so a consumer that left stays OK while
  its lag is within `allowed_lag` and turns STOP once messages arrive that nobody consumes.
- A zero-lag entry does not clear REWIND (Burrow's code lets it): an operator wants an explicit
  rewind flagged until it leaves the window.
- No frozen lag: current lag is the latest sample's, whether or not a commit came with it.
- Lag in time: `lag_seconds` = now - estimated produce time of the oldest unconsumed message (the
  one at offset `committed`), interpolated linearly between the last valid sample with
  log_end <= committed (t0, e0) and the valid sample after it (t1, e1):
  t0 + (t1 - t0) * (committed + 1 - e0) / (e1 - e0). 0 when current lag <= 0. When no sample has
  log_end <= committed, the message predates the recording: now - first valid sample ts, flagged
  by `lag_seconds_is_lower_bound`.
- Trend: `consume_rate` / `produce_rate` are the committed / log_end deltas between the first and
  last window entries per second of their span (null for a zero span); `lag_trend` = produce_rate
  - consume_rate (positive = falling behind); `catch_up_seconds` = current_lag / (consume_rate -
  produce_rate) when that divisor and the lag are positive, 0 when current lag <= 0, else null;
  null for STOP too, whose window rates are from before the consumer stopped.

A partition whose rows are all invalid is still reported (status OK, complete 0.0, lag fields
null), so a partition assigned but never committed is visible with its owner.

Plan shape (what keeps 10M rows at about half a minute on two cores, bench/lag_analysis.py):
one shuffle and one sort per partition, invalid rows first and valid rows in sample order, so the
previous valid row is a plain `lag()`; two window passes over that same order (previous-row
values, then window membership), one aggregation on the window's keys (no second shuffle), then
per-partition arithmetic. `now` without `at_ms` is a max over the aggregated partitions, so the
input is read once. Built-in functions only: no Python UDFs, nothing collected.
"""

from __future__ import annotations

from typing import Optional

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

STATUS_ORDER = ("OK", "WARN", "STOP", "STALL", "REWIND")  # partition statuses, least severe first
GROUP_STATUSES = ("OK", "WARN", "ERR", "NOTFOUND")
PARTITION_KEY = ("cluster", "group", "topic", "partition")
SAMPLE_ORDER = ("ts", "committed", "log_end", "members", "owner")

PARTITION_COLUMNS = (
    "cluster", "group", "topic", "partition", "status", "complete", "committed", "log_end",
    "current_lag", "lag_seconds", "lag_seconds_is_lower_bound", "consume_rate", "produce_rate",
    "lag_trend", "catch_up_seconds", "window_start_ts", "window_end_ts", "last_sample_ts", "owner",
    "evaluated_at",
)
GROUP_COLUMNS = (
    "cluster", "group", "status", "partitions", "complete", "total_lag", "max_lag", "max_lag_topic",
    "max_lag_partition", "max_lag_seconds", "catch_up_seconds", "lag_trend", "worst", "evaluated_at",
)

ROLLS_UP_TO_ERR = ("STOP", "STALL", "REWIND")


def partition_status(samples: DataFrame, *, window: int = 10, allowed_lag: int = 0,
                     at_ms: Optional[int] = None) -> DataFrame:
    """One row per partition with its status and extras (columns: PARTITION_COLUMNS)."""
    if window < 1:
        raise ValueError(f"window must be at least 1, got {window}")
    if allowed_lag < 0:
        raise ValueError(f"allowed lag must not be negative, got {allowed_lag}")
    if at_ms is not None:
        samples = samples.where(F.col("ts") <= F.lit(at_ms))
    per_row = _window_entries(_previous_values(samples), window)
    summary = _summarise(per_row)
    now = F.lit(at_ms).cast("long") if at_ms is not None else F.max("last_sample_ts").over(Window.partitionBy())
    return _evaluate(summary.withColumn("evaluated_at", now), window, allowed_lag)


def group_status(partitions: DataFrame) -> DataFrame:
    """partition_status output -> one row per (cluster, group) (columns: GROUP_COLUMNS).

    status: ERR if a partition is STOP, STALL or REWIND, else WARN if one is WARN, else OK.
    complete: the fraction of partitions with a full window. total_lag / max_lag over partitions
    with a known lag; max_lag_topic / max_lag_partition name the partition with the largest (the
    first by topic, partition on ties). max_lag_seconds: the largest lag_seconds. catch_up_seconds:
    the slowest of the lagging partitions (current_lag > 0), null if one of them is not catching
    up, 0 if none lags. lag_trend: the sum of the partitions'. worst: "topic/partition STATUS" of
    every partition not OK, most severe first (STATUS_ORDER), then by topic and partition.
    """
    status = F.col("status")
    severity = _severity(status)
    lag, has_lag = F.col("current_lag"), F.col("current_lag") > 0
    label = F.concat_ws(" ", F.concat_ws("/", "topic", F.col("partition").cast("string")), "status")
    summary = partitions.groupBy("cluster", "group").agg(
        F.bool_or(status.isin(*ROLLS_UP_TO_ERR)).alias("has_err"),
        F.bool_or(status == "WARN").alias("has_warn"),
        F.count(F.lit(1)).alias("partitions"),
        F.avg((F.col("complete") >= 1).cast("double")).alias("complete"),
        F.sum(lag).alias("total_lag"),
        # min over (-lag, topic, partition): the largest lag, the first topic/partition on ties
        F.min(F.when(lag.isNotNull(), F.struct((-lag).alias("neg_lag"), "topic", "partition"))).alias("max_at"),
        F.max("lag_seconds").alias("max_lag_seconds"),
        F.max(F.when(has_lag, F.col("catch_up_seconds"))).alias("slowest_catch_up"),
        F.bool_or(has_lag & F.col("catch_up_seconds").isNull()).alias("some_not_catching_up"),
        F.sum("lag_trend").alias("lag_trend"),
        F.sort_array(F.collect_list(F.when(
            status != "OK", F.struct((-severity).alias("neg_severity"), "topic", "partition",
                                              label.alias("label"))))).alias("worst_sorted"),
        F.max("evaluated_at").alias("evaluated_at"),
    )
    return summary.select(
        "cluster", "group",
        F.when(F.col("has_err"), "ERR").when(F.col("has_warn"), "WARN").otherwise("OK").alias("status"),
        "partitions", "complete", "total_lag",
        (-F.col("max_at.neg_lag")).alias("max_lag"),
        F.col("max_at.topic").alias("max_lag_topic"),
        F.col("max_at.partition").alias("max_lag_partition"),
        "max_lag_seconds",
        F.when(F.coalesce("some_not_catching_up", F.lit(False)), F.lit(None).cast("double"))
         .otherwise(F.coalesce("slowest_catch_up", F.lit(0.0))).alias("catch_up_seconds"),
        "lag_trend",
        F.transform("worst_sorted", lambda entry: entry["label"]).alias("worst"),
        "evaluated_at",
    )


def lag_history(samples: DataFrame) -> DataFrame:
    """(cluster, group, ts, total_lag): per group and sample round, the summed lag of its
    partitions with a known lag (rounds without one are absent). Unordered: sort by ts to plot."""
    known = samples.where(F.col("committed").isNotNull() & F.col("log_end").isNotNull())
    return known.groupBy("cluster", "group", "ts").agg(
        F.sum(F.col("log_end") - F.col("committed")).alias("total_lag"))


def _severity(status: Column) -> Column:
    """Index of a partition status in STATUS_ORDER (0 = OK)."""
    expression = F.lit(0)
    for index, name in enumerate(STATUS_ORDER[1:], start=1):
        expression = F.when(status == name, index).otherwise(expression)
    return expression


def _sample_window() -> Window:
    """Per partition, invalid rows first, then valid rows in sample order: each valid row's
    predecessor in this order is the previous valid row (or an invalid one, for the first)."""
    return Window.partitionBy(*PARTITION_KEY).orderBy(
        "valid", *(F.col(name).asc_nulls_first() for name in SAMPLE_ORDER))


def _previous_values(samples: DataFrame) -> DataFrame:
    """First window pass: the previous valid row's offsets and time, and the partition's current
    committed offset (the last row in window order is the latest valid row, if there is one)."""
    ordered = _sample_window()
    whole = ordered.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    valid = F.col("committed").isNotNull() & F.col("log_end").isNotNull()
    rows = samples.select(*PARTITION_KEY, *SAMPLE_ORDER, valid.alias("valid"))
    after_valid = F.lag("valid").over(ordered)

    def previous(name: str) -> Column:
        return F.when(after_valid, F.lag(name).over(ordered))

    return rows.select(
        "*",
        (F.col("log_end") - F.col("committed")).alias("lag"),
        previous("committed").alias("prev_committed"),
        previous("ts").alias("prev_ts"),
        previous("log_end").alias("prev_log_end"),
        F.last(F.when(F.col("valid"), F.col("committed"))).over(whole).alias("current_committed"),
    )


def _window_entries(rows: DataFrame, window: int) -> DataFrame:
    """Second window pass (same order, no new sort): which rows are commit observations, which of
    those are in the window, and the lag of the entry before each."""
    ordered = _sample_window()
    idle_repeat = (F.col("members") == 0) & (F.col("committed") == F.col("prev_committed"))
    observed = rows.withColumn("is_entry", F.col("valid") & ~F.coalesce(idle_repeat, F.lit(False)))
    entry_count = F.col("is_entry").cast("int")
    return observed.select(
        "*",
        F.sum(entry_count).over(ordered.rowsBetween(Window.unboundedPreceding, 0)).alias("entry_index"),
        F.sum(entry_count).over(ordered.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing))
         .alias("entries_total"),
        F.last(F.when(F.col("is_entry"), F.col("lag")), ignorenulls=True)
         .over(ordered.rowsBetween(Window.unboundedPreceding, -1)).alias("prev_entry_lag"),
    ).withColumns({
        "in_window": F.col("is_entry") & (F.col("entry_index") > F.col("entries_total") - window),
        # an entry whose predecessor entry is in the window too: the pairs rules 3 and 5 compare
        "pair_in_window": F.col("is_entry") & (F.col("entry_index") > F.col("entries_total") - window + 1),
    })


def _summarise(rows: DataFrame) -> DataFrame:
    """One row per partition: the facts the rules and extras need (grouped on the window's keys,
    so it reuses the window's partitioning). Structs led by (ts, committed, log_end) order rows as
    the sample order does, far enough for the values taken from them."""
    valid, in_window, pair = F.col("valid"), F.col("in_window"), F.col("pair_in_window")
    committed, current = F.col("committed"), F.col("current_committed")
    entry = F.struct("ts", "committed", "log_end")
    crossing = valid & (F.col("prev_log_end") <= current) & (F.col("log_end") > current)

    def any_of(condition: Column) -> Column:
        return F.coalesce(F.bool_or(condition), F.lit(False))

    return rows.groupBy(*PARTITION_KEY).agg(
        F.max("ts").alias("last_sample_ts"),
        F.max(F.struct(*SAMPLE_ORDER)).getField("owner").alias("owner"),
        F.max(F.when(valid, entry)).alias("latest"),
        F.min(F.when(valid, F.col("ts"))).alias("first_valid_ts"),
        F.count_if(valid).alias("samples"),
        F.count_if(in_window).alias("entries"),
        F.min(F.when(in_window, entry)).alias("first_entry"),
        F.max(F.when(in_window, entry)).alias("last_entry"),
        any_of(pair & (committed < F.col("prev_committed"))).alias("rewound"),
        any_of(pair & (F.col("lag") < F.col("prev_entry_lag"))).alias("lag_decreased"),
        any_of(in_window & (F.col("lag") <= 0)).alias("caught_up"),
        (F.min(F.when(in_window, committed)) != F.max(F.when(in_window, committed))).alias("offsets_moved"),
        any_of(valid & (F.col("log_end") <= current)).alias("produced_in_range"),
        # the sample pair straddling the committed offset (at most one when log ends only grow;
        # otherwise the latest, which starts at the last sample with log_end <= committed)
        F.max(F.when(crossing, F.struct("ts", "committed", "log_end", F.col("prev_ts").alias("t0"),
                                        F.col("prev_log_end").alias("e0")))).alias("straddle"),
    )


def _per_second(delta: Column, span_ms: Column) -> Column:
    return F.try_divide(delta.cast("double") * 1000.0, span_ms)


def _evaluate(summary: DataFrame, window: int, allowed_lag: int) -> DataFrame:
    """Apply the status rules and compute the extras, one partition per row."""
    now = F.col("evaluated_at")
    first, last = F.col("first_entry"), F.col("last_entry")
    current_lag = F.col("latest.log_end") - F.col("latest.committed")
    span_ms = last["ts"] - first["ts"]
    consume_rate = _per_second(last["committed"] - first["committed"], span_ms)
    produce_rate = _per_second(last["log_end"] - first["log_end"], span_ms)
    gaining = consume_rate - produce_rate
    not_caught_up = ~F.col("caught_up")

    status = (
        F.when(F.col("samples") < window, "OK")
        .when(current_lag <= allowed_lag, "OK")
        .when(F.col("rewound"), "REWIND")
        .when(((now - last["ts"]) > span_ms) & not_caught_up, "STOP")
        .when(not_caught_up & ~F.col("offsets_moved"), "STALL")
        .when(not_caught_up & ~F.col("lag_decreased"), "WARN")
        .otherwise("OK")
    )
    t0, e0 = F.col("straddle.t0"), F.col("straddle.e0")
    t1, e1 = F.col("straddle.ts"), F.col("straddle.log_end")
    produced_at = t0 + (t1 - t0) * ((F.col("latest.committed") + 1 - e0) / (e1 - e0))
    lag_seconds = (
        F.when(current_lag <= 0, F.lit(0.0))
        .when(~F.col("produced_in_range"), (now - F.col("first_valid_ts")) / 1000.0)
        .otherwise((now - produced_at) / 1000.0)
    )
    lower_bound = F.when(current_lag <= 0, F.lit(False)).otherwise(~F.col("produced_in_range"))
    catch_up = (
        F.when(current_lag <= 0, F.lit(0.0))
        .when(status == "STOP", F.lit(None))  # its window's rates are from before it stopped
        .when(gaining > 0, current_lag / gaining)
    )
    return summary.select(
        *PARTITION_KEY,
        status.alias("status"),
        (F.col("entries") / window).cast("double").alias("complete"),
        F.col("latest.committed").alias("committed"),
        F.col("latest.log_end").alias("log_end"),
        current_lag.alias("current_lag"),
        lag_seconds.cast("double").alias("lag_seconds"),
        F.when(current_lag.isNotNull(), lower_bound).alias("lag_seconds_is_lower_bound"),
        consume_rate.alias("consume_rate"),
        produce_rate.alias("produce_rate"),
        (produce_rate - consume_rate).alias("lag_trend"),
        catch_up.cast("double").alias("catch_up_seconds"),
        first["ts"].alias("window_start_ts"),
        last["ts"].alias("window_end_ts"),
        "last_sample_ts", "owner", "evaluated_at",
    )
