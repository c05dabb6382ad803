"""Committed leader epochs in the `offsets` commands, against a real in-process coordinator:
`offsets show` and `offsets export` read the epoch committed with each offset (JSON; the table
and kafka-consumer-groups.sh's CSV keep their columns), and every write (`offsets commit`,
`reset`, `import`, `copy`) commits each partition's current leader epoch as Metadata reports it.

To see an epoch reported, the node's Metadata answer is replaced (fault injection) by one that
reports leader epoch 7, as a Kafka cluster whose partitions changed leader seven times does."""

from __future__ import annotations

import json
import uuid

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.structs import OffsetAndMetadata, TopicPartition
from typer.testing import CliRunner

from groupctl.cli.app import app
from groupctl.client.kafka import KafkaClient
from tests.support.coordinator import InProcessCoordinator, node_config

METADATA = 3
TOPIC, PARTITIONS = "orders", 2
EPOCH = 7


def invoke(node, *args: str, input: str | None = None):
    result = CliRunner().invoke(app, list(args), env={"GROUPCTL_BOOTSTRAP": node.bootstrap, "GROUPCTL_ZK": None},
                                input=input, catch_exceptions=False)
    assert result.exit_code == 0, (args, result.stdout, result.stderr)
    return result


def as_json(node, *args: str, input: str | None = None):
    return json.loads(invoke(node, "--output", "json", *args, input=input).stdout)


@pytest.fixture(scope="module")
def node():
    running = InProcessCoordinator(node_config(topics=((TOPIC, PARTITIONS),))).start()
    producer = KafkaProducer(bootstrap_servers=running.bootstrap)
    try:
        for future in [producer.send(TOPIC, b"r", partition=p) for p in range(PARTITIONS) for _ in range(10)]:
            future.get(timeout=10)
    finally:
        producer.close()
    yield running
    running.stop()


def commit(node, group: str, offsets: dict, epoch: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=node.bootstrap)
    try:
        admin.alter_group_offsets(group, {TopicPartition(t, p): OffsetAndMetadata(o, "", epoch)
                                          for (t, p), o in offsets.items()})
    finally:
        admin.close()


def committed(node, group: str) -> dict:
    """{(topic, partition): (offset, leader epoch)} as kafka-python's admin client reads them."""
    admin = KafkaAdminClient(bootstrap_servers=node.bootstrap)
    try:
        fetched = admin.list_group_offsets(group).get(group, {})
    finally:
        admin.close()
    return {(tp.topic, tp.partition): (m.offset, m.leader_epoch) for tp, m in fetched.items()}


def new_group() -> str:
    return f"g-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def reporting_epochs(node):
    """The node's Metadata answers report leader epoch EPOCH for every partition of TOPIC."""

    def metadata(ctx, request):
        cls = ctx.response_class
        partition = cls.MetadataResponseTopic.MetadataResponsePartition
        live = ctx.node.live_brokers(ctx.listener)
        topics = [cls.MetadataResponseTopic(
            error_code=0, name=TOPIC, topic_id=uuid.uuid4(), is_internal=False,
            partitions=[partition(error_code=0, partition_index=p, leader_id=0, leader_epoch=EPOCH,
                                  replica_nodes=[0], isr_nodes=[0], offline_replicas=[])
                        for p in range(PARTITIONS)])]
        return ctx.respond(throttle_time_ms=0, cluster_id=ctx.node.config.cluster_id, controller_id=0,
                           brokers=[cls.MetadataResponseBroker(node_id=n, host=h, port=port, rack=None)
                                    for n, (h, port) in live.items()], topics=topics, error_code=0)

    node.node.faults.replace_next(METADATA, metadata, times=1000)
    yield
    node.node.faults.clear()


