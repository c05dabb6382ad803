"""Names and column expressions shared by the journal analyses (`rebalances`, `audit`).

Event order: (ts, node, seq). `ts` is the coordinator core's time of the event; `seq` is +1 per
event within one journal directory, so it orders the events of one node only. A group handed over
between coordinators (failover, or two nodes both believing they own it) has events in several
journals, which are merged by time first and then by node, so the order is total and the same on
every run.
"""

from __future__ import annotations

from pyspark.sql import Column
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
