"""groupctl.ops over the Kafka protocol against a real in-process coordinator, with real
clients as peers and judges: kafka-python's producer and admin client, confluent-kafka's
consumer as the group member.

Committed offsets are checked with kafka-python's own admin client (an independent OffsetFetch),
never with the code under test.
"""

from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic
from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as MemberPartition
from kafka.structs import OffsetAndMetadata, TopicPartition

from groupctl.ops import groups, offsets
from groupctl.client import kafka_apis as apis
from groupctl.errors import BadInput, NotFound, Refused, Unreachable
from groupctl.client.kafka import FIND_COORDINATOR, KafkaClient
from groupctl.ops.reset import (
    ByDuration,
    FromFile,
    ShiftBy,
    ToCurrent,
    ToDatetime,
    ToEarliest,
    ToLatest,
    ToOffset,
    make_scope,
    parse_datetime,
)
from groupctl.protocol.extensions import DESCRIBE_GROUP_KEY
from groupctl.protocol.registry import REGISTRY
from tests.support.polling import wait_until

RECORDS_PER_PARTITION = 10
STEP_MS = 60_000  # record i of every partition is stamped BASE + i * STEP_MS


# -- helpers ---------------------------------------------------------------------------------


@contextmanager
def admin(bootstrap: str):
    client = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        yield client
    finally:
        client.close()


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    with admin(bootstrap) as client:
        client.create_topics([NewTopic(name, partitions, 1)])


def produce(bootstrap: str, topic: str, partitions: int, base_ms: int) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    futures = [producer.send(topic, value=f"{p}-{i}".encode(), partition=p, timestamp_ms=base_ms + i * STEP_MS)
               for i in range(RECORDS_PER_PARTITION) for p in range(partitions)]
    producer.flush(30)
    for future in futures:
        future.get(timeout=10)
    producer.close()


def committed_by_kafka_python(bootstrap: str, group: str) -> dict[tuple[str, int], int]:
    with admin(bootstrap) as client:
        fetched = client.list_group_offsets(group).get(group, {})
    return {(tp.topic, tp.partition): meta.offset for tp, meta in fetched.items() if meta.offset >= 0}


def commit_by_kafka_python(bootstrap: str, group: str, wanted: dict[tuple[str, int], int]) -> None:
    with admin(bootstrap) as client:
        client.alter_group_offsets(group, {TopicPartition(t, p): OffsetAndMetadata(o, "", -1)
                                           for (t, p), o in wanted.items()})


@contextmanager
def active_member(bootstrap: str, group: str, topic: str, client_id: str = "ops-test"):
    """A confluent-kafka (librdkafka) consumer that has joined `group` and owns partitions
    while inside (its heartbeats run on librdkafka's own threads)."""
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "client.id": client_id,
        "enable.auto.commit": False, "auto.offset.reset": "earliest", "broker.address.family": "v4",
        "session.timeout.ms": 10_000, "heartbeat.interval.ms": 1_000,
    })
    assigned: list = []
    consumer.subscribe([topic], on_assign=lambda _consumer, partitions: assigned.extend(partitions))

    def joined() -> list:
        consumer.poll(0.2)  # serves librdkafka's callbacks, on_assign included
        return assigned

    try:
        wait_until(joined, 20, interval=0, message=f"{client_id} to be assigned partitions")
        yield consumer
    finally:
        consumer.close()


def commit_as_member(consumer, wanted: dict[tuple[str, int], int]) -> None:
    consumer.commit(offsets=[MemberPartition(t, p, o) for (t, p), o in wanted.items()], asynchronous=False)


@pytest.fixture
def events(coordinator):
    """Topic "events": 2 partitions of 10 records, record i stamped BASE + i minutes, where
    BASE is 15 minutes ago; yields (bootstrap, BASE)."""
    base = int(time.time() * 1000) - 15 * STEP_MS
    create_topic(coordinator.bootstrap, "events", 2)
    produce(coordinator.bootstrap, "events", 2, base)
    return coordinator.bootstrap, base


@pytest.fixture
def idle_group(events):
    """Group "idle" without members, committed at offset 6 on both partitions of "events"."""
    bootstrap, _ = events
    commit_by_kafka_python(bootstrap, "idle", {("events", 0): 6, ("events", 1): 6})
    return "idle"


# -- describe, list, find --------------------------------------------------------------------


