"""Names and column expressions shared by the journal analyses (`rebalances`, `audit`).

Event order: (ts, node, seq). `ts` is the coordinator core's time of the event; `seq` is +1 per
event within one journal directory, so it orders the events of one node only. A group handed over
between coordinators (failover, or two nodes both believing they own it) has events in several
journals, which are merged by time first and then by node, so the order is total and the same on
every run.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from groupctl.analytics.schemas import JOURNAL_SCHEMA

REBALANCE_STARTED = "rebalance_started"
REBALANCE_COMPLETED = "rebalance_completed"
MEMBER_JOINED = "member_joined"
MEMBER_LEFT = "member_left"
MEMBER_EXPIRED = "member_expired"
OFFSET_COMMIT = "offset_commit"
OFFSET_DELETE = "offset_delete"
GROUP_DELETED = "group_deleted"
GROUP_EPOCH_BUMPED = "group_epoch_bumped"
TARGET_ASSIGNMENT_COMPUTED = "target_assignment_computed"
MEMBER_RECONCILED = "member_reconciled"
GROUP_STABLE = "group_stable"
GROUP_MIGRATED = "group_migrated"
TXN_OFFSET_COMMIT = "txn_offset_commit"
TXN_OFFSETS_COMPLETED = "txn_offsets_completed"

CLASSIC, CONSUMER = "classic", "consumer"
CLASSIC_EVENTS = (REBALANCE_STARTED, REBALANCE_COMPLETED)
"""Events only classic groups emit."""
CONSUMER_EVENTS = (GROUP_EPOCH_BUMPED, TARGET_ASSIGNMENT_COMPUTED, MEMBER_RECONCILED, GROUP_STABLE)
"""Events only consumer groups (KIP-848) emit; the member, offset and deletion events are shared."""

EVENT_ORDER = ("ts", "node", "seq")


def position() -> Column:
    """An event's place in event order, as one comparable struct (ts, node, seq)."""
    return F.struct(*(F.col(name) for name in EVENT_ORDER))


def event_record() -> Column:
    """The whole event as a struct of the journal's fields, in schema order (for `record_json`)."""
    return F.struct(*(F.col(name) for name in JOURNAL_SCHEMA.fieldNames()))


def record_json(record: Column) -> Column:
    """An `event_record` as one compact JSON line, leaving out the fields its event type does not have."""
    return F.to_json(record, {"ignoreNullFields": "true"})


def with_incarnation(events: DataFrame) -> DataFrame:
    """`events` with `at` (their `position`) and `incarnation`: how many group_deleted events of
    their group come at or before them. A deleted group that comes back starts again at
    generation (or group epoch) 0 with no offsets, so two incarnations are never compared; keep
    the group_deleted events in `events` for this to count them."""
    so_far = Window.partitionBy("group").orderBy("at").rowsBetween(Window.unboundedPreceding, Window.currentRow)
    return (events.withColumn("at", position())
            .withColumn("incarnation", F.sum(F.when(F.col("event") == GROUP_DELETED, 1).otherwise(0)).over(so_far)))


def group_type() -> Column:
    """The type of group an event tells of: "classic" or "consumer", or null for the events both
    types emit (a `group_migrated` tells the type the group became)."""
    event = F.col("event")
    return (F.when(event.isin(*CLASSIC_EVENTS), F.lit(CLASSIC))
            .when(event.isin(*CONSUMER_EVENTS), F.lit(CONSUMER))
            .when(event == GROUP_MIGRATED, F.col("group_type")))
