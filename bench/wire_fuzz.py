"""Wire fuzzer: mutated frames of every registered API against one node, with a canary client.

    python -m bench.wire_fuzz [--frames 1000000] [--limit-s 1800] [--connections 32] [--pipeline 8]
        [--seed 1] [--max-elements 2000] [--sample-s 10] [--keep-log]

Starts one `groupctl coordinator run` node (embedded store, partition logs in a temp --data-dir,
topics fuzz-t0, fuzz-t1 and fuzz-canary; its log to a file) and sends it --frames mutated
frames (`tests/support/hostile_frames.py`: a valid seed of every served API and version, built
with kafka-python's classes, then field-level mutations (nulls, negatives, extremes, long strings,
long or duplicated arrays) or byte-level ones (bit flips, truncation, trailing garbage, smashed
lengths, unknown api keys and versions, mutated length prefixes)) over --connections concurrent
connections (`tests/support/fuzz_sender.py` says how frames are counted as sent). Meanwhile a
canary (confluent-kafka: a producer, a classic-group consumer committing synchronously, an admin
client describing the group) works on fuzz-canary every 200 ms; any error it sees is a canary
failure, and it must have consumed every record it produced by the end.

Reported: frames sent, frames/s, whether the node is alive and answering at the end, canary
failures, "Traceback" lines in the node's log, and the node's resident memory (VmRSS from
/proc/<pid>/status) once the canary runs, sampled every --sample-s, and at the end; plus the
node-side state a hostile client can create (topics, groups) from its log-free describe APIs.
Targets (issue "Secure clusters"): >= 1,000,000 frames, zero tracebacks, RSS growth <= 50 MiB,
zero canary failures. Every loop is bounded by the frame budget and --limit-s; the node is
ended by its pid.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import socket
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import AdminClient
from kafka.protocol.admin.groups import ListGroupsRequest
from kafka.protocol.metadata import ApiVersionsRequest, MetadataRequest

from tests.support import fuzz_sender
from tests.support.coordinator import CoordinatorProcess
from tests.support.hostile_frames import FrameFactory, Names
from tests.support.wire import decode_response, roundtrip

CANARY_TOPIC = "fuzz-canary"
CANARY_GROUP = "fuzz-canary-group"
CANARY_EVERY_S = 0.2
SETTLE_S = 3.0  # after the last frame, before the final RSS sample


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds the process has used (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ask(port: int, request, version: int):
    """One request on a fresh connection (5 s socket timeout)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        return decode_response(request, roundtrip(sock, request, version), version)


def node_state(port: int) -> tuple[int, int]:
    """(topics, groups) the node holds, as Metadata and ListGroups report them."""
    topics = ask(port, MetadataRequest[12](topics=None, allow_auto_topic_creation=False), 12).topics
    groups = ask(port, ListGroupsRequest[4](states_filter=[]), 4).groups
    return len(topics), len(groups)


