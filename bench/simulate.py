"""`groupctl members simulate` at scale: how long N simulated members take to reach a stable group on
one node, and how much memory each costs the simulator, for both protocols side by side.

    python -m bench.simulate [--counts 100 1000 5000] [--variants consumer classic classic-range] [--repeats 3]
        [--partitions-per-member 1] [--limit-s 300] [--heartbeat-ms 5000] [--store embedded|zookeeper]

Starts one `groupctl coordinator run` node (partition logs in a temp dir): with the embedded store
(`make run`'s) by default, or with --store zookeeper on its own ZooKeeper (Debian's package,
127.0.0.1, the tests' settings: a 256 MiB heap). The consumer protocol's default heartbeat interval
(5 s) unless --heartbeat-ms says otherwise; classic members heartbeat every 3 s (their client
default). For each
count, each repeat, each variant (VARIANTS) in turn (interleaved, so drift in the machine's load hits both
alike): a fresh topic with count x --partitions-per-member partitions, then `groupctl --output json
members simulate --until-stable --count N` as a child process. Measured: its wall time from start to
exit (members leaving included), the summary's time_to_stable_s, partitions moved and longest
unowned gap, heartbeats; and the child's memory (below). The memory baseline is the
same command with --count 1, run in the same way (interpreter, imports, codecs, one connection):
memory per member = (RSS held(N) - RSS held(1)) / (N - 1), where "held" is the child's resident set
sampled as the run ends (every member still alive), so transient peaks (start-up, a classic leader's
assignment) do not count; the peak (ru_maxrss from wait4) is shown beside it. Ratios: classic against consumer at the
same count, and each count against the smallest.

Every wait is bounded (--limit-s per run); every process is ended by its pid.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from confluent_kafka.admin import AdminClient, NewTopic

from tests.support.coordinator import CoordinatorProcess
from tests.support.zookeeper import ZooKeeperServer

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = {"consumer": ("consumer", "uniform"), "classic": ("classic", "uniform"), "classic-range": ("classic", "range")}
"""variant -> (--protocol, --assignor): KIP-848 with the server's uniform assignor; classic with the
leader running kafka-python's cooperative-sticky (what `--assignor uniform` means for classic), or
its eager range."""


@dataclass(frozen=True)
class Run:
    variant: str
    count: int
    stable: bool
    time_to_stable_s: Optional[float]
    wall_s: float
    peak_rss_kib: int
    held_rss_kib: int  # resident set as the run ended (the last samples before the summary)
    moved: int
    max_unowned_ms: int
    heartbeats: int


def simulate(bootstrap: str, topic: str, group: str, variant: str, count: int, limit_s: float) -> Run:
    """One `members simulate --until-stable` child; its summary and memory."""
    protocol, assignor = VARIANTS[variant]
    command = [sys.executable, "-m", "groupctl", "--bootstrap", bootstrap, "--output", "json", "members",
               "simulate", "--group", group, "--topic", topic, "--count", str(count), "--protocol", protocol,
               "--assignor", assignor, "--until-stable", "--duration", f"{limit_s:g}s"]
    started = time.monotonic()
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             stdin=subprocess.DEVNULL)
    last: dict = {}
    errors: list[str] = []
    reader = threading.Thread(target=lambda: errors.extend(child.stderr), daemon=True)
    reader.start()
    timer = threading.Timer(limit_s + 60, child.kill)  # the simulator bounds itself; this bounds us
    timer.start()
    held: list[int] = []
    sampler = threading.Thread(target=sample_rss, args=(child, held, lambda: bool(last)), daemon=True)
    sampler.start()
    try:
        for line in child.stdout:
            if '"summary"' in line[:24]:
                last = json.loads(line)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    finally:
        timer.cancel()
        if child.poll() is None:
            child.kill()
            child.wait(10)
    wall = time.monotonic() - started
    reader.join(5)
    sampler.join(5)
    if not last:
        raise RuntimeError(f"{variant} x{count}: no summary (exit {child.returncode}): {''.join(errors)[-500:]}")
    return Run(variant, count, last["ended_by"] == "stable", last["time_to_stable_s"], wall, usage.ru_maxrss,
               max(held[-3:], default=usage.ru_maxrss), last["partitions_moved"], last["max_unowned_ms"],
               last["heartbeats"])


def sample_rss(child: subprocess.Popen, samples: list[int], ended: Callable[[], bool]) -> None:
    """The child's resident set (KiB) every 50 ms until its summary is out or it exits: the last
    samples are what its members hold when the run ends (before they leave), without the
    transient peaks of start-up and of a leader's assignment."""
    status = Path(f"/proc/{child.pid}/status")
    while not ended() and child.returncode is None:
        try:
            for line in status.read_text().splitlines():
                if line.startswith("VmRSS:"):
                    samples.append(int(line.split()[1]))
        except (OSError, ValueError):
            return
        time.sleep(0.05)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[100, 1000, 5000])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--partitions-per-member", type=int, default=1)
    parser.add_argument("--limit-s", type=float, default=300.0, help="each run's --duration")
    parser.add_argument("--heartbeat-ms", type=int, default=5000, help="the node's consumer heartbeat interval")
    parser.add_argument("--store", choices=["embedded", "zookeeper"], default="embedded",
                        help="the node's metadata store (zookeeper: Debian's package with the tests' settings)")
    args = parser.parse_args()
    logging.getLogger("kazoo").setLevel(logging.ERROR)

    runs: list[Run] = []
    baseline: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        zookeeper = ZooKeeperServer(Path(tmp) / "zk").start() if args.store == "zookeeper" else None
        node: Optional[CoordinatorProcess] = None
        try:
            store = ("--zk", f"{zookeeper.connect}/bench") if zookeeper is not None else ()
            node = CoordinatorProcess(*store, "--data-dir", str(Path(tmp) / "node"),
                                      "--consumer-heartbeat-interval-ms", str(args.heartbeat_ms),
                                      "--log-level", "warning", log_path=Path(tmp) / "node.log").start()
            admin = AdminClient({"bootstrap.servers": node.bootstrap, "broker.address.family": "v4",
                                 "log.connection.close": False, "log_level": 2})
            sequence = 0

            def fresh_topic(partitions: int) -> str:
                nonlocal sequence
                sequence += 1
                name = f"sim-{sequence}"
                admin.create_topics([NewTopic(name, partitions, 1)])[name].result(120)
                return name

            for variant in args.variants:
                topic = fresh_topic(1)
                one = simulate(node.bootstrap, topic, f"baseline-{variant}", variant, 1, 60)
                admin.delete_topics([topic])[topic].result(120)
                baseline[variant] = one.held_rss_kib
                print(f"  baseline {variant:<13} x1: RSS held {one.held_rss_kib / 1024:6.1f} MiB, "
                      f"peak {one.peak_rss_kib / 1024:6.1f} MiB", flush=True)
            for count in args.counts:
                for repeat in range(args.repeats):
                    for variant in args.variants:
                        topic = fresh_topic(count * args.partitions_per_member)
                        run = simulate(node.bootstrap, topic, f"{variant}-{count}-{repeat}", variant, count,
                                       args.limit_s)
                        admin.delete_topics([topic])[topic].result(120)  # its logs' files stay open otherwise
                        runs.append(run)
                        per_member = (run.held_rss_kib - baseline[variant]) / max(1, count - 1)
                        print(f"  {variant:<13} x{count:<5} run {repeat + 1}: stable={run.stable} "
                              f"time to stable {run.time_to_stable_s} s, wall {run.wall_s:6.1f} s, "
                              f"{per_member:5.2f} KiB/member (peak RSS {run.peak_rss_kib / 1024:.0f} MiB), "
                              f"moved {run.moved}, max unowned "
                              f"{run.max_unowned_ms} ms, heartbeats {run.heartbeats}", flush=True)
        finally:
            if node is not None:
                node.kill()
            if zookeeper is not None:
                zookeeper.stop()
    report(args, runs, baseline)
    return 0


