"""Rebalance history from the coordinator's event journal: when each group rebalanced, why, and
for how long, for classic and consumer (KIP-848) groups alike.

Both transforms are pure: journal events (schemas.JOURNAL_SCHEMA columns) in any order in; event
order is (ts, node, seq), see `events`. A rebalance is:
- classic: one `rebalance_completed` (an episode from PreparingRebalance to the new generation,
  when no member consumes: its duration is stop-the-world time);
- consumer: one group epoch (`group_epoch_bumped`), from the bump until the group is STABLE at it
  (`group_stable`: every member reconciled to its target; members keep consuming what they keep),
  or at once when it leaves the group Empty. An epoch a newer one supersedes before it settles
  has no completion; epochs after the group's last settled one are unfinished.
- rebalance_timeline: one row per rebalance (TIMELINE_COLUMNS), in event order: a consumer
  epoch's `moved` is the partitions its target assignment moved (null for classic rows).
- rebalance_summary: one row per group with any rebalance or member event (SUMMARY_COLUMNS; a
  group whose members came and went without a rebalance is listed, with rebalances = 0):
  - rebalances counts completions (classic) and epochs that settled or were superseded
    (consumer); reasons counts them by reason, a missing one as "unknown", adding up to it;
  - p50_ms / p95_ms / max_ms / total_ms over their durations, exact (Spark's `percentile`,
    linear between the closest ranks);
  - unfinished: classic `rebalance_started` events after the group's last completion, and
    consumer epochs after its last settled one;
  - churn = joins + leaves + expirations (member_joined, member_left, member_expired);
  - group_type: the type its latest typed event tells of (null if only member events).
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from groupctl.analytics.events import (
    CLASSIC,
    CLASSIC_EVENTS,
    CONSUMER,
    CONSUMER_EVENTS,
    GROUP_DELETED,
    GROUP_EPOCH_BUMPED,
    GROUP_MIGRATED,
    GROUP_STABLE,
    MEMBER_EXPIRED,
    MEMBER_JOINED,
    MEMBER_LEFT,
    REBALANCE_COMPLETED,
    REBALANCE_STARTED,
    TARGET_ASSIGNMENT_COMPUTED,
    group_type,
    position,
    with_incarnation,
)

UNKNOWN_REASON = "unknown"
MEMBER_CHANGES = {MEMBER_JOINED: "joins", MEMBER_LEFT: "leaves", MEMBER_EXPIRED: "expirations"}
ACTIVITY = (*CLASSIC_EVENTS, *CONSUMER_EVENTS, GROUP_MIGRATED, *MEMBER_CHANGES)
"""The events that make a group part of the summary, and bound its first_ts / last_ts."""

TIMELINE_COLUMNS = ("group", "group_type", "generation", "started_ts", "completed_ts", "duration_ms", "reason",
                    "members", "moved", "state", "node")
SUMMARY_COLUMNS = ("group", "group_type", "rebalances", "p50_ms", "p95_ms", "max_ms", "total_ms", "reasons",
                   "joins", "leaves", "expirations", "churn", "first_ts", "last_ts", "unfinished")


def rebalance_timeline(journal: DataFrame) -> DataFrame:
    """One row per rebalance, in event order (of its completion; of its start for a consumer
    epoch that never settled), with the columns of TIMELINE_COLUMNS. For a consumer epoch,
    `generation` is the group epoch, `completed_ts` when the group became STABLE at it (null if it
    never did), `state` Stable, Empty, or null (superseded or unfinished)."""
    return _rebalances(journal).orderBy("at").select(*TIMELINE_COLUMNS)


def rebalance_summary(journal: DataFrame) -> DataFrame:
    """One row per group (ordered by group) with the columns of SUMMARY_COLUMNS; `reasons` is a
    map<string, long> of rebalances by reason."""
    rebalances = _rebalances(journal)
    counted = F.when(F.col("counted"), F.col("duration_ms"))
    figures = rebalances.groupBy("group").agg(
        F.count_if("counted").alias("rebalances"),
        F.percentile(counted, 0.5).alias("p50_ms"),
        F.percentile(counted, 0.95).alias("p95_ms"),
        F.max(counted).alias("max_ms"),
        F.sum(counted).alias("counted_ms"),
        F.count_if("unfinished").alias("unfinished_epochs"),
    )
    activity = journal.where(F.col("event").isin(*ACTIVITY))
    groups = activity.withColumn("unfinished_start", _started_after_last_completion()).groupBy("group").agg(
        F.max_by(group_type(), F.when(group_type().isNotNull(), position())).alias("group_type"),
        *(F.count_if(_is(event)).alias(name) for event, name in MEMBER_CHANGES.items()),
        F.min("ts").alias("first_ts"),
        F.max("ts").alias("last_ts"),
        F.count_if("unfinished_start").alias("unfinished_starts"),
    )
    no_reasons = F.create_map().cast("map<string,bigint>")
    return (groups.join(figures, "group", "left").join(_reason_counts(rebalances), "group", "left")
            .withColumn("rebalances", F.coalesce("rebalances", F.lit(0).cast("long")))
            .withColumn("total_ms", F.coalesce("counted_ms", F.lit(0).cast("long")))
            .withColumn("reasons", F.coalesce("reasons", no_reasons))
            .withColumn("churn", F.col("joins") + F.col("leaves") + F.col("expirations"))
            .withColumn("unfinished", F.col("unfinished_starts") + F.coalesce("unfinished_epochs", F.lit(0)))
            .orderBy("group")
            .select(*SUMMARY_COLUMNS))


def _is(event: str) -> Column:
    return F.col("event") == event


def _rebalances(journal: DataFrame) -> DataFrame:
    """Every rebalance of both group types: the TIMELINE_COLUMNS plus `at` (its place in event
    order), `counted` (it ended: completed, settled or superseded) and `unfinished`."""
    classic = (journal.where(_is(REBALANCE_COMPLETED))
               .select("group", F.lit(CLASSIC).alias("group_type"), "generation", "started_ts",
                       F.col("ts").alias("completed_ts"), "duration_ms", "reason", "members",
                       F.lit(None).cast("int").alias("moved"), "state", "node", position().alias("at"),
                       F.lit(True).alias("counted"), F.lit(False).alias("unfinished")))
    return reduce(DataFrame.unionByName, [classic, _consumer_epochs(journal)])


def _consumer_epochs(journal: DataFrame) -> DataFrame:
    """One row per group epoch of each consumer group incarnation: from its first bump (two nodes
    in a split brain may both bump to it), to the first `group_stable` at it; its first target's
    `moved`. A `group_stable` whose bump the journal lacks (rotated away, or another node's
    journal not given) makes a row with no start."""
    events = with_incarnation(journal.where(F.col("event").isin(
        GROUP_EPOCH_BUMPED, GROUP_STABLE, TARGET_ASSIGNMENT_COMPUTED, GROUP_DELETED)))
    key = ["group", "incarnation", "generation"]

    def first(event: str, *columns: str) -> DataFrame:
        value = F.struct(*columns, "at") if len(columns) > 1 else F.col(columns[0])
        return events.where(_is(event)).groupBy(*key).agg(F.min_by(value, "at").alias(event))

    epochs = (first(GROUP_EPOCH_BUMPED, "ts", "reason", "members", "node")
              .join(first(GROUP_STABLE, "ts", "members", "node"), key, "full")
              .join(first(TARGET_ASSIGNMENT_COMPUTED, "moved"), key, "left"))
    bump, stable = F.col(GROUP_EPOCH_BUMPED), F.col(GROUP_STABLE)
    emptied = F.coalesce(bump["members"] == 0, F.lit(False))
    settled = F.coalesce(stable["at"], F.when(emptied, bump["at"]))
    completed_ts = F.coalesce(stable["ts"], F.when(emptied, bump["ts"]))
    last_settled = F.max("settled").over(Window.partitionBy("group"))
    unfinished = F.col("settled").isNull() & (last_settled.isNull() | (bump["at"] > last_settled))
    return (epochs.withColumn("settled", settled)
            .select("group", F.lit(CONSUMER).alias("group_type"), "generation", bump["ts"].alias("started_ts"),
                    completed_ts.alias("completed_ts"), (completed_ts - bump["ts"]).alias("duration_ms"),
                    bump["reason"].alias("reason"), F.coalesce(stable["members"], bump["members"]).alias("members"),
                    F.col(TARGET_ASSIGNMENT_COMPUTED).alias("moved"),
                    F.when(stable.isNotNull(), F.lit("Stable")).when(emptied, F.lit("Empty")).alias("state"),
                    F.coalesce(stable["node"], bump["node"]).alias("node"),
                    F.coalesce("settled", bump["at"]).alias("at"),
                    (~unfinished).alias("counted"), unfinished.alias("unfinished")))


def _started_after_last_completion() -> Column:
    """True for a rebalance_started that no rebalance_completed of its group follows."""
    last_completion = F.max(F.when(_is(REBALANCE_COMPLETED), position())).over(Window.partitionBy("group"))
    return _is(REBALANCE_STARTED) & (last_completion.isNull() | (position() > last_completion))


def _reason_counts(rebalances: DataFrame) -> DataFrame:
    """(group, reasons): each group's counted rebalances by reason."""
    return (rebalances.where("counted")
            .groupBy("group", F.coalesce("reason", F.lit(UNKNOWN_REASON)).alias("reason"))
            .count()
            .groupBy("group")
            .agg(F.map_from_entries(F.sort_array(F.collect_list(F.struct("reason", "count")))).alias("reasons")))
