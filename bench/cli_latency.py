"""CLI latency: `groupctl --help` and `groupctl group describe` against kafka-python's own CLI.

    python -m bench.cli_latency [--runs 15]

Starts a local coordinator, gives a group committed offsets on a 3-partition topic with
messages in it (so describe computes lag), then times whole processes, alternating the commands
run by run so machine noise hits them alike. Prints the median (and min) wall time of each and
the ratio of `group describe` to `kafka-python admin ... groups describe`.
Targets (issue 3): `--help` median <= 150 ms; describe <= 0.8x the kafka-python CLI.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench import processes

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[1]
GROUP, TOPIC = "latency", "latency-topic"


def seed(bootstrap: str) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(300):
        producer.send(TOPIC, value=b"x", partition=i % 3)
    producer.flush(30)
    producer.close()
    subprocess.run([str(BIN / "groupctl"), "--bootstrap", bootstrap, "offsets", "commit", GROUP,
                    f"{TOPIC}:0=10", f"{TOPIC}:1=20", f"{TOPIC}:2=30"], check=True, stdout=subprocess.DEVNULL)


def timed(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, "COLUMNS": "120"})
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    kafka_python = shutil.which("kafka-python", path=str(BIN)) or "kafka-python"
    node = processes.coordinator("--topic", f"{TOPIC}:3")
    bootstrap = f"127.0.0.1:{node.port}"
    try:
        seed(bootstrap)
        commands = {
            "groupctl --help": [str(BIN / "groupctl"), "--help"],
            "groupctl group describe": [str(BIN / "groupctl"), "--bootstrap", bootstrap, "group", "describe", GROUP],
            "kafka-python admin groups describe": [kafka_python, "admin", "-b", bootstrap, "groups", "describe",
                                                   "-g", GROUP],
        }
        # pip byte-compiles kafka-python at install; groupctl's editable install is compiled on
        # first import, which PYTHONDONTWRITEBYTECODE (set on these machines) would repeat on
        # every run. Compile it once so both CLIs start from bytecode, as installed tools do.
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "groupctl")], check=True)
        for argv in commands.values():  # warm the page cache
            timed(argv)
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, argv in commands.items():
                samples[name].append(timed(argv))
        print(f"{'command':<38} {'median ms':>10} {'min ms':>8}")
        for name, values in samples.items():
            print(f"{name:<38} {statistics.median(values):>10.0f} {min(values):>8.0f}")
        ratio = statistics.median(samples["groupctl group describe"]) / statistics.median(
            samples["kafka-python admin groups describe"])
        print(f"{'describe / kafka-python describe':<38} {ratio:>10.2f}")
        print(f"({args.runs} runs each, interleaved)")
    finally:
        node.stop()


if __name__ == "__main__":
    main()
