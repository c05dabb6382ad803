"""Offset-commit throughput with the ZooKeeper store against ZooKeeper's raw async write rate.

    python -m bench.zk_commit_throughput [--connections 64] [--seconds 3] [--runs 3]

Starts its own ZooKeeper (Debian's package, 127.0.0.1, a temp dir, the test settings: forceSync=no)
and a coordinator using it. Baseline: kazoo `set_async` writes of one small znode each, 2000 in
flight at once (ZooKeeper's pipelined per-write ceiling for one client). Then N connections, each
the single member of its own group, commit one partition at a time, waiting for each
acknowledgement (every acknowledged commit is in ZooKeeper). The coordinator coalesces the
commits that arrive while a transaction is in flight into the next one, so commits/s can exceed
the per-write rate. Target (issue 2): commits >= 1.5x the raw per-write rate.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from kazoo.client import KazooClient

from bench import processes
from bench.wire import Conn, commit_frame, join_single_member_group
from tests.support.zookeeper import ZooKeeperServer

TOPIC, PARTITIONS = "bench", 8


def raw_async_write_rate(connect: str, writes: int = 2000) -> float:
    client = KazooClient(hosts=connect)
    client.start(timeout=10)
    try:
        client.ensure_path("/bench-raw")
        paths = [f"/bench-raw/n{i % 64}" for i in range(64)]
        for path in paths:
            client.ensure_path(path)
        started = time.perf_counter()
        pending = [client.set_async(paths[i % 64], b'{"offset": %d}' % i) for i in range(writes)]
        for result in pending:
            result.get(timeout=30)
        return writes / (time.perf_counter() - started)
    finally:
        client.stop()
        client.close()


async def commit_rate(port: int, connections: int, seconds: float) -> float:
    members = []
    for i in range(connections):
        conn = await Conn.open("127.0.0.1", port)
        group = f"zk-bench-{i}"
        member_id, generation = await join_single_member_group(conn, group, TOPIC, PARTITIONS)
        members.append((conn, group, member_id, generation))
    done = 0
    stop_at = time.perf_counter() + seconds

    async def commit_loop(conn, group, member_id, generation, index):
        nonlocal done
        offset = 0
        while time.perf_counter() < stop_at:
            offset += 1
            await conn.call(commit_frame(group, member_id, generation, TOPIC, index % PARTITIONS, offset))
            done += 1

    started = time.perf_counter()
    await asyncio.gather(*(commit_loop(*m, i) for i, m in enumerate(members)))
    elapsed = time.perf_counter() - started
    for conn, *_ in members:
        conn.close()
    return done / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        zookeeper = ZooKeeperServer(Path(tmp) / "zk").start()
        node = None
        try:
            raw = statistics.median(raw_async_write_rate(zookeeper.connect) for _ in range(args.runs))
            node = processes.coordinator("--zk", f"{zookeeper.connect}/bench", "--topic", f"{TOPIC}:{PARTITIONS}")
            ours = statistics.median(
                asyncio.run(commit_rate(node.port, args.connections, args.seconds)) for _ in range(args.runs))
            print(f"{'measure':<44} {'per second':>12}")
            print(f"{'ZooKeeper raw set_async (2000 in flight)':<44} {raw:>12,.0f}")
            print(f"{f'coordinator commits ({args.connections} connections)':<44} {ours:>12,.0f}")
            print(f"{'ratio':<44} {ours / raw:>12.2f}")
            print(f"(median of {args.runs} runs)")
        finally:
            if node:
                node.stop()
            zookeeper.stop()


if __name__ == "__main__":
    main()
