"""Partition growth under load: a subscribed topic grows from 100 to 1,000 partitions while its
group consumes; KIP-848 consumer groups against classic groups doing the same.

    python -m bench.partition_growth [--repeats 5] [--members 4] [--partitions 100] [--grow-to 1000]
        [--modes consumer cooperative eager] [--heartbeat-ms 1000] [--interval-ms 50] [--memory-logs]

Starts its own ZooKeeper (Debian's package, 127.0.0.1, the test settings) and one `groupctl
coordinator run` node on it (partition logs in a temp --data-dir, or in memory with
--memory-logs). Each run, for each mode in turn (interleaved: drift in the machine's load hits
every mode alike): a fresh topic; a producer thread writing one record to each partition every
--interval-ms; --members confluent-kafka consumer processes (`partition_growth_consumer.py`):
`consumer` = group.protocol=consumer (the server's uniform assignor), `cooperative` = classic
cooperative-sticky, `eager` = classic range. Once the group is balanced and consuming every
partition: a 3 s baseline, then CreatePartitions to --grow-to. Measured from its acknowledgement:
the time until the members together hold every partition (their assignment callbacks), and for
each original partition (all are kept: growth moves nothing that must move) the longest gap
between two polls returning its records, from 1 s before the change to 3 s after full
assignment; the same over the baseline is the floor. Kept partitions the members were told they
had revoked or lost after the change are counted. A probe asking the node for ApiVersions every
10 ms reports its slowest answer around the change: the node's event loop busy elsewhere.

Both protocols heartbeat every --heartbeat-ms (the node's --consumer-heartbeat-interval-ms, the
classic members' heartbeat.interval.ms), so this compares the protocols, not their default
intervals. groupctl rebalances a classic group itself when a subscribed topic grows (Apache
Kafka waits for the leader's metadata refresh), so both learn of it at a heartbeat. Every wait
is bounded; every process is ended by its pid.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic
from kafka.protocol.metadata import ApiVersionsRequest

from tests.support.coordinator import CoordinatorProcess
from tests.support.wire import read_frame
from tests.support.zookeeper import ZooKeeperServer

ROOT = Path(__file__).resolve().parents[1]
MODES = ("consumer", "cooperative", "eager")
LABELS = {"consumer": "consumer (KIP-848, uniform)", "cooperative": "classic, cooperative-sticky",
          "eager": "classic, range (eager)"}
STABLE_LIMIT_S = 120.0  # members joining and settling
GROWTH_LIMIT_S = 120.0  # CreatePartitions acknowledged -> every partition held
BASELINE_S = 3.0
BEFORE_S = 1.0
AFTER_S = 3.0
POLL_S = 0.01


def wait_for(predicate: Callable[[], object], limit_s: float, what: str) -> float:
    """Poll `predicate` every POLL_S until it is truthy; the monotonic time it first was."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if predicate():
            return time.monotonic()
        time.sleep(POLL_S)
    raise RuntimeError(f"no {what} within {limit_s:.0f} s")


@dataclass
class Member:
    """A consumer process and what it said, read by a thread."""

    proc: subprocess.Popen
    owned: set[int] = field(default_factory=set)
    told_gone: list[tuple[float, int]] = field(default_factory=list)  # (when, partition) revoked or lost
    last_change: float = 0.0
    consumed: dict[int, list[float]] = field(default_factory=dict)  # partition -> when polls returned it
    lock: threading.Lock = field(default_factory=threading.Lock)

    def read(self) -> None:
        for line in self.proc.stdout:
            event = json.loads(line)
            kind, when, partitions = event["e"], event["t"], event["p"]
            with self.lock:
                if kind == "c":
                    for p in partitions:
                        self.consumed.setdefault(p, []).append(when)
                    continue
                self.last_change = when
                if kind == "assigned":
                    self.owned |= set(partitions)
                else:
                    self.owned -= set(partitions)
                    self.told_gone.extend((when, p) for p in partitions)

    def consumed_times(self, partition: int) -> list[float]:
        with self.lock:
            return list(self.consumed.get(partition, ()))

    def view(self) -> tuple[set[int], float, dict[int, float]]:
        """(what it owns, when that last changed, partition -> when it was last consumed)."""
        with self.lock:
            return set(self.owned), self.last_change, {p: ts[-1] for p, ts in self.consumed.items()}

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)


