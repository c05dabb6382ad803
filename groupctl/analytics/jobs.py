"""The analysis jobs: read the inputs, run the transforms, collect the results, write them.

The only module of `groupctl.analytics` that reads or writes data (`lag`, `rebalances` and `audit`
are pure DataFrame transforms; the lag rules are `groupctl.lag`'s). Invariants:
- Inputs are read with their explicit schemas (`schemas`) in PERMISSIVE mode: a line that is not
  a JSON object of the schema's types (or lacks the fields every row has) is counted as malformed,
  a row whose `v` is not in SUPPORTED_VERSIONS as unsupported; both are skipped, never fatal, and
  `Skipped` carries the counts. Several paths are read as one input.
- A journal is parsed once per job and persisted for the analyses' several passes, then released
  whatever happens. Lag samples are read in one pass that also counts what it skips
  (`ObservedInput`): parsing dominates at scale, so neither a counting pass nor caching pays
  (bench/lag_analysis.py measures it).
- Results are small: collected to JSON-ready dicts, worst first where there is a status; with
  `out_dir` also written as Parquet, one directory per result, replaced on every run.
- A missing, unreadable or empty input, or an unwritable output, is an `AnalysisError` with a
  one-line message, never a Spark stack trace.
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
from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from groupctl.analytics.schemas import (
    JOURNAL_SCHEMA,
    LAG_SAMPLE_SCHEMA,
    SUPPORTED_VERSIONS,
)
from groupctl.lag import report
from groupctl.lag.rules import Rules, severity

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
    """Parsed, counted input rows, persisted until `release()`.

    `rows` holds the usable rows only (schema columns, a supported version, the filters applied);
    `skipped` counts what was dropped as unreadable.
    """

    rows: DataFrame
    skipped: Skipped
    _parsed: DataFrame = field(repr=False)

    def release(self) -> None:
        self._parsed.unpersist()


@dataclass(frozen=True)
class ObservedInput:
    """Usable input rows, not read yet: the first action on `rows` reads the input once and
    counts what it read on the way (`counts`), so a one-pass analysis parses its input once."""

    rows: DataFrame
    stats: Observation
    parsed: "_Parsed" = field(repr=False)
    scope: str = ""

    def counts(self) -> tuple[int, Skipped]:
        """(usable rows, what was skipped), once an action on `rows` has run; AnalysisError when
        nothing was readable and supported. Spark drops the counts of a query it finds empty on
        the way (no usable row, or every date=/hour= pruned), so those are counted again."""
        try:
            stats = self.stats.get
        except Py4JJavaError:  # Spark 4.3 completes the observation with an empty row
            stats = {}
        if "usable" not in stats:
            stats = self.parsed.frame.agg(*_counts(self.parsed)).first().asDict()
        return stats["usable"], _check_counts(stats, self.parsed.what, self.parsed.where, self.scope)


@dataclass(frozen=True)
class LagResult:
    evaluated_at: Optional[int]
    window: int
    allowed_lag: int
    rules: Rules
    groups: list[dict]
    """Group rows (docs/lag-and-rebalances.md, "analyze lag"), worst first, with a NOTFOUND row per
    wanted group not in the data."""
    partitions: list[dict]
    """Partition rows (docs/lag-and-rebalances.md, "analyze lag"), worst first."""
    history: list[dict]
    """(cluster, group, ts, total_lag) rows of the `history_groups` worst groups, by time."""
    skipped: Skipped


@dataclass(frozen=True)
class RebalancesResult:
    groups: list[dict]
    """Per-group summary rows (docs/lag-and-rebalances.md), most stop-the-world time first."""
    timeline: list[dict]
    """One row per rebalance (a classic completion, a consumer group epoch), in completion order (a
    consumer epoch that never settled at its start)."""
    not_found: list[str]
    """Wanted groups with no event in the journal."""
    skipped: Skipped


@dataclass(frozen=True)
class AuditResult:
    summary: list[dict]
    """Per invariant (in audit.INVARIANTS order): checked, violations, unverified."""
    violations: list[dict]
    """One row per violation (docs/lag-and-rebalances.md, "analyze audit"), by invariant (in
    audit.INVARIANTS order), group, generation, topic, partition."""
    skipped: Skipped

    @property
    def violation_count(self) -> int:
        return len(self.violations)


# -- reading -------------------------------------------------------------------------------------


def read_lag_samples(spark: SparkSession, paths: Sequence[str], *, since_ms: Optional[int] = None,
                     until_ms: Optional[int] = None, groups: Sequence[str] = ()) -> ObservedInput:
    """The lag dataset(s) at `paths` (any Spark path: a local dir, hdfs://, s3a://), the samples
    with since_ms <= ts <= until_ms of `groups` (all when empty). The time bounds also prune the
    `date=`/`hour=` directories, so a short range of a long recording reads only its hours.
    Nothing is read until the caller's first action on the rows (one pass over the input)."""
    keep = _between("ts", since_ms, until_ms)
    if groups:
        keep = keep & F.col("group").isin(*groups)
    parsed = _parse(spark, paths, LAG_SAMPLE_SCHEMA, "lag samples", keep=keep,
                    required=(*_present("ts", "group", "topic", "partition"),
                              F.col("committed").isNotNull() | F.col("log_end").isNotNull()),
                    prune=lambda frame: _prune_hours(frame, since_ms, until_ms))
    stats = Observation("lag samples read")
    observed = parsed.frame.observe(stats, *_counts(parsed))
    return ObservedInput(rows=observed.where(parsed.usable).select(*LAG_SAMPLE_SCHEMA.fieldNames()),
                         stats=stats, parsed=parsed, scope=_time_scope(since_ms, until_ms))


def read_journal(spark: SparkSession, paths: Sequence[str], *, groups: Sequence[str] = ()) -> LoadedInput:
    """The coordinator journal(s) at `paths` (one or more `--journal-dir`s, e.g. one per node): the
    events of `groups` (all when empty), parsed, counted and persisted."""
    keep = F.col("group").isin(*groups) if groups else F.lit(True)
    parsed = _parse(spark, paths, JOURNAL_SCHEMA, "journal events", keep=keep,
                    required=_present("ts", "event", "group"))
    frame = parsed.frame.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        stats = frame.agg(*_counts(parsed)).first().asDict()
        skipped = _check_counts(stats, parsed.what, parsed.where)
    except (PySparkException, Py4JJavaError) as exc:
        frame.unpersist()
        raise AnalysisError(f"cannot read {parsed.what} from {parsed.where}: {one_line(exc)}") from None
    except AnalysisError:
        frame.unpersist()
        raise
    return LoadedInput(rows=frame.where(parsed.usable).select(*JOURNAL_SCHEMA.fieldNames()),
                       skipped=skipped, _parsed=frame)


@dataclass(frozen=True)
class _Parsed:
    """Input lines parsed with a schema (plus the corrupt-record column), and which are usable."""

    frame: DataFrame
    readable: Column
    supported: Column
    usable: Column
    what: str
    where: str


def _parse(spark: SparkSession, paths: Sequence[str], schema: StructType, what: str, *, keep: Column,
           prune: Callable[[DataFrame], DataFrame] = lambda frame: frame, required: Sequence[Column] = ()) -> _Parsed:
    """Parse `paths` as one input (lazily). A line that is not JSON, or fails a `required`
    condition (e.g. a journal event given to the lag analysis, or the other way round), is
    malformed; a readable row of a version not in SUPPORTED_VERSIONS is unsupported; the rest is
    usable when it passes `keep`."""
    paths = list(paths)
    where = ", ".join(paths)
    with_corrupt = StructType([*schema.fields, StructField(CORRUPT_RECORD, StringType())])
    reader = (spark.read.schema(with_corrupt)
              .option("mode", "PERMISSIVE")
              .option("columnNameOfCorruptRecord", CORRUPT_RECORD))
    try:
        # one read per path: each discovers its own date=/hour= directories (one read of several
        # roots refuses them as "conflicting directory structures")
        parts = [prune(reader.json(path)).select(*schema.fieldNames(), CORRUPT_RECORD) for path in paths]
    except (PySparkException, Py4JJavaError) as exc:
        raise AnalysisError(f"cannot read {what} from {where}: {one_line(exc)}") from None
    readable = reduce(Column.__and__, required, F.col(CORRUPT_RECORD).isNull())
    supported = readable & F.coalesce(F.col("v").isin(*SUPPORTED_VERSIONS), F.lit(False))
    return _Parsed(reduce(DataFrame.unionAll, parts), readable, supported, supported & F.coalesce(keep, F.lit(False)),
                   what, where)


def _counts(parsed: _Parsed) -> tuple[Column, ...]:
    """The aggregates `_check_counts` reads: lines, malformed, unsupported, usable."""
    return (F.count(F.lit(1)).alias("lines"),
            F.count_if(~parsed.readable).alias("malformed"),
            F.count_if(parsed.readable & ~parsed.supported).alias("unsupported"),
            F.count_if(parsed.usable).alias("usable"))


def _check_counts(stats: dict, what: str, where: str, scope: str = "") -> Skipped:
    """What was skipped; AnalysisError when nothing at all was readable and supported."""
    skipped = Skipped(stats["malformed"], stats["unsupported"])
    if stats["lines"] == 0 or stats["lines"] == skipped.malformed + skipped.unsupported_version:
        found = (f": {skipped.malformed} malformed line(s), {skipped.unsupported_version} row(s) of a schema "
                 f"version other than {', '.join(map(str, SUPPORTED_VERSIONS))}" if stats["lines"] else "")
        raise AnalysisError(f"no {what} in {where}{scope}{found}")
    return skipped


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
            allowed_lag: int = 0, rules: Rules = Rules.GROUPCTL, at_ms: Optional[int] = None,
            since_ms: Optional[int] = None, until_ms: Optional[int] = None, out_dir: Optional[str] = None,
            history_groups: int = 0, step: Step = _no_progress) -> LagResult:
    """Evaluate every partition's lag status at `at_ms` (default: the newest sample read) with
    `rules` (docs/lag-and-rebalances.md, "analyze lag"), and roll them up per group.

    One pass over the input: Spark parses it, counts what it skips and builds each partition's
    window (`analytics.lag`); the driver evaluates the windows (`groupctl.lag.report`), so the
    rules run where every other caller runs them. Samples after `at_ms` are not read.
    `history_groups` > 0 also collects the lag history of that many worst groups (for a plot,
    a second pass). With `out_dir`: partitions/ and groups/ as Parquet."""
    from groupctl.analytics import lag
    from groupctl.analytics.schemas import GROUP_REPORT_SCHEMA, PARTITION_REPORT_SCHEMA

    wanted = list(dict.fromkeys(groups))
    step("reading")
    bounds = [bound for bound in (until_ms, at_ms) if bound is not None]
    until = min(bounds) if bounds else None
    samples = read_lag_samples(spark, paths, since_ms=since_ms, until_ms=until, groups=wanted)
    try:
        collected = samples.rows.transform(lag.partition_windows, size=window).collect()
        usable, skipped = samples.counts()
    except (PySparkException, Py4JJavaError) as exc:
        raise AnalysisError(f"cannot read lag samples from {samples.parsed.where}: {one_line(exc)}") from None
    if usable == 0 and not wanted:
        raise AnalysisError(f"no lag samples in {samples.parsed.where}{samples.scope}")
    step("evaluating")
    evaluated_at = at_ms if at_ms is not None else max((row["last_sample_ts"] for row in collected), default=None)
    windows = [lag.window_of(row, size=window, now=evaluated_at) for row in collected]
    partition_rows = [report.partition_report(key, found, rules=rules, allowed_lag=allowed_lag)
                      for key, found in windows]
    group_rows = report.group_reports(partition_rows) + _not_found(partition_rows, wanted, evaluated_at)
    partition_rows.sort(key=_partition_rank)
    group_rows.sort(key=_group_rank)
    history = _lag_history(samples.rows, group_rows, history_groups, lag.lag_history)
    if out_dir is not None:
        step("writing")
        _write(_frame(spark, partition_rows, PARTITION_REPORT_SCHEMA), out_dir, "partitions")
        _write(_frame(spark, group_rows, GROUP_REPORT_SCHEMA), out_dir, "groups")
    return LagResult(evaluated_at=evaluated_at, window=window, allowed_lag=allowed_lag, rules=rules,
                     groups=group_rows, partitions=partition_rows, history=history, skipped=skipped)


