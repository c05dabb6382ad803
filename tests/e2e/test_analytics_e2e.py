"""Record live groups on a groupctl coordinator, then analyze what was recorded and journaled.

One coordinator (embedded store, data dir, so it writes its event journal), one topic with a
steady producer, and four groups whose behaviour is staged by the test so each status is known:

- `healthy`: a real consumer that polls and commits; the producer stops before the end, so it
  ends caught up: OK.
- `stalled`: a member that commits once and then only heartbeats: its committed offset never
  moves while it stays in the group: STALL (group ERR).
- `stopped`: a member commits advancing offsets behind the log end, then leaves; the recording
  goes on well past the window's span: STOP (group ERR).
- `rewound`: like `stopped`, then `groupctl offsets reset --to-earliest --execute`: the
  committed offset goes backwards: REWIND (group ERR).

The recorder and the analysis run as the installed `groupctl` command, as an operator runs them.
The journal must show each group's rebalances and pass the audit (the reset is an admin commit).

Then the consumer that died caught up (docs/lag-and-rebalances.md, "analyze lag"): a kafka-python
consumer process keeps up with a steady producer, then exits (closing, so its group empties at once) while the
producer goes on. With the groupctl rules it is STOP as soon as its silence outlasts its
window's span; with Burrow's it stays OK until none of the last `--window` log ends is at its
committed offset, and is STOP only then.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

import pytest
from kafka import KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata

from groupctl.lag.rules import Rules, partition_status
from groupctl.lag.window import Sample, partition_window
from tests.e2e.test_cli_e2e import installed_groupctl
from tests.support.cluster import SteadyProducer
from tests.support.consumers import ConsumerProcess
from tests.support.polling import wait_until
from tests.support.coordinator import InProcessCoordinator, node_config

TOPIC, PARTITIONS = "orders", 2
INTERVAL_S, WINDOW = 0.5, 3
RECORD_S = 11.0


def groupctl(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([installed_groupctl(), *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def member(bootstrap: str, group: str) -> KafkaConsumer:
    """A subscribed consumer that has its assignment (auto-commit off: the test commits)."""
    consumer = KafkaConsumer(TOPIC, bootstrap_servers=bootstrap, group_id=group, client_id=group,
                             enable_auto_commit=False, auto_offset_reset="earliest",
                             session_timeout_ms=10_000, heartbeat_interval_ms=500)
    wait_until(lambda: consumer.poll(timeout_ms=200, max_records=1) is not None and consumer.assignment(),
               timeout=30, message=f"{group} assigned")
    return consumer


def commit_behind(consumer: KafkaConsumer, fraction: float) -> None:
    """Commit `fraction` of each partition's log end: advancing, but never caught up."""
    parts = [TopicPartition(TOPIC, p) for p in range(PARTITIONS)]
    ends = consumer.end_offsets(parts)
    consumer.commit({tp: OffsetAndMetadata(max(1, int(ends[tp] * fraction)), "", -1) for tp in parts})


class HealthyConsumer(threading.Thread):
    """Polls and commits after every poll until told to stop (bounded by `max_seconds`)."""

    def __init__(self, bootstrap: str) -> None:
        super().__init__(daemon=True, name="healthy")
        self.bootstrap = bootstrap
        self.done = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            consumer = member(self.bootstrap, "healthy")
            deadline = time.monotonic() + 120
            while not self.done.is_set() and time.monotonic() < deadline:
                if consumer.poll(timeout_ms=100):
                    consumer.commit()
            consumer.close()
        except BaseException as exc:  # reported by the test
            self.error = exc


@pytest.fixture
def coordinator(tmp_path):
    node = InProcessCoordinator(node_config(data_dir=tmp_path / "data", topics=((TOPIC, PARTITIONS),))).start()
    yield node
    node.stop()


