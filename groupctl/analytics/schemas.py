"""The Spark schemas of groupctl's two JSON Lines inputs (docs/lag-and-rebalances.md documents
both, field by field), and of the lag report's rows that `analyze lag --out` writes as Parquet.

- LAG_SAMPLE_SCHEMA: a row of the lag dataset `groupctl lag record` writes, one per partition per
  sampling round.
- JOURNAL_SCHEMA: the union of every coordinator journal event's fields, built from
  `groupctl.layout.journal` (the one declaration of the events); an event leaves the fields of
  other event types null.
- PARTITION_REPORT_SCHEMA / GROUP_REPORT_SCHEMA: `groupctl.lag.report`'s rows, field for field
  (PARTITION_FIELDS / GROUP_FIELDS, in that order).

The inputs are read with these schemas, never inferred: inference costs a full extra pass over the
input and would type an all-null column as string. Fields are nullable; `v` is the schema version,
and a reader accepts the versions listed in SUPPORTED_VERSIONS.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from groupctl.layout import journal

SUPPORTED_VERSIONS = journal.READABLE_VERSIONS


def _fields(*spec: tuple[str, object]) -> StructType:
    return StructType([StructField(name, kind, nullable=True) for name, kind in spec])


LAG_SAMPLE_SCHEMA = _fields(
    ("v", IntegerType()),
    ("ts", LongType()),
    ("cluster", StringType()),
    ("group", StringType()),
    ("topic", StringType()),
    ("partition", IntegerType()),
    ("committed", LongType()),
    ("log_end", LongType()),
    ("state", StringType()),
    ("members", IntegerType()),
    ("owner", StringType()),
)

_SPARK_TYPES = {"int": IntegerType(), "long": LongType(), "string": StringType(),
                "string[]": ArrayType(StringType())}

ASSIGNED_PARTITION = _fields(*((name, _SPARK_TYPES[kind]) for name, kind in journal.ASSIGNMENT_ROW))
TXN_PARTITION = _fields(*((name, _SPARK_TYPES[kind]) for name, kind in journal.PARTITION_ROW))
_LIST_TYPES = {"assignment[]": ArrayType(ASSIGNED_PARTITION), "partition[]": ArrayType(TXN_PARTITION)}

JOURNAL_SCHEMA = _fields(*((name, _LIST_TYPES.get(kind) or _SPARK_TYPES[kind]) for name, kind in journal.FIELDS))

PARTITION_REPORT_SCHEMA = _fields(
    ("cluster", StringType()),
    ("group", StringType()),
    ("topic", StringType()),
    ("partition", IntegerType()),
    ("status", StringType()),
    ("complete", DoubleType()),
    ("committed", LongType()),
    ("log_end", LongType()),
    ("current_lag", LongType()),
    ("ahead_of_log_end", BooleanType()),
    ("lag_seconds", DoubleType()),
    ("lag_seconds_is_lower_bound", BooleanType()),
    ("consume_rate", DoubleType()),
    ("produce_rate", DoubleType()),
    ("lag_trend", DoubleType()),
    ("catch_up_seconds", DoubleType()),
    ("window_start_ts", LongType()),
    ("window_end_ts", LongType()),
    ("last_sample_ts", LongType()),
    ("owner", StringType()),
    ("evaluated_at", LongType()),
)

GROUP_REPORT_SCHEMA = _fields(
    ("cluster", StringType()),
    ("group", StringType()),
    ("status", StringType()),
    ("partitions", IntegerType()),
    ("complete", DoubleType()),
    ("total_lag", LongType()),
    ("max_lag", LongType()),
    ("max_lag_topic", StringType()),
    ("max_lag_partition", IntegerType()),
    ("max_lag_seconds", DoubleType()),
    ("catch_up_seconds", DoubleType()),
    ("lag_trend", DoubleType()),
    ("worst", ArrayType(StringType())),
    ("evaluated_at", LongType()),
)