def test_describe_reports_state_members_assignment_and_lag_with_the_documented_keys(events):
    bootstrap, _ = events
    with active_member(bootstrap, "readers", "events", client_id="reader-1"):
        doc = groups.describe_group(bootstrap, "readers").to_json()
    assert list(doc) == ["group", "group_type", "state", "protocol_type", "protocol", "generation", "group_epoch",
                         "assignment_epoch", "assignor", "coordinator", "members", "offsets", "configs",
                         "pending_offsets"]
    assert (doc["group"], doc["group_type"], doc["state"], doc["protocol_type"], doc["protocol"]) == (
        "readers", "classic", "Stable", "consumer", "range")
    assert (doc["group_epoch"], doc["assignment_epoch"], doc["assignor"]) == (None, None, None)
    assert doc["coordinator"] == {"node_id": 0, "host": "127.0.0.1", "port": int(bootstrap.rsplit(":")[1])}
    [member] = doc["members"]
    assert set(member) == {"member_id", "group_instance_id", "client_id", "client_host", "member_epoch",
                           "assignment", "target_assignment", "upgraded"}
    assert (member["member_epoch"], member["target_assignment"], member["upgraded"]) == (None, None, None)
    assert member["client_id"] == "reader-1" and member["member_id"].startswith("reader-1-")
    assert member["assignment"] == {"events": [0, 1]}
    # Nothing committed yet: the assigned partitions are shown with their log end, lag unknown.
    assert doc["offsets"] == [
        {"topic": "events", "partition": 0, "committed_offset": None, "log_end_offset": 10, "lag": None,
         "ahead_of_log_end": False, "committed_leader_epoch": None},
        {"topic": "events", "partition": 1, "committed_offset": None, "log_end_offset": 10, "lag": None,
         "ahead_of_log_end": False, "committed_leader_epoch": None},
    ]


def test_describe_lag_is_log_end_minus_the_committed_offset(events):
    bootstrap, _ = events
    with active_member(bootstrap, "readers", "events") as consumer:
        commit_as_member(consumer, {("events", 0): 4, ("events", 1): 10})
        description = groups.describe_group(bootstrap, "readers")
    assert [(o.partition, o.committed_offset, o.log_end_offset, o.lag) for o in description.offsets] == [
        (0, 4, 10, 6), (1, 10, 10, 0)]
    assert description.owner("events", 0).client_id == "ops-test"


def test_describe_without_offsets_skips_the_offset_lookups(idle_group, events):
    bootstrap, _ = events
    description = groups.describe_group(bootstrap, idle_group, include_offsets=False)
    assert description.state == "Empty" and description.members == () and description.offsets == ()


def test_describe_of_a_memberless_group_with_offsets_shows_it_empty(idle_group, events):
    bootstrap, _ = events
    description = groups.describe_group(bootstrap, idle_group)
    assert (description.state, description.members) == ("Empty", ())
    assert [(o.committed_offset, o.lag) for o in description.offsets] == [(6, 4), (6, 4)]


def test_describe_of_an_unknown_group_is_not_found(coordinator):
    with pytest.raises(NotFound, match="group 'ghost' does not exist"):
        groups.describe_group(coordinator.bootstrap, "ghost")


def test_without_the_groupctl_extension_the_generation_is_null(events, monkeypatch):
    bootstrap, _ = events
    monkeypatch.delitem(REGISTRY, DESCRIBE_GROUP_KEY, raising=False)  # a plain Kafka broker
    with active_member(bootstrap, "readers", "events"):
        description = groups.describe_group(bootstrap, "readers")
    assert description.state == "Stable" and description.generation is None


def test_over_groupctl_describe_reports_the_generation_of_the_stored_document(zk_coordinator, zk_connect):
    assert DESCRIBE_GROUP_KEY in REGISTRY  # groupctl's coordinator serves GroupctlDescribeGroup
    from kazoo.client import KazooClient
    import json

    bootstrap = zk_coordinator.bootstrap
    create_topic(bootstrap, "events", 2)
    with active_member(bootstrap, "readers", "events"):
        description = groups.describe_group(bootstrap, "readers")
        hosts, _, chroot = zk_connect.partition("/")
        zk = KazooClient(hosts=hosts)
        zk.start(timeout=10)
        try:
            stored = json.loads(zk.get(f"/{chroot}/groups/readers")[0])
        finally:
            zk.stop()
            zk.close()
    assert isinstance(description.generation, int) and description.generation >= 1
    assert description.generation == stored["generation"]


