"""The Spark schemas of groupctl's two JSON Lines inputs (README documents both, field by field).

- LAG_SAMPLE_SCHEMA: a row of the lag dataset `groupctl lag record` writes, one per partition per
  sampling round.
- JOURNAL_SCHEMA: the union of every coordinator journal event's fields; an event leaves the
  fields of other event types null.

Both are read with these schemas, never inferred: inference costs a full extra pass over the input
and would type an all-null column as string. Fields are nullable; `v` is the schema version, and a
reader accepts the versions listed in SUPPORTED_VERSIONS.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

SUPPORTED_VERSIONS = (1,)


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

ASSIGNED_PARTITION = _fields(
    ("member_id", StringType()),
    ("client_id", StringType()),
    ("topic", StringType()),
    ("partition", IntegerType()),
)

JOURNAL_SCHEMA = _fields(
    ("v", IntegerType()),
    ("ts", LongType()),
    ("node", IntegerType()),
    ("seq", LongType()),
    ("event", StringType()),
    ("group", StringType()),
    ("generation", IntegerType()),
    ("reason", StringType()),
    ("member_id", StringType()),
    ("client_id", StringType()),
    ("client_host", StringType()),
    ("instance_id", StringType()),
    ("replaced_member_id", StringType()),
    ("members", IntegerType()),
    ("started_ts", LongType()),
    ("duration_ms", LongType()),
    ("state", StringType()),
    ("protocol", StringType()),
    ("leader", StringType()),
    ("member_ids", ArrayType(StringType())),
    ("assignment", ArrayType(ASSIGNED_PARTITION)),
    ("topic", StringType()),
    ("partition", IntegerType()),
    ("offset", LongType()),
)
