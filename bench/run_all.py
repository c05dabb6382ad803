"""Run every benchmark in turn and print their tables (`make bench`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ["bench.coordinator_throughput", "bench.zk_commit_throughput", "bench.cli_latency", "bench.failover",
              "bench.lag_analysis", "bench.assignors", "bench.partition_growth", "bench.simulate",
              "bench.authorization", "bench.secure_connect", "bench.wire_fuzz", "bench.many_groups",
              "bench.leader_epoch_start", "bench.log_append", "bench.transactions", "bench.lag_serve"]


def main() -> int:
    status = 0
    for module in BENCHMARKS:
        print(f"== {module}", flush=True)
        status |= subprocess.call([sys.executable, "-m", module], cwd=ROOT)
    return status


if __name__ == "__main__":
    sys.exit(main())
