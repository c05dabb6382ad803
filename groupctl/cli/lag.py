"""`groupctl lag ...`: record consumer lag over time, as the dataset `groupctl analyze lag` reads.

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

if TYPE_CHECKING:
    from groupctl.ops.lag_schedule import RoundOutcome

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


def _report_round(current: CliEnv, outcome: RoundOutcome, out: Path) -> None:
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
    totals = recording.totals
    if current.json:
        render.emit_json(current, {"out": str(root), "cluster": label, **totals.to_json()})
    else:
        current.out.print(f"recorded {totals.rounds} round(s) ({totals.failed_rounds} failed): {totals.rows} "
                          f"row(s) in {totals.files} file(s) under {root}", markup=False, highlight=False)
    if totals.rounds and totals.failed_rounds == totals.rounds:
        raise CliError(f"every round failed: nothing was sampled from {bootstrap}")
