"""`groupctl group describe` shows the offsets a transactional producer committed to a group with
`send_offsets_to_transaction` (confluent-kafka) while its transaction is open: producer id and
epoch, topic, partition, offset, in the table and in --output json; after the commit they are
gone from the pending list and are the group's committed offset. GroupctlDescribeGroup v1 carries
them (an abort drops them) and v0, what older groupctl clients ask, answers as before."""

from __future__ import annotations

import json
import subprocess

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from groupctl.protocol.extensions import GroupctlDescribeGroupRequest
from tests.e2e.test_cli_e2e import assert_quiet, installed_groupctl
from tests.support.polling import wait_until
from tests.support.wire import exchange

CLIENT_TIMEOUT_S = 30
GROUP, TOPIC = "pending-app", "pending-in"


def groupctl(node, *args: str) -> str:
    done = subprocess.run([installed_groupctl(), "--bootstrap", node.bootstrap, *args], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert_quiet(done.stdout, done.stderr)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


@pytest.fixture
def consumer(coordinator):
    """A group member that has read offsets 0-2 of TOPIC and committed offset 1 itself."""
    coordinator.call(coordinator.node.topics.get_or_create(TOPIC, 1))
    seed = Producer({"bootstrap.servers": coordinator.bootstrap})
    for value in (b"a", b"b", b"c"):
        seed.produce(TOPIC, value=value, partition=0)
    seed.flush(CLIENT_TIMEOUT_S)
    consumer = Consumer({"bootstrap.servers": coordinator.bootstrap, "group.id": GROUP, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(TOPIC, 0, 0)])
    got = []
    wait_until(lambda: got.extend(m for m in consumer.consume(num_messages=3, timeout=0.5) if m.error() is None)
               or len(got) == 3, timeout=20)
    consumer.commit(offsets=[TopicPartition(TOPIC, 0, 1)], asynchronous=False)
    yield consumer
    consumer.close()


def test_group_describe_shows_pending_transactional_offsets_until_the_commit(coordinator, consumer):
    producer = Producer({"bootstrap.servers": coordinator.bootstrap, "transactional.id": "pending-tx"})
    producer.init_transactions(CLIENT_TIMEOUT_S)
    producer.begin_transaction()
    producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                         consumer.consumer_group_metadata(), CLIENT_TIMEOUT_S)
    described = json.loads(groupctl(coordinator, "--output", "json", "group", "describe", GROUP))
    [pending] = described["pending_offsets"]
    transaction = coordinator.node.transactions.core.describe("pending-tx").view
    assert pending == {"producer_id": transaction.producer_id, "producer_epoch": transaction.producer_epoch,
                       "topic": TOPIC, "partition": 0, "offset": 3}
    assert [o["committed_offset"] for o in described["offsets"]] == [1]  # not visible yet
    table = groupctl(coordinator, "group", "describe", GROUP, "--offsets")
    assert "PENDING-OFFSET" in table
    assert [TOPIC, "0", "3", str(transaction.producer_id)] == \
        [line.split() for line in table.splitlines() if line.startswith(GROUP)][-1][1:5]

    producer.commit_transaction(CLIENT_TIMEOUT_S)

    def settled():
        after = json.loads(groupctl(coordinator, "--output", "json", "group", "describe", GROUP))
        return after["pending_offsets"] == [] and [o["committed_offset"] for o in after["offsets"]] == [3]
    wait_until(settled, timeout=20)
    assert "PENDING-OFFSET" not in groupctl(coordinator, "group", "describe", GROUP, "--offsets")


def test_describe_group_v1_carries_the_pending_offsets_and_v0_still_answers(coordinator, consumer):
    producer = Producer({"bootstrap.servers": coordinator.bootstrap, "transactional.id": "pending-v0"})
    producer.init_transactions(CLIENT_TIMEOUT_S)
    producer.begin_transaction()
    producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                         consumer.consumer_group_metadata(), CLIENT_TIMEOUT_S)

    def ask(version):
        return exchange(coordinator, GroupctlDescribeGroupRequest(version=version, group_id=GROUP,
                                                                  after_generation=-1, max_wait_ms=0), version)
    new, old = ask(1), ask(0)
    assert [(p.topic, p.partition, p.offset) for p in new.pending_offsets] == [(TOPIC, 0, 3)]
    assert (old.error_code, old.document) == (new.error_code, new.document)
    producer.abort_transaction(CLIENT_TIMEOUT_S)
    wait_until(lambda: list(ask(1).pending_offsets) == [], timeout=20)
