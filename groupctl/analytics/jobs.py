"""The analysis jobs: read the inputs, run the transforms, collect the results, write them.

This is the only module of `groupctl.analytics` that reads or writes (`lag`, `rebalances` and
`audit` are pure DataFrame transforms). Invariants:

- Inputs are read with their explicit schemas (`schemas`), in PERMISSIVE mode: a line that is not
  a JSON object of the schema's types is counted as malformed and skipped, a row whose schema
  version `v` is not in SUPPORTED_VERSIONS is counted and skipped. Neither stops the analysis;
  `Skipped` carries the counts so the CLI can say so.
- A journal is parsed once per job: the parsed rows are persisted (memory, spilling to disk) for
  the audit's and the rebalance analysis' several passes, and released when the job ends,
  whatever happens. Lag samples are not persisted: the lag evaluation reads them in one pass, and
  caching 10M rows costs more than parsing them a second time after the counting pass
  (bench/README.md, lag_analysis).
- Results are small (a row per partition, group, rebalance or violation): they are collected to
  plain, JSON-ready dicts, ordered worst first where there is a status. With `out_dir`, the same
  DataFrames are also written as Parquet, one directory per result, replaced on every run.
- A missing, unreadable or empty input, or an output that cannot be written, is an
  `AnalysisError` with a one-line message, never a Spark stack trace.
- A job never creates or stops the SparkSession: the caller owns it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import reduce
from typing import Callable, Optional, Sequence

from py4j.protocol import Py4JJavaError
from pyspark import StorageLevel
from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from groupctl.analytics.schemas import (
    JOURNAL_SCHEMA,
    LAG_SAMPLE_SCHEMA,
    SUPPORTED_VERSIONS,
)

CORRUPT_RECORD = "_corrupt_record"
"""The column Spark's PERMISSIVE JSON reader fills with a line it could not parse."""

GROUP_SEVERITY = {"ERR": 3, "WARN": 2, "NOTFOUND": 1, "OK": 0}
"""Group statuses, worst first when sorted by descending severity (NOTFOUND: asked for, not in the data)."""

Step = Callable[[str], None]
"""Told the name of each step a job enters ("reading", "evaluating", "writing"), for progress displays."""


def _no_progress(_step: str) -> None:
    return None


class AnalysisError(Exception):
    """An input that is missing, unreadable or empty, or an output that cannot be written."""


@dataclass(frozen=True)
class Skipped:
    """Input rows left out of an analysis, and why."""

    malformed: int = 0
    """Lines that are not a JSON object with the schema's field types."""
    unsupported_version: int = 0
    """Rows whose schema version `v` is missing or not in SUPPORTED_VERSIONS."""

    def __bool__(self) -> bool:
        return bool(self.malformed or self.unsupported_version)

    def to_json(self) -> dict:
        return {"malformed": self.malformed, "unsupported_version": self.unsupported_version}


@dataclass
class LoadedInput:
    """Parsed input rows (persisted until `release()` when read with `cache`).

    `rows` holds the usable rows only (schema columns, a supported version, the filters applied);
    `count` and `max_ts` describe them, `skipped` counts what was dropped as unreadable.
    """

    rows: DataFrame
    count: int
    max_ts: Optional[int]
    skipped: Skipped
    _parsed: DataFrame = field(repr=False)

    def release(self) -> None:
        self._parsed.unpersist()


@dataclass(frozen=True)
class LagResult:
    evaluated_at: Optional[int]
    window: int
    allowed_lag: int
    groups: list[dict]
    """Group rows (README, "analyze lag"), worst first, with a NOTFOUND row per wanted group not
    in the data."""
    partitions: list[dict]
    """Partition rows (README, "analyze lag"), worst first."""
    history: list[dict]
    """(cluster, group, ts, total_lag) rows of the `history_groups` worst groups, by time."""
    skipped: Skipped