def report(args, runs: list[Run], baseline: dict[str, int]) -> None:
    print(f"\none node ({args.store} store), consumer heartbeat {args.heartbeat_ms} ms, classic heartbeat 3000 ms, "
          f"{args.partitions_per_member} partition(s) per member; median of {args.repeats}")
    print(f"{'members':>8} {'variant':<13} {'stable':>7} {'to stable s':>12} {'wall s':>8} {'KiB/member':>11} "
          f"{'peak MiB':>9} "
          f"{'moved':>7} {'max unowned ms':>15} {'vs consumer':>12} {'vs smallest':>12}")
    smallest = min(args.counts)
    medians: dict[tuple[str, int], float] = {}
    for count in args.counts:
        for variant in args.variants:
            mine = [r for r in runs if r.variant == variant and r.count == count]
            to_stable = [r.time_to_stable_s for r in mine if r.time_to_stable_s is not None]
            medians[(variant, count)] = median(to_stable)
    for count in args.counts:
        for variant in args.variants:
            mine = [r for r in runs if r.variant == variant and r.count == count]
            kib = median([(r.held_rss_kib - baseline[variant]) / max(1, count - 1) for r in mine])
            peak = median([r.peak_rss_kib / 1024 for r in mine])
            to_stable = medians[(variant, count)]
            versus = to_stable / medians.get(("consumer", count), float("nan"))
            growth = to_stable / medians[(variant, smallest)]
            print(f"{count:>8} {variant:<13} {sum(r.stable for r in mine):>3}/{len(mine):<3} {to_stable:>12.2f} "
                  f"{median([r.wall_s for r in mine]):>8.1f} {kib:>11.2f} {peak:>9.0f} {median([r.moved for r in mine]):>7.0f} "
                  f"{median([r.max_unowned_ms for r in mine]):>15.0f} {versus:>11.2f}x {growth:>11.2f}x")


if __name__ == "__main__":
    sys.exit(main())
