"""`groupctl lag record` in-process: duration parsing, the bad-input matrix, and short recordings
against an in-process coordinator (rows, summary, warnings, progress lines).

Bad input must be refused before anything is contacted or created, so those runs point
GROUPCTL_BOOTSTRAP at a closed port and carry a --duration: a run that got past validation would
end with exit 0 instead of the expected 2, never hang.
"""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from groupctl.cli.app import app
from groupctl.cli.context import CliEnv
from groupctl.cli.lag import parse_duration
from groupctl.errors import BadInput
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.ports import closed_port

ROOT = Path(__file__).resolve().parents[2]
SUMMARY_KEYS = ["out", "cluster", "rounds", "failed_rounds", "rows", "files", "skipped_groups", "missed_slots",
                "ended_by"]


def run(args: list[str], bootstrap: str | None = None, obj: CliEnv | None = None):
    return CliRunner().invoke(app, args, env={"GROUPCTL_BOOTSTRAP": bootstrap, "GROUPCTL_ZK": None},
                              obj=obj, catch_exceptions=False)


def dataset_rows(root: Path) -> list[dict]:
    return [json.loads(line) for path in sorted(root.rglob("*.jsonl")) for line in path.read_text().splitlines()]


# -- durations -------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, seconds", [("500ms", 0.5), ("10s", 10), ("2m", 120), ("1h", 3600), ("7", 7),
                                           ("1.5s", 1.5), ("0.25", 0.25), (" 3s ", 3)])
def test_durations_take_ms_s_m_h_units_and_a_bare_number_is_seconds(text, seconds):
    assert parse_duration(text, "--interval") == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "abc", "10x", "-1s", "1 s", "1.5.2s", "s", "10S", "1e3", "0", "0ms", "0.0s"])
def test_anything_else_and_zero_are_not_durations(text):
    with pytest.raises(BadInput, match="--duration"):
        parse_duration(text, "--duration")


# -- bad input ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("args, fragment", [
    (["--duration", "1s"], "give either --group GROUP (repeatable) or --all-groups"),
    (["--group", "g", "--all-groups", "--duration", "1s"], "give either --group GROUP (repeatable) or --all-groups"),
    (["--group", "g", "--interval", "ten", "--duration", "1s"], "--interval 'ten' is not a duration"),
    (["--group", "g", "--interval", "0s", "--duration", "1s"], "--interval must be longer than zero"),
    (["--group", "g", "--duration", "-5m"], "--duration '-5m' is not a duration"),
    (["--group", "g", "--duration", "0"], "--duration must be longer than zero"),
    (["--group", "", "--duration", "1s"], "the group id must not be empty"),
    (["--group", "g", "--group", "x" * 40000, "--duration", "1s"], "is too long"),
])
def test_bad_input_is_refused_with_one_line_and_exit_2_before_anything_is_contacted(tmp_path, args, fragment):
    out = tmp_path / "dataset"
    result = run(["lag", "record", "--out", str(out), *args], bootstrap=f"127.0.0.1:{closed_port()}")
    assert result.exit_code == 2, (result.stdout, result.stderr)
    [line] = result.stderr.splitlines()
    assert line.startswith("groupctl: error: ") and fragment in line, line
    assert result.stdout == "" and not out.exists()


def test_out_is_required(tmp_path):
    result = run(["lag", "record", "--group", "g", "--duration", "1s"], bootstrap=f"127.0.0.1:{closed_port()}")
    assert result.exit_code == 2
    assert result.stderr.startswith("groupctl: error: Missing option '--out'")