def test_offsets_show_and_export_carry_the_committed_leader_epoch_in_json_only(node):
    group = new_group()
    commit(node, group, {(TOPIC, 0): 3}, epoch=5)
    commit(node, group, {(TOPIC, 1): 4}, epoch=-1)
    shown = as_json(node, "offsets", "show", group)["offsets"]
    assert [(o["partition"], o["committed_offset"], o["committed_leader_epoch"]) for o in shown] == [
        (0, 3, 5), (1, 4, None)]
    exported = as_json(node, "offsets", "export", group)["offsets"]
    assert [(o["partition"], o["offset"], o["leader_epoch"]) for o in exported] == [(0, 3, 5), (1, 4, None)]
    assert invoke(node, "offsets", "export", group).stdout == f"{TOPIC},0,3\n{TOPIC},1,4\n"
    header = invoke(node, "offsets", "show", group).stdout.splitlines()[0].split()
    assert "EPOCH" not in header


def test_offsets_reset_commits_each_partitions_current_leader_epoch(node, reporting_epochs):
    group = new_group()
    commit(node, group, {(TOPIC, 0): 3, (TOPIC, 1): 4}, epoch=-1)
    dry = as_json(node, "offsets", "reset", group, "--all-topics", "--to-earliest")
    assert [p["leader_epoch"] for p in dry["partitions"]] == [EPOCH, EPOCH]
    invoke(node, "offsets", "reset", group, "--all-topics", "--to-latest", "--execute")
    assert committed(node, group) == {(TOPIC, 0): (10, EPOCH), (TOPIC, 1): (10, EPOCH)}


def test_offsets_commit_import_and_copy_commit_the_current_leader_epoch(node, reporting_epochs):
    fresh = new_group()
    invoke(node, "offsets", "commit", fresh, f"{TOPIC}:0=2")
    assert committed(node, fresh) == {(TOPIC, 0): (2, EPOCH)}
    imported = new_group()
    commit(node, imported, {(TOPIC, 0): 1}, epoch=-1)
    invoke(node, "offsets", "import", imported, "-", "--execute", input=f"{TOPIC},0,6\n{TOPIC},1,8\n")
    assert committed(node, imported) == {(TOPIC, 0): (6, EPOCH), (TOPIC, 1): (8, EPOCH)}
    copied = new_group()
    invoke(node, "offsets", "copy", "--from-group", imported, "--to-group", copied, "--execute")
    assert committed(node, copied) == {(TOPIC, 0): (6, EPOCH), (TOPIC, 1): (8, EPOCH)}


def test_a_write_commits_the_leader_epoch_the_nodes_own_metadata_reports(node):
    group = new_group()
    commit(node, group, {(TOPIC, 0): 3}, epoch=5)
    with KafkaClient(node.bootstrap) as client:
        reported = client.metadata([TOPIC]).leader_epoch(TOPIC, 0)
    invoke(node, "offsets", "reset", group, "--all-topics", "--to-latest", "--execute")
    assert committed(node, group) == {(TOPIC, 0): (10, -1 if reported is None else reported)}


def test_group_describe_and_offsets_show_report_the_same_committed_leader_epochs_for_one_group_and_many(node):
    group, other = new_group(), new_group()
    commit(node, group, {(TOPIC, 0): 3}, epoch=5)
    commit(node, group, {(TOPIC, 1): 4}, epoch=-1)
    commit(node, other, {(TOPIC, 0): 2}, epoch=9)
    expected = {group: [(0, 3, 5), (1, 4, None)], other: [(0, 2, 9)]}

    def epochs(rows: list) -> list:
        return [(o["partition"], o["committed_offset"], o["committed_leader_epoch"]) for o in rows]

    for g in (group, other):
        shown = as_json(node, "offsets", "show", g)["offsets"]
        described = as_json(node, "group", "describe", g)["offsets"]
        assert epochs(shown) == epochs(described) == expected[g]
        assert described == shown
    for many in (["--all-groups"], ["--group", group, "--group", other]):
        shown = {d["group"]: d["offsets"] for d in as_json(node, "offsets", "show", *many)}
        described = {d["group"]: d["offsets"] for d in as_json(node, "group", "describe", *many)}
        assert {g: epochs(shown[g]) for g in expected} == {g: epochs(described[g]) for g in expected} == expected