def test_recorded_groups_get_the_statuses_their_behaviour_deserves(coordinator, tmp_path):
    bootstrap = coordinator.bootstrap
    dataset = tmp_path / "lag"
    producer = SteadyProducer(bootstrap, TOPIC, PARTITIONS, rate=40, max_seconds=60)
    healthy = HealthyConsumer(bootstrap)
    healthy.start()
    stalled, stopped, rewound = (member(bootstrap, g) for g in ("stalled", "stopped", "rewound"))
    commit_behind(stalled, 0.5)
    recorder = subprocess.Popen(
        [installed_groupctl(), "--bootstrap", bootstrap, "--output", "json", "lag", "record",
         "--group", "healthy", "--group", "stalled", "--group", "stopped", "--group", "rewound",
         "--interval", f"{INTERVAL_S}s", "--duration", f"{RECORD_S}s", "--out", str(dataset)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        staged_until = time.monotonic() + 3.0
        while time.monotonic() < staged_until:  # the leaving members commit behind the log end
            commit_behind(stopped, 0.5)
            commit_behind(rewound, 0.6)
            time.sleep(0.3)
        stopped.close()
        rewound.close()
        reset = groupctl("--bootstrap", bootstrap, "offsets", "reset", "rewound", "--all-topics",
                         "--to-earliest", "--execute")
        assert reset.returncode == 0, reset.stderr
        time.sleep(RECORD_S - 6.0)
        producer.stop()  # healthy catches up before the recording ends
        out, err = recorder.communicate(timeout=60)
    finally:
        if recorder.poll() is None:
            recorder.kill()
        healthy.done.set()
        healthy.join(30)
        stalled.close()
    assert recorder.returncode == 0, err
    assert healthy.error is None
    summary = json.loads(out)
    assert summary["rows"] > 0 and summary["failed_rounds"] == 0

    analyzed = groupctl("analyze", "lag", str(dataset), "--master", "local[2]", "--window", str(WINDOW),
                        "--output", "json")
    assert analyzed.returncode == 0, analyzed.stderr
    report = json.loads(analyzed.stdout)
    groups = {g["group"]: g["status"] for g in report["groups"]}
    partitions = {(p["group"], p["partition"]): p for p in report["partitions"]}
    assert groups == {"healthy": "OK", "stalled": "ERR", "stopped": "ERR", "rewound": "ERR"}
    assert {partitions["stalled", p]["status"] for p in range(PARTITIONS)} == {"STALL"}
    assert {partitions["stopped", p]["status"] for p in range(PARTITIONS)} == {"STOP"}
    assert {partitions["rewound", p]["status"] for p in range(PARTITIONS)} == {"REWIND"}
    for p in range(PARTITIONS):
        row = partitions["stalled", p]
        assert row["current_lag"] == row["log_end"] - row["committed"] > 0
        assert partitions["rewound", p]["committed"] == 0

    journal = Path(tmp_path / "data" / "journal")
    rebalances = groupctl("analyze", "rebalances", str(journal), "--master", "local[2]", "--output", "json")
    assert rebalances.returncode == 0, rebalances.stderr
    by_group = {g["group"]: g for g in json.loads(rebalances.stdout)["groups"]}
    assert set(by_group) >= {"healthy", "stalled", "stopped", "rewound"}
    for name in ("stopped", "rewound"):  # joined, then left: two rebalances, the second one to Empty
        assert by_group[name]["reasons"].get("join", 0) >= 1
        assert by_group[name]["reasons"].get("leave", 0) == 1
        assert by_group[name]["leaves"] == 1
    audit = groupctl("analyze", "audit", str(journal), "--master", "local[2]", "--output", "json")
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert json.loads(audit.stdout)["violations"] == []


# -- a consumer group (KIP-848) --------------------------------------------------------------------

def test_a_consumer_groups_epochs_are_analyzed_and_its_ownership_audited(tmp_path):
    """Two confluent-kafka consumers with group.protocol=consumer: the first joins, the second
    joins and takes half, then leaves, then the first leaves. `analyze rebalances` shows one row
    per group epoch with its time to STABLE and the partitions it moved; `analyze audit` finds
    every partition with one owner at each member epoch and every commit by its owner."""
    from groupctl.coordinator.consumer.config import ConsumerGroupConfig

    topic, group = "events", "kip848"
    node = InProcessCoordinator(node_config(
        data_dir=tmp_path / "data", topics=((topic, 4),),
        consumer_groups=ConsumerGroupConfig(session_timeout_ms=10_000, heartbeat_interval_ms=500))).start()
    producer = SteadyProducer(node.bootstrap, topic, 4, rate=40, max_seconds=90)

    def member(client_id: str) -> ConsumerProcess:
        return ConsumerProcess("confluent", node.bootstrap, group, topic, client_id=client_id,
                               group_protocol="consumer", max_seconds=90)

    first = member("first")
    second = None
    try:
        wait_until(lambda: len(first.snapshot()[0]) == 4 and first.snapshot()[1], 60,
                   message="the first member consuming all four partitions")
        second = member("second")
        wait_until(lambda: len(first.snapshot()[0]) == 2 and len(second.snapshot()[0]) == 2 and second.snapshot()[1],
                   60, message="two partitions each, both consuming")
        second.stop()  # closes: a leave heartbeat
        wait_until(lambda: len(first.snapshot()[0]) == 4, 30, message="the first member owning all four again")
        consumed = len(first.snapshot()[1])
        wait_until(lambda: len(first.snapshot()[1]) > consumed, 30, message="the first member consuming on")
        first.stop()
    finally:
        producer.stop()
        first.stop()
        if second is not None:
            second.stop()
        node.stop()
    assert first.lost == [] and second.lost == []

    journal = Path(tmp_path / "data" / "journal")
    rebalances = groupctl("analyze", "rebalances", str(journal), "--master", "local[2]", "--output", "json")
    assert rebalances.returncode == 0, rebalances.stderr
    report = json.loads(rebalances.stdout)
    [summary] = report["groups"]
    assert (summary["group"], summary["group_type"], summary["joins"], summary["leaves"]) == (group, "consumer", 2, 2)
    assert summary["reasons"] == {"join": 2, "leave": 2} and summary["unfinished"] == 0
    epochs = [row for row in report["timeline"] if row["group"] == group]
    assert [(r["generation"], r["reason"], r["state"], r["members"], r["moved"]) for r in epochs] == [
        (1, "join", "Stable", 1, 4), (2, "join", "Stable", 2, 2), (3, "leave", "Stable", 1, 2),
        (4, "leave", "Empty", 0, None)]
    assert epochs[1]["duration_ms"] > 0  # the first member revoked two partitions before they moved
    assert all(r["group_type"] == "consumer" and r["completed_ts"] >= r["started_ts"] for r in epochs)

    audit = groupctl("analyze", "audit", str(journal), "--master", "local[2]", "--output", "json")
    assert audit.returncode == 0, audit.stdout + audit.stderr
    audited = json.loads(audit.stdout)
    assert audited["violations"] == []
    checks = {row["invariant"]: row for row in audited["summary"]}
    assert checks["single_owner"]["checked"] >= 12  # four partitions at epochs 1, 2 and 3 at least
    assert checks["owner_commits"]["checked"] > 0 and checks["owner_commits"]["unverified"] == 0


# -- a consumer that died caught up --------------------------------------------------------------

DEAD_INTERVAL_S, DEAD_WINDOW = 0.5, 20
KEPT_UP_S, DEAD_RECORD_S = 4.0, 17.0


def recorded_samples(dataset: Path) -> list[dict]:
    return sorted((json.loads(line) for file in dataset.glob("date=*/hour=*/*.jsonl")
                   for line in file.read_text().splitlines()), key=lambda row: row["ts"])


def statuses_over_time(rows: list[dict], rules: Rules) -> dict[int, str]:
    """The partition's status at each sample time, evaluated in this process."""
    samples = [Sample(r["ts"], r["committed"], r["log_end"], r["members"], r["owner"]) for r in rows]
    return {r["ts"]: partition_status(partition_window(samples, size=DEAD_WINDOW, now=r["ts"]), rules=rules)
            for r in rows}


def test_a_consumer_that_died_caught_up_is_stop_and_burrows_rules_see_it_later(zk_connect, tmp_path, spark):
    from groupctl.cli.app import app
    from typer.testing import CliRunner

    node = InProcessCoordinator(node_config(zk=zk_connect, data_dir=tmp_path / "data",
                                            topics=(("payments", 1),))).start()
    producer = SteadyProducer(node.bootstrap, "payments", 1, rate=20, max_seconds=60)
    consumer = ConsumerProcess("kafka-python", node.bootstrap, "dead", "payments", client_id="dead", max_seconds=60)
    dataset = tmp_path / "lag"
    try:
        wait_until(lambda: consumer.snapshot()[1], timeout=30, message="the consumer consuming")
        recorder = subprocess.Popen(
            [installed_groupctl(), "--bootstrap", node.bootstrap, "--output", "json", "lag", "record",
             "--group", "dead", "--interval", f"{DEAD_INTERVAL_S}s", "--duration", f"{DEAD_RECORD_S}s",
             "--out", str(dataset)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(KEPT_UP_S)
            consumer.stop()  # closes: LeaveGroup, the group is Empty from now on
            out, err = recorder.communicate(timeout=60)
        finally:
            if recorder.poll() is None:
                recorder.kill()
    finally:
        consumer.kill()
        producer.stop()
        node.stop()
    assert recorder.returncode == 0, err
    rows = recorded_samples(dataset)
    died_at = next(r["ts"] for r in rows if r["members"] == 0)
    assert all(r["members"] == 1 for r in rows if r["ts"] < died_at)
    assert any(r["log_end"] == r["committed"] for r in rows if r["ts"] < died_at)  # it kept up: lag 0
    assert all(r["members"] == 0 and r["committed"] == rows[-1]["committed"] for r in rows if r["ts"] >= died_at)
    assert rows[-1]["log_end"] - rows[-1]["committed"] > 50  # the producer went on

    ours, burrows = statuses_over_time(rows, Rules.GROUPCTL), statuses_over_time(rows, Rules.BURROW)
    ours_stop = min(ts for ts, status in ours.items() if status == "STOP")
    burrows_stop = min(ts for ts, status in burrows.items() if status == "STOP")
    assert died_at < ours_stop < burrows_stop
    assert {status for ts, status in ours.items() if ts >= ours_stop} == {"STOP"}
    assert burrows[ours_stop] == "OK"  # Burrow: a recent log end is still at the committed offset

    analyzed = groupctl("analyze", "lag", str(dataset), "--master", "local[2]", "--window", str(DEAD_WINDOW),
                        "--output", "json")
    assert analyzed.returncode == 0, analyzed.stderr
    report = json.loads(analyzed.stdout)
    [partition] = report["partitions"]
    assert (report["groups"][0]["status"], partition["status"]) == ("ERR", "STOP")
    assert partition["current_lag"] == rows[-1]["log_end"] - rows[-1]["committed"]

    def group_status_at(ts: int, rules: str) -> str:
        result = CliRunner().invoke(app, ["--output", "json", "analyze", "lag", str(dataset), "--window",
                                          str(DEAD_WINDOW), "--rules", rules, "--at", str(ts)],
                                    env={"GROUPCTL_SPARK_MASTER": None}, catch_exceptions=False)
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)["groups"][0]["status"]

    assert (group_status_at(ours_stop, "groupctl"), group_status_at(ours_stop, "burrow")) == ("ERR", "OK")
    assert group_status_at(rows[-1]["ts"], "burrow") == "ERR"

