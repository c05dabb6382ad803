"""A real confluent-kafka consumer commits the message it consumed (`commit(message=...)`, which
carries the message's leader epoch) and the installed `groupctl offsets show -o json` reports the
committed offset with that leader epoch, as OffsetFetch returns it (null when the message carried
none)."""

from __future__ import annotations

import json
import subprocess

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.e2e.test_cli_e2e import assert_quiet, installed_groupctl
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.polling import wait_until

GROUP, TOPIC = "epoch-app", "payments"


def test_offsets_show_reports_the_leader_epoch_a_confluent_consumer_committed(tmp_path):
    node = InProcessCoordinator(node_config(data_dir=tmp_path / "data")).start()
    try:
        common = {"bootstrap.servers": node.bootstrap, "broker.address.family": "v4"}
        admin = AdminClient(common)
        admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(15)
        producer = Producer(common)
        for i in range(3):
            producer.produce(TOPIC, f"m{i}".encode(), partition=0)
        assert producer.flush(15) == 0
        consumer = Consumer({**common, "group.id": GROUP, "auto.offset.reset": "earliest",
                             "enable.auto.commit": False})
        try:
            consumer.subscribe([TOPIC])
            messages = []

            def two_consumed() -> bool:
                message = consumer.poll(0.5)
                if message is not None and not message.error():
                    messages.append(message)
                return len(messages) >= 2

            wait_until(two_consumed, 30, interval=0, message="two messages consumed")
            consumed = messages[1]
            consumer.commit(message=consumed, asynchronous=False)
        finally:
            consumer.close()
        done = subprocess.run([installed_groupctl(), "--bootstrap", node.bootstrap, "--output", "json",
                               "offsets", "show", GROUP], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
        assert_quiet(done.stdout, done.stderr)
        assert done.returncode == 0, done.stderr
        [shown] = json.loads(done.stdout)["offsets"]
        assert (shown["partition"], shown["committed_offset"], shown["committed_leader_epoch"]) == (
            0, consumed.offset() + 1, consumed.leader_epoch())
    finally:
        node.stop()