@dataclass(frozen=True)
class RebalancesResult:
    groups: list[dict]
    """Per-group summary rows (README, "Lag and rebalance history"), most stop-the-world time first."""
    timeline: list[dict]
    """One row per completed rebalance, in completion order."""
    not_found: list[str]
    """Wanted groups with no event in the journal."""
    skipped: Skipped


@dataclass(frozen=True)
class AuditResult:
    summary: list[dict]
    """Per invariant (in audit.INVARIANTS order): checked, violations, unverified."""
    violations: list[dict]
    """One row per violation (README, "analyze audit"), by invariant (in audit.INVARIANTS order),
    group, generation, topic, partition."""
    skipped: Skipped

    @property
    def violation_count(self) -> int:
        return len(self.violations)


# -- reading -------------------------------------------------------------------------------------


def read_lag_samples(spark: SparkSession, paths: Sequence[str], *, since_ms: Optional[int] = None,
                     until_ms: Optional[int] = None, groups: Sequence[str] = ()) -> LoadedInput:
    """The lag dataset(s) at `paths` (any Spark path: a local dir, hdfs://, s3a://), the samples
    with since_ms <= ts <= until_ms of `groups` (all when empty). The time bounds also prune the
    `date=`/`hour=` directories, so a short range of a long recording reads only its hours."""
    keep = _between("ts", since_ms, until_ms)
    if groups:
        keep = keep & F.col("group").isin(*groups)
    return _load(spark, paths, LAG_SAMPLE_SCHEMA, "lag samples", keep=keep, scope=_time_scope(since_ms, until_ms),
                 required=(*_present("ts", "group", "topic", "partition"),
                           F.col("committed").isNotNull() | F.col("log_end").isNotNull()),
                 prune=lambda frame: _prune_hours(frame, since_ms, until_ms))


def read_journal(spark: SparkSession, paths: Sequence[str], *, groups: Sequence[str] = ()) -> LoadedInput:
    """The coordinator journal(s) at `paths` (one or more `--journal-dir`s, e.g. one per node): the
    events of `groups` (all when empty)."""
    keep = F.col("group").isin(*groups) if groups else F.lit(True)
    return _load(spark, paths, JOURNAL_SCHEMA, "journal events", keep=keep, cache=True,
                 required=_present("ts", "event", "group"))


def _load(spark: SparkSession, paths: Sequence[str], schema: StructType, what: str, *, keep: Column, scope: str = "",
          prune: Callable[[DataFrame], DataFrame] = lambda frame: frame, cache: bool = False,
          required: Sequence[Column] = ()) -> LoadedInput:
    """Read and count `paths` (and with `cache`, persist them); `scope` (" at or after ...")
    describes `prune` in errors. A line that is not JSON, or fails a `required` condition (e.g. a
    journal event given to the lag analysis, or the other way round), is malformed."""
    paths = list(paths)
    where = ", ".join(paths)
    with_corrupt = StructType([*schema.fields, StructField(CORRUPT_RECORD, StringType())])
    try:
        raw = (spark.read.schema(with_corrupt)
               .option("mode", "PERMISSIVE")
               .option("columnNameOfCorruptRecord", CORRUPT_RECORD)
               .json(paths))
    except (PySparkException, Py4JJavaError) as exc:
        raise AnalysisError(f"cannot read {what} from {where}: {one_line(exc)}") from None
    parsed = prune(raw).select(*schema.fieldNames(), CORRUPT_RECORD)
    if cache:
        parsed = parsed.persist(StorageLevel.MEMORY_AND_DISK)
    readable = reduce(Column.__and__, required, F.col(CORRUPT_RECORD).isNull())
    supported = readable & F.coalesce(F.col("v").isin(*SUPPORTED_VERSIONS), F.lit(False))
    usable = supported & F.coalesce(keep, F.lit(False))
    try:
        stats = parsed.agg(
            F.count(F.lit(1)).alias("lines"),
            F.count_if(~readable).alias("malformed"),
            F.count_if(readable & ~supported).alias("unsupported"),
            F.count_if(usable).alias("usable"),
            F.max(F.when(usable, F.col("ts"))).alias("max_ts"),
        ).first()
    except (PySparkException, Py4JJavaError) as exc:
        parsed.unpersist()
        raise AnalysisError(f"cannot read {what} from {where}: {one_line(exc)}") from None
    skipped = Skipped(stats["malformed"], stats["unsupported"])
    if stats["lines"] == 0 or stats["lines"] == skipped.malformed + skipped.unsupported_version:
        parsed.unpersist()
        found = (f": {skipped.malformed} malformed line(s), {skipped.unsupported_version} row(s) of a schema "
                 f"version other than {', '.join(map(str, SUPPORTED_VERSIONS))}" if stats["lines"] else "")
        raise AnalysisError(f"no {what} in {where}{scope}{found}")
    return LoadedInput(rows=parsed.where(usable).select(*schema.fieldNames()),
                       count=stats["usable"], max_ts=stats["max_ts"], skipped=skipped, _parsed=parsed)