def test_list_groups_filters_by_state_case_insensitively(idle_group, events):
    bootstrap, _ = events
    with active_member(bootstrap, "readers", "events"):
        everything = groups.list_groups(bootstrap)
        stable = groups.list_groups(bootstrap, ["stable"])
        empty = groups.list_groups(bootstrap, ["Empty"])
        both = groups.list_groups(bootstrap, ["Empty", "STABLE"])
    assert [(g.group, g.state) for g in everything] == [("idle", "Empty"), ("readers", "Stable")]
    assert [g.group for g in stable] == ["readers"]
    assert [g.group for g in empty] == ["idle"]
    assert [g.group for g in both] == ["idle", "readers"]
    assert everything[1].to_json() == {"group": "readers", "state": "Stable", "protocol_type": "consumer",
                                       "group_type": "classic", "coordinator": everything[1].coordinator.to_json()}


def test_list_groups_with_an_unknown_state_is_bad_input(coordinator):
    with pytest.raises(BadInput, match="unknown group state 'sleeping'"):
        groups.list_groups(coordinator.bootstrap, ["sleeping"])


def test_list_groups_reports_each_group_type_and_filters_by_it_case_insensitively(idle_group, events):
    bootstrap, _ = events
    with active_member(bootstrap, "readers", "events"):
        everything = groups.list_groups(bootstrap)
        classic = groups.list_groups(bootstrap, types=["CLASSIC"])
        consumer = groups.list_groups(bootstrap, types=["consumer"])
        stable_classic = groups.list_groups(bootstrap, ["stable"], ["classic"])
    assert [(g.group, g.group_type) for g in everything] == [("idle", "classic"), ("readers", "classic")]
    assert [g.group for g in classic] == ["idle", "readers"]
    assert consumer == ()
    assert [g.group for g in stable_classic] == ["readers"]


def test_list_groups_with_an_unknown_type_is_bad_input(coordinator):
    with pytest.raises(BadInput, match="unknown group type 'share' \\(one of: classic, consumer\\)"):
        groups.list_groups(coordinator.bootstrap, types=["share"])


def test_find_coordinator_names_the_node(coordinator):
    node = groups.find_coordinator(coordinator.bootstrap, "anything")
    assert node.to_json() == {"node_id": 0, "host": "127.0.0.1", "port": coordinator.port}


# -- delete groups ---------------------------------------------------------------------------


def test_delete_groups_deletes_idle_groups_and_refuses_active_ones_naming_the_state(idle_group, events):
    bootstrap, _ = events
    with active_member(bootstrap, "readers", "events"):
        results = groups.delete_groups(bootstrap, [idle_group, "readers", "ghost"])
        assert groups.describe_group(bootstrap, "readers").state == "Stable"
    assert [r.deleted for r in results] == [True, False, False]
    assert isinstance(results[1].error, Refused)
    assert str(results[1].error) == ("group 'readers' is Stable with 1 member(s); "
                                     "only a group without members can be deleted")
    assert isinstance(results[2].error, NotFound)
    assert results[0].to_json() == {"group": "idle", "deleted": True, "error": None}
    assert committed_by_kafka_python(bootstrap, idle_group) == {}
    with pytest.raises(NotFound):
        groups.describe_group(bootstrap, idle_group)


def test_delete_groups_reports_each_group_even_when_a_later_one_fails(idle_group, events, coordinator):
    bootstrap, _ = events
    commit_by_kafka_python(bootstrap, "stuck", {("events", 0): 1})
    faults = coordinator.node.faults

    def drop_the_answer_for_stuck(ctx, request):
        if request.groups_names == ["stuck"]:
            faults.drop_next(apis.DELETE_GROUPS)

    faults.observe(apis.DELETE_GROUPS, drop_the_answer_for_stuck)
    results = groups.delete_groups(bootstrap, [idle_group, "stuck"], timeout=1)
    assert [(r.group, r.deleted) for r in results] == [("idle", True), ("stuck", False)]
    assert isinstance(results[1].error, Unreachable) and "timed out" in str(results[1].error)
    assert committed_by_kafka_python(bootstrap, idle_group) == {}


def test_an_empty_group_id_is_bad_input_and_nothing_is_deleted(idle_group, events):
    bootstrap, _ = events
    with pytest.raises(BadInput, match="^the group id must not be empty$"):
        groups.delete_groups(bootstrap, [idle_group, ""])
    assert committed_by_kafka_python(bootstrap, idle_group) == {("events", 0): 6, ("events", 1): 6}


