"""The coordinator cluster layout read by operators, against a real ZooKeeper: a group's
coordinator from ZooKeeper (`groupctl.ops.zk.coordinator_from_zk`) and the cluster overview
(`groupctl.ops.cluster.cluster_status`).

The layout is written by hand (`tests.support.cluster_layout`), as the nodes would write it.
"""

from __future__ import annotations

import pytest

from groupctl.coordinator.placement import group_partition
from groupctl.ops.cluster import cluster_status
from groupctl.errors import NotFound, OpsError, Unreachable
from groupctl.client.zookeeper import GET_WINDOW
from groupctl.ops.zk import coordinator_from_zk
from groupctl.layout.paths import encode_name
from tests.support.cluster_layout import cluster_layout, group_document, group_on
from tests.support.zookeeper import free_port

pytestmark = pytest.mark.zookeeper


@pytest.fixture
def layout(zookeeper, zk_connect):
    with cluster_layout(zookeeper.connect, zk_connect) as written:
        yield written


# -- coordinator find --zk -----------------------------------------------------------------------


def test_the_coordinator_is_the_leader_of_the_groups_partition_not_the_node_its_document_names(layout, zk_connect):
    layout.register(0, 9092)
    layout.register(1, 9093)
    partition = group_partition("orders", 50)
    layout.elect(partition, node_id=1, epoch=4)
    layout.group("orders", members=1, coordinator=0)

    found = coordinator_from_zk(zk_connect, "orders")

    assert found.to_json() == {"node_id": 1, "host": "127.0.0.1", "port": 9093, "partition": partition, "epoch": 4}


def test_the_partition_count_comes_from_the_cluster_config(layout, zk_connect):
    layout.register(0, 9092)
    layout.register(1, 9093)
    layout.config(7)
    group = group_on(3, partitions=7)
    assert group_partition(group, 50) != 3  # the default count would place it elsewhere
    layout.elect(3, node_id=0, epoch=2)

    assert (coordinator_from_zk(zk_connect, group).partition, coordinator_from_zk(zk_connect, group).node_id) == (3, 0)


def test_a_partition_whose_leader_is_gone_fails_naming_the_partition_and_its_last_leader(layout, zk_connect):
    layout.register(0, 9092)
    partition = group_partition("orders", 50)
    layout.elect(partition, node_id=1, epoch=5, leading=False)

    with pytest.raises(Unreachable) as failure:
        coordinator_from_zk(zk_connect, "orders")

    assert str(failure.value) == (f"group partition {partition} (of group 'orders') has no leader "
                                  "(election in progress or every node down; last led by node 1 at epoch 5)")


def test_a_lone_node_without_a_partition_layout_coordinates_every_group(layout, zk_connect):
    layout.register(2, 9094)

    found = coordinator_from_zk(zk_connect, "new-group")

    assert found.to_json() == {"node_id": 2, "host": "127.0.0.1", "port": 9094,
                               "partition": group_partition("new-group", 50), "epoch": None}


def test_several_nodes_and_no_leader_yet_is_an_election_in_progress(layout, zk_connect):
    layout.register(0, 9092)
    layout.register(1, 9093)

    with pytest.raises(Unreachable, match=r"^group partition \d+ \(of group 'orders'\) has no leader "
                                          r"\(election in progress or every node down\)$"):
        coordinator_from_zk(zk_connect, "orders")


def test_no_registered_node_in_a_cluster_that_has_run_is_not_found(layout, zk_connect):
    layout.client.ensure_path("/brokers/ids")
    layout.config(50)

    with pytest.raises(NotFound, match=r"^no coordinator is registered in ZooKeeper at .* \(/brokers/ids is empty\)$"):
        coordinator_from_zk(zk_connect, "orders")


@pytest.mark.parametrize("written", ["nothing", "empty /brokers/ids"])
def test_find_on_a_chroot_where_nothing_is_registered_says_so_and_hints_at_the_chroot(layout, zk_connect, written):
    if written != "nothing":
        layout.client.ensure_path("/brokers/ids")
    chroot = "/" + zk_connect.split("/", 1)[1]

    with pytest.raises(NotFound) as raised:
        coordinator_from_zk(zk_connect, "orders")

    assert str(raised.value) == (f"nothing is registered in ZooKeeper at {zk_connect} (no node in /brokers/ids, "
                                 f"no /coordinators, /groups or /consumers): is the chroot '{chroot}' right?")


def test_a_leader_without_a_registration_is_not_found(layout, zk_connect):
    layout.register(0, 9092)
    partition = group_partition("orders", 50)
    layout.elect(partition, node_id=3, epoch=1)

    with pytest.raises(NotFound, match=f"node 3, the leader of group partition {partition} of group 'orders', "
                                       "is not registered in /brokers/ids"):
        coordinator_from_zk(zk_connect, "orders")


@pytest.mark.parametrize("count", [0, "50", None, 10_001])
def test_a_malformed_partition_count_is_reported_not_guessed(layout, zk_connect, count):
    layout.register(0, 9092)
    layout.config(count)

    with pytest.raises(OpsError, match='/coordinators/config: "group_partitions" must be'):
        coordinator_from_zk(zk_connect, "orders")


# -- coordinator status ----------------------------------------------------------------------------


