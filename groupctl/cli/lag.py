"""`groupctl lag ...`: record consumer lag over time, as the dataset `groupctl analyze lag` reads,
or serve it continuously, Burrow-style (`lag serve`).

`lag record` samples, every --interval, the committed and log-end offset of each partition of
the chosen groups through the Kafka protocol (`groupctl.ops.lag_record`), and writes each round
as one new JSON Lines file under --out (`groupctl.ops.lag_dataset`), on a fixed cadence
(`groupctl.ops.lag_schedule`).

It runs until --duration elapses or SIGINT/SIGTERM arrives, finishing or discarding the round in
flight, and exits 0, or 1 when every round failed (nothing was sampled). A failed or incomplete
round prints one warning line on stderr and recording goes on at the next slot. A progress line
per round goes to stderr only when stderr is a terminal. The summary goes to stdout (one JSON
object with --output json: out, cluster, rounds, failed_rounds, rows, files, skipped_groups,
missed_slots, ended_by). Nothing imports pyspark; the ops modules load when the command runs.

`lag serve` runs the same rounds (and with --out writes the same dataset) into memory, evaluates
every group after each round with `analyze lag`'s rules, and serves Burrow's HTTP API and
Prometheus metrics (`groupctl.ops.lag_serve`, `lag_http`, `lag_serve_metrics`). Its ready line
goes to stderr; stdout has one line per incident change, or with --output json one Burrow status
object per group per evaluation. Its ending is `lag record`'s.
"""

from __future__ import annotations

import signal
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, List, Optional

import typer

from groupctl.cli import render
from groupctl.cli.context import CliEnv, env, guard
from groupctl.cli.errors import BadInput, CliError
from groupctl.lag.notify import NotifyThreshold
from groupctl.lag.rules import Rules

if TYPE_CHECKING:
    from groupctl.lag.notify import Change
    from groupctl.ops.lag_schedule import RoundOutcome, RecordingTotals

app = typer.Typer(help="Record consumer lag over time (the dataset `groupctl analyze lag` reads).",
                  no_args_is_help=True)



def parse_duration(text: str, option: str) -> float:
    """Seconds of a duration in the CLI's one grammar (`groupctl.ops.durations`: 500ms, 10s, 2m,
    1h, 1h30m, PT1H; a bare number is seconds); BadInput naming `option` for anything else, zero
    included (groupctl.errors.BadInput, as the grammar's own)."""
    from groupctl.errors import BadInput as BadDuration
    from groupctl.ops.durations import parse_duration_ms

    seconds = parse_duration_ms(text, option, bare_seconds=True) / 1000
    if seconds <= 0:
        raise BadDuration(f"{option} must be longer than zero, not '{text}'")
    return seconds