@pytest.mark.parametrize("operation", [
    lambda b: groups.find_coordinator(b, ""),
    lambda b: groups.describe_group(b, ""),
    lambda b: offsets.show_offsets(b, ""),
    lambda b: offsets.export_offsets(b, ""),
    lambda b: offsets.commit_offsets(b, "", {("events", 0): 1}),
    lambda b: offsets.reset_offsets(b, "", make_scope(["events"], False), ToEarliest()),
    lambda b: offsets.import_offsets(b, "", {("events", 0): 1}),
    lambda b: offsets.delete_offsets(b, "", make_scope(["events"], False)),
    lambda b: groups.describe_group(b, "g" * 32768),
], ids=["find", "describe", "show", "export", "commit", "reset", "import", "delete-offsets", "too-long"])
def test_group_operations_reject_an_unusable_group_id_as_bad_input_before_connecting(operation):
    unreachable = f"127.0.0.1:{free_port()}"  # nothing may be sent: the check comes first
    with pytest.raises(BadInput, match="group id"):
        operation(unreachable)


# -- changing offsets on an active group is refused -------------------------------------------


REFUSAL = r"group 'readers' is Stable with 1 member\(s\); offsets can only be changed while the group is inactive \(Empty\)"


def test_commit_reset_and_import_are_refused_on_an_active_group_and_change_nothing(events, tmp_path):
    bootstrap, _ = events
    with active_member(bootstrap, "readers", "events") as consumer:
        commit_as_member(consumer, {("events", 0): 3})
        with pytest.raises(Refused, match=REFUSAL):
            offsets.commit_offsets(bootstrap, "readers", {("events", 0): 9})
        with pytest.raises(Refused, match=REFUSAL):
            offsets.reset_offsets(bootstrap, "readers", make_scope(["events"], False), ToLatest(), execute=True)
        with pytest.raises(Refused, match=REFUSAL):
            offsets.reset_offsets(bootstrap, "readers", make_scope(["events"], False), ToLatest())
        with pytest.raises(Refused, match=REFUSAL):
            offsets.import_offsets(bootstrap, "readers", {("events", 0): 9}, execute=True)
        assert committed_by_kafka_python(bootstrap, "readers") == {("events", 0): 3}


