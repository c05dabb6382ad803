"""Heartbeat and offset-commit throughput of the coordinator against a bare asyncio echo server.

    python bench/coordinator_throughput.py [--connections 50] [--seconds 2] [--runs 5] [--metrics on|off|compare]

For each workload (classic Heartbeat, KIP-848 ConsumerGroupHeartbeat "consumer-hb", commit) and each mode (one request in flight per connection, or
`--depth` pipelined), N connections each own a single-member group and send that request as fast
as the server answers; the echo server gets the same frames. Prints requests/s (median of the
runs) and the coordinator/echo ratio. Targets: heartbeats >= 40% of the echo ceiling (issue 2);
consumer-protocol heartbeats >= 0.5x classic heartbeats (issue 12).
`--metrics on` runs the coordinator with its Prometheus metrics (`--metrics-port 0`); `--metrics
compare` runs two coordinators, metrics off and on, instead of the echo server, and prints on/off.
The coordinator here uses the in-memory embedded store, so commits measure the coordinator, not
fsync; see zk_commit_throughput.py for the store-bound case.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from bench import processes
from bench.wire import (
    Conn,
    commit_frame,
    consumer_heartbeat_epoch,
    consumer_heartbeat_frame,
    heartbeat_frame,
    heartbeat_ok,
    join_single_member_group,
)

TOPIC, PARTITIONS = "bench", 4


async def drive(port: int, frames: list[bytes], depth: int, seconds: float) -> float:
    """Send each connection's frame `depth` at a time for `seconds`; return responses/s."""
    conns = [await Conn.open("127.0.0.1", port) for _ in frames]
    done = 0
    stop_at = time.perf_counter() + seconds

    async def pump(conn: Conn, data: bytes) -> None:
        nonlocal done
        batch = data * depth
        while time.perf_counter() < stop_at:
            conn.writer.write(batch)
            for _ in range(depth):
                await conn.read_frame()
            done += depth

    started = time.perf_counter()
    await asyncio.gather(*(pump(c, f) for c, f in zip(conns, frames)))
    elapsed = time.perf_counter() - started
    for conn in conns:
        conn.close()
    return done / elapsed


async def member_frames(port: int, connections: int, kind: str) -> list[bytes]:
    frames = []
    for i in range(connections):
        conn = await Conn.open("127.0.0.1", port)
        group = f"bench-{kind}-{i}"
        if kind == "consumer-hb":  # KIP-848: join with the full heartbeat, then the steady one
            member_id = f"bench-member-{i:010d}"
            epoch = consumer_heartbeat_epoch(await conn.call(
                consumer_heartbeat_frame(group, member_id, 0, join=True, topic=TOPIC)))
            data = consumer_heartbeat_frame(group, member_id, epoch)
            consumer_heartbeat_epoch(await conn.call(data))
            conn.close()
            frames.append(data)
            continue
        member_id, generation = await join_single_member_group(conn, group, TOPIC, PARTITIONS)
        if kind == "heartbeat":
            data = heartbeat_frame(group, member_id, generation)
            assert heartbeat_ok(await conn.call(data)), "heartbeat rejected"
        else:
            data = commit_frame(group, member_id, generation, TOPIC, i % PARTITIONS, 42)
        conn.close()
        frames.append(data)
    return frames


def median_rate(port: int, frames: list[bytes], depth: int, seconds: float, runs: int) -> float:
    return statistics.median(asyncio.run(drive(port, frames, depth, seconds)) for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--depth", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--metrics", choices=("off", "on", "compare"), default="off",
                        help="the coordinator's Prometheus metrics; compare: metrics on against off, no echo")
    args = parser.parse_args()

    topic = ("--topic", f"{TOPIC}:{PARTITIONS}")
    metered = ("--metrics-port", "0")
    if args.metrics == "compare":
        baseline = processes.coordinator(*topic)
        baseline_name = "off/s"
        node = processes.coordinator(*topic, *metered)
    else:
        baseline = processes.echo_server()
        baseline_name = "echo/s"
        node = processes.coordinator(*topic, *(metered if args.metrics == "on" else ()))
    try:
        print(f"{'workload':<10} {'mode':<14} {'coordinator/s':>14} {baseline_name:>10} {'ratio':>7}")
        for kind in ("heartbeat", "consumer-hb", "commit"):
            frames = asyncio.run(member_frames(node.port, args.connections, kind))
            # A coordinator baseline needs its own members (the echo server answers any frame).
            base_frames = (asyncio.run(member_frames(baseline.port, args.connections, kind))
                           if args.metrics == "compare" else frames)
            for depth in (1, args.depth):
                mode = "one-at-a-time" if depth == 1 else f"pipelined x{depth}"
                ours = median_rate(node.port, frames, depth, args.seconds, args.runs)
                base = median_rate(baseline.port, base_frames, depth, args.seconds, args.runs)
                print(f"{kind:<10} {mode:<14} {ours:>14,.0f} {base:>10,.0f} {ours / base:>7.2f}", flush=True)
        print(f"({args.connections} connections, median of {args.runs} runs of {args.seconds}s each)")
    finally:
        node.stop()
        baseline.stop()


if __name__ == "__main__":
    main()
