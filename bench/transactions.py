"""Transactions per second of a confluent-kafka transactional producer against plain produce of
the same messages by an idempotent producer, through one node.

    python -m bench.transactions [--transactions 200] [--messages 10] [--value-bytes 100] [--runs 5]

The node is `groupctl coordinator run` in a child process with its embedded store and data dir
in a temp dir (so its partition logs are on disk and it journals), one topic of one partition.
Three modes, alternating run by run so the machine's load falls on each alike:

- `plain`: an idempotent producer (enable.idempotence, no transactional id) produces
  `--messages` messages and flushes, `--transactions` times: the baseline, the same messages
  with the same sync point a commit has;
- `txn`: a transactional producer, initialised once, runs `--transactions` times
  begin_transaction / produce `--messages` / commit_transaction (AddPartitionsToTxn, the
  Produce, EndTxn, the markers, the completion);
- `txn+offsets`: the same plus send_offsets_to_transaction per transaction (AddOffsetsToTxn,
  TxnOffsetCommit, the group's pending offsets completed with the markers), what a
  consume-transform-produce application does.

Prints per mode the median over the runs of transactions (rounds) per second, messages per
second, and the ratio of messages per second to `plain` in the same run (median of the runs'
ratios). Every message is checked delivered without error.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from confluent_kafka import Consumer, Producer, TopicPartition

from bench import processes

TOPIC = "txn-bench"
GROUP = "txn-bench-app"
CLIENT_TIMEOUT_S = 30
MODES = ("plain", "txn", "txn+offsets")


class Failures:
    """A delivery callback that counts errors."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, error, _message) -> None:
        if error is not None:
            self.count += 1


def plain_run(bootstrap: str, transactions: int, values: list[bytes]) -> float:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 0})
    failures = Failures()
    producer.produce(TOPIC, value=b"warm-up", partition=0, on_delivery=failures)
    producer.flush(CLIENT_TIMEOUT_S)
    started = time.perf_counter()
    for _ in range(transactions):
        for value in values:
            producer.produce(TOPIC, value=value, partition=0, on_delivery=failures)
        if producer.flush(CLIENT_TIMEOUT_S):
            raise RuntimeError("plain produce: messages not delivered in time")
    elapsed = time.perf_counter() - started
    if failures.count:
        raise RuntimeError(f"plain produce: {failures.count} messages failed")
    return elapsed


def txn_run(bootstrap: str, transactions: int, values: list[bytes], run: int, *, offsets: bool) -> float:
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"txn-bench-{run}-{offsets}",
                         "linger.ms": 0})
    producer.init_transactions(CLIENT_TIMEOUT_S)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "enable.auto.commit": False})
    group = consumer.consumer_group_metadata()
    failures = Failures()
    try:
        started = time.perf_counter()
        for number in range(transactions):
            producer.begin_transaction()
            for value in values:
                producer.produce(TOPIC, value=value, partition=0, on_delivery=failures)
            if offsets:
                producer.send_offsets_to_transaction([TopicPartition(TOPIC, 0, number + 1)], group,
                                                     CLIENT_TIMEOUT_S)
            producer.commit_transaction(CLIENT_TIMEOUT_S)
        elapsed = time.perf_counter() - started
    finally:
        consumer.close()
    if failures.count:
        raise RuntimeError(f"transactional produce: {failures.count} messages failed")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transactions", type=int, default=200)
    parser.add_argument("--messages", type=int, default=10)
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    values = [os.urandom(args.value_bytes) for _ in range(args.messages)]
    rates: dict[str, list[float]] = {mode: [] for mode in MODES}
    ratios: dict[str, list[float]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory(prefix="bench-txn-") as data_dir:
        node = processes.coordinator("--data-dir", data_dir, "--topic", f"{TOPIC}:1")
        bootstrap = f"127.0.0.1:{node.port}"
        try:
            for run in range(args.runs):
                order = MODES[run % len(MODES):] + MODES[:run % len(MODES)]
                elapsed = {}
                for mode in order:
                    if mode == "plain":
                        elapsed[mode] = plain_run(bootstrap, args.transactions, values)
                    else:
                        elapsed[mode] = txn_run(bootstrap, args.transactions, values, run,
                                                offsets=mode == "txn+offsets")
                for mode in MODES:
                    rates[mode].append(args.transactions / elapsed[mode])
                    ratios[mode].append(elapsed["plain"] / elapsed[mode])
        finally:
            node.stop()

    print(f"{'mode':<12} {'rounds/s':>9} {'messages/s':>11} {'vs plain':>9}")
    for mode in MODES:
        per_s = statistics.median(rates[mode])
        print(f"{mode:<12} {per_s:>9,.0f} {per_s * args.messages:>11,.0f} {statistics.median(ratios[mode]):>9.3f}")
    print(f"({args.transactions} rounds of {args.messages} messages of {args.value_bytes} bytes, "
          f"median of {args.runs} runs; a round is a transaction, or a produce and flush for plain)")


if __name__ == "__main__":
    main()