def start_member(bootstrap: str, group: str, topic: str, mode: str, heartbeat_ms: int) -> Member:
    proc = subprocess.Popen([sys.executable, "-m", "bench.partition_growth_consumer", bootstrap, group, topic,
                             mode, str(heartbeat_ms), "600"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    member = Member(proc)
    threading.Thread(target=member.read, daemon=True).start()
    return member


class SteadyLoad:
    """A thread writing one record to each of `partitions` every `interval_s`, until `stop`."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, interval_s: float) -> None:
        self._producer = Producer({"bootstrap.servers": bootstrap, "broker.address.family": "v4",
                                   "linger.ms": 5, "acks": 1, "log.connection.close": False})
        self._topic, self._partitions, self._interval_s = topic, partitions, interval_s
        self._stop = threading.Event()
        self.failures = 0
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _failed(self, error, _message) -> None:
        if error is not None:
            self.failures += 1

    def _run(self) -> None:
        next_at = time.monotonic()
        deadline = next_at + 600  # bounded even if nobody stops it
        while not self._stop.is_set() and time.monotonic() < deadline:
            for p in range(self._partitions):
                self._producer.produce(self._topic, b"x" * 16, partition=p, on_delivery=self._failed)
            self._producer.poll(0)
            next_at += self._interval_s
            self._stop.wait(max(0.0, next_at - time.monotonic()))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self._producer.flush(10)


class Probe:
    """A thread asking the node for ApiVersions every 10 ms on its own connection: a slow answer
    is the node's event loop busy with something else (every request waits for it alike)."""

    def __init__(self, port: int) -> None:
        self._sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        request = ApiVersionsRequest[0]()
        request.with_header(correlation_id=1, client_id="bench-probe")
        self._frame = bytes(request.encode(version=0, header=True, framed=True))
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._answers: list[tuple[float, float]] = []  # (sent, answered)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        deadline = time.monotonic() + 3600
        while not self._stop.is_set() and time.monotonic() < deadline:
            sent = time.monotonic()
            try:
                self._sock.sendall(self._frame)
                read_frame(self._sock)
            except OSError:
                return
            with self._lock:
                self._answers.append((sent, time.monotonic()))
            self._stop.wait(0.01)

    def longest_wait(self, start: float, end: float) -> float:
        """The slowest answer to a request sent in [start, end]."""
        with self._lock:
            return max((answered - sent for sent, answered in self._answers if start <= sent <= end), default=0.0)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(15)
        self._sock.close()


def longest_gap(times: list[float], start: float, end: float) -> tuple[float, float]:
    """(length, beginning) of the longest time in [start, end] without a poll returning the
    partition's records (from the last poll before `start`, if any; to `end` after the last one)."""
    before = [t for t in times if t <= start]
    previous = before[-1] if before else start
    longest = (0.0, previous)
    for t in (t for t in times if start < t <= end):
        longest = max(longest, (t - previous, previous))
        previous = t
    return max(longest, (end - previous, previous))


@dataclass
class Outcome:
    to_full_s: float
    gap_s: float  # the longest gap of any kept partition around the change
    gap_at_s: float  # when it began, from the change
    typical_gap_s: float  # the median over kept partitions of each one's longest gap around the change
    node_stall_s: float  # the node's slowest ApiVersions answer around the change
    baseline_gap_s: float  # the longest gap of any partition over the baseline
    kept_gone: int  # kept partitions revoked or lost after the change
    owners_at_full: int  # sum of the members' assignment sizes when every partition was held


def one_run(admin: AdminClient, bootstrap: str, probe: Probe, args, mode: str, run: int) -> Outcome:
    topic, group = f"growth-{mode}-{run}", f"growth-{mode}-{run}"
    admin.create_topics([NewTopic(topic, args.partitions, 1)])[topic].result(15)
    load = SteadyLoad(bootstrap, topic, args.partitions, args.interval_ms / 1000)
    members: list[Member] = []
    try:
        members = [start_member(bootstrap, group, topic, mode, args.heartbeat_ms) for _ in range(args.members)]
        kept = set(range(args.partitions))
        share = {args.partitions // args.members, -(-args.partitions // args.members)}

        def held() -> set[int]:
            return set().union(*(m.view()[0] for m in members))

        def settled() -> bool:
            now = time.monotonic()
            views = [m.view() for m in members]
            if set().union(*(o for o, _, _ in views)) != kept or any(len(o) not in share for o, _, _ in views):
                return False
            if any(now - last < 1.0 for _, last, _ in views):  # no rebalance for a second
                return False
            latest = {p: max((c.get(p, 0.0) for _, _, c in views)) for p in kept}
            return all(now - t < 0.5 for t in latest.values())

        wait_for(settled, STABLE_LIMIT_S, f"{mode}: a balanced group consuming every partition")
        baseline_start = time.monotonic()
        time.sleep(BASELINE_S)
        baseline_end = time.monotonic()
        admin.create_partitions([NewPartitions(topic, args.grow_to)])[topic].result(30)
        changed = time.monotonic()
        everything = set(range(args.grow_to))
        full = wait_for(lambda: held() == everything, GROWTH_LIMIT_S, f"{mode}: all {args.grow_to} partitions held")
        owners_at_full = sum(len(m.view()[0]) for m in members)
        time.sleep(AFTER_S)
        end = full + AFTER_S

        def times(p: int) -> list[float]:
            return sorted(t for m in members for t in m.consumed_times(p))

        gaps = [longest_gap(times(p), changed - BEFORE_S, end) for p in kept]
        gap, gap_at = max(gaps)
        baseline_gap = max(longest_gap(times(p), baseline_start, baseline_end)[0] for p in kept)
        gone = {p for m in members for when, p in m.told_gone if when >= changed and p in kept}
        return Outcome(full - changed, gap, gap_at - changed, statistics.median(g for g, _ in gaps),
                       probe.longest_wait(changed - BEFORE_S, end), baseline_gap, len(gone), owners_at_full)
    finally:
        for member in members:
            member.stop()
        load.stop()
        admin.delete_topics([topic])[topic].result(15)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--members", type=int, default=4)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--grow-to", type=int, default=1000)
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--heartbeat-ms", type=int, default=1000)
    parser.add_argument("--interval-ms", type=float, default=50.0, help="one record per partition this often")
    parser.add_argument("--memory-logs", action="store_true",
                        help="the node keeps its partition logs in memory (no --data-dir)")
    args = parser.parse_args()
    logging.getLogger("kazoo").setLevel(logging.ERROR)

    results: dict[str, list[Outcome]] = {mode: [] for mode in args.modes}
    with tempfile.TemporaryDirectory() as tmp:
        zookeeper = ZooKeeperServer(Path(tmp) / "zk").start()
        node: Optional[CoordinatorProcess] = None
        probe: Optional[Probe] = None
        try:
            logs = () if args.memory_logs else ("--data-dir", str(Path(tmp) / "node"))
            node = CoordinatorProcess("--zk", f"{zookeeper.connect}/bench", *logs,
                                      "--consumer-heartbeat-interval-ms", str(args.heartbeat_ms),
                                      "--log-level", "warning", log_path=Path(tmp) / "node.log").start()
            # The admin client outlives the node at exit: its reconnection attempts are not news.
            admin = AdminClient({"bootstrap.servers": node.bootstrap, "broker.address.family": "v4",
                                 "log.connection.close": False, "log_level": 2})
            probe = Probe(node.port)
            for run in range(args.repeats):
                for mode in args.modes:
                    outcome = one_run(admin, node.bootstrap, probe, args, mode, run)
                    results[mode].append(outcome)
                    print(f"  run {run + 1} {mode:<11} full assignment {outcome.to_full_s:5.2f} s, longest kept "
                          f"gap {outcome.gap_s:5.2f} s from {outcome.gap_at_s:+5.2f} s (median partition "
                          f"{outcome.typical_gap_s:4.2f} s, baseline {outcome.baseline_gap_s:4.2f} s), node stall "
                          f"{outcome.node_stall_s:4.2f} s, kept revoked/lost {outcome.kept_gone}", flush=True)
        finally:
            if probe is not None:
                probe.stop()
            if node is not None:
                node.kill()
            zookeeper.stop()
    report(args, results)


def report(args, results: dict[str, list[Outcome]]) -> None:
    print(f"\n{args.members} confluent-kafka members, {args.partitions} -> {args.grow_to} partitions, "
          f"one record per kept partition every {args.interval_ms:g} ms, heartbeat {args.heartbeat_ms} ms, "
          f"partition logs {'in memory' if args.memory_logs else 'on disk'}; median of {args.repeats} (min-max)")
    print(f"{'group':<30} {'to full assignment s':>22} {'longest kept gap s':>22} {'median partition s':>22} "
          f"{'baseline s':>10} {'node stall s':>22} {'kept revoked/lost':>20}")

    def cell(values: list[float]) -> str:
        return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"

    for mode, outcomes in results.items():
        print(f"{LABELS[mode]:<30} {cell([o.to_full_s for o in outcomes]):>22} {cell([o.gap_s for o in outcomes]):>22} "
              f"{cell([o.typical_gap_s for o in outcomes]):>22} "
              f"{statistics.median(o.baseline_gap_s for o in outcomes):>10.2f} "
              f"{cell([o.node_stall_s for o in outcomes]):>22} "
              f"{'/'.join(str(o.kept_gone) for o in outcomes):>20}")
    if "consumer" in results:
        base = results["consumer"]
        for mode in (m for m in results if m != "consumer"):
            full = statistics.median(o.to_full_s for o in base) / statistics.median(o.to_full_s for o in results[mode])
            gap = statistics.median(o.gap_s for o in base) / statistics.median(o.gap_s for o in results[mode])
            print(f"consumer / {LABELS[mode]}: time to full assignment {full:.2f}, longest kept gap {gap:.2f}")
    doubled = [(m, o.owners_at_full) for m, os_ in results.items() for o in os_ if o.owners_at_full != args.grow_to]
    if doubled:
        print(f"note: at full assignment the members' assignments summed to more than {args.grow_to}: {doubled}")


if __name__ == "__main__":
    main()