def _present(*names: str) -> tuple[Column, ...]:
    return tuple(F.col(name).isNotNull() for name in names)


def _time_scope(since_ms: Optional[int], until_ms: Optional[int]) -> str:
    """The time bounds for an error message: ' at or after <ISO> and at or before <ISO>' ('' without any)."""
    bounds = [f"{side} {_iso(ms)}" for side, ms in (("at or after", since_ms), ("at or before", until_ms))
              if ms is not None]
    return " " + " and ".join(bounds) if bounds else ""


def _between(column: str, since_ms: Optional[int], until_ms: Optional[int]) -> Column:
    condition = F.lit(True)
    if since_ms is not None:
        condition = condition & (F.col(column) >= F.lit(since_ms))
    if until_ms is not None:
        condition = condition & (F.col(column) <= F.lit(until_ms))
    return condition


ROUND_CROSSES_HOUR_MS = 3_600_000


def _prune_hours(frame: DataFrame, since_ms: Optional[int], until_ms: Optional[int]) -> DataFrame:
    """Keep the `date=`/`hour=` directories that can hold samples in [since, until] (a filter on
    partition columns only, so Spark skips the other directories without listing their files).
    A round's file sits in the hour of its first sample, so a round that crosses an hour puts rows
    of the next hour in the previous directory: since-pruning keeps one hour more."""
    if "date" not in frame.columns or (since_ms is None and until_ms is None):
        return frame
    if "hour" in frame.columns:
        key, layout = F.format_string("%s %02d", F.col("date").cast("string"), F.col("hour")), "%Y-%m-%d %H"
    else:
        key, layout = F.col("date").cast("string"), "%Y-%m-%d"
    if since_ms is not None:
        frame = frame.where(key >= _utc(since_ms - ROUND_CROSSES_HOUR_MS).strftime(layout))
    if until_ms is not None:
        frame = frame.where(key <= _utc(until_ms).strftime(layout))
    return frame


# -- jobs ----------------------------------------------------------------------------------------


