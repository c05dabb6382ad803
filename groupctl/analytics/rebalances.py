"""Rebalance history from the coordinator's event journal: when each group rebalanced, why, and
for how long its consumers stopped.

Both transforms are pure: journal events (schemas.JOURNAL_SCHEMA columns) in any order in; event
order is (ts, node, seq), see `events`.
- rebalance_timeline: one row per `rebalance_completed`, in event order.
- rebalance_summary: one row per group with any rebalance or member event (a group whose members
  came and went without a completed rebalance is listed, with rebalances = 0):
  - a rebalance's `duration_ms` runs from PreparingRebalance to the new generation, when no
    member consumes, so total_ms is the group's stop-the-world time;
  - p50_ms / p95_ms are exact (Spark's `percentile`, linear between the closest ranks);
  - reasons counts completions by reason, a missing one as "unknown", so they add up to
    `rebalances`;
  - unfinished counts `rebalance_started` events after the group's last completion;
  - churn = joins + leaves + expirations (member_joined, member_left, member_expired).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from groupctl.analytics.events import (
    EVENT_ORDER,
    MEMBER_EXPIRED,
    MEMBER_JOINED,
    MEMBER_LEFT,
    REBALANCE_COMPLETED,
    REBALANCE_STARTED,
    position,
)

UNKNOWN_REASON = "unknown"
MEMBER_CHANGES = {MEMBER_JOINED: "joins", MEMBER_LEFT: "leaves", MEMBER_EXPIRED: "expirations"}

SUMMARY_COLUMNS = ("group", "rebalances", "p50_ms", "p95_ms", "max_ms", "total_ms", "reasons",
                   "joins", "leaves", "expirations", "churn", "first_ts", "last_ts", "unfinished")


def rebalance_timeline(journal: DataFrame) -> DataFrame:
    """One row per completed rebalance, in event order: group, generation, started_ts,
    completed_ts, duration_ms, reason, members, state, node."""
    return (journal.where(F.col("event") == REBALANCE_COMPLETED)
            .orderBy(*EVENT_ORDER)
            .select("group", "generation", "started_ts", F.col("ts").alias("completed_ts"),
                    "duration_ms", "reason", "members", "state", "node"))


def rebalance_summary(journal: DataFrame) -> DataFrame:
    """One row per group (ordered by group) with the columns of SUMMARY_COLUMNS; `reasons` is a
    map<string, long> of completions by reason."""
    membership = journal.where(F.col("event").isin(REBALANCE_STARTED, REBALANCE_COMPLETED, *MEMBER_CHANGES))
    figures = membership.withColumn("unfinished_start", _started_after_last_completion()).groupBy("group").agg(
        F.count_if(_is(REBALANCE_COMPLETED)).alias("rebalances"),
        F.percentile(_completed_duration(), 0.5).alias("p50_ms"),
        F.percentile(_completed_duration(), 0.95).alias("p95_ms"),
        F.max(_completed_duration()).alias("max_ms"),
        F.coalesce(F.sum(_completed_duration()), F.lit(0).cast("long")).alias("total_ms"),
        *(F.count_if(_is(event)).alias(name) for event, name in MEMBER_CHANGES.items()),
        F.min("ts").alias("first_ts"),
        F.max("ts").alias("last_ts"),
        F.count_if("unfinished_start").alias("unfinished"),
    )
    no_reasons = F.create_map().cast("map<string,bigint>")
    return (figures.join(_reason_counts(journal), "group", "left")
            .withColumn("reasons", F.coalesce("reasons", no_reasons))
            .withColumn("churn", F.col("joins") + F.col("leaves") + F.col("expirations"))
            .orderBy("group")
            .select(*SUMMARY_COLUMNS))


def _is(event: str) -> Column:
    return F.col("event") == event


def _completed_duration() -> Column:
    return F.when(_is(REBALANCE_COMPLETED), F.col("duration_ms"))


def _started_after_last_completion() -> Column:
    """True for a rebalance_started that no rebalance_completed of its group follows."""
    last_completion = F.max(F.when(_is(REBALANCE_COMPLETED), position())).over(Window.partitionBy("group"))
    return _is(REBALANCE_STARTED) & (last_completion.isNull() | (position() > last_completion))


def _reason_counts(journal: DataFrame) -> DataFrame:
    """(group, reasons): completions of each group counted by reason."""
    return (journal.where(_is(REBALANCE_COMPLETED))
            .groupBy("group", F.coalesce("reason", F.lit(UNKNOWN_REASON)).alias("reason"))
            .count()
            .groupBy("group")
            .agg(F.map_from_entries(F.sort_array(F.collect_list(F.struct("reason", "count")))).alias("reasons")))
