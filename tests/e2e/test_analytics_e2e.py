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

from tests.e2e.test_cli_e2e import installed_groupctl
from tests.support.cluster import SteadyProducer
from tests.support.consumers import wait_until
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
