"""One confluent-kafka consumer for bench/partition_growth.py, in its own process.

    python -m bench.partition_growth_consumer BOOTSTRAP GROUP TOPIC MODE HEARTBEAT_MS MAX_SECONDS

MODE is `consumer` (group.protocol=consumer, KIP-848), `cooperative` (classic,
cooperative-sticky) or `eager` (classic, range). Prints one JSON object a line, each stamped with
`time.monotonic()` (one clock for every process on the machine):
{"e": "assigned" | "revoked" | "lost", "t": T, "p": [partition, ...]} from the rebalance
callbacks (incremental for `consumer` and `cooperative`, the whole assignment for `eager`), and
{"e": "c", "t": T, "p": [partition, ...]} after each poll that returned records: the partitions
they came from. Commits are automatic (every 5 s, librdkafka's default). Exits after MAX_SECONDS,
or at SIGTERM (closing the consumer: it leaves the group).
"""

from __future__ import annotations

import json
import signal
import sys
import time

from confluent_kafka import Consumer


def emit(event: str, partitions) -> None:
    sys.stdout.write(json.dumps({"e": event, "t": time.monotonic(), "p": sorted(partitions)}) + "\n")
    sys.stdout.flush()


def config(bootstrap: str, group: str, mode: str, heartbeat_ms: int) -> dict:
    common = {"bootstrap.servers": bootstrap, "group.id": group, "client.id": f"{group}-member",
              "auto.offset.reset": "earliest", "broker.address.family": "v4", "enable.auto.commit": True}
    if mode == "consumer":  # the session and the heartbeat interval are the coordinator's
        return {**common, "group.protocol": "consumer"}
    classic = {**common, "group.protocol": "classic", "heartbeat.interval.ms": heartbeat_ms,
               "session.timeout.ms": max(10 * heartbeat_ms, 6000)}
    strategy = {"cooperative": "cooperative-sticky", "eager": "range"}[mode]
    return {**classic, "partition.assignment.strategy": strategy}


def main() -> None:
    bootstrap, group, topic, mode, heartbeat_ms, max_seconds = sys.argv[1:7]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    consumer = Consumer(config(bootstrap, group, mode, int(heartbeat_ms)))
    consumer.subscribe(
        [topic],
        on_assign=lambda c, ps: emit("assigned", [p.partition for p in ps]),
        on_revoke=lambda c, ps: emit("revoked", [p.partition for p in ps]),
        on_lost=lambda c, ps: emit("lost", [p.partition for p in ps]))
    deadline = time.monotonic() + float(max_seconds)
    try:
        while time.monotonic() < deadline:
            messages = consumer.consume(num_messages=1000, timeout=0.05)
            partitions = {m.partition() for m in messages if not m.error()}
            if partitions:
                emit("c", partitions)
    finally:
        consumer.close()


if __name__ == "__main__":
    main()
