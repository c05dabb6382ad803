"""Lag evaluation on Spark at 1M and 10M sample rows, against the same evaluation in one process.

    python -m bench.lag_analysis [--rows 1000000 10000000] [--groups 200] [--partitions 8] [--seed 1] [--runs 3]

For each size, a synthetic lag history (bench/lag_history.py: date=/hour= JSON Lines files, one
per sampling round, every status represented) is generated, or reused from
`$TMPDIR/groupctl-bench-lag/<parameters and generator digest>` (written under a dot-name and
renamed, so an interrupted generation is never reused). Spark (`spark_session("local[2]")`)
evaluates it as `groupctl analyze lag` does (`jobs.lag_job`: read with LAG_SAMPLE_SCHEMA and
count, build each partition's window on Spark, collect, evaluate with groupctl.lag). One warm-up
run, then the median of `--runs` timed runs; rows/s from the median, and the largest / smallest
size's time ratio as the scaling figure (near-linear = close to the row ratio).

The baseline: the same files evaluated in this process with no Spark (json.loads, then
groupctl.lag.window's in-process window builder and the same rules), once. Every partition's and
group's row must be identical (floats within 1e-9 relative / 1e-6 absolute): the two window
builders must agree. Exit status 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from bench import lag_history
from groupctl.analytics.jobs import lag_job
from groupctl.analytics.session import spark_session
from groupctl.lag.report import group_reports, partition_report
from groupctl.lag.rules import STATUS_ORDER
from groupctl.lag.window import Sample, partition_window

WINDOW = 10

CACHE_ROOT = Path(tempfile.gettempdir()) / "groupctl-bench-lag"
ROW_COUNT_FILE = "_rows"  # leading underscore: Spark does not read it
SHOWN_MISMATCHES = 10


@dataclass
class SizeResult:
    rows: int
    spark_seconds: list[float]
    in_process_seconds: float
    partitions: int
    problems: list[str]
    partition_statuses: Counter
    group_statuses: Counter

    @property
    def median(self) -> float:
        return statistics.median(self.spark_seconds)


def dataset(rows: int, groups: int, partitions: int, seed: int) -> tuple[Path, int]:
    """The cached dataset for these parameters (generated on first use) and its row count."""
    digest = hashlib.sha256(Path(lag_history.__file__).read_bytes()).hexdigest()[:12]
    target = CACHE_ROOT / f"rows{rows}-groups{groups}-partitions{partitions}-seed{seed}-gen{digest}"
    if not (target / ROW_COUNT_FILE).exists():
        staging = CACHE_ROOT / f".{target.name}.{os.getpid()}"
        started = time.monotonic()
        written = lag_history.generate(staging, rows=rows, groups=groups, partitions=partitions, seed=seed)
        (staging / ROW_COUNT_FILE).write_text(f"{written}\n")
        staging.rename(target)
        print(f"generated {written:,} rows in {time.monotonic() - started:.1f} s: {target}", flush=True)
    return target, int((target / ROW_COUNT_FILE).read_text())


def evaluate_on_spark(spark, path: Path) -> tuple[list[dict], list[dict]]:
    result = lag_job(spark, [str(path)], window=WINDOW)
    return result.partitions, result.groups


def evaluate_in_process(path: Path) -> tuple[list[dict], list[dict]]:
    partitions: dict[tuple, list[Sample]] = defaultdict(list)
    for file in sorted(path.glob("date=*/hour=*/*.jsonl")):
        with file.open() as lines:
            for line in lines:
                row = json.loads(line)
                if row["v"] != 1 or (row["committed"] is None and row["log_end"] is None):
                    continue  # what the Spark reader skips
                partitions[row["cluster"], row["group"], row["topic"], row["partition"]].append(
                    Sample(row["ts"], row["committed"], row["log_end"], row["members"], row["owner"]))
    now = max(sample.ts for samples in partitions.values() for sample in samples)
    rows = [partition_report(key, partition_window(samples, size=WINDOW, now=now))
            for key, samples in partitions.items()]
    return rows, group_reports(rows)


def same_value(expected, actual) -> bool:
    if isinstance(expected, float) and isinstance(actual, float):
        return math.isclose(expected, actual, rel_tol=1e-9, abs_tol=1e-6)
    return expected == actual


def mismatches(kind: str, key_fields: tuple[str, ...], expected: list[dict], actual: list[dict]) -> list[str]:
    """One line per differing field or missing row, the in-process value first."""
    found = {tuple(row[field] for field in key_fields): row for row in actual}
    problems = []
    for row in expected:
        key = tuple(row[field] for field in key_fields)
        other = found.pop(key, None)
        if other is None:
            problems.append(f"{kind} {key}: missing from Spark's result")
            continue
        problems.extend(f"{kind} {key} {field}: in-process {value!r}, Spark {other[field]!r}"
                        for field, value in row.items() if not same_value(value, other[field]))
    problems.extend(f"{kind} {key}: only in Spark's result" for key in found)
    return problems


def timed_runs(spark, path: Path, runs: int) -> tuple[list[float], tuple[list[dict], list[dict]]]:
    evaluate_on_spark(spark, path)  # warm-up: JIT, file listing caches
    seconds = []
    for _ in range(runs):
        started = time.monotonic()
        result = evaluate_on_spark(spark, path)
        seconds.append(time.monotonic() - started)
    return seconds, result


def measure(spark, rows: int, args: argparse.Namespace) -> SizeResult:
    path, written = dataset(rows, args.groups, args.partitions, args.seed)
    seconds, (spark_partitions, spark_groups) = timed_runs(spark, path, args.runs)
    started = time.monotonic()
    in_process_partitions, in_process_groups = evaluate_in_process(path)
    in_process_seconds = time.monotonic() - started
    problems = (mismatches("partition", ("cluster", "group", "topic", "partition"),
                           in_process_partitions, spark_partitions)
                + mismatches("group", ("cluster", "group"), in_process_groups, spark_groups))
    for problem in problems[:SHOWN_MISMATCHES]:
        print(f"MISMATCH {problem}", flush=True)
    return SizeResult(written, seconds, in_process_seconds, len(spark_partitions), problems,
                      Counter(row["status"] for row in spark_partitions),
                      Counter(row["status"] for row in spark_groups))


def report(results: list[SizeResult], runs: int) -> None:
    print(f"{'rows':>12} {'partitions':>10} {'spark s':>8} {'min':>7} {'max':>7} {'rows/s':>11} "
          f"{'in-process s':>12} {'ratio':>6} {'agreement':>10}")
    for result in results:
        agreement = f"{len(result.problems)} diffs" if result.problems else "identical"
        print(f"{result.rows:>12,} {result.partitions:>10,} {result.median:>8.2f} {min(result.spark_seconds):>7.2f} "
              f"{max(result.spark_seconds):>7.2f} {result.rows / result.median:>11,.0f} "
              f"{result.in_process_seconds:>12.1f} {result.median / result.in_process_seconds:>6.2f} {agreement:>10}")
    if len(results) > 1:
        small, large = results[0], results[-1]
        print(f"scaling: {large.rows / small.rows:.1f}x the rows took {large.median / small.median:.2f}x the time "
              f"(median of {runs} runs after a warm-up, spark_session('local[2]'))")
    largest = results[-1]
    print("statuses at the largest size: partitions",
          ", ".join(f"{name} {largest.partition_statuses[name]}" for name in STATUS_ORDER),
          "| groups", ", ".join(f"{name} {largest.group_statuses[name]}" for name in ("OK", "WARN", "ERR")))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--partitions", type=int, default=8, help="partitions per group")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    spark = spark_session("local[2]", app_name="bench-lag-analysis")
    try:
        results = [measure(spark, rows, args) for rows in sorted(args.rows)]
    finally:
        spark.stop()
    report(results, args.runs)
    return 1 if any(result.problems for result in results) else 0


if __name__ == "__main__":
    sys.exit(main())