@dataclass
class Canary:
    """A real client working throughout; every error it meets is a failure."""

    bootstrap: str
    failures: list[str] = field(default_factory=list)
    produced: int = 0
    consumed: int = 0
    rounds: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)

    def start(self, limit_s: float = 60.0) -> None:
        common = {"bootstrap.servers": self.bootstrap, "broker.address.family": "v4", "log_level": 3,
                  "error_cb": lambda err: self.failures.append(f"client error: {err}")}
        self.producer = Producer({**common, "linger.ms": 0})
        self.consumer = Consumer({**common, "group.id": CANARY_GROUP, "enable.auto.commit": False,
                                  "auto.offset.reset": "earliest", "session.timeout.ms": 10_000})
        self.admin = AdminClient(common)
        self.consumer.subscribe([CANARY_TOPIC])
        deadline = time.monotonic() + limit_s
        while not self.consumer.assignment():
            if time.monotonic() > deadline:
                raise RuntimeError("the canary consumer got no assignment")
            self.consumer.poll(0.2)
        self.failures.clear()  # connection set-up noise before the fuzzing starts does not count
        self._thread = threading.Thread(target=self._run, name="canary", daemon=True)
        self._thread.start()

    def _delivered(self, err, _msg) -> None:
        if err is not None:
            self.failures.append(f"delivery: {err}")

    def _run(self) -> None:
        while not self._stop.wait(CANARY_EVERY_S):
            self.round()

    def round(self) -> None:
        try:
            self.producer.produce(CANARY_TOPIC, b"canary-%d" % self.produced, on_delivery=self._delivered)
            self.produced += 1
            if self.producer.flush(10) != 0:
                self.failures.append("produce not acknowledged within 10 s")
            for message in self.consumer.consume(100, timeout=0.1):
                if message.error():
                    self.failures.append(f"consume: {message.error()}")
                else:
                    self.consumed += 1
            self.consumer.commit(asynchronous=False)
            if self.rounds % 10 == 0:
                described = self.admin.describe_consumer_groups([CANARY_GROUP])[CANARY_GROUP].result(10)
                if not described.members:
                    self.failures.append("canary group has no members")
        except KafkaException as exc:
            if "NO_OFFSET" not in str(exc):  # nothing new to commit is not an error
                self.failures.append(f"{type(exc).__name__}: {exc}")
        self.rounds += 1

    def stop(self, limit_s: float = 15.0) -> None:
        self._stop.set()
        self._thread.join(limit_s)
        deadline = time.monotonic() + limit_s
        while self.consumed < self.produced and time.monotonic() < deadline:
            for message in self.consumer.consume(100, timeout=0.2):
                self.consumed += 0 if message.error() else 1
        if self.consumed < self.produced:
            self.failures.append(f"consumed {self.consumed} of {self.produced} records")
        self.consumer.close()
        self.producer = self.admin = None  # librdkafka's clients end when dropped, before the node does


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--limit-s", type=float, default=1800.0, help="stop sending after this long")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--pipeline", type=int, default=8, help="mutated frames per write")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-elements", type=int, default=2_000, help="values in one field-mutated request")
    parser.add_argument("--sample-s", type=float, default=10.0, help="RSS sampled this often")
    parser.add_argument("--keep-log", action="store_true", help="keep the node's log and data dir")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="fuzz-"))
    log_path = workdir / "node.log"
    node = CoordinatorProcess("--data-dir", str(workdir / "data"), "--topic", "fuzz-t0:3", "--topic", "fuzz-t1:3",
                              "--topic", f"{CANARY_TOPIC}:1", log_path=log_path).start()
    pid = node.proc.pid
    canary = Canary(node.bootstrap)
    try:
        metadata = ask(node.port, MetadataRequest[12](topics=None, allow_auto_topic_creation=False), 12)
        names = Names(topic_ids=[t.topic_id for t in metadata.topics if t.name != CANARY_TOPIC])
        factory = FrameFactory(random.Random(args.seed), names, max_elements=args.max_elements)
        canary.start()
        asyncio.run(fuzz_sender.warm_up("127.0.0.1", node.port, factory.seeds_of_every_version()))
        rss_before = rss_mib(pid)
        state_before = node_state(node.port)
        samples = [rss_before]
        stop_sampling = threading.Event()

        def sample() -> None:
            while not stop_sampling.wait(args.sample_s):
                samples.append(rss_mib(pid))
                print(f"  {len(samples) * args.sample_s:6.0f} s  RSS {samples[-1]:7.1f} MiB", flush=True)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        started, cpu_before = time.monotonic(), cpu_s(pid)
        tally = asyncio.run(fuzz_sender.send("127.0.0.1", node.port, factory, frames=args.frames,
                                             seconds=args.limit_s, connections=args.connections,
                                             pipeline=args.pipeline))
        elapsed, node_cpu = time.monotonic() - started, cpu_s(pid) - cpu_before
        stop_sampling.set()
        canary.stop()
        time.sleep(SETTLE_S)
        alive = node.proc.poll() is None
        answers = alive and ask(node.port, ApiVersionsRequest[0](), 0).error_code == 0
        rss_after = rss_mib(pid) if alive else float("nan")
        state_after = node_state(node.port) if answers else (-1, -1)
    finally:
        node.kill()
    tracebacks = log_path.read_text(errors="replace").count("Traceback")

    print(f"\nwire fuzz: seed {args.seed}, {args.connections} connections, {args.pipeline} frames per write, "
          f"node log {log_path if args.keep_log else '(removed)'}")
    rows = [
        ("frames sent", f"{tally.sent:,}"),
        ("frames/s", f"{tally.sent / elapsed:,.0f}"),
        ("seconds", f"{elapsed:.0f}"),
        ("node CPU per frame, µs", f"{node_cpu / max(tally.sent, 1) * 1e6:.0f}"),
        ("responses to mutated frames", f"{tally.answered:,}"),
        ("connections (closed by the node)", f"{tally.connections:,} ({tally.closed_by_node:,})"),
        ("frames with a mutated length prefix", f"{tally.stream_enders:,}"),
        ("connections given up (no answer in 2 s)", f"{tally.timeouts:,}"),
        ("node alive and answering", "yes" if answers else "NO"),
        ("canary rounds / failures", f"{canary.rounds:,} / {len(canary.failures)}"),
        ("tracebacks in the node log", f"{tracebacks}"),
        ("RSS before / peak / after, MiB", f"{rss_before:.1f} / {max(samples + [rss_after]):.1f} / {rss_after:.1f}"),
        ("RSS growth, MiB", f"{rss_after - rss_before:+.1f}"),
        ("topics before / after", f"{state_before[0]} / {state_after[0]}"),
        ("groups before / after", f"{state_before[1]} / {state_after[1]}"),
    ]
    width = max(len(name) for name, _ in rows)
    print(f"| {'measure':<{width}} | value |\n|{'-' * (width + 2)}|---|")
    for name, value in rows:
        print(f"| {name:<{width}} | {value} |")
    print("\nframes sent by mutation: " + ", ".join(f"{k} {v:,}" for k, v in tally.by_kind.most_common()))
    for failure in canary.failures[:10]:
        print(f"canary failure: {failure}")
    if not args.keep_log:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
