"""Many groups at once (`ops.groups.describe_groups`, `list_groups(topics=...)`) against a real
in-process coordinator: a few exchanges whatever the number of groups, the same answers as one
group at a time, one group's failure kept to that group, and groups whose coordinator moved
followed as `describe_group` follows them. Offsets are committed with kafka-python's admin
client, an independent implementation.
"""

from __future__ import annotations

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata, TopicPartition

from groupctl.client import kafka_apis as apis
from groupctl.client.kafka import FIND_COORDINATOR, METADATA
from groupctl.errors import NotFound
from groupctl.ops import groups

NOT_COORDINATOR = 16
GROUPS = 60  # more than one pipelined describe exchange (25 groups each)


def hang_up(ctx, request):
    raise ConnectionResetError("the coordinator went away")


@pytest.fixture
def many(coordinator):
    """GROUPS groups g00..g59 without members: group i committed at offset i % 5 on events:0
    (5 records) and, for even i, at 1 on audit:0 (1 record); returns their names."""
    names = [f"g{i:02d}" for i in range(GROUPS)]
    admin = KafkaAdminClient(bootstrap_servers=coordinator.bootstrap)
    producer = KafkaProducer(bootstrap_servers=coordinator.bootstrap)
    try:
        admin.create_topics([NewTopic("events", 1, 1), NewTopic("audit", 1, 1)])
        for future in [producer.send("events", b"r", partition=0) for _ in range(5)] + [
                producer.send("audit", b"r", partition=0)]:
            future.get(timeout=10)
        for i, name in enumerate(names):
            offsets = {TopicPartition("events", 0): OffsetAndMetadata(i % 5, "", -1)}
            if i % 2 == 0:
                offsets[TopicPartition("audit", 0)] = OffsetAndMetadata(1, "", -1)
            admin.alter_group_offsets(name, offsets)
    finally:
        producer.close()
        admin.close()
    return names


def counting(coordinator, *keys: int) -> dict[int, list]:
    seen: dict[int, list] = {key: [] for key in keys}
    for key in keys:
        coordinator.node.faults.observe(key, lambda ctx, request, key=key: seen[key].append((ctx.version, request)))
    return seen


def test_describing_many_groups_answers_as_describing_each_in_a_few_exchanges(coordinator, many):
    seen = counting(coordinator, FIND_COORDINATOR, METADATA, apis.LIST_OFFSETS)

    answer = groups.describe_groups(coordinator.bootstrap, [*reversed(many), "ghost", many[0]])
    requests = {key: len(seen[key]) for key in seen}

    assert [d.group for d in answer.described] == list(reversed(many))
    assert [(type(f), str(f)) for f in answer.failures] == [(NotFound, "group 'ghost' does not exist")]
    assert list(answer.described) == [groups.describe_group(coordinator.bootstrap, g) for g in reversed(many)]
    assert [(o.topic, o.committed_offset, o.lag) for o in answer.described[-2].offsets] == [("events", 1, 4)]
    # one pipelined FindCoordinator exchange (a request per group), one Metadata, one ListOffsets
    assert requests == {FIND_COORDINATOR: GROUPS + 1, METADATA: 1, apis.LIST_OFFSETS: 1}


def test_a_group_whose_coordinator_moved_is_described_again_on_its_own(coordinator, many):
    finds = counting(coordinator, FIND_COORDINATOR)[FIND_COORDINATOR]
    coordinator.node.faults.replace_next(apis.OFFSET_FETCH, lambda ctx, request: ctx.respond(
        error_code=NOT_COORDINATOR))

    answer = groups.describe_groups(coordinator.bootstrap, many[:3])

    assert [d.group for d in answer.described] == many[:3] and answer.failures == ()
    assert [o.committed_offset for d in answer.described for o in d.offsets if o.topic == "events"] == [0, 1, 2]
    assert [request.key for _, request in finds] == [*many[:3], many[0]]


def test_groups_whose_coordinator_connection_dropped_are_described_again(coordinator, many):
    coordinator.node.faults.replace_next(apis.DESCRIBE_GROUPS, hang_up)

    answer = groups.describe_groups(coordinator.bootstrap, many[:4])

    assert [d.group for d in answer.described] == many[:4] and answer.failures == ()


def test_list_by_topic_fetches_the_offsets_of_many_groups_in_batched_requests(coordinator, many):
    fetches = counting(coordinator, apis.OFFSET_FETCH)[apis.OFFSET_FETCH]

    on_audit = groups.list_groups(coordinator.bootstrap, topics=["audit"])
    on_events = groups.list_groups(coordinator.bootstrap, states=["empty"], topics=["nothing", "events"])

    assert [g.group for g in on_audit] == many[::2]
    assert [g.group for g in on_events] == many
    assert [(version, len(request.groups)) for version, request in fetches] == [(9, GROUPS), (9, GROUPS)]


def test_list_by_topic_asks_each_group_on_its_own_where_offset_fetch_cannot_batch(coordinator, many, monkeypatch):
    monkeypatch.setattr(apis, "serves_offset_fetch_groups", lambda client, node: False)  # a broker before Kafka 3.0
    fetches = counting(coordinator, apis.OFFSET_FETCH)[apis.OFFSET_FETCH]

    on_audit = groups.list_groups(coordinator.bootstrap, topics=["audit"])

    assert [g.group for g in on_audit] == many[::2]
    assert {version for version, _ in fetches} == {7} and len(fetches) == GROUPS


def test_list_by_topic_follows_groups_whose_coordinator_moved(coordinator, many):
    def every_group_moved(ctx, request):
        return ctx.respond(throttle_time_ms=0, groups=[ctx.response_class.OffsetFetchResponseGroup(
            group_id=g.group_id, topics=[], error_code=NOT_COORDINATOR) for g in request.groups])

    coordinator.node.faults.replace_next(apis.OFFSET_FETCH, every_group_moved)

    assert [g.group for g in groups.list_groups(coordinator.bootstrap, topics=["audit"])] == many[::2]
