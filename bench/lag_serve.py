"""`lag serve`'s own cost per round, against the sampling round it follows.

    python -m bench.lag_serve [--groups 200] [--history 120] [--runs 7]

One coordinator (`CoordinatorProcess`, in memory) with a 4-partition topic and N groups holding
committed offsets on it (bench.many_groups' set-up). Then, in this process, alternating run by
run so machine noise hits them alike:

- baseline: one sampling round of every group (`LagSampler.sample`, what `lag record` and
  `lag serve` both do each --interval), over the Kafka protocol;
- evaluate: `LiveLag.evaluate` of every partition with a full history of H samples each (H = 120:
  the default --history of 1h at the default --interval of 30s), i.e. the windows and the rules;
- scrape: one GET /metrics and one GET .../lag of every group from `lag serve`'s HTTP server.

Prints each one's median and p90, and its ratio to the sampling round's median: what lag serve
adds to the round that `lag record` already pays. Every evaluation is checked outside the timing
(N groups known, each with its 4 partitions).
"""

from __future__ import annotations

import argparse
import statistics
import time
import urllib.request

from bench.many_groups import PARTITIONS, TOPIC, add_groups, group_name, produce
from groupctl.lag.live import LiveLag
from groupctl.lag.window import Sample
from groupctl.ops.lag_http import LagHttpServer
from groupctl.ops.lag_record import LagSampler
from groupctl.ops.lag_serve_metrics import LagServeMetrics
from tests.support.coordinator import CoordinatorProcess

INTERVAL_MS = 30_000


def filled(groups: int, history: int) -> LiveLag:
    """Every partition of `groups` groups with `history` samples of a consumer keeping up unevenly."""
    live = LiveLag(window=10, history_ms=history * INTERVAL_MS)
    for step in range(history):
        ts = step * INTERVAL_MS
        samples = [(("bench", group_name(g), TOPIC, p), Sample(ts, 100 * step + (g + p) % 7, 100 * step + 7, 1, "c"))
                   for g in range(groups) for p in range(PARTITIONS)]
        live.record(samples, sampled=[("bench", group_name(g)) for g in range(groups)])
    return live


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def fetch_all(base: str, groups: int) -> None:
    with urllib.request.urlopen(f"{base}/metrics", timeout=30) as response:
        response.read()
    for g in range(groups):
        with urllib.request.urlopen(f"{base}/v3/kafka/bench/consumer/{group_name(g)}/lag", timeout=30) as response:
            response.read()


def show(name: str, values: list[float], baseline: float) -> None:
    median = statistics.median(values)
    p90 = sorted(values)[max(0, int(len(values) * 0.9) - 1)]
    print(f"{name:<34} median {median * 1000:9.1f} ms  p90 {p90 * 1000:9.1f} ms  ratio {median / baseline:6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--history", type=int, default=120)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    node = CoordinatorProcess("--topic", f"{TOPIC}:{PARTITIONS}").start()
    try:
        produce(node.bootstrap)
        add_groups(node.bootstrap, 0, args.groups)
        sampler = LagSampler(node.bootstrap, "bench", None)
        live = filled(args.groups, args.history)
        evaluation = live.evaluate(args.history * INTERVAL_MS)
        assert len(evaluation.groups) == args.groups
        assert all(len(states) == PARTITIONS for states in evaluation.partitions.values())
        metrics = LagServeMetrics(lambda: evaluation)
        server = LagHttpServer("127.0.0.1", 0, cluster="bench", settings={}, latest=lambda: evaluation,
                               registry=metrics.registry)
        server.start()
        try:
            sample = sampler.sample()  # warm-up, and the check
            assert sample.groups_sampled == args.groups and not sample.problems
            rounds, evaluations, scrapes = [], [], []
            for _ in range(args.runs):
                rounds.append(timed(sampler.sample))
                evaluations.append(timed(lambda: live.evaluate(args.history * INTERVAL_MS)))
                scrapes.append(timed(lambda: fetch_all(server.url, args.groups)))
        finally:
            server.close()
    finally:
        node.terminate()
    partitions = args.groups * PARTITIONS
    print(f"lag serve, {args.groups} groups x {PARTITIONS} partitions = {partitions} partitions, "
          f"history {args.history} samples each, {args.runs} runs")
    baseline = statistics.median(rounds)
    show("baseline: sampling round", rounds, baseline)
    show("evaluate (windows + rules)", evaluations, baseline)
    show(f"scrape (/metrics + {args.groups} x /lag)", scrapes, baseline)


if __name__ == "__main__":
    main()
