"""A reader that goes away (`groupctl ... | head -1`): the installed command ends with status 0
and nothing on stderr, as Unix tools do, whatever was printing: help, a describe of several
sections, small and large JSON, tables, CSV, the JSON Lines of `members simulate`.

Each command runs with stdout a pipe whose reader closes it either at once (the first write
fails: the command has not started when it closes) or after reading one line (a large output
fails mid-way: it fills the pipe while the reader is gone). The coordinator runs in-process with
the embedded store; the group `wide` has committed offsets on enough partitions that its
describe, JSON and CSV overflow a pipe's buffer (64 KiB) many times.
"""

from __future__ import annotations

import os
import select
import subprocess
import time

import pytest

from tests.e2e.test_cli_e2e import create_topic, installed_groupctl
from tests.support.coordinator import InProcessCoordinator, node_config

WIDE_PARTITIONS = 1500
RUN_TIMEOUT_S = 60.0


@pytest.fixture(scope="module")
def node():
    running = InProcessCoordinator(node_config()).start()
    try:
        create_topic(running.bootstrap, "wide-topic", WIDE_PARTITIONS)
        create_topic(running.bootstrap, "narrow-topic", 3)
        commits = [f"wide-topic:{p}={p}" for p in range(WIDE_PARTITIONS)]
        subprocess.run([installed_groupctl(), "offsets", "commit", "wide", *commits], env=environment(running),
                       check=True, capture_output=True, timeout=RUN_TIMEOUT_S)
        yield running
    finally:
        running.stop()


def environment(node: InProcessCoordinator) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUPCTL_") and k != "COLUMNS"}
    return {**env, "GROUPCTL_BOOTSTRAP": node.bootstrap}


def with_reader_gone(node: InProcessCoordinator, args: list[str], *, after_lines: int) -> tuple[int, str]:
    """Run the installed command, its stdout read for `after_lines` lines and then closed:
    (exit status, stderr)."""
    reading, writing = os.pipe()
    proc = subprocess.Popen([installed_groupctl(), *args], env=environment(node), stdin=subprocess.DEVNULL,
                            stdout=writing, stderr=subprocess.PIPE)
    os.close(writing)
    try:
        read, deadline = b"", time.monotonic() + RUN_TIMEOUT_S
        while read.count(b"\n") < after_lines and time.monotonic() < deadline:
            if select.select([reading], [], [], 0.5)[0]:
                chunk = os.read(reading, 1)  # no further than the line asked for
                if not chunk:
                    break
                read += chunk
        assert read.count(b"\n") == after_lines, (args, read)
    finally:
        os.close(reading)
    _, stderr = proc.communicate(timeout=RUN_TIMEOUT_S)
    return proc.returncode, stderr.decode()


WHEN = pytest.mark.parametrize("after_lines", [0, 1], ids=["closed-at-once", "closed-after-a-line"])


@WHEN
@pytest.mark.parametrize("args", [["--help"], ["coordinator", "run", "--help"], ["group"]],
                         ids=["root-help", "command-help", "group-without-command"])
def test_help_ends_with_status_0_and_nothing_on_stderr(node, args, after_lines):
    assert with_reader_gone(node, args, after_lines=after_lines) == (0, "")


@WHEN
@pytest.mark.parametrize("args", [
    ["group", "describe", "wide"],
    ["--output", "json", "group", "describe", "wide"],
    ["-o", "json", "group", "list"],
    ["offsets", "show", "wide"],
    ["offsets", "export", "wide"],
], ids=["describe-sections", "describe-json-large", "list-json-small", "offsets-table-large", "export-csv-large"])
def test_tables_json_and_csv_end_with_status_0_and_nothing_on_stderr(node, args, after_lines):
    assert with_reader_gone(node, args, after_lines=after_lines) == (0, "")


def test_a_shell_pipeline_into_head_succeeds_under_pipefail(node):
    done = subprocess.run(["bash", "-c", 'set -o pipefail; "$0" -o json offsets show wide | head -1',
                           installed_groupctl()], env=environment(node), capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S)
    assert (done.returncode, done.stdout, done.stderr) == (0, "{\n", "")


@WHEN
def test_members_simulate_json_lines_stop_the_rehearsal_and_end_with_status_0(node, after_lines):
    args = ["-o", "json", "members", "simulate", "--group", f"rehearsal-{after_lines}", "--count", "3",
            "--topic", "narrow-topic", "--duration", "60s"]
    started = time.monotonic()
    assert with_reader_gone(node, args, after_lines=after_lines) == (0, "")
    assert time.monotonic() - started < 30  # stopped by the closed pipe, not by --duration