def lag_job(spark: SparkSession, paths: Sequence[str], *, groups: Sequence[str] = (), window: int = 10,
            allowed_lag: int = 0, at_ms: Optional[int] = None, since_ms: Optional[int] = None,
            until_ms: Optional[int] = None, out_dir: Optional[str] = None, history_groups: int = 0,
            step: Step = _no_progress) -> LagResult:
    """Evaluate every partition's lag status at `at_ms` (default: the newest sample read) with
    Burrow's rules (README, "Lag and rebalance history"), and roll them up per group.

    Samples after `at_ms` are not read. `history_groups` > 0 also collects the lag history of that
    many worst groups (for a plot). With `out_dir`: partitions/ and groups/ as Parquet."""
    from groupctl.analytics import lag

    wanted = list(dict.fromkeys(groups))
    step("reading")
    bounds = [bound for bound in (until_ms, at_ms) if bound is not None]
    until = min(bounds) if bounds else None
    loaded = read_lag_samples(spark, paths, since_ms=since_ms, until_ms=until, groups=wanted)
    partitions = None
    try:
        if loaded.count == 0 and not wanted:
            raise AnalysisError(f"no lag samples in {', '.join(paths)}{_time_scope(since_ms, until)}")
        evaluated_at = at_ms if at_ms is not None else loaded.max_ts
        step("evaluating")
        partitions = loaded.rows.transform(lag.partition_status, window=window, allowed_lag=allowed_lag,
                                           at_ms=evaluated_at).persist(StorageLevel.MEMORY_AND_DISK)
        group_frame = _with_not_found(spark, partitions.transform(lag.group_status), wanted, evaluated_at)
        partition_rows = sorted(_collect(partitions), key=_partition_rank(lag.STATUS_ORDER))
        group_rows = sorted(_collect(group_frame), key=_group_rank)
        history = _lag_history(loaded.rows, group_rows, history_groups, lag.lag_history)
        if out_dir is not None:
            step("writing")
            _write(partitions, out_dir, "partitions")
            _write(group_frame, out_dir, "groups")
        return LagResult(evaluated_at=evaluated_at, window=window, allowed_lag=allowed_lag, groups=group_rows,
                         partitions=partition_rows, history=history, skipped=loaded.skipped)
    finally:
        if partitions is not None:
            partitions.unpersist()
        loaded.release()


def rebalances_job(spark: SparkSession, paths: Sequence[str], *, groups: Sequence[str] = (),
                   out_dir: Optional[str] = None, step: Step = _no_progress) -> RebalancesResult:
    """Rebalance counts, durations and causes per group, and the timeline of every completed
    rebalance, from the journal. With `out_dir`: summary/ and timeline/ as Parquet."""
    from groupctl.analytics.rebalances import rebalance_summary, rebalance_timeline

    wanted = list(dict.fromkeys(groups))
    step("reading")
    loaded = read_journal(spark, paths, groups=wanted)
    try:
        step("evaluating")
        summary = loaded.rows.transform(rebalance_summary)
        timeline = loaded.rows.transform(rebalance_timeline)
        seen = {row["group"] for row in loaded.rows.select("group").distinct().collect()} if wanted else set()
        summary_rows = sorted(_collect(summary), key=lambda row: (-(row["total_ms"] or 0), row["group"]))
        timeline_rows = sorted(_collect(timeline), key=lambda row: (row["completed_ts"], row["group"] or ""))
        if out_dir is not None:
            step("writing")
            _write(summary, out_dir, "summary")
            _write(timeline, out_dir, "timeline")
        return RebalancesResult(groups=summary_rows, timeline=timeline_rows,
                                not_found=[group for group in wanted if group not in seen], skipped=loaded.skipped)
    finally:
        loaded.release()


def audit_job(spark: SparkSession, paths: Sequence[str], *, out_dir: Optional[str] = None,
              step: Step = _no_progress) -> AuditResult:
    """Check the coordinator's invariants (single owner per partition and generation, commits by
    the owner, monotonic offsets) over the whole journal. With `out_dir`: summary/ and
    violations/ as Parquet."""
    from groupctl.analytics.audit import INVARIANTS, audit_summary, audit_violations

    step("reading")
    loaded = read_journal(spark, paths)
    try:
        step("evaluating")
        violations = loaded.rows.transform(audit_violations)
        summary = loaded.rows.transform(audit_summary)
        violation_rows = sorted(_collect(violations), key=lambda row: (
            INVARIANTS.index(row["invariant"]), row["group"] or "", _nulls_first(row["generation"]), row["topic"] or "",
            _nulls_first(row["partition"])))
        summary_rows = sorted(_collect(summary), key=lambda row: INVARIANTS.index(row["invariant"]))
        if out_dir is not None:
            step("writing")
            _write(summary, out_dir, "summary")
            _write(violations, out_dir, "violations")
        return AuditResult(summary=summary_rows, violations=violation_rows, skipped=loaded.skipped)
    finally:
        loaded.release()


# -- helpers -------------------------------------------------------------------------------------


