"""`groupctl analyze ...`: lag, rebalance and audit analyses on Spark over recorded data.

Inputs: lag datasets written by `groupctl lag record`, and coordinator event journals (a node's
`--journal-dir`; several directories, e.g. one per node, are analysed together). Any path Spark
reads works: a local directory, hdfs://, s3a:// (with the cluster's Hadoop settings).

Startup cost: this module imports neither pyspark nor matplotlib; a command imports them when it
runs, after checking PySpark is installed (`pip install 'groupctl[spark]'` otherwise, one line).

Session: a command runs in the SparkSession already active in this process, if any, and leaves it
running; otherwise it starts one on --master and stops it when done. The Spark work happens
first, under a progress display on stderr (terminals only); the results are rendered after it.

Exit status: 0 done, 1 failed (no PySpark, missing or empty input, unwritable --out or --plot;
and for `audit`, violations found), 2 bad usage, 3 for `lag --fail-on` when a group's status is
at or above the threshold (the results are printed in full first).
"""

from __future__ import annotations

import importlib.util
import re
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, List, Optional

import typer

from groupctl.analytics.session import DEFAULT_MASTER, INSTALL_HINT
from groupctl.cli import analyze_render, render
from groupctl.cli.context import CliEnv, env, guard
from groupctl.cli.errors import BadInput, CliError, ExitStatus
from groupctl.lag.rules import FailOn, Rules, fails_check

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

app = typer.Typer(help="Analyze recorded lag and the coordinator's event journal on Spark.", no_args_is_help=True)

_EPOCH_MS = re.compile(r"^[0-9]{1,15}$")
TIME_FORMS = "ISO-8601 YYYY-MM-DDTHH:mm:SS, optional .sss and zone Z or ±hh:mm (no zone: UTC), or epoch ms"

MASTER_OPTION = typer.Option(
    DEFAULT_MASTER, "--master", envvar="GROUPCTL_SPARK_MASTER", metavar="URL",
    help="Spark master: local, local\\[N], local\\[*], spark://HOST:PORT, yarn, k8s://...")
OUT_OPTION = typer.Option(
    None, "--out", metavar="DIR", help="Also write the results as Parquet under DIR (one directory per "
    "result, replaced on each run; any path Spark writes).")
JOURNALS_ARGUMENT = typer.Argument(
    ..., metavar="JOURNAL...", help="Journal directories (a coordinator's --journal-dir; several nodes' together).")
PLOT_OPTION = typer.Option(None, "--plot", metavar="FILE.png", help="Also draw the results as a PNG picture.")
CONF_OPTION = typer.Option(
    [], "--conf", metavar="KEY=VALUE", help="A Spark setting (repeatable), e.g. "
    "spark.hadoop.fs.s3a.endpoint=http://minio:9000; spark-defaults.conf in $SPARK_CONF_DIR applies too.")


def parse_conf(settings: List[str]) -> dict[str, str]:
    """--conf KEY=VALUE... -> {KEY: VALUE}."""
    parsed = {}
    for setting in settings:
        key, sep, value = setting.partition("=")
        if not sep or not key.strip():
            raise BadInput(f"--conf {setting!r}: expected KEY=VALUE")
        parsed[key.strip()] = value
    return parsed


def parse_time(text: Optional[str], option: str) -> Optional[int]:
    """A --since/--until/--at value -> epoch milliseconds (None stays None)."""
    if text is None:
        return None
    if _EPOCH_MS.match(text.strip()):
        return int(text.strip())
    from groupctl.errors import BadInput as BadDatetime
    from groupctl.ops.reset import parse_datetime

    try:
        return parse_datetime(text)
    except BadDatetime:
        raise BadInput(f"{option} {text!r}: expected {TIME_FORMS}") from None


def check_plot_target(plot: Optional[Path]) -> None:
    """Fail before any Spark work when --plot cannot be honoured."""
    if plot is None:
        return
    if importlib.util.find_spec("matplotlib") is None:
        raise CliError(f"--plot needs matplotlib, which is not installed; install the spark extra: {INSTALL_HINT}")
    if not plot.parent.is_dir():
        raise BadInput(f"--plot {str(plot)!r}: directory {str(plot.parent)!r} does not exist")


def draw(plot: Path, drawing: Callable[[], None]) -> None:
    """Run `drawing`, which writes `plot`; a file that cannot be written is a one-line error."""
    try:
        drawing()
    except OSError as exc:
        raise CliError(f"cannot write {plot}: {exc.strerror or exc}") from None


def present(current: CliEnv, result, inputs: str, document: Callable[[object], dict],
            show: Callable[[], None]) -> None:
    """Warn about skipped input lines, then print `result`: its JSON document, or tables."""
    analyze_render.warn_skipped(current, result.skipped, inputs)
    if current.json:
        render.emit_json(current, document(result))
    else:
        show()