def test_status_reports_each_node_with_the_partitions_it_leads_and_their_load(layout, zk_connect):
    layout.config(6)
    layout.register(0, 9092, started_at_ms=1_000)
    layout.register(1, 9093, started_at_ms=2_000)
    layout.register(2, 9094, started_at_ms=3_000)  # live, leads nothing yet
    for partition, node_id in {0: 0, 1: 0, 2: 0, 3: 1, 5: 1}.items():
        layout.elect(partition, node_id, epoch=partition + 1)
    layout.elect(4, node_id=1, epoch=9, leading=False)  # its leader went away
    layout.group(group_on(0, 6, "a"), members=2)
    layout.group(group_on(0, 6, "b"), members=0)
    layout.group(group_on(3, 6, "c"), members=3)
    layout.group(group_on(4, 6, "d"), members=1)

    status = cluster_status(zk_connect).to_json()

    assert list(status) == ["group_partitions", "groups", "members", "nodes", "leaderless_partitions", "partitions"]
    assert (status["group_partitions"], status["groups"], status["members"]) == (6, 4, 6)
    assert status["nodes"] == [
        {"node_id": 0, "host": "127.0.0.1", "port": 9092, "started_at_ms": 1_000, "registered": True,
         "partitions": [0, 1, 2], "groups": 2, "members": 2},
        {"node_id": 1, "host": "127.0.0.1", "port": 9093, "started_at_ms": 2_000, "registered": True,
         "partitions": [3, 5], "groups": 1, "members": 3},
        {"node_id": 2, "host": "127.0.0.1", "port": 9094, "started_at_ms": 3_000, "registered": True,
         "partitions": [], "groups": 0, "members": 0},
    ]
    assert status["leaderless_partitions"] == [4]
    assert status["partitions"][4] == {"partition": 4, "leader": None, "epoch": None, "groups": 1, "members": 1}
    assert status["partitions"][3] == {"partition": 3, "leader": 1, "epoch": 4, "groups": 1, "members": 3}


def test_a_leader_whose_registration_is_gone_is_listed_as_not_registered(layout, zk_connect):
    layout.config(2)
    layout.register(0, 9092)
    layout.elect(0, node_id=0, epoch=1)
    layout.elect(1, node_id=7, epoch=2)

    nodes = cluster_status(zk_connect).to_json()["nodes"]

    assert nodes[1] == {"node_id": 7, "host": None, "port": None, "started_at_ms": None, "registered": False,
                        "partitions": [1], "groups": 0, "members": 0}


def test_status_of_a_chroot_where_nothing_is_registered_says_so_and_hints_at_the_chroot(zookeeper, zk_connect):
    chroot = "/" + zk_connect.split("/", 1)[1]  # never created: a mistyped chroot

    with pytest.raises(NotFound) as raised:
        cluster_status(zk_connect)

    assert str(raised.value) == (f"nothing is registered in ZooKeeper at {zk_connect} (no node in /brokers/ids, "
                                 f"no /coordinators, /groups or /consumers): is the chroot '{chroot}' right?")
    assert raised.value.exit_status == 1


def test_status_of_the_root_where_nothing_is_registered_asks_whether_a_chroot_is_missing(zookeeper):
    # The session's ZooKeeper is shared: its root holds only the tests' chroots.
    with pytest.raises(NotFound, match=r": does --zk need a chroot, HOST:PORT/CHROOT\?$"):
        cluster_status(zookeeper.connect)


def test_status_of_a_cluster_whose_nodes_are_all_down_is_an_outage_not_an_empty_chroot(layout, zk_connect):
    layout.config(4)
    layout.client.ensure_path("/brokers/ids")  # every registration gone with its session
    layout.elect(0, node_id=1, epoch=3, leading=False)

    status = cluster_status(zk_connect)

    assert (status.group_partitions, status.nodes, status.groups) == (4, (), 0)
    assert status.leaderless == (0, 1, 2, 3)


def test_status_counts_groups_beyond_one_window_of_pipelined_reads(layout, zk_connect):
    """More groups than `GET_WINDOW`, written asynchronously, each hashed to its partition."""
    layout.config(50)
    layout.register(0, 9092)
    for partition in range(50):
        layout.elect(partition, node_id=0, epoch=1)
    layout.client.ensure_path("/groups")
    count = 2 * GET_WINDOW + 17
    names = [f"bulk/{i}" for i in range(count)]  # "/" is percent-encoded in the znode name
    writes = [layout.client.create_async(f"/groups/{encode_name(name)}", group_document(name, i % 3).encode())
              for i, name in enumerate(names)]
    for write in writes:
        write.get(timeout=20)

    status = cluster_status(zk_connect)

    assert (status.groups, status.members) == (count, sum(i % 3 for i in range(count)))
    expected = [0] * 50
    for name in names:
        expected[group_partition(name, 50)] += 1
    assert [p.groups for p in status.partitions] == expected
    assert status.nodes[0].partitions == tuple(range(50)) and status.nodes[0].groups == count


def test_a_group_znode_that_is_not_a_document_counts_as_a_group_without_members(layout, zk_connect):
    layout.config(1)
    layout.client.create("/groups/odd", b"not json", makepath=True)
    layout.group("fine", members=2)

    status = cluster_status(zk_connect)

    assert (status.groups, status.members) == (2, 2)


def test_status_with_an_unreachable_zookeeper_is_unreachable():
    with pytest.raises(Unreachable, match="cannot reach ZooKeeper"):
        cluster_status(f"127.0.0.1:{free_port()}", timeout_s=1)
