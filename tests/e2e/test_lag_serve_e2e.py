"""`groupctl lag serve` as installed, against a groupctl coordinator subprocess (embedded store), a
producer that keeps writing and real kafka-python consumers committing what they consumed.

Two groups on the topic: `healthy`, whose consumer keeps up, and `dying`, whose consumer consumed,
committed and was SIGKILLed (the group empties after its 6 s session timeout). One server with
--out, --webhook and --output json (and a second one, given a webhook that fails at first) runs
while `dying` turns ERR, recovers under a new consumer and turns ERR again; then it is stopped and
a new server reads its dataset back, and hears `dying` recover once more. The tests run in file
order and share these processes: each picks up where the one before left off, so each states what
it expects to find.

Checks Burrow's HTTP answers and the Prometheus metrics, one webhook notification per change (with
retries), the JSON lines on stdout and the SIGTERM summary, the dataset's rows, and that a restart
rebuilds the windows (ERR at once, no second `open`) and the incidents (its `close` carries the id
of the `open` told before it).
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from kafka import KafkaProducer
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.test_cli_e2e import assert_quiet, installed_groupctl
from tests.e2e.test_lag_record import read_dataset
from tests.support.consumers import ConsumerProcess
from tests.support.coordinator import CoordinatorProcess
from tests.support.polling import wait_until

TOPIC, PARTITIONS = "events", 3
CLUSTER = "local"
EVERYTHING = [(TOPIC, p) for p in range(PARTITIONS)]
READY = re.compile(r"^groupctl lag serve: (http://127\.0\.0\.1:\d+)/v3/kafka/local \(metrics at ")
SERVE_OPTIONS = ("--port", "0", "--interval", "500ms", "--window", "4", "--notify-threshold", "err")
STATUS_KEYS = {"cluster", "group", "status", "complete", "partitions", "partition_count", "maxlag", "totallag"}
PARTITION_KEYS = {"topic", "partition", "owner", "client_id", "status", "start", "end", "current_lag", "complete"}
ERR_WITHIN_S = 30  # the session timeout (6 s) plus a window of rounds, with room for a slow machine


class Producer:
    """One record per partition every 150 ms, on a thread that `stop` ends (bounded by `max_seconds`)."""

    def __init__(self, bootstrap: str, max_seconds: float = 150) -> None:
        self._producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=0)
        self._stop = threading.Event()
        self._deadline = time.monotonic() + max_seconds
        self._thread = threading.Thread(target=self._run, name="producer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        n = 0
        while not self._stop.wait(0.15) and time.monotonic() < self._deadline:
            for partition in range(PARTITIONS):
                self._producer.send(TOPIC, value=b"r%d" % n, partition=partition)
            n += 1

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self._producer.close(5)


class Receiver:
    """A webhook receiver on 127.0.0.1: records the JSON body of every POST it accepts, after
    answering 500 to the first `failures` ones."""

    def __init__(self, failures: int = 0) -> None:
        self.bodies: list[dict] = []
        self.refused = 0
        receiver, lock = self, threading.Lock()
        self._lock = lock

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with lock:
                    refuse = receiver.refused < failures
                    if refuse:
                        receiver.refused += 1
                    else:
                        receiver.bodies.append(json.loads(body))
                self.send_response(500 if refuse else 200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format, *args) -> None:  # noqa: A002
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/hook"
        self._thread = threading.Thread(target=self._server.serve_forever, name="receiver", daemon=True)
        self._thread.start()

    def events(self, group: str, event: str | None = None) -> list[dict]:
        with self._lock:
            return [b for b in self.bodies if b["group"] == group and (event is None or b["event"] == event)]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class Serve:
    """`groupctl --output json lag serve` as a child: stdout's lines collected by a thread, stderr in a file."""

    def __init__(self, bootstrap: str, stderr_path: Path, *options: str) -> None:
        self.stderr_path = stderr_path
        self.lines: list[str] = []
        with open(stderr_path, "w") as stderr:
            self.proc = subprocess.Popen([installed_groupctl(), "--bootstrap", bootstrap, "--output", "json", "lag",
                                          "serve", *SERVE_OPTIONS, *options], stdout=subprocess.PIPE, stderr=stderr,
                                         text=True, stdin=subprocess.DEVNULL)
        self._reader = threading.Thread(target=lambda: self.lines.extend(self.proc.stdout), daemon=True)
        self._reader.start()
        try:
            self.ready_line = wait_until(self._ready_line, 30, message="the ready line on stderr")
        except BaseException:
            self.kill()
            raise
        self.url = READY.match(self.ready_line).group(1)

    def _ready_line(self) -> str | None:
        assert self.proc.poll() is None, self.stderr_path.read_text()
        return next((line for line in self.stderr_path.read_text().splitlines() if READY.match(line)), None)

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def statuses(self, group: str) -> list[dict]:
        """The status objects printed so far for `group`, in order."""
        return [doc for doc in map(json.loads, list(self.lines)) if doc.get("group") == group and "status" in doc]

    def get(self, path: str) -> tuple[int, dict]:
        try:
            with urllib.request.urlopen(self.url + path, timeout=5) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def status(self, group: str) -> str:
        return self.get(f"/v3/kafka/{CLUSTER}/consumer/{group}/status")[1]["status"]["status"]

    def partition_statuses(self, group: str) -> set[str]:
        return {p["status"] for p in self.get(f"/v3/kafka/{CLUSTER}/consumer/{group}/lag")[1]["status"]["partitions"]}

    def metrics(self) -> dict[tuple[str, tuple], float]:
        """(sample name, sorted labels) -> value of every sample /metrics exports."""
        with urllib.request.urlopen(self.url + "/metrics", timeout=5) as response:
            text = response.read().decode()
        return {(s.name, tuple(sorted(s.labels.items()))): s.value
                for family in text_string_to_metric_families(text) for s in family.samples}

    def ok_rounds(self) -> float:
        return self.metrics().get(("groupctl_lag_rounds_total", (("outcome", "ok"),)), 0)

    def wait_rounds(self, count: int) -> None:
        """Until `count` more rounds were evaluated (bounded)."""
        target = self.ok_rounds() + count
        wait_until(lambda: self.ok_rounds() >= target, 5 + count, message=f"{count} more rounds")

    def stop(self) -> tuple[int, list[dict]]:
        """SIGTERM; the exit status and every stdout line, parsed (each must be one JSON object)."""
        self.proc.send_signal(signal.SIGTERM)
        status = self.proc.wait(15)
        self._reader.join(5)
        assert_quiet("".join(self.lines), self.stderr)
        return status, [json.loads(line) for line in self.lines]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def labels(**pairs: str) -> tuple:
    return tuple(sorted({"cluster": CLUSTER, **pairs}.items()))


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The coordinator, the producer, `healthy`'s consumer, `dying` (its consumer killed once it
    committed on every partition), and the first server (--out, a webhook) plus a second one
    (--group dying) whose webhook answers 500 twice before it accepts."""
    base = tmp_path_factory.mktemp("lag-serve")
    with ExitStack() as stack:
        node = CoordinatorProcess("--data-dir", str(base / "data"), "--topic", f"{TOPIC}:{PARTITIONS}",
                                  log_path=base / "coordinator.log").start()
        stack.callback(node.kill)
        stack.callback(Producer(node.bootstrap).stop)
        healthy = ConsumerProcess("kafka-python", node.bootstrap, "healthy", TOPIC, client_id="healthy-app",
                                  max_seconds=150)
        stack.callback(healthy.kill)
        dying = ConsumerProcess("kafka-python", node.bootstrap, "dying", TOPIC, client_id="dying-app",
                                report_commits=True, max_seconds=150)
        stack.callback(dying.kill)
        wait_until(lambda: sorted(dying.acknowledged()) == EVERYTHING, 30, interval=0.1,
                   message="dying's consumer committing on every partition")
        dying.kill()
        receiver, flaky = Receiver(), Receiver(failures=2)
        stack.callback(receiver.close)
        stack.callback(flaky.close)
        out = base / "dataset"
        first = Serve(node.bootstrap, base / "first.stderr", "--all-groups", "--out", str(out),
                      "--webhook", receiver.url)
        stack.callback(first.kill)
        retried = Serve(node.bootstrap, base / "retried.stderr", "--webhook", flaky.url, "--group", "dying")
        stack.callback(retried.kill)
        yield {"node": node, "base": base, "out": out, "receiver": receiver, "flaky": flaky, "first": first,
               "retried": retried}


def test_a_group_whose_consumer_died_turns_err_with_its_partitions_stop_in_burrows_shape(world):
    first: Serve = world["first"]
    # STALL (ERR) at once while the dead member holds its partitions, STOP once the session timeout emptied the group
    wait_until(lambda: first.partition_statuses("dying") == {"STOP"}, ERR_WITHIN_S, interval=0.25,
               message="dying's partitions in STOP")

    code, answer = first.get(f"/v3/kafka/{CLUSTER}/consumer/dying/status")
    assert code == 200
    assert set(answer) == {"error", "message", "status", "request"} and answer["error"] is False
    assert answer["request"]["url"] == f"/v3/kafka/{CLUSTER}/consumer/dying/status" and answer["request"]["host"]
    status = answer["status"]
    assert STATUS_KEYS <= set(status)
    assert (status["cluster"], status["group"], status["status"]) == (CLUSTER, "dying", "ERR")
    assert status["partition_count"] == PARTITIONS and status["complete"] == 1.0
    stopped = status["partitions"]
    assert [(p["topic"], p["partition"], p["status"]) for p in stopped] == [
        (TOPIC, p, "STOP") for p in range(PARTITIONS)]
    for p in stopped:
        assert PARTITION_KEYS <= set(p) and p["client_id"] == ""  # nobody owns it any more
        assert p["current_lag"] > 0 and p["start"]["offset"] == p["end"]["offset"]
        assert set(p["end"]) == {"offset", "timestamp", "observedAt", "lag"}
    assert status["maxlag"]["current_lag"] == max(p["current_lag"] for p in status["partitions"])
    assert status["totallag"] == sum(p["current_lag"] for p in stopped)

    assert first.status("healthy") == "OK"
    code, healthy = first.get(f"/v3/kafka/{CLUSTER}/consumer/healthy/status")
    code_all, healthy_all = first.get(f"/v3/kafka/{CLUSTER}/consumer/healthy/lag")
    assert (code, code_all) == (200, 200)
    assert healthy["status"]["partitions"] == []  # /status: only the partitions not OK
    assert [(p["partition"], p["status"]) for p in healthy_all["status"]["partitions"]] == [
        (p, "OK") for p in range(PARTITIONS)]  # /lag: all of them

    assert first.get("/v3/kafka")[1]["clusters"] == [CLUSTER]
    assert first.get(f"/v3/kafka/{CLUSTER}/consumer")[1]["consumers"] == ["dying", "healthy"]
    code, unknown = first.get(f"/v3/kafka/{CLUSTER}/consumer/nobody/status")
    assert code == 404 and unknown["status"]["status"] == "NOTFOUND" and unknown["status"]["partitions"] == []


def test_metrics_carry_burrows_status_codes_and_the_dead_groups_growing_lag(world):
    first: Serve = world["first"]
    before = first.metrics()
    first.wait_rounds(2)
    after = first.metrics()
    assert after[("groupctl_consumer_status", labels(group="dying"))] == 3
    assert after[("groupctl_consumer_status", labels(group="healthy"))] == 1
    for partition in range(PARTITIONS):
        key = labels(group="dying", topic=TOPIC, partition=str(partition))
        assert after[("groupctl_consumer_partition_status", key)] == 4
        assert after[("groupctl_consumer_lag", key)] > before[("groupctl_consumer_lag", key)]
    assert after[("groupctl_lag_rounds_total", (("outcome", "ok"),))] > 0


def test_the_webhook_hears_once_of_an_incident_and_once_of_its_end_with_the_same_id(world):
    first, receiver, node = world["first"], world["receiver"], world["node"]
    wait_until(lambda: receiver.events("dying", "open"), 10, message="the open notification")
    first.wait_rounds(4)  # ERR all along: nothing more to tell
    [opened] = receiver.events("dying")
    assert (opened["event"], opened["cluster"], opened["status"]) == ("open", CLUSTER, "ERR")
    assert opened["previous_status"] == "OK" and opened["id"] and opened["start"] <= opened["at"]
    assert opened["result"]["status"] == "ERR" and STATUS_KEYS <= set(opened["result"])
    assert receiver.events("healthy") == []

    recovering = ConsumerProcess("kafka-python", node.bootstrap, "dying", TOPIC, client_id="dying-again",
                                 max_seconds=60)
    try:
        wait_until(lambda: receiver.events("dying", "close"), 30, interval=0.2, message="the close notification")
        first.wait_rounds(2)
        assert receiver.events("healthy") == []
        [_, closed] = receiver.events("dying")
        assert (closed["event"], closed["id"], closed["start"]) == ("close", opened["id"], opened["start"])
        assert (closed["status"], closed["previous_status"]) == ("OK", "ERR")
    finally:
        recovering.kill()  # dead again: `dying` is to be ERR when the first server stops


def test_a_notification_the_receiver_refuses_is_retried_until_it_arrives(world):
    retried, flaky = world["retried"], world["flaky"]
    wait_until(lambda: flaky.events("dying", "open"), ERR_WITHIN_S, interval=0.2, message="the retried open")
    assert flaky.refused == 2
    warnings = [line for line in retried.stderr.splitlines() if line.startswith("groupctl: warning: webhook")]
    assert len(warnings) == 2 and all("HTTP 500" in line and "open local dying" in line for line in warnings), warnings
    code, lines = retried.stop()
    assert code == 0
    assert {doc["group"] for doc in lines if "group" in doc} == {"dying"}


def test_sigterm_ends_the_server_with_status_0_after_a_json_line_per_group_per_evaluation(world):
    first, receiver = world["first"], world["receiver"]
    wait_until(lambda: len(receiver.events("dying", "open")) == 2, ERR_WITHIN_S, interval=0.2,
               message="dying in ERR again, told once more")
    code, lines = first.stop()
    assert code == 0, first.stderr
    *statuses, summary = lines
    assert summary["ended_by"] == "stop" and summary["failed_rounds"] == 0 and summary["out"] == str(world["out"])
    assert all(STATUS_KEYS <= set(doc) for doc in statuses)
    dying = [doc for doc in statuses if doc["group"] == "dying"]
    healthy = [doc for doc in statuses if doc["group"] == "healthy"]
    assert len(dying) == len(healthy) == summary["rounds"]  # both known from the first round on
    assert dying[-1]["status"] == "ERR"

    rows = read_dataset(world["out"])  # every row of `lag record`'s schema (ROW_KEYS)
    assert len(rows) == summary["rows"] and {r["group"] for r in rows} == {"dying", "healthy"}
    assert {r["cluster"] for r in rows} == {CLUSTER}


def test_a_restarted_server_reads_its_dataset_back_and_neither_forgets_nor_repeats_an_incident(world):
    base, receiver, node = world["base"], world["receiver"], world["node"]
    told = receiver.events("dying")
    second = Serve(node.bootstrap, base / "second.stderr", "--all-groups", "--out", str(world["out"]),
                   "--webhook", receiver.url)
    recovering = None
    try:
        assert re.search(r"; [1-9]\d* row\(s\) read back from ", second.ready_line), second.ready_line
        wait_until(lambda: second.statuses("dying"), 10, message="the second server's first evaluation")
        assert second.statuses("dying")[0]["status"] == "ERR"  # windows rebuilt: not "not full yet, OK"
        second.wait_rounds(4)
        assert receiver.events("dying") == told  # the open incident was told before the restart

        recovering = ConsumerProcess("kafka-python", node.bootstrap, "dying", TOPIC, client_id="dying-at-last",
                                     max_seconds=60)
        wait_until(lambda: len(receiver.events("dying")) > len(told), 30, interval=0.2,
                   message="the close after the restart")
        [closed] = receiver.events("dying")[len(told):]
        assert (closed["event"], closed["id"], closed["start"]) == ("close", told[-1]["id"], told[-1]["start"])
        code, _ = second.stop()
        assert code == 0
    finally:
        second.kill()
        if recovering is not None:
            recovering.kill()
