"""Offset-commit throughput with the ZooKeeper store against ZooKeeper's raw write rates.

    python -m bench.zk_commit_throughput [--connections 64 [256 ...]] [--seconds 3] [--runs 3]

Starts its own ZooKeeper (Debian's package, 127.0.0.1, a temp dir, the test settings: forceSync=no)
and a coordinator using it. Two baselines, from one kazoo client writing one small znode per
write: `set_async` with 2000 writes in flight at once (ZooKeeper's pipelined per-write ceiling for
one client) and `set` one write at a time (one round trip per write, as a store without batching
would see it). Then, for each connection count N, N connections, each the single member of its
own group, commit one partition at a time, waiting for each acknowledgement (every acknowledged
commit is in ZooKeeper). The coordinator coalesces the commits that arrive while a transaction is
in flight into the next one, so commits/s can exceed the per-write rate. Target (issue 2):
commits >= 1.5x the raw pipelined per-write rate.

The client encodes each connection's commit once and patches the offset into the frame for each
commit (the coordinator answers every commit; only the offset changes), so on this 2-core machine
the bench client takes as little CPU from the coordinator and ZooKeeper as it can.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import struct
import tempfile
import time
from pathlib import Path

from kafka.protocol.consumer import OffsetCommitResponse
from kazoo.client import KazooClient

from bench import processes
from bench.wire import COMMIT_V, Conn, commit_frame, join_single_member_group
from tests.support.zookeeper import ZooKeeperServer

TOPIC, PARTITIONS = "bench", 8
RAW_NODES = 64
OFFSET = struct.Struct(">q")
_RUNS = itertools.count()
_SENTINEL = 0x0BADC0FFEE0DDF00  # an offset whose 8 bytes occur nowhere else in a commit frame


def _raw_client(connect: str) -> tuple[KazooClient, list[str]]:
    client = KazooClient(hosts=connect)
    client.start(timeout=10)
    paths = [f"/bench-raw/n{i}" for i in range(RAW_NODES)]
    for path in paths:
        client.ensure_path(path)
    return client, paths


def _close(client: KazooClient) -> None:
    client.stop()
    client.close()


def raw_async_write_rate(connect: str, writes: int = 2000) -> float:
    """kazoo `set_async`, all `writes` issued before the first answer is awaited."""
    client, paths = _raw_client(connect)
    try:
        started = time.perf_counter()
        pending = [client.set_async(paths[i % RAW_NODES], b'{"offset": %d}' % i) for i in range(writes)]
        for result in pending:
            result.get(timeout=30)
        return writes / (time.perf_counter() - started)
    finally:
        _close(client)


def raw_sequential_write_rate(connect: str, seconds: float) -> float:
    """kazoo `set`, each write issued after the previous one was answered."""
    client, paths = _raw_client(connect)
    try:
        writes = 0
        started = time.perf_counter()
        stop_at = started + seconds
        while time.perf_counter() < stop_at:
            client.set(paths[writes % RAW_NODES], b'{"offset": %d}' % writes)
            writes += 1
        return writes / (time.perf_counter() - started)
    finally:
        _close(client)


def commit_template(group: str, member_id: str, generation: int, partition: int) -> tuple[bytes, bytes]:
    """The commit frame split around its 8 offset bytes: `head + OFFSET.pack(n) + tail` commits n."""
    data = commit_frame(group, member_id, generation, TOPIC, partition, _SENTINEL)
    at = data.index(OFFSET.pack(_SENTINEL))
    return data[:at], data[at + OFFSET.size:]


def commit_errors(response: bytes) -> set[int]:
    decoded = OffsetCommitResponse.decode(response, version=COMMIT_V, header=True)
    return {p.error_code for t in decoded.topics for p in t.partitions}


async def commit_rate(port: int, connections: int, seconds: float) -> float:
    """Commits/s of `connections` new single-member groups (new names each call: members of an
    earlier call's groups would still be in them until their session timeout); fails unless every
    connection's last commit was accepted."""
    run = next(_RUNS)
    members = []
    for i in range(connections):
        conn = await Conn.open("127.0.0.1", port)
        group = f"zk-bench-{run}-{i}"
        member_id, generation = await join_single_member_group(conn, group, TOPIC, PARTITIONS)
        members.append((conn, group, member_id, generation))
    done = 0
    stop_at = time.perf_counter() + seconds

    async def commit_loop(conn, group, member_id, generation, index):
        nonlocal done
        head, tail = commit_template(group, member_id, generation, index % PARTITIONS)
        pack = OFFSET.pack
        offset = 0
        response = b""
        while time.perf_counter() < stop_at:
            offset += 1
            response = await conn.call(head + pack(offset) + tail)
            done += 1
        if response and commit_errors(response) != {0}:
            raise RuntimeError(f"{group}: commit answered with errors {commit_errors(response)}")

    started = time.perf_counter()
    await asyncio.gather(*(commit_loop(*m, i) for i, m in enumerate(members)))
    elapsed = time.perf_counter() - started
    for conn, *_ in members:
        conn.close()
    return done / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, nargs="+", default=[64])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        zookeeper = ZooKeeperServer(Path(tmp) / "zk").start()
        node = None
        try:
            pipelined = statistics.median(raw_async_write_rate(zookeeper.connect) for _ in range(args.runs))
            sequential = statistics.median(
                raw_sequential_write_rate(zookeeper.connect, args.seconds) for _ in range(args.runs))
            node = processes.coordinator("--zk", f"{zookeeper.connect}/bench", "--topic", f"{TOPIC}:{PARTITIONS}")
            commits = {
                n: statistics.median(asyncio.run(commit_rate(node.port, n, args.seconds)) for _ in range(args.runs))
                for n in args.connections
            }
            print(f"{'measure':<48} {'per second':>12} {'/pipelined':>11} {'/sequential':>12}")
            print(f"{'ZooKeeper raw set_async (2000 in flight)':<48} {pipelined:>12,.0f}")
            print(f"{'ZooKeeper raw set (one at a time)':<48} {sequential:>12,.0f}")
            for n, rate in commits.items():
                print(f"{f'coordinator commits ({n} connections)':<48} {rate:>12,.0f}"
                      f" {rate / pipelined:>11.2f} {rate / sequential:>12.2f}")
            print(f"(median of {args.runs} runs)")
        finally:
            if node:
                node.stop()
            zookeeper.stop()


if __name__ == "__main__":
    main()