@contextmanager
def spark_for(current: CliEnv, master: str, conf: List[str]) -> Iterator[tuple["SparkSession", Callable[[str], None]]]:
    """(session, step) for one analysis: the running session or a new one on `master` with the
    --conf settings, and the progress display's step callback. Expected failures (no PySpark or
    JVM, a bad master URL, bad input or output paths, a failed Spark job) become one-line
    CliErrors."""
    from groupctl.analytics.session import PySparkMissing, require_pyspark, spark_session

    settings = parse_conf(conf)
    try:
        require_pyspark()
        from pyspark.sql import SparkSession

        already_running = SparkSession.getActiveSession() is not None
        spark = spark_session(master, conf=settings)
    except PySparkMissing as exc:
        raise CliError(str(exc)) from None
    except Exception as exc:  # a bad master URL or setting: Spark says why in a JVM exception
        from groupctl.analytics.jobs import one_line

        raise CliError(f"Spark could not start on {master}: {one_line(exc)}") from None
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    from groupctl.analytics.jobs import AnalysisError, one_line
    from groupctl.analytics.progress import spark_progress

    try:
        with spark_progress(spark, current.err) as step:
            yield spark, step
    except AnalysisError as exc:
        raise CliError(str(exc)) from None
    except (PySparkException, Py4JJavaError) as exc:  # e.g. an executor lost, input gone mid-read
        raise CliError(f"the Spark job failed: {one_line(exc)}") from None
    finally:
        if not already_running:
            spark.stop()


LAG_HELP = (
    "Evaluate consumer lag: a status per partition and per group.\n\n"
    "Partitions: OK; WARN (lag grew over the whole window); STOP (messages waited, with no commit, longer than "
    "the window spans); "
    "STALL (commits, but the offset does not move); REWIND (the offset went back). A group is as bad as its "
    "worst partition: OK, WARN or ERR (STOP, STALL, REWIND); a --group not in the data is NOTFOUND.\n\n"
    "--rules groupctl is the default; --rules burrow applies Burrow's evaluator as its code does, to compare with "
    "a Burrow: it holds STOP back until none of the last --window log ends is at the committed offset.\n\n"
    f"TIME: {TIME_FORMS}. --out writes partitions/ and groups/; --plot draws the total lag of the worst groups "
    "over time.\n\n"
    "--fail-on warn|err (for cron and CI): after printing, exit status 3 when a group is at or above it "
    "(err: ERR; warn: WARN or ERR); a --group not in the data (NOTFOUND) fails either.")
REBALANCES_HELP = (
    "Rebalance history per group: count, durations, causes, member churn, timeline.\n\n"
    "Per group: rebalances, p50/p95/max duration, total stop-the-world time, reasons, joins, leaves, "
    "expirations, unfinished rebalances; then the most recent rebalances (--last). A consumer group's "
    "(KIP-848) rebalance is a group epoch, lasting until the group is STABLE at it. "
    "--out writes summary/ and timeline/; --plot draws each group's rebalances over time.")
AUDIT_HELP = (
    "Check the coordinator's invariants over its journal; exit status 1 on violations.\n\n"
    "single_owner: one owner per partition and generation (for a consumer group: member epoch). "
    "owner_commits: only a partition's owner commits "
    "its offsets (commits of generations the journal has no assignment for are counted as unverified). "
    "monotonic_offsets: a committed offset never goes back, except by an explicit reset (an admin commit, "
    "or a commit after the offset or the group was deleted). "
    "txn_offsets: a transaction's offsets become committed only when it commits, as the producer held them "
    "(an aborted transaction's never). Each violation is shown with the journal events "
    "that prove it.\n\n"
    "Exit status: 0 no violation found, 1 violations found (or the audit could not run), 2 bad usage. "
    "--out writes summary/ and violations/.")