def _with_not_found(spark: SparkSession, group_frame: DataFrame, wanted: list[str],
                    evaluated_at: Optional[int]) -> DataFrame:
    """`group_frame` plus a NOTFOUND row (no partitions, no lag) for each wanted group it lacks."""
    if not wanted:
        return group_frame
    missing = (spark.createDataFrame([(group,) for group in wanted], "group string")
               .join(group_frame.select("group"), "group", "left_anti"))
    fill = {"group": F.col("group"), "status": F.lit("NOTFOUND"), "partitions": F.lit(0),
            "evaluated_at": F.lit(evaluated_at), "worst": F.array()}
    return group_frame.unionByName(missing.select(*(
        fill.get(column.name, F.lit(None)).cast(column.dataType).alias(column.name) for column in group_frame.schema)))


def _lag_history(samples: DataFrame, group_rows: list[dict], limit: int,
                 lag_history: Callable[[DataFrame], DataFrame]) -> list[dict]:
    """The lag history of the first `limit` groups of `group_rows` (worst first) that are in the data."""
    chosen = [(row["cluster"], row["group"]) for row in group_rows if row["status"] != "NOTFOUND"][:limit]
    if not chosen:
        return []
    history = samples.where(F.col("group").isin(*{group for _, group in chosen})).transform(lag_history)
    return sorted((row for row in _collect(history) if (row["cluster"], row["group"]) in chosen),
                  key=lambda row: (row["ts"], row["cluster"] or "", row["group"]))


def _group_rank(row: dict) -> tuple:
    """Worst first: ERR, WARN, NOTFOUND, OK; then the most lag; then by name."""
    return (-GROUP_SEVERITY.get(row["status"], 0), -(row["total_lag"] or 0), row["cluster"] or "", row["group"])


def _partition_rank(status_order: Sequence[str]) -> Callable[[dict], tuple]:
    """Worst first (REWIND, STALL, STOP, WARN, OK); then the most lag; then by name."""
    severity = {status: index for index, status in enumerate(status_order)}

    def rank(row: dict) -> tuple:
        return (-severity.get(row["status"], 0), -(row["current_lag"] or 0), row["cluster"] or "", row["group"],
                row["topic"], row["partition"])

    return rank


def _nulls_first(value: Optional[int]) -> tuple:
    return (value is not None, value or 0)


def _collect(frame: DataFrame) -> list[dict]:
    return [row.asDict(recursive=True) for row in frame.collect()]


def _write(frame: DataFrame, out_dir: str, name: str) -> None:
    """`frame` as Parquet in out_dir/name, replacing what a previous run wrote there (one file: the
    results are small)."""
    target = f"{out_dir.rstrip('/')}/{name}"
    try:
        frame.coalesce(1).write.mode("overwrite").parquet(target)
    except (PySparkException, Py4JJavaError) as exc:
        raise AnalysisError(f"cannot write {target}: {one_line(exc)}") from None


MAX_CAUSES = 20
"""How deep `_one_line` follows a JVM exception's causes (a cause chain is short, but need not end)."""
_ERROR_CLASS = re.compile(r"^\[[A-Z0-9_.]+\]\s*")
_SQLSTATE = re.compile(r"\s*SQLSTATE: \w+\.?$")


def one_line(exc: Exception) -> str:
    """The gist of a Spark or JVM error: the first line of its message (for a JVM exception, of its
    root cause: "java.io.IOException: Mkdirs failed to create ...", not "Job aborted due to stage
    failure"), without error-class and SQLSTATE decorations."""
    if isinstance(exc, Py4JJavaError):
        cause = exc.java_exception
        for _ in range(MAX_CAUSES):
            if cause.getCause() is None:
                break
            cause = cause.getCause()
        text = str(cause.toString())
    else:
        text = str(exc)
    first = next((line.strip() for line in text.splitlines() if line.strip()), type(exc).__name__)
    return _SQLSTATE.sub("", _ERROR_CLASS.sub("", first))


def _utc(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


def _iso(ms: int) -> str:
    return _utc(ms).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
