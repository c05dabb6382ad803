"""`groupctl lag record` as installed, against a groupctl coordinator subprocess (embedded store)
and a real kafka-python consumer committing what it consumed.

Checks the rows against what the consumer had acknowledged and what was produced (and against
`groupctl group describe`), that --duration and SIGINT end a recording with exit status 0, and
that a recording lives through its coordinator being killed and restarted on the same port: the
rounds in between fail with one warning line each, rows resume after the restart, and no file
anywhere is partial or malformed.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from kafka import KafkaProducer

from tests.e2e.test_cli_e2e import assert_quiet, installed_groupctl
from tests.support.consumers import ConsumerProcess
from tests.support.polling import wait_until
from tests.support.coordinator import CoordinatorProcess

TOPIC, PER_PARTITION = "events", (4, 7, 9)
IDLE_COMMITTED = {0: 1, 1: 2}
ROW_KEYS = ["v", "ts", "cluster", "group", "topic", "partition", "committed", "log_end", "state", "members", "owner"]
FILE_NAME = re.compile(r"part-(\d+)-(\d+)-(\d+)\.jsonl")


def produce(bootstrap: str) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    try:
        futures = [producer.send(TOPIC, value=b"m%d" % i, partition=p)
                   for p, count in enumerate(PER_PARTITION) for i in range(count)]
        producer.flush(30)
        for future in futures:
            future.get(timeout=10)
    finally:
        producer.close()


class Groupctl:
    def __init__(self, bootstrap: str) -> None:
        self.executable = installed_groupctl()
        self.bootstrap = bootstrap

    def run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        done = subprocess.run([self.executable, "--bootstrap", self.bootstrap, *args], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
        assert_quiet(done.stdout, done.stderr)
        return done

    def spawn(self, *args: str, stderr_path: Path) -> subprocess.Popen:
        with open(stderr_path, "w") as stderr:
            return subprocess.Popen([self.executable, "--bootstrap", self.bootstrap, *args], stdout=subprocess.PIPE,
                                    stderr=stderr, text=True, stdin=subprocess.DEVNULL)


def start_coordinator(data_dir: Path, log: Path, *port: str) -> CoordinatorProcess:
    return CoordinatorProcess("--data-dir", str(data_dir), "--topic", f"{TOPIC}:{len(PER_PARTITION)}", *port,
                              log_path=log).start()


def read_dataset(root: Path) -> list[dict]:
    """Every row under `root`, checking each file on the way: a final name in the right UTC
    partition directory, no dot-file left, whole lines that each hold one row of the documented schema."""
    assert not [p for p in root.rglob(".*")], "a temp file was left behind"
    rows = []
    for path in sorted(root.rglob("*.jsonl")):
        match = FILE_NAME.fullmatch(path.name)
        assert match, path
        first_ts = int(match.group(1))
        moment = datetime.fromtimestamp(first_ts / 1000, tz=timezone.utc)
        assert path.parent.relative_to(root).as_posix() == f"date={moment:%Y-%m-%d}/hour={moment:%H}"
        text = path.read_text()
        assert text.endswith("\n"), f"{path} ends in a partial line"
        file_rows = [json.loads(line) for line in text.splitlines()]
        assert file_rows and min(r["ts"] for r in file_rows) == first_ts
        assert all(list(r) == ROW_KEYS and r["v"] == 1 for r in file_rows)
        rows.extend(file_rows)
    return rows


def by_partition(rows: list[dict], group: str) -> dict[int, list[dict]]:
    result: dict[int, list[dict]] = {}
    for r in sorted((r for r in rows if r["group"] == group), key=lambda r: r["ts"]):
        assert r["topic"] == TOPIC
        result.setdefault(r["partition"], []).append(r)
    return result


@pytest.fixture(scope="module")
def consumed(tmp_path_factory):
    """A coordinator with `events` produced, the group `live` whose kafka-python consumer has
    consumed and committed everything, and the inactive group `idle`."""
    base = tmp_path_factory.mktemp("lag-record")
    node = start_coordinator(base / "data", base / "coordinator.log")
    consumer = None
    try:
        produce(node.bootstrap)
        groupctl = Groupctl(node.bootstrap)
        done = groupctl.run("offsets", "commit", "idle", *(f"{TOPIC}:{p}={o}" for p, o in IDLE_COMMITTED.items()))
        assert done.returncode == 0, done.stderr
        consumer = ConsumerProcess("kafka-python", node.bootstrap, "live", TOPIC, client_id="live-app",
                                   report_commits=True, max_seconds=300)
        everything = {(TOPIC, p): n for p, n in enumerate(PER_PARTITION)}
        wait_until(lambda: consumer.acknowledged() == everything, 60, interval=0.2,
                   message="the consumer committing every produced record")
        yield groupctl, consumer
    finally:
        if consumer is not None:
            consumer.stop()
        node.kill()


def test_rows_hold_the_consumers_commits_the_log_ends_and_the_owner_and_duration_ends_it(consumed, tmp_path):
    groupctl, consumer = consumed
    out = tmp_path / "dataset"
    started = time.monotonic()
    done = groupctl.run("--output", "json", "lag", "record", "--group", "live", "--group", "idle",
                        "--interval", "500ms", "--duration", "2s", "--out", str(out), timeout=60)
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 20
    assert done.stderr == ""
    summary = json.loads(done.stdout)
    assert summary["rounds"] + summary["missed_slots"] == 4 and summary["rounds"] >= 2
    assert summary["failed_rounds"] == 0 and summary["ended_by"] == "duration"
    assert summary["files"] == summary["rounds"] and summary["rows"] == 5 * summary["rounds"]

    rows = read_dataset(out)
    assert len(rows) == summary["rows"]
    live, idle = by_partition(rows, "live"), by_partition(rows, "idle")
    acknowledged = consumer.acknowledged()
    assert sorted(live) == [0, 1, 2] and sorted(idle) == [0, 1]
    for partition, samples in live.items():
        assert len(samples) == summary["rounds"]
        for r in samples:
            assert (r["committed"], r["log_end"]) == (acknowledged[(TOPIC, partition)], PER_PARTITION[partition])
            assert (r["state"], r["members"], r["owner"]) == ("Stable", 1, "live-app")
    for partition, samples in idle.items():
        for r in samples:
            assert (r["committed"], r["log_end"]) == (IDLE_COMMITTED[partition], PER_PARTITION[partition])
            assert (r["state"], r["members"], r["owner"]) == ("Empty", 0, None)
    assert {r["cluster"] for r in rows} == {groupctl.bootstrap}

    described = json.loads(groupctl.run("--output", "json", "group", "describe", "live").stdout)
    assert {o["partition"]: (o["committed_offset"], o["log_end_offset"]) for o in described["offsets"]} == {
        p: (samples[-1]["committed"], samples[-1]["log_end"]) for p, samples in live.items()}


def test_sigint_ends_a_recording_at_once_with_exit_status_0_and_a_summary(consumed, tmp_path):
    groupctl, _ = consumed
    out = tmp_path / "dataset"
    recorder = groupctl.spawn("--output", "json", "lag", "record", "--all-groups", "--interval", "1m",
                              "--out", str(out), stderr_path=tmp_path / "stderr")
    try:
        wait_until(lambda: list(out.rglob("*.jsonl")), 30, message="the first round's file")
        recorder.send_signal(signal.SIGINT)
        stdout, _ = recorder.communicate(timeout=10)  # well before the next round is due
    finally:
        if recorder.poll() is None:
            recorder.kill()
            recorder.wait(10)
    assert recorder.returncode == 0, (tmp_path / "stderr").read_text()
    summary = json.loads(stdout)
    assert (summary["rounds"], summary["files"], summary["ended_by"]) == (1, 1, "stop")
    assert {(r["group"], r["partition"]) for r in read_dataset(out)} == {
        ("live", 0), ("live", 1), ("live", 2), ("idle", 0), ("idle", 1)}


def test_a_recording_lives_through_its_coordinator_being_killed_and_restarted(tmp_path):
    node = start_coordinator(tmp_path / "data", tmp_path / "coordinator.log")
    groupctl = Groupctl(node.bootstrap)
    out, stderr_path = tmp_path / "dataset", tmp_path / "recorder.stderr"
    recorder = None
    try:
        produce(node.bootstrap)
        done = groupctl.run("offsets", "commit", "idle", *(f"{TOPIC}:{p}={o}" for p, o in IDLE_COMMITTED.items()))
        assert done.returncode == 0, done.stderr
        recorder = groupctl.spawn("--output", "json", "lag", "record", "--group", "idle", "--interval", "300ms",
                                  "--out", str(out), stderr_path=stderr_path)
        wait_until(lambda: len(list(out.rglob("*.jsonl"))) >= 2, 30, message="two rounds before the kill")

        node.kill()
        wait_until(lambda: "failed" in stderr_path.read_text(), 30, message="a failed round while it is down")
        restarted_ms = int(time.time() * 1000)
        node = start_coordinator(tmp_path / "data", tmp_path / "coordinator.log", "--port", str(node.port))
        wait_until(lambda: any(int(FILE_NAME.fullmatch(p.name).group(1)) > restarted_ms for p in out.rglob("part-*")),
                   60, message="rows sampled after the restart")

        recorder.send_signal(signal.SIGTERM)
        stdout, _ = recorder.communicate(timeout=30)
        assert recorder.returncode == 0, stderr_path.read_text()
    finally:
        if recorder is not None and recorder.poll() is None:
            recorder.kill()
            recorder.wait(10)
        node.kill()

    summary = json.loads(stdout)
    assert summary["failed_rounds"] >= 1 and summary["ended_by"] == "stop"
    warnings = stderr_path.read_text().splitlines()
    assert len(warnings) == summary["failed_rounds"]
    assert all(re.match(r"groupctl: warning: round \d+ failed: ", line) for line in warnings), warnings
    rows = read_dataset(out)
    assert len(rows) == summary["rows"] and len(list(out.rglob("*.jsonl"))) == summary["files"]
    assert summary["rounds"] == summary["files"] + summary["failed_rounds"]
    after = [r for r in rows if r["ts"] > restarted_ms]
    before = [r for r in rows if r["ts"] <= restarted_ms]
    assert before and after
    for r in rows:  # the committed offsets outlived the restart (embedded store in --data-dir)
        assert (r["committed"], r["log_end"]) == (IDLE_COMMITTED[r["partition"]], PER_PARTITION[r["partition"]])