@app.command("lag", help=LAG_HELP)
@guard
def lag(
    ctx: typer.Context,
    datasets: List[str] = typer.Argument(
        ..., metavar="DATASET...", help="Lag dataset directories (`groupctl lag record --out`)."),
    group: List[str] = typer.Option(
        [], "--group", "-g", help="Only this group (repeatable); one not in the data is NOTFOUND."),
    window: int = typer.Option(10, min=1, help="Commits in a partition's evaluation window (Burrow's intervals)."),
    allowed_lag: int = typer.Option(0, min=0, help="A partition with at most this lag (messages) is OK."),
    rules: Rules = typer.Option(
        Rules.GROUPCTL, "--rules", case_sensitive=False,
        help="groupctl: ours (docs/lag-and-rebalances.md); burrow: Burrow's evaluator, to compare "
        "with a Burrow."),
    at: Optional[str] = typer.Option(None, metavar="TIME", help="Evaluate at TIME (default: the newest sample read)."),
    since: Optional[str] = typer.Option(
        None, metavar="TIME", help="Read only samples at or after TIME (a window needs its commits after it)."),
    until: Optional[str] = typer.Option(None, metavar="TIME", help="Read only samples at or before TIME."),
    all_partitions: bool = typer.Option(
        False, "--all-partitions", "--verbose", "-v", help="List every partition, not only those that are not OK."),
    master: str = MASTER_OPTION,
    conf: List[str] = CONF_OPTION,
    out: Optional[str] = OUT_OPTION,
    plot: Optional[Path] = PLOT_OPTION,
    fail_on: Optional[FailOn] = typer.Option(
        None, "--fail-on", case_sensitive=False,
        help="Exit status 3 when a group's status is at or above this (after printing the results)."),
) -> None:
    current = env(ctx)
    at_ms, since_ms, until_ms = parse_time(at, "--at"), parse_time(since, "--since"), parse_time(until, "--until")
    if since_ms is not None and until_ms is not None and since_ms > until_ms:
        raise BadInput("--since is after --until")
    check_plot_target(plot)
    from groupctl.analytics.plots import MAX_LAG_LINES

    with spark_for(current, master, conf) as (spark, step):
        from groupctl.analytics.jobs import lag_job

        result = lag_job(spark, datasets, groups=group, window=window, allowed_lag=allowed_lag,
                         rules=rules, at_ms=at_ms, since_ms=since_ms, until_ms=until_ms, out_dir=out,
                         history_groups=MAX_LAG_LINES if plot else 0, step=step)
    if plot is not None:
        from groupctl.analytics.plots import plot_lag

        draw(plot, lambda: plot_lag(result.history, result.groups, str(plot), window=window,
                                    evaluated_at=result.evaluated_at))
    failing = [] if fail_on is None else [g for g in result.groups if fails_check(g["status"], fail_on)]
    try:
        present(current, result, "lag samples", analyze_render.lag_document,
                lambda: analyze_render.show_lag(current, result, all_partitions=all_partitions))
    except SystemExit as exc:  # the reader went away (`closed_pipe`): a failed check still fails
        if failing and exc.code == 0:
            raise SystemExit(int(ExitStatus.CHECK_FAILED)) from None
        raise
    if fail_on is not None:
        _check(current, failing, fail_on)


def _check(current: CliEnv, failing: list[dict], fail_on: FailOn) -> None:
    """`analyze lag --fail-on`: one line on stderr naming the failing groups, and exit status 3."""
    if failing:
        named = ", ".join(f"{g['group']} {g['status']}" for g in failing[:10])
        more = f" and {len(failing) - 10} more" if len(failing) > 10 else ""
        current.err.print(f"groupctl: lag check failed: {len(failing)} group(s) at {fail_on.value.upper()} or "
                          f"worse: {named}{more}", markup=False, highlight=False)
        raise typer.Exit(int(ExitStatus.CHECK_FAILED))


@app.command("rebalances", help=REBALANCES_HELP)
@guard
def rebalances(
    ctx: typer.Context,
    journals: List[str] = JOURNALS_ARGUMENT,
    group: List[str] = typer.Option([], "--group", "-g", help="Only this group (repeatable)."),
    last: int = typer.Option(20, min=0, help="Timeline rows shown in the table output (JSON has them all)."),
    master: str = MASTER_OPTION,
    conf: List[str] = CONF_OPTION,
    out: Optional[str] = OUT_OPTION,
    plot: Optional[Path] = PLOT_OPTION,
) -> None:
    current = env(ctx)
    check_plot_target(plot)
    with spark_for(current, master, conf) as (spark, step):
        from groupctl.analytics.jobs import rebalances_job

        result = rebalances_job(spark, journals, groups=group, out_dir=out, step=step)
    if plot is not None:
        from groupctl.analytics.plots import plot_rebalances

        draw(plot, lambda: plot_rebalances(result.timeline, str(plot)))
    present(current, result, "journal events", analyze_render.rebalances_document,
            lambda: analyze_render.show_rebalances(current, result, last=last))


@app.command("audit", help=AUDIT_HELP)
@guard
def audit(
    ctx: typer.Context,
    journals: List[str] = JOURNALS_ARGUMENT,
    master: str = MASTER_OPTION,
    conf: List[str] = CONF_OPTION,
    out: Optional[str] = OUT_OPTION,
) -> None:
    current = env(ctx)
    with spark_for(current, master, conf) as (spark, step):
        from groupctl.analytics.jobs import audit_job

        result = audit_job(spark, journals, out_dir=out, step=step)
    present(current, result, "journal events", analyze_render.audit_document,
            lambda: analyze_render.show_audit(current, result))
    if result.violation_count:
        raise typer.Exit(1)
