"""Produce throughput through a node, CreateTime against LogAppendTime, and against a bare asyncio
echo server.

    python -m bench.log_append [--connections 4] [--records 100] [--value-bytes 100] [--depth 5]
                               [--seconds 1.5] [--runs 3] [--memory]

The node runs in a child process of its own (`--serve`, below): a node with its partition logs in
a temp data dir (`--memory`: in memory) and two topics of one partition per connection, `create`
with message.timestamp.type=CreateTime and `append` with LogAppendTime, where the log stamps each
batch with its append time and re-computes its CRC. The child gives the topics their configs
with `node.logs.set_topic_config`, on the node's loop, before it prints its port: what a
CreateTopics or IncrementalAlterConfigs with these configs ends in (written when neither API
existed yet; the figures are the same either way). Both topics get the same segment.bytes and retention.bytes (checked
every second) so that the disk holds a bounded amount whatever the rate; only the timestamp type
differs.

Each connection sends one Produce v9 request (acks=1, what kafka-python and librdkafka send: one
record batch for one partition, `--records` records of `--value-bytes` random bytes, uncompressed,
no idempotence) for its own partition, encoded once and replayed, as fast as the answers come
back: one at a time, or `--depth` pipelined (a producer's max.in.flight.requests.per.connection
is 5). The echo server (`echo_server.py`, the Python ceiling for length-prefixed
request/response) gets the same frames from the same client. Every node answer is checked for
errors after each run, and for the log append time only the `append` topic answers. Prints
requests/s, MB/s and the node process's CPU per request (/proc; median of the runs), the ratios,
and, in this process, what stamping one batch costs against the CRC check every batch gets
anyway.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from kafka.protocol.producer import ProduceRequest, ProduceResponse
from kafka.record.memory_records import MemoryRecordsBuilder

from bench import processes
from bench.coordinator_throughput import drive
from bench.wire import Conn, frame

PRODUCE_V = 9
TOPICS = ("create", "append")
SEGMENT_BYTES = 16 * 1024 * 1024
RETENTION_BYTES = 64 * 1024 * 1024


def record_batch(records: int, value_bytes: int) -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 24)
    now = int(time.time() * 1000)
    for i in range(records):
        builder.append(now + i, None, os.urandom(value_bytes))
    builder.close()
    return bytes(builder.buffer())


def produce_frame(topic: str, partition: int, batch: bytes) -> bytes:
    data = ProduceRequest.TopicProduceData
    request = ProduceRequest[PRODUCE_V](transactional_id=None, acks=1, timeout_ms=30_000, topic_data=[
        data(name=topic, partition_data=[data.PartitionProduceData(index=partition, records=batch)])])
    return frame(request, PRODUCE_V)


async def answers(port: int, frames: list[bytes]) -> set[tuple[int, bool]]:
    """(error code, whether log_append_time_ms is set) of one more request of each frame."""
    found = set()
    for data in frames:
        conn = await Conn.open("127.0.0.1", port)
        answer = ProduceResponse[PRODUCE_V].decode(await conn.call(data), header=True)
        found |= {(p.error_code, p.log_append_time_ms != -1) for t in answer.responses for p in t.partition_responses}
        conn.close()
    return found


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stamp_cost_us(batch: bytes, repeats: int = 2000) -> tuple[float, float]:
    """In this process: µs to stamp one batch with LogAppendTime (attributes, max timestamp, CRC
    re-computed), and µs to check its CRC (what every Produce pays), medians of 5 rounds."""
    from kafka.record.default_records import DefaultRecordBatch

    from groupctl.log.batches import parse_header
    from groupctl.log.timestamps import stamp_log_append_time

    headers = [parse_header(memoryview(batch), 0, 0)]
    copies = [bytearray(batch) for _ in range(repeats)]
    stamp, check = [], []
    for _ in range(5):
        started = time.perf_counter()
        for data in copies:
            stamp_log_append_time(data, headers, 1)
        stamp.append((time.perf_counter() - started) / repeats * 1e6)
        started = time.perf_counter()
        for data in copies:
            DefaultRecordBatch(data).validate_crc()
        check.append((time.perf_counter() - started) / repeats * 1e6)
    return statistics.median(stamp), statistics.median(check)


def serve(data_dir: str | None, partitions: int) -> None:
    """The child: a node with both topics configured, printing its port once ready."""
    from groupctl.log import LogConfig
    from groupctl.log.config import CREATE_TIME, LOG_APPEND_TIME
    from groupctl.server.config import NodeConfig
    from groupctl.server.server import CoordinatorServer

    async def run() -> None:
        config = NodeConfig(host="127.0.0.1", port=0, data_dir=Path(data_dir) if data_dir else None,
                            topics=tuple((topic, partitions) for topic in TOPICS),
                            log_retention_check_interval_ms=1000)
        server = CoordinatorServer(config)
        await server.start()
        for topic, kind in zip(TOPICS, (CREATE_TIME, LOG_APPEND_TIME)):
            server.node.logs.set_topic_config(topic, LogConfig(
                segment_bytes=SEGMENT_BYTES, retention_bytes=RETENTION_BYTES, message_timestamp_type=kind))
        await server.serve_forever(on_ready=lambda: print(server.port, flush=True))

    asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--records", type=int, default=100)
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument("--depth", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--memory", action="store_true", help="partition logs in memory, not in a data dir")
    parser.add_argument("--serve", nargs=2, metavar=("DATA_DIR", "PARTITIONS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(None if args.serve[0] == "-" else args.serve[0], int(args.serve[1]))
        return

    batch = record_batch(args.records, args.value_bytes)
    frames = {topic: [produce_frame(topic, p, batch) for p in range(args.connections)] for topic in TOPICS}
    with tempfile.TemporaryDirectory(prefix="groupctl-bench-append-") as tmp:
        echo = processes.echo_server()
        node = processes.Child([sys.executable, "-m", "bench.log_append", "--serve",
                                "-" if args.memory else tmp, str(args.connections)])
        try:
            rows = []
            for depth in (1, args.depth):
                rates: dict[str, list[float]] = {topic: [] for topic in TOPICS}
                cpu_us: dict[str, list[float]] = {topic: [] for topic in TOPICS}
                for _ in range(args.runs):  # the topics alternate run by run: drift hits both alike
                    for topic in TOPICS:
                        cpu = cpu_seconds(node.proc.pid)
                        rate = asyncio.run(drive(node.port, frames[topic], depth, args.seconds))
                        rates[topic].append(rate)
                        cpu_us[topic].append((cpu_seconds(node.proc.pid) - cpu) / (rate * args.seconds) * 1e6)
                        found = asyncio.run(answers(node.port, frames[topic]))
                        if found != {(0, topic == "append")}:
                            raise RuntimeError(f"{topic}: Produce answered (error, log append time set) {found}")
                echo_rate = statistics.median(asyncio.run(drive(echo.port, frames["create"], depth, args.seconds))
                                              for _ in range(args.runs))
                rows.append((depth, {topic: statistics.median(r) for topic, r in rates.items()}, echo_rate,
                             {topic: statistics.median(c) for topic, c in cpu_us.items()}))
        finally:
            node.stop()
            echo.stop()
    size = len(frames["create"][0])
    print(f"{'mode':<14} {'CreateTime/s':>13} {'LogAppend/s':>12} {'echo/s':>9} {'LAT/CT':>7} {'CT/echo':>8} "
          f"{'LAT/echo':>9} {'CT MB/s':>8} {'CT cpu us':>10} {'LAT cpu us':>11}")
    for depth, rates, echo_rate, cpu in rows:
        mode = "one-at-a-time" if depth == 1 else f"pipelined x{depth}"
        create, append = rates["create"], rates["append"]
        print(f"{mode:<14} {create:>13,.0f} {append:>12,.0f} {echo_rate:>9,.0f} {append / create:>7.2f} "
              f"{create / echo_rate:>8.2f} {append / echo_rate:>9.2f} {create * size / 1e6:>8.1f} "
              f"{cpu['create']:>10.0f} {cpu['append']:>11.0f}")
    stamp, check = stamp_cost_us(batch)
    print(f"in process, per batch: LogAppendTime stamp (CRC re-computed) {stamp:.1f} us; CRC check {check:.1f} us")
    print(f"({args.connections} connections, Produce v{PRODUCE_V} of {size:,} bytes: one batch of {args.records} "
          f"records of {args.value_bytes} bytes; logs {'in memory' if args.memory else 'in a data dir'}; "
          f"median of {args.runs} runs of {args.seconds}s each; cpu us = the node process's CPU per request)")


if __name__ == "__main__":
    main()
