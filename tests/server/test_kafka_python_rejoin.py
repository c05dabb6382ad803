"""A kafka-python consumer whose rejoin outlasts one poll() still ends up with its partitions.

kafka-python 3.0.12 runs a JoinGroup+SyncGroup attempt as a task that outlives the poll() that
started it, but re-awaits it only while `need_rejoin()` is true. A leader that rejoins because
its topic metadata changed stops needing to rejoin the moment it computes the assignment, so
when its SyncGroup answer arrives after that poll's timeout the answer is never applied: the
consumer keeps heartbeats off, never gets partitions, and the coordinator drops it after its
session timeout (a stable group missing one member, no error anywhere). A SyncGroup answer is
slow whenever the store write that completes the rebalance is (ZooKeeper, a loaded machine).
The test consumer (`tests/support/consumer_proc.py`) keeps a pending attempt counted as a
needed rejoin, as Kafka's Java client does (`rejoinNeededOrPending`); this test pins that.
"""

from __future__ import annotations

import queue

from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from tests.support.consumers import ConsumerProcess
from tests.support.polling import wait_until

METADATA, JOIN_GROUP, SYNC_GROUP = 3, 11, 14
TOPIC_METADATA_DELAY_S = 1.0  # the leader's first assignment is made before it knows the topic
SYNC_DELAY_S = 1.5  # several of the consumer's 200 ms polls


def test_a_kafka_python_leader_whose_sync_group_answer_outlasts_its_poll_still_gets_its_partitions(coordinator):
    admin = KafkaAdminClient(bootstrap_servers=coordinator.bootstrap)
    try:
        admin.create_topics([NewTopic("payments", 2, 1)])
    finally:
        admin.close()

    faults = coordinator.node.faults
    synced: set[str] = set()
    held: list[str] = []  # the rejoin whose SyncGroup answer was held back
    topic_metadata_seen: list[bool] = []

    def on_metadata(ctx, request):
        # Observers run before the rules are consulted, so this delays the request at hand.
        if not topic_metadata_seen and any(t.name == "payments" for t in request.topics or ()):
            topic_metadata_seen.append(True)
            faults.delay_next(METADATA, TOPIC_METADATA_DELAY_S)

    def on_join(ctx, request):
        if request.member_id in synced and not held:
            held.append(request.member_id)
            faults.delay_next(SYNC_GROUP, SYNC_DELAY_S)  # the SyncGroup that follows this rejoin

    faults.observe(METADATA, on_metadata)
    faults.observe(JOIN_GROUP, on_join)
    faults.observe(SYNC_GROUP, lambda ctx, request: synced.add(request.member_id))

    consumer = ConsumerProcess("kafka-python", coordinator.bootstrap, "orders", "payments",
                               client_id="leader", max_seconds=60)
    try:
        wait_until(lambda: sorted(consumer.snapshot()[0]) == [("payments", 0), ("payments", 1)], 20,
                   message="the leader owning both partitions after its slow rejoin")
    finally:
        consumer.stop()

    assigned = []
    while True:
        try:
            event = consumer.events.get_nowait()
        except queue.Empty:
            break
        if event["event"] == "assigned":
            assigned.append(event["partitions"])
    # The scenario happened: a first generation without the topic's partitions, then a rejoin
    # whose SyncGroup answer was held back past the consumer's poll.
    assert assigned[0] == [] and held
