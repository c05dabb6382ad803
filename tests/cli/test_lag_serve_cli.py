"""`groupctl lag serve` in-process: the bad-input matrix (refused before anything is contacted,
bound or created), a port in use, and a short run against an in-process coordinator whose answers
are scraped while it runs."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.request

import pytest

from tests.cli.test_lag_record_cli import run
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.ports import closed_port


@pytest.mark.parametrize("args, fragment", [
    ([], "give either --group GROUP (repeatable) or --all-groups"),
    (["--group", "g", "--all-groups"], "give either --group GROUP (repeatable) or --all-groups"),
    (["--group", "g", "--interval", "ten"], "--interval 'ten' is not a duration"),
    (["--group", "g", "--history", "0s"], "--history must be longer than zero"),
    (["--group", "g", "--history", "4m"], "--history 4m keeps less than a window (10 rounds of 30s)"),
    (["--group", "g", "--webhook", "ftp://example.com/x"], "--webhook must be an http:// or https:// URL"),
    (["--group", "g", "--window", "0"], "--window"),
    (["--group", "g", "--port", "70000"], "--port"),
    (["--group", "g", "--rules", "kafka"], "--rules"),
    (["--group", "g", "--notify-threshold", "ok"], "--notify-threshold"),
    (["--group", ""], "the group id must not be empty"),
    (["--group", "g", "--cluster-name", "a/b"], "--cluster-name must be a non-empty name without '/'"),
    (["--group", "g", "--cluster-name", ""], "--cluster-name must be a non-empty name without '/'"),
])
def test_bad_input_is_refused_with_one_line_and_exit_2_before_anything_is_contacted(tmp_path, args, fragment):
    out = tmp_path / "dataset"
    result = run(["lag", "serve", "--port", "0", "--duration", "1s", "--out", str(out), *args],
                 bootstrap=f"127.0.0.1:{closed_port()}")
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stderr.splitlines()[0].startswith("groupctl: error: ") and fragment in result.stderr
    assert result.stdout == "" and not out.exists()


def test_a_port_in_use_is_one_error_line_and_exit_status_1():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run(["lag", "serve", "--all-groups", "--port", str(port), "--duration", "1s"],
                     bootstrap=f"127.0.0.1:{closed_port()}")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [f"groupctl: error: cannot serve on 127.0.0.1:{port}: Address already in use"]


def test_an_unreachable_cluster_is_served_as_known_nothing_and_every_round_fails_with_a_warning():
    bootstrap = f"127.0.0.1:{closed_port()}"
    result = run(["--output", "json", "lag", "serve", "--all-groups", "--port", "0", "--interval", "100ms",
                  "--duration", "300ms"], bootstrap=bootstrap)
    assert result.exit_code == 1
    *lines, summary = result.stdout.splitlines()
    assert lines == [] and json.loads(summary)["failed_rounds"] >= 1
    assert result.stderr.splitlines()[-1] == f"groupctl: error: every round failed: nothing was sampled from {bootstrap}"


def test_a_short_run_serves_the_groups_it_samples_and_prints_their_status_lines():
    from kafka import KafkaConsumer, KafkaProducer

    node = InProcessCoordinator(node_config(topics=(("events", 2),))).start()
    try:
        producer = KafkaProducer(bootstrap_servers=node.bootstrap)
        for partition in (0, 1):
            producer.send("events", value=b"m", partition=partition).get(10)
        producer.close()
        consumer = KafkaConsumer("events", bootstrap_servers=node.bootstrap, group_id="billing",
                                 auto_offset_reset="earliest", enable_auto_commit=False)
        deadline = time.monotonic() + 20
        while len(consumer.assignment()) < 2 and time.monotonic() < deadline:
            consumer.poll(200)
        consumer.commit()
        consumer.close()
        scraped: list[dict] = []

        def scrape_while_serving() -> None:
            """Once the server says it is ready (a round was evaluated), ask it for the consumer list (bounded)."""
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not scraped:
                try:
                    with urllib.request.urlopen(f"{base}/burrow/admin/ready", timeout=2):
                        pass
                    with urllib.request.urlopen(f"{base}/v3/kafka/demo/consumer", timeout=2) as answer:
                        scraped.append(json.loads(answer.read()))
                except OSError:  # not listening yet, or 503 STARTING
                    time.sleep(0.05)

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        watcher = threading.Thread(target=scrape_while_serving)
        watcher.start()
        result = run(["--output", "json", "lag", "serve", "--group", "billing", "--group", "ghost", "--port", str(port),
                      "--cluster-name", "demo", "--interval", "200ms", "--duration", "1s"], bootstrap=node.bootstrap)
        watcher.join()
    finally:
        node.stop()
    assert result.exit_code == 0, result.stderr
    *statuses, summary = [json.loads(line) for line in result.stdout.splitlines()]
    assert {s["group"]: s["status"] for s in statuses} == {"billing": "OK", "ghost": "NOTFOUND"}
    assert len(statuses) == 2 * summary["rounds"]  # both groups, every evaluation
    assert summary["ended_by"] == "duration" and summary["out"] is None
    assert scraped and scraped[0]["consumers"] == ["billing"]
    assert result.stderr.startswith(f"groupctl lag serve: http://127.0.0.1:{port}/v3/kafka/demo ")


@pytest.mark.parametrize("command", [["lag", "serve", "--port", "0"], ["lag", "record", "--out", "unused"]])
def test_a_malformed_bootstrap_is_bad_input_before_any_round(command, tmp_path):
    result = run([*command, "--group", "g", "--duration", "1s"], bootstrap="nohost:notaport")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == ["groupctl: error: bootstrap server 'nohost:notaport' is not HOST:PORT"]