def test_out_naming_a_file_is_bad_input(tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("x")
    result = run(["lag", "record", "--group", "g", "--duration", "1s", "--out", str(plain)],
                 bootstrap=f"127.0.0.1:{closed_port()}")
    assert result.exit_code == 2 and "exists and is not a directory" in result.stderr


def test_without_a_bootstrap_server_it_is_bad_input(tmp_path):
    result = run(["lag", "record", "--all-groups", "--duration", "1s", "--out", str(tmp_path / "d")])
    assert result.exit_code == 2 and "needs --bootstrap" in result.stderr


# -- recording ----------------------------------------------------------------------------------------


def test_an_unreachable_cluster_fails_every_round_with_one_warning_each_and_exits_1(tmp_path):
    bootstrap = f"127.0.0.1:{closed_port()}"
    result = run(["--output", "json", "lag", "record", "--all-groups", "--interval", "100ms", "--duration", "300ms",
                  "--out", str(tmp_path / "d")], bootstrap=bootstrap)
    assert result.exit_code == 1, result.stderr
    summary = json.loads(result.stdout)  # the summary still comes first
    assert list(summary) == SUMMARY_KEYS
    assert summary["failed_rounds"] == summary["rounds"] >= 1 and summary["files"] == summary["rows"] == 0
    assert summary["rounds"] + summary["missed_slots"] == 3 and summary["ended_by"] == "duration"
    *warnings, error = result.stderr.splitlines()
    assert len(warnings) == summary["rounds"]
    assert all(line.startswith(f"groupctl: warning: round {n} failed: cannot reach bootstrap {bootstrap}")
               for n, line in enumerate(warnings, 1)), warnings
    assert error == f"groupctl: error: every round failed: nothing was sampled from {bootstrap}"


@pytest.fixture(scope="module")
def cluster():
    """An in-process coordinator with topic `events` (2 partitions: 3 and 5 records) and the
    inactive group `idle` with committed offsets 1 and 2."""
    from kafka import KafkaProducer

    node = InProcessCoordinator(node_config(topics=(("events", 2),))).start()
    try:
        producer = KafkaProducer(bootstrap_servers=node.bootstrap)
        try:
            for partition, count in ((0, 3), (1, 5)):
                for i in range(count):
                    producer.send("events", value=b"m%d" % i, partition=partition)
            producer.flush(30)
        finally:
            producer.close()
        committed = run(["offsets", "commit", "idle", "events:0=1", "events:1=2"], bootstrap=node.bootstrap)
        assert committed.exit_code == 0, committed.stderr
        yield node
    finally:
        node.stop()


def test_a_recording_writes_one_file_per_round_with_the_documented_rows(cluster, tmp_path):
    out = tmp_path / "d"
    result = run(["--output", "json", "lag", "record", "--group", "idle", "--group", "absent", "--cluster", "test",
                  "--interval", "100ms", "--duration", "300ms", "--out", str(out)], bootstrap=cluster.bootstrap)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""  # no failures, and stderr is no terminal: no progress lines
    summary = json.loads(result.stdout)
    assert summary["out"] == str(out) and summary["cluster"] == "test" and summary["failed_rounds"] == 0
    assert summary["rounds"] + summary["missed_slots"] == 3
    files = sorted(out.rglob("*.jsonl"))
    assert len(files) == summary["files"] == summary["rounds"]
    rows = dataset_rows(out)
    assert len(rows) == summary["rows"] == 2 * summary["rounds"]
    assert {(r["partition"], r["committed"], r["log_end"]) for r in rows} == {(0, 1, 3), (1, 2, 5)}
    assert all(r["v"] == 1 and r["cluster"] == "test" and r["group"] == "idle" and r["topic"] == "events"
               and r["state"] == "Empty" and r["members"] == 0 and r["owner"] is None for r in rows)


def test_all_groups_samples_every_group_the_cluster_lists(cluster, tmp_path):
    committed = run(["offsets", "commit", "other", "events:1=4"], bootstrap=cluster.bootstrap)
    assert committed.exit_code == 0, committed.stderr
    out = tmp_path / "d"
    result = run(["lag", "record", "--all-groups", "--interval", "1s", "--duration", "1s", "--out", str(out)],
                 bootstrap=cluster.bootstrap)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"recorded 1 round(s) (0 failed): 3 row(s) in 1 file(s) under {out}\n"
    rows = dataset_rows(out)
    assert {(r["group"], r["partition"], r["committed"]) for r in rows} == {("idle", 0, 1), ("idle", 1, 2),
                                                                             ("other", 1, 4)}
    assert {r["cluster"] for r in rows} == {cluster.bootstrap}  # the default label


def test_a_terminal_gets_one_progress_line_per_round_on_stderr(cluster, tmp_path):
    terminal = io.StringIO()
    obj = CliEnv(err=Console(file=terminal, force_terminal=True, color_system=None, width=300))
    result = run(["lag", "record", "--group", "idle", "--interval", "100ms", "--duration", "200ms",
                  "--out", str(tmp_path / "d")], bootstrap=cluster.bootstrap, obj=obj)
    assert result.exit_code == 0
    lines = terminal.getvalue().splitlines()
    assert 1 <= len(lines) <= 2
    assert lines[0].startswith("round 1: 2 row(s) of 1 group(s) -> date=") and ".jsonl (" in lines[0], lines


def test_the_signal_handlers_are_restored_after_recording(cluster, tmp_path):
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    result = run(["lag", "record", "--group", "idle", "--duration", "100ms", "--out", str(tmp_path / "d")],
                 bootstrap=cluster.bootstrap)
    assert result.exit_code == 0
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_recording_imports_no_pyspark(tmp_path):
    script = (
        "import sys\n"
        "from groupctl.cli.app import app\n"
        f"args = ['--bootstrap', '127.0.0.1:{closed_port()}', 'lag', 'record', '--all-groups',\n"
        f"        '--duration', '100ms', '--out', {str(tmp_path / 'd')!r}]\n"
        "try:\n"
        "    app(args, prog_name='groupctl')\n"
        "except SystemExit:\n"
        "    pass\n"
        "assert 'groupctl.ops.lag_schedule' in sys.modules, 'the recording did not run'\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"