def rebalances_job(spark: SparkSession, paths: Sequence[str], *, groups: Sequence[str] = (),
                   out_dir: Optional[str] = None, step: Step = _no_progress) -> RebalancesResult:
    """Rebalance counts, durations and causes per group, and the timeline of every rebalance
    (classic completions, consumer group epochs), from the journal. With `out_dir`: summary/ and
    timeline/ as Parquet."""
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
        timeline_rows = sorted(_collect(timeline), key=lambda row: (
            _nulls_first(row["completed_ts"] if row["completed_ts"] is not None else row["started_ts"]),
            row["group"] or ""))
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
    """Check the coordinator's invariants (single owner per partition and generation, or member
    epoch for consumer groups; commits by the owner; monotonic offsets; transactions' offsets)
    over the whole journal.
    With `out_dir`: summary/ and violations/ as Parquet."""
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


def _not_found(partition_rows: list[dict], wanted: list[str], evaluated_at: Optional[int]) -> list[dict]:
    """A NOTFOUND group row (no partitions, no lag) for each wanted group with no partition row."""
    present = {row["group"] for row in partition_rows}
    return [{**dict.fromkeys(report.GROUP_FIELDS), "group": group, "status": "NOTFOUND", "partitions": 0,
             "worst": [], "evaluated_at": evaluated_at} for group in wanted if group not in present]


def _frame(spark: SparkSession, rows: list[dict], schema: StructType) -> DataFrame:
    """Result rows as a DataFrame of `schema` (whose fields are the rows' keys), to write."""
    return spark.createDataFrame([tuple(row[name] for name in schema.fieldNames()) for row in rows], schema)


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


def _partition_rank(row: dict) -> tuple:
    """Worst first (REWIND, STALL, STOP, WARN, OK); then the most lag; then by name."""
    return (-severity(row["status"]), -(row["current_lag"] or 0), row["cluster"] or "", row["group"],
            row["topic"], row["partition"])


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
