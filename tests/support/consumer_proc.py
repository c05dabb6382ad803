"""A real Kafka consumer in its own process, for tests that kill members.

    python -m tests.support.consumer_proc CLIENT BOOTSTRAP GROUP TOPIC [--session-timeout-ms N]
        [--max-seconds S] [--debug-log PATH] [--report-commits] [--request-timeout-ms N]

CLIENT is `kafka-python` or `confluent`. Prints one JSON object per line to stdout:
{"event": "assigned", "partitions": [[topic, p], ...]} after every rebalance it observes, and
{"event": "consumed", "records": [[topic, p, offset, value], ...]} for each non-empty poll, after
committing synchronously. Exits by itself after --max-seconds (bounded test loops).
--report-commits (kafka-python only) commits exactly the polled partitions' next offsets, prints
{"event": "committed", "offsets": [[topic, p, offset], ...]} once the coordinator acknowledged
them, and lives through a failed commit as an application committing across rebalances and
coordinator moves does: it prints {"event": "commit_failed", "error": NAME} and polls on (the
records are delivered again to whoever owns the partition next).
--request-timeout-ms (kafka-python only; default the larger of 30 s and the session timeout + 5 s)
bounds how long a request to a node that stopped answering (SIGSTOP) blocks the consumer.
--debug-log writes the client library's DEBUG log to PATH (for diagnosing a stuck member).
kafka-python runs with one client bug worked around (see `count_pending_join_as_rejoin`).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time


def emit(obj) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def count_pending_join_as_rejoin() -> None:
    """Work around a kafka-python 3.0.12 bug that leaves a consumer without partitions for good.

    kafka-python runs one JoinGroup+SyncGroup attempt as a task that outlives the poll() that
    started it (a poll that times out leaves it in flight), but awaits it again only while
    `need_rejoin()` is true. A leader rejoining because its topic metadata changed stops
    "needing" to rejoin as soon as it has computed the assignment, so when the SyncGroup answer
    comes after that poll's timeout nobody applies it: heartbeats stay off, the assignment never
    arrives, and the coordinator drops the member after its session timeout. Kafka's Java client
    keeps looping while a join is pending (`rejoinNeededOrPending`); do the same. If a future
    kafka-python renames the task, this does nothing and tests/server/test_kafka_python_rejoin.py
    says so.
    """
    from kafka.coordinator.consumer import ConsumerCoordinator

    need_rejoin = ConsumerCoordinator.need_rejoin

    def need_rejoin_or_pending(self) -> bool:
        return getattr(self, "_join_task", None) is not None or need_rejoin(self)

    ConsumerCoordinator.need_rejoin = need_rejoin_or_pending


def run_kafka_python(args) -> None:
    from kafka import KafkaConsumer
    from kafka.consumer.subscription_state import ConsumerRebalanceListener

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked):
            emit({"event": "revoked", "partitions": sorted([tp.topic, tp.partition] for tp in revoked)})

        def on_partitions_assigned(self, assigned):
            emit({"event": "assigned", "partitions": sorted([tp.topic, tp.partition] for tp in assigned)})

    count_pending_join_as_rejoin()
    consumer = KafkaConsumer(
        bootstrap_servers=args.bootstrap, group_id=args.group, client_id=args.client_id,
        enable_auto_commit=False, auto_offset_reset="earliest",
        session_timeout_ms=args.session_timeout_ms, heartbeat_interval_ms=args.session_timeout_ms // 6,
        request_timeout_ms=args.request_timeout_ms or max(30000, args.session_timeout_ms + 5000),
    )
    consumer.subscribe([args.topic], listener=Listener())
    deadline = time.monotonic() + args.max_seconds
    try:
        while time.monotonic() < deadline:
            polled = consumer.poll(timeout_ms=200)
            records = [[r.topic, r.partition, r.offset, r.value.decode()] for rs in polled.values() for r in rs]
            if records and args.report_commits:
                commit_and_report(consumer, polled)
            elif records:
                consumer.commit()
            if records:
                emit({"event": "consumed", "records": records})
    finally:
        consumer.close()


def commit_and_report(consumer, polled) -> None:
    """Commit the next offset of every polled partition; report the acknowledgement or the failure."""
    from kafka.errors import KafkaError
    from kafka.structs import OffsetAndMetadata

    offsets = {tp: OffsetAndMetadata(rs[-1].offset + 1, "", -1) for tp, rs in polled.items() if rs}
    try:
        consumer.commit(offsets)
    except KafkaError as exc:
        emit({"event": "commit_failed", "error": type(exc).__name__})
        return
    emit({"event": "committed", "offsets": sorted([tp.topic, tp.partition, o.offset] for tp, o in offsets.items())})


def run_confluent(args) -> None:
    from confluent_kafka import Consumer

    config = {
        "bootstrap.servers": args.bootstrap, "group.id": args.group, "client.id": args.client_id,
        "enable.auto.commit": False, "auto.offset.reset": "earliest", "broker.address.family": "v4",
    }
    if args.group_protocol == "consumer":  # KIP-848: the session and heartbeat are the coordinator's
        config["group.protocol"] = "consumer"
    else:
        config.update({"session.timeout.ms": args.session_timeout_ms,
                       "heartbeat.interval.ms": args.session_timeout_ms // 6})
    consumer = Consumer(config)

    def on_assign(c, partitions):
        emit({"event": "assigned", "partitions": sorted([p.topic, p.partition] for p in partitions)})

    def on_revoke(c, partitions):
        emit({"event": "revoked", "partitions": sorted([p.topic, p.partition] for p in partitions)})

    def on_lost(c, partitions):
        emit({"event": "lost", "partitions": sorted([p.topic, p.partition] for p in partitions)})

    consumer.subscribe([args.topic], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)
    deadline = time.monotonic() + args.max_seconds
    try:
        while time.monotonic() < deadline:
            msgs = consumer.consume(num_messages=500, timeout=0.2)
            records = [[m.topic(), m.partition(), m.offset(), m.value().decode()] for m in msgs if not m.error()]
            if records:
                consumer.commit(asynchronous=False)
                emit({"event": "consumed", "records": records})
    finally:
        consumer.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("client", choices=["kafka-python", "confluent"])
    parser.add_argument("bootstrap")
    parser.add_argument("group")
    parser.add_argument("topic")
    parser.add_argument("--client-id", default="test-consumer")
    parser.add_argument("--session-timeout-ms", type=int, default=6000)
    parser.add_argument("--max-seconds", type=float, default=120)
    parser.add_argument("--debug-log", default=None)
    parser.add_argument("--report-commits", action="store_true")
    parser.add_argument("--request-timeout-ms", type=int, default=None)
    parser.add_argument("--group-protocol", choices=["classic", "consumer"], default="classic")
    args = parser.parse_args()
    if args.debug_log:
        import logging

        logging.basicConfig(filename=args.debug_log, level=logging.DEBUG,
                            format="%(asctime)s %(name)s %(levelname)s %(message)s")
    # SIGTERM closes the consumer cleanly (it sends LeaveGroup); SIGKILL is the crash case.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    (run_kafka_python if args.client == "kafka-python" else run_confluent)(args)


if __name__ == "__main__":
    main()
