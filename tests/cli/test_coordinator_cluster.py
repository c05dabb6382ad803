"""`groupctl coordinator status` and `coordinator find --zk` through CliRunner, against a real
ZooKeeper whose cluster layout is written by hand (tests/store/test_ops_cluster.py pins the ops
answers; here: rendering, JSON keys, bad input and unreachable sources)."""

from __future__ import annotations

import json
import time

import pytest
from typer.testing import CliRunner

from groupctl.cli.app import app
from groupctl.coordinator.placement import group_partition, partition_ranges
from tests.support.cli import assert_one_line_error
from tests.support.cluster_layout import cluster_layout, group_on
from tests.support.zookeeper import free_port

pytestmark = pytest.mark.zookeeper

STARTED_MS = 1_763_750_000_000  # 2025-11-21T18:33:20Z


def run(args: list[str], env: dict | None = None):
    return CliRunner().invoke(app, args, env={"GROUPCTL_BOOTSTRAP": None, "GROUPCTL_ZK": None, **(env or {})},
                              catch_exceptions=False)


@pytest.fixture
def layout(zookeeper, zk_connect):
    with cluster_layout(zookeeper.connect, zk_connect) as written:
        yield written


@pytest.fixture
def two_nodes(layout):
    """Six partitions: node 0 leads 0-2, node 1 leads 3 and 5, partition 4 has no leader; three
    groups with 2 + 0 + 3 members."""
    layout.config(6)
    layout.register(0, 9092, started_at_ms=STARTED_MS)
    layout.register(1, 9093, started_at_ms=STARTED_MS + 1000)
    for partition, node_id in {0: 0, 1: 0, 2: 0, 3: 1, 5: 1}.items():
        layout.elect(partition, node_id, epoch=1)
    layout.group(group_on(0, 6, "a"), members=2)
    layout.group(group_on(1, 6, "b"), members=0)
    layout.group(group_on(5, 6, "c"), members=3)
    return layout


def test_status_table_shows_nodes_with_partition_ranges_and_load(two_nodes, zk_connect):
    result = run(["--zk", zk_connect, "coordinator", "status"])

    assert result.exit_code == 0, result.output
    lines = [line.split() for line in result.stdout.splitlines()]
    assert lines[0] == ["GROUP-PARTITIONS", "LEADERLESS", "NODES", "GROUPS", "MEMBERS"]
    assert lines[1] == ["6", "4", "2", "3", "5"]
    assert lines[3] == ["NODE", "HOST", "PORT", "STARTED", "PARTITIONS", "GROUPS", "MEMBERS"]
    assert lines[4] == ["0", "127.0.0.1", "9092", "2025-11-21T18:33:20Z", "0-2", "2", "2"]
    assert lines[5] == ["1", "127.0.0.1", "9093", "2025-11-21T18:33:21Z", "3,5", "1", "3"]


def test_status_json_carries_the_documented_keys(two_nodes, zk_connect):
    result = run(["coordinator", "status", "--output", "json"], {"GROUPCTL_ZK": zk_connect})

    assert result.exit_code == 0, result.output
    status = json.loads(result.stdout)
    assert list(status) == ["group_partitions", "groups", "members", "nodes", "leaderless_partitions", "partitions"]
    assert [list(node) for node in status["nodes"]] == [
        ["node_id", "host", "port", "started_at_ms", "registered", "partitions", "groups", "members"]] * 2
    assert status["nodes"][1]["partitions"] == [3, 5]
    assert status["leaderless_partitions"] == [4]
    assert list(status["partitions"][0]) == ["partition", "leader", "epoch", "groups", "members"]


def test_status_of_a_cluster_whose_every_partition_has_a_leader_says_none_are_leaderless(layout, zk_connect):
    layout.config(2)
    layout.register(0, 9092)
    layout.elect(0, 0, epoch=1)
    layout.elect(1, 0, epoch=1)

    result = run(["--zk", zk_connect, "coordinator", "status"])

    assert result.stdout.splitlines()[1].split()[:2] == ["2", "none"]


@pytest.mark.parametrize("command", [["coordinator", "status"], ["coordinator", "find", "orders"],
                                     ["zk", "show", "orders"]], ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("output", ["table", "json"])
def test_a_wrong_chroot_is_one_line_that_hints_at_the_chroot_not_an_outage(two_nodes, zk_connect, command, output):
    wrong = zk_connect + "-typo"  # a cluster runs under zk_connect; nothing is under this chroot

    result = run(["--zk", wrong, "--output", output, *command])

    line = assert_one_line_error(result, 1, f"nothing is registered in ZooKeeper at {wrong}",
                                 f"is the chroot '/{wrong.split('/', 1)[1]}' right?")
    if command[0] == "zk":
        assert line.startswith("groupctl: error: group 'orders' does not exist in ZooKeeper; nothing is registered")


def test_status_needs_zookeeper():
    assert_one_line_error(run(["coordinator", "status"], {"GROUPCTL_BOOTSTRAP": "127.0.0.1:9092"}), 2,
                          "--zk", "GROUPCTL_ZK")


def test_status_with_an_unreachable_zookeeper_fails_within_10_seconds_with_one_line():
    connect = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    result = run(["--zk", connect, "coordinator", "status"])
    assert_one_line_error(result, 1, f"cannot reach ZooKeeper at {connect}")
    assert time.monotonic() - started < 10


def test_find_with_zk_shows_the_partition_and_epoch_of_the_leader(two_nodes, zk_connect):
    group = group_on(3, 6, "orders")

    table = run(["--zk", zk_connect, "coordinator", "find", group])
    found = json.loads(run(["--zk", zk_connect, "--output", "json", "coordinator", "find", group]).stdout)

    assert [line.split() for line in table.stdout.splitlines()] == [
        ["NODE", "HOST", "PORT", "PARTITION", "EPOCH"], ["1", "127.0.0.1", "9093", "3", "1"]]
    assert found == {"node_id": 1, "host": "127.0.0.1", "port": 9093, "partition": 3, "epoch": 1}


def test_find_with_zk_for_a_group_on_a_leaderless_partition_fails_with_one_line(two_nodes, zk_connect):
    group = group_on(4, 6, "orders")
    assert group_partition(group, 6) == 4

    result = run(["--zk", zk_connect, "coordinator", "find", group])

    assert_one_line_error(result, 1, "group partition 4", "has no leader (election in progress or every node down)")


@pytest.mark.parametrize("numbers, text", [([], ""), ([7], "7"), ([0, 1, 2, 3, 7], "0-3,7"),
                                           ([5, 3, 4, 9, 10], "3-5,9-10"), ([1, 3, 5], "1,3,5")])
def test_partition_ranges_are_written_compactly(numbers, text):
    assert partition_ranges(numbers) == text
