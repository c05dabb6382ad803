"""Many groups: `group describe --all-groups` and `offsets show --all-groups` against kafka-python.

    python -m bench.many_groups [--groups 200] [--runs 7] [--limit-s 150]

kafka-consumer-groups.sh's `--describe --all-groups` use case. Starts one coordinator
(`tests/support/coordinator.py`'s `CoordinatorProcess`, in memory) with a 4-partition topic
holding records, gives N groups committed offsets on it with kafka-python's
`KafkaAdminClient.alter_group_offsets` (no members), then times whole processes, alternating
the commands run by run so machine noise hits them alike:

- `groupctl --bootstrap B -o json group describe --all-groups`
- `groupctl --bootstrap B -o json offsets show --all-groups`
- baseline: a Python process doing with kafka-python what a script describing every group with
  its lag would do: list_groups, describe_groups(every id), list_group_offsets of each group
  (one call per group), and KafkaConsumer.end_offsets of the committed partitions.

Every answer is checked outside the timing: N groups, and the same total lag in all three.
Several --groups sizes reuse the node: groups are added up to each size in turn. Prints the
median and p90 wall time of each command and its ratio to the baseline's median.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from tests.support.coordinator import CoordinatorProcess

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[1]
TOPIC, PARTITIONS, RECORDS = "many-groups", 4, 400
RUN_TIMEOUT_S = 60

# The baseline, run as `python -c BASELINE BOOTSTRAP`: what a kafka-python script describing
# every group with its lag does. Prints {"groups": n, "lag": total} for the check.
BASELINE = """
import json, sys
from kafka import KafkaAdminClient, KafkaConsumer
bootstrap = sys.argv[1]
admin = KafkaAdminClient(bootstrap_servers=bootstrap)
ids = [g["group_id"] for g in admin.list_groups()]
described = admin.describe_groups(ids)
committed = {g: admin.list_group_offsets({g: None})[g] for g in ids}
admin.close()
consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
ends = consumer.end_offsets(sorted({tp for offsets in committed.values() for tp in offsets}))
consumer.close()
lag = sum(max(ends[tp] - om.offset, 0) for offsets in committed.values() for tp, om in offsets.items())
print(json.dumps({"groups": len(described), "lag": lag}))
"""


def group_name(index: int) -> str:
    return f"many-{index:05d}"


def produce(bootstrap: str) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(RECORDS):
        producer.send(TOPIC, value=b"x", partition=i % PARTITIONS)
    producer.flush(30)
    producer.close()


def add_groups(bootstrap: str, start: int, stop: int) -> None:
    """Groups `start`..`stop - 1`, each with a committed offset on every partition (lag 1..40)."""
    from kafka import KafkaAdminClient, TopicPartition
    from kafka.errors import NoError
    from kafka.structs import OffsetAndMetadata

    per_partition = RECORDS // PARTITIONS
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        for index in range(start, stop):
            offsets = {TopicPartition(TOPIC, p): OffsetAndMetadata(per_partition - 1 - (index + p) % 40, "", -1)
                       for p in range(PARTITIONS)}
            errors = admin.alter_group_offsets(group_name(index), offsets)
            failed = {tp: e for tp, e in errors.items() if e is not NoError}
            if failed:
                raise RuntimeError(f"committing {group_name(index)}: {failed}")
    finally:
        admin.close()


def groupctl_check(groups: int):
    def check(stdout: str) -> int:
        entries = json.loads(stdout)
        if len(entries) != groups:
            raise RuntimeError(f"groupctl answered {len(entries)} groups, expected {groups}")
        return sum(o["lag"] for entry in entries for o in entry["offsets"])
    return check


def baseline_check(groups: int):
    def check(stdout: str) -> int:
        answer = json.loads(stdout)
        if answer["groups"] != groups:
            raise RuntimeError(f"kafka-python found {answer['groups']} groups, expected {groups}")
        return answer["lag"]
    return check


def timed(argv: list[str]) -> tuple[float, str]:
    """Wall time of one whole process in ms, and its stdout (a pipe, as a script reading it has)."""
    started = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=RUN_TIMEOUT_S,
                          env={**os.environ, "COLUMNS": "120"})
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:6]} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return elapsed, done.stdout


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10, method="inclusive")[-1] if len(values) > 1 else values[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, nargs="+", default=[200])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--limit-s", type=float, default=150.0,
                        help="stop taking runs of a size after this many seconds of measuring it")
    args = parser.parse_args()
    sizes = sorted(set(args.groups))
    groupctl = str(BIN / "groupctl")
    # As in cli_latency: byte-compile groupctl once (PYTHONDONTWRITEBYTECODE is set on these
    # machines) so both sides start from bytecode, as installed tools do.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "groupctl")], check=True)
    node = CoordinatorProcess("--topic", f"{TOPIC}:{PARTITIONS}", "--log-level", "warning").start()
    bootstrap = node.bootstrap
    rows = []
    try:
        produce(bootstrap)
        created = 0
        for groups in sizes:
            add_groups(bootstrap, created, groups)
            created = groups
            commands = {
                "groupctl group describe --all-groups":
                    ([groupctl, "--bootstrap", bootstrap, "-o", "json", "group", "describe", "--all-groups"],
                     groupctl_check(groups)),
                "groupctl offsets show --all-groups":
                    ([groupctl, "--bootstrap", bootstrap, "-o", "json", "offsets", "show", "--all-groups"],
                     groupctl_check(groups)),
                "kafka-python admin script (baseline)":
                    ([sys.executable, "-c", BASELINE, bootstrap], baseline_check(groups)),
            }
            lags = {}
            for name, (argv, check) in commands.items():  # warm-up, and the answers checked once
                _, out = timed(argv)
                lags[name] = check(out)
            if len(set(lags.values())) != 1:
                raise RuntimeError(f"total lag differs between commands: {lags}")
            samples: dict[str, list[float]] = {name: [] for name in commands}
            deadline = time.monotonic() + args.limit_s
            for _ in range(args.runs):
                if time.monotonic() > deadline:
                    break
                for name, (argv, check) in commands.items():
                    elapsed, out = timed(argv)
                    check(out)
                    samples[name].append(elapsed)
            base = statistics.median(samples["kafka-python admin script (baseline)"])
            for name, values in samples.items():
                rows.append((groups, name, statistics.median(values), p90(values),
                             statistics.median(values) / base, len(values)))
    finally:
        try:
            node.terminate()
        except subprocess.TimeoutExpired:
            node.kill()
    print(f"{'groups':>6}  {'command':<38} {'median ms':>10} {'p90 ms':>8} {'vs baseline':>12} {'runs':>5}")
    for groups, name, median, high, ratio, runs in rows:
        print(f"{groups:>6}  {name:<38} {median:>10.0f} {high:>8.0f} {ratio:>12.2f} {runs:>5}")
    print("(runs interleaved; every answer checked: N groups, the same total lag)")


if __name__ == "__main__":
    main()