@contextmanager
def _stop_on_signals(stop: Callable[[], None]) -> Iterator[None]:
    """Call `stop()` on SIGINT and SIGTERM while the block runs; the previous handlers after."""
    previous = {sig: signal.signal(sig, lambda _signum, _frame: stop()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _report_round(current: CliEnv, outcome: RoundOutcome, out: Optional[Path]) -> None:
    """A warning for a failed or incomplete round; a progress line on a terminal."""
    if outcome.failed:
        current.err.print(f"groupctl: warning: round {outcome.number} failed: {outcome.error}",
                          markup=False, highlight=False)
    elif outcome.sample.problems:
        current.err.print(f"groupctl: warning: round {outcome.number} incomplete: "
                          f"{outcome.sample.problem_summary()}", markup=False, highlight=False)
    if not current.err.is_terminal or outcome.failed:
        return
    sample, written = outcome.sample, outcome.written
    where = f" -> {written.path.relative_to(out)}" if written is not None else ""
    current.err.print(f"round {outcome.number}: {len(sample.rows)} row(s) of {sample.groups_sampled} group(s)"
                      f"{where} ({outcome.elapsed_s * 1000:.0f} ms)", markup=False, highlight=False)


@app.command("record")
@guard
def record(
    ctx: typer.Context,
    group: List[str] = typer.Option([], "--group", help="A group to sample (repeatable)."),
    all_groups: bool = typer.Option(
        False, "--all-groups", help="Sample every group of the cluster (listed anew each round)."),
    interval: str = typer.Option(
        "10s", help="Time between rounds: 500ms, 10s, 2m, 1h (a bare number is seconds)."),
    duration: Optional[str] = typer.Option(
        None, help="Stop after this long (same units); default: until SIGINT/SIGTERM."),
    cluster: Optional[str] = typer.Option(
        None, help="Cluster label written in every row; default: the bootstrap string."),
    out: Path = typer.Option(
        ..., "--out", help="Dataset directory (created if missing); rounds are added under date=/hour=."),
) -> None:
    """Sample committed offsets, log-end offsets and group state every --interval into --out.

    Each round adds one JSON Lines file, written atomically, under DIR/date=YYYY-MM-DD/hour=HH/.

    A failed round prints one warning line and recording goes on at the next interval.

    --duration or SIGINT/SIGTERM ends it with a summary (rounds, rows, files): exit status 0, or 1
    when every round failed (nothing could be sampled at all)."""
    interval_s = parse_duration(interval, "--interval")
    duration_s = parse_duration(duration, "--duration") if duration is not None else None
    if bool(group) == all_groups:
        raise BadInput("give either --group GROUP (repeatable) or --all-groups")

    from groupctl.ops.lag_dataset import LagDatasetWriter, prepare_dataset_dir
    from groupctl.ops.lag_record import LagSampler
    from groupctl.ops.lag_schedule import Recording

    current = env(ctx)
    bootstrap = current.need_bootstrap()
    label = cluster if cluster is not None else bootstrap.servers
    sampler = LagSampler(bootstrap, label, group or None)  # checks the group ids
    root = prepare_dataset_dir(out)
    recording = Recording(sampler.sample, LagDatasetWriter(root).write_round,
                          interval_s=interval_s, duration_s=duration_s)
    with _stop_on_signals(recording.request_stop):
        for outcome in recording.rounds():
            _report_round(current, outcome, root)
    _summarise(current, recording.totals, label, root, bootstrap)


def _summarise(current: CliEnv, totals: RecordingTotals, label: str, root: Optional[Path], bootstrap, *,
               emit_json: Callable = render.emit_json) -> None:
    """The closing summary of `record` and `serve`; exit status 1 when every round failed."""
    if current.json:
        emit_json(current, {"out": str(root) if root else None, "cluster": label, **totals.to_json()})
    else:
        written = f": {totals.rows} row(s) in {totals.files} file(s) under {root}" if root else ""
        current.out.print(f"{'recorded' if root else 'sampled'} {totals.rounds} round(s) ({totals.failed_rounds} "
                          f"failed){written}", markup=False, highlight=False)
    if totals.rounds and totals.failed_rounds == totals.rounds:
        raise CliError(f"every round failed: nothing was sampled from {bootstrap}")


@app.command("serve")
@guard
def serve(
    ctx: typer.Context,
    group: List[str] = typer.Option([], "--group", help="A group to watch (repeatable)."),
    all_groups: bool = typer.Option(
        False, "--all-groups", help="Watch every group of the cluster (listed anew each round)."),
    port: int = typer.Option(8000, min=0, max=65535, help="HTTP port (0: any free one, shown when ready)."),
    host: str = typer.Option("127.0.0.1", help="The address the HTTP server binds."),
    interval: str = typer.Option("30s", help="Time between rounds: 500ms, 10s, 2m (a bare number is seconds)."),
    window: int = typer.Option(10, min=1, help="Commits in a partition's evaluation window (Burrow's intervals)."),
    allowed_lag: int = typer.Option(0, min=0, help="A partition with at most this lag (messages) is OK."),
    rules: Rules = typer.Option(
        Rules.GROUPCTL, "--rules", case_sensitive=False,
        help="groupctl: `analyze lag`'s rules; burrow: Burrow's evaluator as its code has it."),
    cluster_name: str = typer.Option(
        "local", "--cluster-name", help="The cluster's name in the API's paths, the metrics and the --out rows."),
    history: str = typer.Option(
        "1h", help="Samples kept per partition (at least a window's); lag in seconds beyond it is a lower bound."),
    webhook: Optional[str] = typer.Option(
        None, metavar="URL", help="POST a JSON notification when a group's status crosses --notify-threshold, "
        "changes, or recovers (once per change; retried with back-off)."),
    notify_threshold: NotifyThreshold = typer.Option(
        NotifyThreshold.ERR, "--notify-threshold", case_sensitive=False,
        help="err: notify from ERR (STOP, STALL, REWIND); warn: from WARN too (busy consumers flap into WARN "
        "unless --allowed-lag covers their usual lag)."),
    out: Optional[Path] = typer.Option(
        None, "--out", help="Also write the samples as `lag record`'s dataset here, and keep the open incidents; "
        "a restart reads both back."),
    duration: Optional[str] = typer.Option(
        None, help="Stop after this long; default: until SIGINT/SIGTERM."),
) -> None:
    """Watch consumer lag continuously and serve Burrow's HTTP API and Prometheus metrics.

    Every --interval it samples like `lag record`, evaluates each group with `analyze lag`'s rules
    over the last --window rounds, and serves the result: GET /v3/kafka/CLUSTER/consumer/GROUP/status
    (problem partitions) and .../lag (all of them), in Burrow's JSON, and /metrics.

    SIGINT/SIGTERM (or --duration) ends it with `lag record`'s summary."""
    interval_s = parse_duration(interval, "--interval")
    history_s = parse_duration(history, "--history")
    duration_s = parse_duration(duration, "--duration") if duration is not None else None
    if bool(group) == all_groups:
        raise BadInput("give either --group GROUP (repeatable) or --all-groups")
    if not cluster_name or "/" in cluster_name:
        raise BadInput(f"--cluster-name must be a non-empty name without '/', not '{cluster_name}' "
                       "(it is a segment of the API's paths)")
    if history_s < window * interval_s:
        raise BadInput(f"--history {history} keeps less than a window ({window} rounds of {interval}): "
                       "a restart could not rebuild the windows")

    from groupctl.lag.live import LiveLag
    from groupctl.lag.notify import Incidents
    from groupctl.ops.lag_dataset import LagDatasetWriter, prepare_dataset_dir
    from groupctl.ops.lag_http import LagHttpServer
    from groupctl.ops.lag_record import LagSampler
    from groupctl.ops.lag_schedule import Recording
    from groupctl.ops.lag_serve import LagService
    from groupctl.ops.lag_serve_metrics import LagServeMetrics
    from groupctl.ops.webhook import WebhookSender, check_webhook_url

    current = env(ctx)
    bootstrap = current.need_bootstrap()
    if webhook is not None:
        check_webhook_url(webhook)
    sampler = LagSampler(bootstrap, cluster_name, group or None)  # checks the group ids
    root = prepare_dataset_dir(out) if out is not None else None
    live = LiveLag(window=window, history_ms=int(history_s * 1000), rules=rules, allowed_lag=allowed_lag)
    service = LagService(live, cluster=cluster_name, groups=group or None, incidents=Incidents(notify_threshold))
    restored = service.restore(root) if root is not None else 0
    metrics = LagServeMetrics(lambda: service.latest)
    settings = {"class-name": "groupctl", "servers": bootstrap.servers.split(","), "interval": interval_s,
                "window": window, "allowed-lag": allowed_lag, "rules": rules.value, "history": history_s,
                "groups": list(group) if group else None}
    http = LagHttpServer(host, port, cluster=cluster_name, settings=settings, latest=lambda: service.latest,
                         registry=metrics.registry, ready=lambda: service.rounds > 0)

    def warn(message: str) -> None:
        current.err.print(f"groupctl: warning: {message}", markup=False, highlight=False)

    sender = WebhookSender(webhook, warn=warn, on_outcome=metrics.notified) if webhook is not None else None
    write = LagDatasetWriter(root).write_round if root is not None else (lambda rows: None)
    recording = Recording(sampler.sample, write, interval_s=interval_s, duration_s=duration_s)
    http.start()
    for notification in service.pending if sender is not None else ():  # what the last run could not post
        sender.send(notification)
    unposted: list[dict] = [] if sender is not None else service.pending
    try:
        current.err.print(f"groupctl lag serve: {http.url}/v3/kafka/{cluster_name} (metrics at {http.url}/metrics); "
                          f"sampling {bootstrap.servers} every {interval}"
                          + (f"; {restored} row(s) read back from {root}" if restored else "")
                          + "; Ctrl-C to stop", markup=False, highlight=False, soft_wrap=True)
        with _stop_on_signals(recording.request_stop):
            for outcome in recording.rounds():
                _report_round(current, outcome, root)
                evaluated = service.absorb(outcome)
                metrics.round(outcome, evaluated.evaluation.now / 1000)
                if evaluated.warning is not None:
                    warn(evaluated.warning)
                _show_evaluation(current, evaluated.evaluation, cluster_name, group)
                _tell(current, sender, evaluated.changes, evaluated.evaluation)
    finally:
        http.close()
        if sender is not None:
            unposted = sender.close()
        problem = service.keep_unposted(unposted) if root is not None else None
        if problem is not None:
            warn(problem)
    _summarise(current, recording.totals, cluster_name, root, bootstrap,
               emit_json=render.emit_json_line)  # stdout stays JSON Lines


def _show_evaluation(current: CliEnv, evaluation, cluster: str, named: list[str]) -> None:
    """JSON: the Burrow status object of every group known and every group named (NOTFOUND when
    not known)."""
    from groupctl.lag.burrow_api import status_document

    if current.json:
        for group in sorted(set(evaluation.group_names(cluster)) | set(named)):
            render.emit_json_line(current, status_document(evaluation, cluster, group, show_all=False))


def _tell(current: CliEnv, sender, changes: "tuple[Change, ...]", evaluation) -> None:
    """Each incident change to the webhook, and as a line on stdout without JSON."""
    for change in changes:
        if sender is not None:
            sender.send(_notification(change, evaluation))
        if current.json:
            continue
        report = evaluation.groups.get((change.cluster, change.group))
        worst = ", ".join(report["worst"][:5]) if report else "no longer known"
        current.out.print(f"{change.event} {change.group}: {change.previous} -> {change.status}"
                          + (f" ({worst})" if worst else ""), markup=False, highlight=False)


def _notification(change: "Change", evaluation) -> dict:
    """The webhook's JSON: the change, and the group's Burrow status object as `result`."""
    from groupctl.lag.burrow_api import status_document

    return {"event": change.event, "id": change.id, "cluster": change.cluster, "group": change.group,
            "status": change.status, "previous_status": change.previous, "start": change.start, "at": change.at,
            "result": status_document(evaluation, change.cluster, change.group, show_all=False)}
