"""A node's restart on ZooKeeper until every partition it leads is served at a raised leader epoch,
against ZooKeeper's raw rate for the same reads and compare-and-set writes.

    python -m bench.leader_epoch_start [--topics 100 1000] [--runs 5]

Starts its own ZooKeeper (Debian's package, 127.0.0.1, a temp dir, the test settings:
forceSync=no). For each topic count N: a node (`groupctl coordinator run --zk ... --data-dir
...`) creates N topics of one partition each (CreateTopics, 100 topics a request), all led by
it, and stops. Then, `--runs` times, the node is started again on the same port and data dir and
the clock runs from the moment the process is spawned: **listening** is the first
connection accepted (the kernel accepts as soon as the node listens, however busy its loop),
**servable** the first Metadata that names the node as the leader of the probe topic at the
raised epoch (the node turns all its partitions servable at once, after the last topic's epochs
are durable; a full Metadata of all N topics is checked afterwards, outside the timing).
listening -> servable is what the leader epochs (issue 16) add to a start: one read and one
compare-and-set write of `/brokers/topics/<t>` per topic.

Baselines, from one kazoo client in the same run, on N copies of the topic znodes elsewhere in
the same ZooKeeper: **sequential** (`get`, then `set` at the version read, one topic after the
other: one round trip per operation) and **pipelined** (every `get_async` issued before the
first answer is awaited, then every `set_async` at its version likewise). The node coalesces
its writes into multi transactions, so the pipelined per-operation rate is its ceiling only
roughly; the ratios to read are listening -> servable over each baseline.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse
from kazoo.client import KazooClient

from bench.processes import ROOT
from tests.support.zookeeper import ZooKeeperServer, free_port

METADATA_V, CREATE_V = 12, 7
CREATE_BATCH = 100
POLL_S = 0.005
START_LIMIT_S = 120.0


def topic_name(i: int) -> str:
    return f"epochs-{i:05d}"


def call(sock: socket.socket, request, version: int, response_class):
    request.with_header(correlation_id=1, client_id="bench")
    sock.sendall(bytes(request.encode(version=version, header=True, framed=True)))
    (length,) = struct.unpack(">i", _read(sock, 4))
    return response_class[version].decode(_read(sock, length), header=True)


def _read(sock: socket.socket, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = sock.recv(left)
        if not chunk:
            raise ConnectionError("the node closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def metadata(sock: socket.socket, topics: list[str] | None) -> dict[str, list[tuple[int, int]]]:
    """Topic -> [(leader, leader epoch)] by partition (topics None: every topic)."""
    entries = None if topics is None else [MetadataRequest[METADATA_V].MetadataRequestTopic(name=t, topic_id=None)
                                           for t in topics]
    request = MetadataRequest[METADATA_V](topics=entries, allow_auto_topic_creation=False,
                                          include_topic_authorized_operations=False)
    answer = call(sock, request, METADATA_V, MetadataResponse)
    return {t.name: [(p.leader_id, p.leader_epoch) for p in sorted(t.partitions, key=lambda p: p.partition_index)]
            for t in answer.topics}


class Node:
    """`groupctl coordinator run` on a fixed port (so it can be probed before it says it is ready)."""

    def __init__(self, zk: str, data_dir: Path, port: int) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "groupctl", "coordinator", "run", "--port", str(port), "--zk", zk,
             "--data-dir", str(data_dir), "--no-auto-create-topics", "--log-level", "warning"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.port = port

    def wait_ready(self, deadline: float) -> None:
        """Wait for the ready banner: a node stopped before it is ready leaves its ZooKeeper
        session (and registration) behind, and the next start would wait for it to expire."""
        out, seen = self.proc.stdout.fileno(), b""
        while b"ready:" not in seen:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise RuntimeError("the node did not say it was ready in time")
            if select.select([out], [], [], left)[0]:
                chunk = os.read(out, 4096)
                if not chunk:
                    raise RuntimeError(f"the node exited with {self.proc.wait(5)} before it was ready")
                seen += chunk

    def connect(self, deadline: float) -> socket.socket:
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the node exited with {self.proc.returncode}")
            try:
                return socket.create_connection(("127.0.0.1", self.port), timeout=10)
            except OSError:
                time.sleep(POLL_S)
        raise RuntimeError("the node did not listen in time")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)


def create_topics(sock: socket.socket, count: int) -> None:
    topic = CreateTopicsRequest.CreatableTopic
    for first in range(0, count, CREATE_BATCH):
        names = [topic_name(i) for i in range(first, min(count, first + CREATE_BATCH))]
        request = CreateTopicsRequest[CREATE_V](
            topics=[topic(name=n, num_partitions=1, replication_factor=1, assignments=[], configs=[]) for n in names],
            timeout_ms=60_000, validate_only=False)
        errors = {t.error_code for t in call(sock, request, CREATE_V, CreateTopicsResponse).topics}
        if errors != {0}:
            raise RuntimeError(f"CreateTopics answered errors {errors}")


def timed_start(zk: str, data_dir: Path, port: int, count: int, epoch: int) -> tuple[float, float]:
    """(spawn -> listening, spawn -> servable at `epoch`) in seconds; checks every topic after."""
    node = Node(zk, data_dir, port)
    try:
        deadline = node.started + START_LIMIT_S
        sock = node.connect(deadline)
        listening = time.perf_counter()  # the kernel accepts once the node listens, busy or not
        probe = topic_name(count - 1)
        while time.perf_counter() < deadline:
            partitions = metadata(sock, [probe]).get(probe, [])
            now = time.perf_counter()
            if partitions == [(0, epoch)]:
                break
            time.sleep(POLL_S)
        else:
            raise RuntimeError(f"the node did not serve {probe} at epoch {epoch} within {START_LIMIT_S}s")
        everything = metadata(sock, None)
        wrong = {t: p for t, p in everything.items() if p != [(0, epoch)]}
        if len(everything) != count or wrong:
            raise RuntimeError(f"{len(everything)} topics, not at epoch {epoch}: {sorted(wrong)[:5]}")
        sock.close()
        node.wait_ready(deadline)
        return listening - node.started, now - node.started
    finally:
        node.stop()


def copy_topics(client: KazooClient, chroot: str, count: int) -> list[str]:
    """Copies of the topic znodes (same data) for the raw baselines; their paths."""
    base = f"/bench-raw{chroot}"
    client.ensure_path(base)
    paths = []
    for i in range(count):
        data, _ = client.get(f"{chroot}/brokers/topics/{topic_name(i)}")
        path = f"{base}/{topic_name(i)}"
        if client.exists(path):
            client.set(path, data)
        else:
            client.create(path, data)
        paths.append(path)
    return paths


def raw_sequential(client: KazooClient, paths: list[str]) -> float:
    started = time.perf_counter()
    for path in paths:
        data, stat = client.get(path)
        client.set(path, data, version=stat.version)
    return time.perf_counter() - started


def raw_pipelined(client: KazooClient, paths: list[str]) -> float:
    started = time.perf_counter()
    reads = [client.get_async(path) for path in paths]
    writes = []
    for path, read in zip(paths, reads):
        data, stat = read.get(timeout=30)
        writes.append(client.set_async(path, data, version=stat.version))
    for write in writes:
        write.get(timeout=30)
    return time.perf_counter() - started


def measure(zk: str, tmp: Path, count: int, runs: int) -> dict[str, float]:
    chroot = f"/bench-{count}"
    data_dir = tmp / f"data-{count}"
    port = free_port()
    node = Node(f"{zk}{chroot}", data_dir, port)
    try:
        sock = node.connect(time.perf_counter() + START_LIMIT_S)
        create_topics(sock, count)
        sock.close()
        node.wait_ready(time.perf_counter() + START_LIMIT_S)
    finally:
        node.stop()
    client = KazooClient(hosts=zk)
    client.start(timeout=10)
    try:
        paths = copy_topics(client, chroot, count)
        figures: dict[str, list[float]] = {"listening": [], "servable": [], "sequential": [], "pipelined": []}
        for epoch in range(1, runs + 1):
            figures["sequential"].append(raw_sequential(client, paths))
            figures["pipelined"].append(raw_pipelined(client, paths))
            listening, servable = timed_start(f"{zk}{chroot}", data_dir, port, count, epoch)
            figures["listening"].append(listening)
            figures["servable"].append(servable)
    finally:
        client.stop()
        client.close()
    medians = {key: statistics.median(values) for key, values in figures.items()}
    medians["raise"] = statistics.median(s - l for s, l in zip(figures["servable"], figures["listening"]))
    return medians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="groupctl-bench-epochs-") as tmp:
        zookeeper = ZooKeeperServer(Path(tmp) / "zk").start()
        try:
            results = {n: measure(zookeeper.connect, Path(tmp), n, args.runs) for n in args.topics}
        finally:
            zookeeper.stop()
    print(f"{'topics':>7} {'listening s':>12} {'servable s':>11} {'raise s':>8} {'raw seq s':>10} "
          f"{'raw pipe s':>11} {'raise/seq':>10} {'raise/pipe':>11}")
    for n, m in results.items():
        print(f"{n:>7,} {m['listening']:>12.3f} {m['servable']:>11.3f} {m['raise']:>8.3f} {m['sequential']:>10.3f} "
              f"{m['pipelined']:>11.3f} {m['raise'] / m['sequential']:>10.2f} {m['raise'] / m['pipelined']:>11.2f}")
    print(f"(median of {args.runs} restarts; times from spawning the node's process; raise = listening -> "
          "servable; raw = one read + one compare-and-set write per topic from kazoo)")


if __name__ == "__main__":
    main()
