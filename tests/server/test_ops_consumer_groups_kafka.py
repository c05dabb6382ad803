"""groupctl.ops on a live KIP-848 consumer group, against a real in-process coordinator with an
unmodified confluent-kafka consumer (`group.protocol=consumer`) as its member. The coordinator
answers DescribeGroups for such a group as Apache Kafka 4 does (GROUP_ID_NOT_FOUND "not a classic
group" at v6, Dead before), so every tool that needs the group's state or members must ask
ConsumerGroupDescribe beside it: the offsets safety checks refuse the live group (and change
nothing), `offsets show` and `lag record` report its state, members and owners, and `group delete`
names its state. Committed offsets are checked with kafka-python's admin client."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from confluent_kafka import Consumer

from groupctl.client import consumer_group_apis as consumer_apis
from groupctl.client.kafka import KafkaClient
from groupctl.coordinator.consumer.config import ConsumerGroupConfig
from groupctl.errors import Refused
from groupctl.ops import groups, offsets
from groupctl.ops.lag_record import LagSampler
from groupctl.ops.reset import ToEarliest, ToLatest, make_scope
from tests.server.test_ops_kafka import commit_as_member, committed_by_kafka_python, create_topic, produce
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.polling import wait_until

GROUP, TOPIC = "kip848", "events"
LIVE_STATES = r"(Assigning|Reconciling|Stable)"
REFUSAL = (rf"^group '{GROUP}' is {LIVE_STATES} with 1 member\(s\); offsets can only be changed while the group "
           r"is inactive \(Empty\)$")


@pytest.fixture
def bootstrap():
    """A coordinator whose consumer groups heartbeat every second, with topic "events" (2
    partitions of 10 records each)."""
    node = InProcessCoordinator(node_config(consumer_groups=ConsumerGroupConfig(
        session_timeout_ms=6_000, heartbeat_interval_ms=1_000))).start()
    try:
        create_topic(node.bootstrap, TOPIC, 2)
        produce(node.bootstrap, TOPIC, 2, 1_700_000_000_000)
        yield node.bootstrap
    finally:
        node.stop()


@contextmanager
def consumer_protocol_member(bootstrap: str, client_id: str = "kip848-1"):
    """A confluent-kafka consumer in a KIP-848 consumer group, inside once it owns partitions."""
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": GROUP, "client.id": client_id, "group.protocol": "consumer",
        "enable.auto.commit": False, "auto.offset.reset": "earliest", "broker.address.family": "v4",
    })
    assigned: list = []
    consumer.subscribe([TOPIC], on_assign=lambda _consumer, partitions: assigned.extend(partitions))

    def joined() -> list:
        consumer.poll(0.2)
        return assigned

    try:
        wait_until(joined, 30, interval=0, message=f"{client_id} to be assigned partitions")
        yield consumer
    finally:
        consumer.close()  # leaves the group (a heartbeat at epoch -1)


def exchanges(monkeypatch) -> list[list[int]]:
    """The API keys of each pipelined exchange the ops client sends from now on."""
    seen: list[list[int]] = []
    original = KafkaClient.call_many

    def recording(self, calls):
        seen.append([c.key for c in calls])
        return original(self, calls)

    monkeypatch.setattr(KafkaClient, "call_many", recording)
    return seen


def test_a_live_consumer_groups_offsets_cannot_be_changed_and_can_once_its_member_has_left(bootstrap, monkeypatch):
    scope = make_scope([TOPIC], False)
    with consumer_protocol_member(bootstrap) as consumer:
        commit_as_member(consumer, {(TOPIC, 0): 3, (TOPIC, 1): 4})
        sent = exchanges(monkeypatch)
        with pytest.raises(Refused, match=REFUSAL):
            offsets.reset_offsets(bootstrap, GROUP, scope, ToLatest(), execute=True)
        # DescribeGroups, ConsumerGroupDescribe and OffsetFetch travel in one exchange.
        assert [15, 69, 9] in sent and not any(keys in ([15], [69]) for keys in sent)
        with pytest.raises(Refused, match=REFUSAL):
            offsets.reset_offsets(bootstrap, GROUP, scope, ToLatest())  # a dry run too
        with pytest.raises(Refused, match=REFUSAL):
            offsets.commit_offsets(bootstrap, GROUP, {(TOPIC, 0): 9})
        with pytest.raises(Refused, match=REFUSAL):
            offsets.import_offsets(bootstrap, GROUP, {(TOPIC, 0): 9}, execute=True)
        assert committed_by_kafka_python(bootstrap, GROUP) == {(TOPIC, 0): 3, (TOPIC, 1): 4}

    def empty() -> bool:
        return offsets.show_offsets(bootstrap, GROUP).state == "Empty"

    wait_until(empty, 15, message="the consumer group Empty once its member left")
    plan = offsets.reset_offsets(bootstrap, GROUP, scope, ToEarliest(), execute=True)
    assert plan.executed and [(p.partition, p.new_offset) for p in plan.partitions] == [(0, 0), (1, 0)]
    assert committed_by_kafka_python(bootstrap, GROUP) == {(TOPIC, 0): 0, (TOPIC, 1): 0}


def test_offsets_show_lag_record_and_group_delete_see_a_live_consumer_groups_state_members_and_owners(bootstrap):
    with consumer_protocol_member(bootstrap, "kip848-owner") as consumer:
        commit_as_member(consumer, {(TOPIC, 0): 4})
        shown = offsets.show_offsets(bootstrap, GROUP)
        assert shown.state in ("Assigning", "Reconciling", "Stable")
        # Both assigned partitions are shown, the uncommitted one included (it has a member).
        assert [(o.partition, o.committed_offset, o.lag) for o in shown.offsets] == [(0, 4, 6), (1, None, None)]

        sample = LagSampler(bootstrap, "local", [GROUP]).sample()
        assert sample.problems == () and sample.groups_sampled == 1
        assert [(r.partition, r.committed, r.log_end, r.members, r.owner) for r in sample.rows] == [
            (0, 4, 10, 1, "kip848-owner"), (1, None, 10, 1, "kip848-owner")]
        assert sample.rows[0].state in ("Assigning", "Reconciling", "Stable")

        [deletion] = groups.delete_groups(bootstrap, [GROUP])
        assert isinstance(deletion.error, Refused)
        assert str(deletion.error).endswith("with 1 member(s); only a group without members can be deleted")
        assert " Dead " not in str(deletion.error)
        assert committed_by_kafka_python(bootstrap, GROUP) == {(TOPIC, 0): 4}


def test_a_coordinator_without_consumer_group_describe_is_asked_describe_groups_alone(bootstrap, monkeypatch):
    original = KafkaClient.supports
    monkeypatch.setattr(KafkaClient, "supports",
                        lambda self, node, key: key != consumer_apis.CONSUMER_GROUP_DESCRIBE and original(self, node, key))
    offsets_committed = {(TOPIC, 0): 2}
    offsets.commit_offsets(bootstrap, "classic-only", offsets_committed)
    sent = exchanges(monkeypatch)
    shown = offsets.show_offsets(bootstrap, "classic-only")
    assert shown.state == "Empty" and [15, 9] in sent and not any(69 in keys for keys in sent)
    sample = LagSampler(bootstrap, "local", ["classic-only"]).sample()
    assert [(r.partition, r.committed, r.state) for r in sample.rows] == [(0, 2, "Empty")]
    assert not any(69 in keys for keys in sent)