# -- resets ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [
    "to-earliest", "to-latest", "to-offset", "to-offset-clamped", "shift-back", "shift-clamped",
    "to-datetime", "to-datetime-after-the-end", "by-duration", "to-current", "from-file",
])
def test_every_reset_target_commits_its_plan(name, idle_group, events):
    bootstrap, base = events
    now = int(time.time() * 1000)
    target, expected = {
        "to-earliest": (ToEarliest(), [0, 0]),
        "to-latest": (ToLatest(), [10, 10]),
        "to-offset": (ToOffset(3), [3, 3]),
        "to-offset-clamped": (ToOffset(10**9), [10, 10]),
        "shift-back": (ShiftBy(-2), [4, 4]),
        "shift-clamped": (ShiftBy(-100), [0, 0]),
        "to-datetime": (ToDatetime(base + 3 * STEP_MS), [3, 3]),
        "to-datetime-after-the-end": (ToDatetime(now + 3_600_000), [10, 10]),
        # now - 8.5 minutes lies between records 6 (9 minutes ago) and 7 (8 minutes ago)
        "by-duration": (ByDuration(now - (base + 6 * STEP_MS) - STEP_MS // 2), [7, 7]),
        "to-current": (ToCurrent(), [6, 6]),
        "from-file": (FromFile({("events", 0): 2, ("events", 1): 8}), [2, 8]),
    }[name]
    scope = None if isinstance(target, FromFile) else make_scope(["events"], False)
    plan = offsets.reset_offsets(bootstrap, idle_group, scope, target, execute=True, now_ms=now)
    assert plan.executed
    assert [(p.partition, p.current_offset, p.new_offset) for p in plan.partitions] == [
        (0, 6, expected[0]), (1, 6, expected[1])]
    assert committed_by_kafka_python(bootstrap, idle_group) == {("events", 0): expected[0], ("events", 1): expected[1]}


def test_a_reset_to_a_time_before_the_epoch_goes_to_the_earliest_offset(idle_group, events):
    bootstrap, _ = events
    just_before = ToDatetime(parse_datetime("1969-12-31T23:59:59.999Z"))  # -1: "latest" on the wire
    plan = offsets.reset_offsets(bootstrap, idle_group, make_scope(["events"], False), just_before)
    assert plan.offsets() == {("events", 0): 0, ("events", 1): 0}


def test_a_reset_of_some_partitions_leaves_the_others_alone(idle_group, events):
    bootstrap, _ = events
    offsets.reset_offsets(bootstrap, idle_group, make_scope(["events:1"], False), ToEarliest(), execute=True)
    assert committed_by_kafka_python(bootstrap, idle_group) == {("events", 0): 6, ("events", 1): 0}


def test_all_topics_resets_every_committed_partition(idle_group, events):
    bootstrap, _ = events
    create_topic(bootstrap, "other", 1)
    plan = offsets.reset_offsets(bootstrap, idle_group, make_scope([], True), ToLatest(), execute=True)
    assert [(p.topic, p.partition) for p in plan.partitions] == [("events", 0), ("events", 1)]


def test_a_dry_run_plans_but_changes_nothing(idle_group, events):
    bootstrap, _ = events
    plan = offsets.reset_offsets(bootstrap, idle_group, make_scope(["events"], False), ToEarliest())
    assert not plan.executed and plan.offsets() == {("events", 0): 0, ("events", 1): 0}
    assert committed_by_kafka_python(bootstrap, idle_group) == {("events", 0): 6, ("events", 1): 6}


def test_a_group_that_does_not_exist_yet_is_given_offsets_by_commit(events):
    bootstrap, _ = events
    plan = offsets.commit_offsets(bootstrap, "fresh", {("events", 0): 5})
    assert [(p.current_offset, p.new_offset) for p in plan.partitions] == [(None, 5)]
    assert committed_by_kafka_python(bootstrap, "fresh") == {("events", 0): 5}


@pytest.mark.parametrize("operation", [
    lambda b: offsets.reset_offsets(b, "ghost", make_scope([], True), ToEarliest()),
    lambda b: offsets.reset_offsets(b, "ghost", make_scope(["events"], False), ToOffset(5), execute=True),
    lambda b: offsets.reset_offsets(b, "ghost", None, FromFile({("events", 0): 1}), execute=True),
    lambda b: offsets.import_offsets(b, "ghost", {("events", 0): 1}),
    lambda b: offsets.delete_offsets(b, "ghost", make_scope([], True)),
], ids=["reset-dry-run", "reset-execute", "reset-from-file", "import", "delete"])
def test_resetting_importing_or_deleting_offsets_of_an_unknown_group_is_not_found_and_creates_nothing(
        events, operation):
    bootstrap, _ = events
    with pytest.raises(NotFound, match="^group 'ghost' does not exist$"):
        operation(bootstrap)
    assert committed_by_kafka_python(bootstrap, "ghost") == {}
    assert "ghost" not in [g.group for g in groups.list_groups(bootstrap)]


def test_a_reset_plan_reports_each_partition_clamped_to_the_log(idle_group, events):
    bootstrap, _ = events
    plan = offsets.reset_offsets(bootstrap, idle_group, make_scope(["events"], False), ToOffset(900), execute=True)
    assert [(p.partition, p.new_offset, p.clamped_from) for p in plan.partitions] == [(0, 10, 900), (1, 10, 900)]
    assert committed_by_kafka_python(bootstrap, idle_group) == {("events", 0): 10, ("events", 1): 10}
    shifted = offsets.reset_offsets(bootstrap, idle_group, make_scope(["events:1"], False), ShiftBy(-12))
    assert [(p.new_offset, p.clamped_from) for p in shifted.partitions] == [(0, -2)]
    imported = offsets.import_offsets(bootstrap, idle_group, {("events", 0): 4, ("events", 1): 11})
    assert [(p.new_offset, p.clamped_from) for p in imported.partitions] == [(4, None), (10, 11)]


def test_a_time_reset_plan_carries_the_instant_it_resolved_to(idle_group, events):
    bootstrap, base = events
    plan = offsets.reset_offsets(bootstrap, idle_group, make_scope(["events"], False), ToDatetime(base + 3 * STEP_MS))
    assert plan.timestamp_ms == base + 3 * STEP_MS and plan.offsets() == {("events", 0): 3, ("events", 1): 3}
    now = int(time.time() * 1000)
    by_duration = offsets.reset_offsets(bootstrap, idle_group, make_scope(["events"], False), ByDuration(60_000),
                                        now_ms=now)
    assert by_duration.timestamp_ms == now - 60_000


@pytest.mark.parametrize("scope, message", [
    (["nope"], "unknown topic 'nope'"),
    (["events:5"], r"unknown partition events:5 \(topic 'events' has partitions 0-1\)"),
])
def test_a_reset_naming_an_unknown_topic_or_partition_is_bad_input(scope, message, idle_group, events):
    bootstrap, _ = events
    with pytest.raises(BadInput, match=message):
        offsets.reset_offsets(bootstrap, idle_group, make_scope(scope, False), ToEarliest(), execute=True)
    assert committed_by_kafka_python(bootstrap, idle_group) == {("events", 0): 6, ("events", 1): 6}


# -- commit, show, export / import, delete ---------------------------------------------------


def test_commit_sets_exactly_the_given_offsets(idle_group, events):
    bootstrap, _ = events
    plan = offsets.commit_offsets(bootstrap, idle_group, {("events", 1): 2})
    assert plan.executed and [(p.partition, p.current_offset, p.new_offset) for p in plan.partitions] == [(1, 6, 2)]
    assert committed_by_kafka_python(bootstrap, idle_group) == {("events", 0): 6, ("events", 1): 2}


def test_a_file_reset_scoped_to_an_unknown_topic_or_partition_is_bad_input(idle_group, events):
    bootstrap, _ = events
    target = FromFile({("events", 0): 2})
    with pytest.raises(BadInput, match="^unknown topic 'nosuch'$"):
        offsets.reset_offsets(bootstrap, idle_group, make_scope(["nosuch"], False), target)
    with pytest.raises(BadInput, match=r"^unknown partition events:5 \(topic 'events' has partitions 0-1\)$"):
        offsets.reset_offsets(bootstrap, idle_group, make_scope(["events:5"], False), target)


def test_an_imported_plan_naming_an_unknown_partition_names_the_file(idle_group, events, tmp_path):
    bootstrap, _ = events
    plan_file = tmp_path / "plan.csv"
    plan_file.write_text("events,0,1\nevents,5,1\n")
    planned = offsets.read_plan_file(plan_file).offsets_for(idle_group)
    message = rf"^{plan_file}: unknown partition events:5 \(topic 'events' has partitions 0-1\)$"
    with pytest.raises(BadInput, match=message):
        offsets.import_offsets(bootstrap, idle_group, planned)
    with pytest.raises(BadInput, match=message):
        offsets.reset_offsets(bootstrap, idle_group, None, FromFile(planned))
    with pytest.raises(BadInput, match=message):
        offsets.commit_offsets(bootstrap, idle_group, planned)
    assert committed_by_kafka_python(bootstrap, idle_group) == {("events", 0): 6, ("events", 1): 6}


@pytest.mark.parametrize("wanted, message", [
    ({("events", 0): 2**63}, "offset 9223372036854775808 of events:0 is out of range"),
    ({("events", 2**31): 0}, "partition 2147483648 of topic 'events' is out of range"),
])
def test_commit_of_numbers_too_large_for_the_wire_is_bad_input(wanted, message, idle_group, events):
    bootstrap, _ = events
    with pytest.raises(BadInput, match=message):
        offsets.commit_offsets(bootstrap, idle_group, wanted)
    assert committed_by_kafka_python(bootstrap, idle_group) == {("events", 0): 6, ("events", 1): 6}


def test_commit_to_an_unknown_topic_or_partition_is_bad_input(idle_group, events):
    bootstrap, _ = events
    with pytest.raises(BadInput, match="unknown topic 'nope'"):
        offsets.commit_offsets(bootstrap, idle_group, {("nope", 0): 1})
    with pytest.raises(BadInput, match="unknown partition events:2"):
        offsets.commit_offsets(bootstrap, idle_group, {("events", 2): 1})


def test_show_offsets_reports_committed_log_end_and_lag(idle_group, events):
    bootstrap, _ = events
    shown = offsets.show_offsets(bootstrap, idle_group).to_json()
    assert shown == {"group": "idle", "state": "Empty", "offsets": [
        {"topic": "events", "partition": 0, "committed_offset": 6, "log_end_offset": 10, "lag": 4,
         "ahead_of_log_end": False, "committed_leader_epoch": None},
        {"topic": "events", "partition": 1, "committed_offset": 6, "log_end_offset": 10, "lag": 4,
         "ahead_of_log_end": False, "committed_leader_epoch": None},
    ]}


def test_a_committed_offset_past_the_log_end_has_lag_0_and_is_flagged_ahead_in_describe_and_show(events):
    bootstrap, _ = events
    offsets.commit_offsets(bootstrap, "ahead", {("events", 0): 25, ("events", 1): 10})
    described = groups.describe_group(bootstrap, "ahead").to_json()["offsets"]
    shown = offsets.show_offsets(bootstrap, "ahead").to_json()["offsets"]
    assert described == shown  # the committed leader epochs included (what Metadata reported at the commit)
    assert [{k: v for k, v in o.items() if k != "committed_leader_epoch"} for o in shown] == [
        {"topic": "events", "partition": 0, "committed_offset": 25, "log_end_offset": 10, "lag": 0,
         "ahead_of_log_end": True},
        {"topic": "events", "partition": 1, "committed_offset": 10, "log_end_offset": 10, "lag": 0,
         "ahead_of_log_end": False},
    ]


@pytest.mark.parametrize("operation", ["show", "export", "describe"])
def test_offsets_of_an_unknown_group_are_not_found(operation, coordinator):
    call = {"show": offsets.show_offsets, "export": offsets.export_offsets, "describe": groups.describe_group}
    with pytest.raises(NotFound, match="group 'ghost' does not exist"):
        call[operation](coordinator.bootstrap, "ghost")


def test_export_edit_import_round_trip(idle_group, events, tmp_path):
    bootstrap, _ = events
    exported = offsets.export_offsets(bootstrap, idle_group).to_csv()
    assert exported == "events,0,6\nevents,1,6\n"
    plan_file = tmp_path / "plan.csv"
    plan_file.write_text(exported.replace("events,1,6", "events,1,1"))
    planned = offsets.read_plan_file(plan_file).offsets_for(idle_group)

    dry = offsets.import_offsets(bootstrap, idle_group, planned)
    assert not dry.executed and dry.offsets() == {("events", 0): 6, ("events", 1): 1}
    assert committed_by_kafka_python(bootstrap, idle_group) == {("events", 0): 6, ("events", 1): 6}

    done = offsets.import_offsets(bootstrap, idle_group, planned, execute=True)
    assert done.executed
    assert committed_by_kafka_python(bootstrap, idle_group) == {("events", 0): 6, ("events", 1): 1}
    assert offsets.export_offsets(bootstrap, idle_group).to_csv() == "events,0,6\nevents,1,1\n"


def test_reading_a_missing_or_malformed_plan_file_is_bad_input(tmp_path):
    with pytest.raises(BadInput, match="does not exist"):
        offsets.read_plan_file(tmp_path / "missing.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("events,0,1\nevents;1;2\n")
    with pytest.raises(BadInput, match=r"bad.csv:2: expected topic,partition,offset"):
        offsets.read_plan_file(bad)


def test_delete_offsets_removes_only_the_scoped_partitions(idle_group, events):
    bootstrap, _ = events
    results = offsets.delete_offsets(bootstrap, idle_group, make_scope(["events:0"], False))
    assert [r.to_json() for r in results] == [{"topic": "events", "partition": 0, "deleted": True, "error": None}]
    assert committed_by_kafka_python(bootstrap, idle_group) == {("events", 1): 6}


def test_deleting_the_offset_of_an_unknown_partition_is_bad_input(idle_group, events):
    bootstrap, _ = events
    with pytest.raises(BadInput, match=r"^unknown partition events:9 \(topic 'events' has partitions 0-1\)$"):
        offsets.delete_offsets(bootstrap, idle_group, make_scope(["events:0,9"], False))
    assert committed_by_kafka_python(bootstrap, idle_group) == {("events", 0): 6, ("events", 1): 6}


def test_deleting_a_partition_without_a_committed_offset_reports_it_not_deleted(events):
    bootstrap, _ = events
    commit_by_kafka_python(bootstrap, "half", {("events", 0): 4})
    results = offsets.delete_offsets(bootstrap, "half", make_scope(["events:0,1"], False))
    assert [r.to_json() for r in results] == [
        {"topic": "events", "partition": 0, "deleted": True, "error": None},
        {"topic": "events", "partition": 1, "deleted": False, "error": "no committed offset"},
    ]
    assert isinstance(results[1].error, NotFound)
    assert committed_by_kafka_python(bootstrap, "half") == {}


def test_partitions_of_a_deleted_topic_the_group_has_offsets_for_can_be_named_for_deletion():
    # Kafka keeps the offsets of a deleted topic; groupctl's coordinator refuses commits to
    # unknown topics, so this is pinned on the scope resolution alone.
    committed = {("gone", 0): 4, ("events", 0): 4}
    cluster = {"events": {0: 0, 1: 0}}
    assert offsets._deletion_scope("g", make_scope(["gone:0,1"], False), committed, cluster) == [
        ("gone", 0), ("gone", 1)]
    with pytest.raises(BadInput, match="^unknown topic 'other'$"):
        offsets._deletion_scope("g", make_scope(["other:0"], False), committed, cluster)


def test_deleting_offsets_of_a_topic_neither_in_the_cluster_nor_committed_is_bad_input(events):
    bootstrap, _ = events
    commit_by_kafka_python(bootstrap, "stale", {("events", 0): 4})
    with pytest.raises(BadInput, match="^unknown topic 'gone'$"):
        offsets.delete_offsets(bootstrap, "stale", make_scope(["gone:0"], False))


def test_delete_offsets_is_refused_for_a_topic_the_group_consumes(events):
    bootstrap, _ = events
    with active_member(bootstrap, "readers", "events") as consumer:
        commit_as_member(consumer, {("events", 0): 3})
        [result] = offsets.delete_offsets(bootstrap, "readers", make_scope(["events:0"], False))
        assert isinstance(result.error, Refused) and "subscribed to topic 'events'" in str(result.error)
        assert committed_by_kafka_python(bootstrap, "readers") == {("events", 0): 3}


# -- reaching the cluster --------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_refused_bootstrap_fails_at_once_with_unreachable():
    port = free_port()
    started = time.monotonic()
    with pytest.raises(Unreachable, match=rf"cannot reach bootstrap 127.0.0.1:{port} within 8s: connection refused"):
        groups.describe_group(f"127.0.0.1:{port}", "g")
    assert time.monotonic() - started < 8


def test_a_bootstrap_that_never_answers_fails_within_the_timeout():
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        address = "127.0.0.1:%d" % silent.getsockname()[1]
        started = time.monotonic()
        with pytest.raises(Unreachable, match=rf"cannot reach bootstrap {address} within 1s: timed out"):
            groups.list_groups(address, timeout=1)
        assert time.monotonic() - started < 3


def test_a_server_that_hangs_up_is_unreachable():
    with socket.socket() as rude:
        rude.bind(("127.0.0.1", 0))
        rude.listen()
        address = "127.0.0.1:%d" % rude.getsockname()[1]

        def hang_up_once():
            connection, _ = rude.accept()
            connection.close()

        threading.Thread(target=hang_up_once, daemon=True).start()
        with pytest.raises(Unreachable, match=rf"cannot reach bootstrap {address} within 8s: connection (closed|reset)"):
            groups.find_coordinator(address, "g")


def test_the_timeout_bounds_the_whole_operation_not_each_round_trip(idle_group, events, coordinator):
    bootstrap, _ = events
    faults = coordinator.node.faults
    faults.delay_next(FIND_COORDINATOR, 0.7)  # each answer alone is well within the timeout,
    faults.delay_next(apis.DESCRIBE_GROUPS, 0.7)  # the two together are not
    started = time.monotonic()
    with pytest.raises(Unreachable, match="timed out"):
        groups.describe_group(bootstrap, idle_group, timeout=1)
    assert time.monotonic() - started < 2.5  # the timeout and slack for a loaded machine, not the 1.4 s of answers


def test_malformed_bootstrap_is_bad_input():
    with pytest.raises(BadInput, match="bootstrap server 'nohost' is not HOST:PORT"):
        groups.find_coordinator("nohost", "g")


def test_one_connection_serves_a_whole_describe(idle_group, events, monkeypatch):
    bootstrap, _ = events
    opened = []
    original = KafkaClient._open

    def counting(self, host, port, deadline):
        opened.append((host, port))
        return original(self, host, port, deadline)

    monkeypatch.setattr(KafkaClient, "_open", counting)
    groups.describe_group(bootstrap, idle_group)
    assert opened == [tuple(bootstrap.rsplit(":", 1)[:1]) + (int(bootstrap.rsplit(":", 1)[1]),)]


# -- import cost -----------------------------------------------------------------------------


def test_the_ops_client_loads_only_the_message_classes_it_uses_and_kafka_stays_whole():
    import subprocess
    import sys

    script = (
        "import sys\n"
        "import groupctl.ops.groups\n"
        "assert 'kafka.consumer' not in sys.modules and 'kafka.protocol.admin.topics' not in sys.modules\n"
        "from kafka import KafkaConsumer\n"
        "from kafka.protocol.admin import CreateTopicsRequest\n"
        "from groupctl.protocol import schemas\n"
        "assert schemas.request_class(19) is CreateTopicsRequest and schemas.request_class(0).name == 'ProduceRequest'\n"
        "assert schemas.request_class(32000).name == 'GroupctlDescribeGroupRequest'\n"
        "print(KafkaConsumer.__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "KafkaConsumer"
