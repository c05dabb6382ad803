"""The CLI on KIP-848 consumer groups, without a cluster (ops replaced by fakes returning known
data): `group describe` in JSON and in kafka-consumer-groups.sh 4.x's verbose tables, `group list`
with the group type and its filter, and the watches' lines for consumer group epochs."""

from __future__ import annotations

import json
import socket
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from groupctl.cli.app import app
from groupctl.client.kafka import Node
from groupctl.layout.consumer_groups import ConsumerGroupDocument, ConsumerMemberDocument
from groupctl.ops.documents import StoredDocument
from groupctl.ops.groups import GroupDescription, GroupListing, MemberDescription
from groupctl.ops.lag import PartitionOffsets
from groupctl.ops.rebalance import MemberRef, PartitionMove, RebalanceEvent
from tests.support.cli import assert_one_line_error

NODE = Node(3, "127.0.0.1", 9093)


def run(args: list[str]):
    return CliRunner().invoke(app, args, env={"GROUPCTL_BOOTSTRAP": None, "GROUPCTL_ZK": None},
                              catch_exceptions=False)


def rows(output: str) -> list[list[str]]:
    return [line.split() for line in output.splitlines() if line.strip()]


CONSUMER_GROUP = GroupDescription(
    group="readers", state="Reconciling", protocol_type="consumer", protocol="uniform", generation=7,
    coordinator=NODE,
    members=(
        MemberDescription("a-1", "app-a", "/127.0.0.1", None, {"events": (0, 1, 2), "audit": (0,)}, member_epoch=6,
                          target_assignment={"events": (0, 1), "audit": (0,)}),
        MemberDescription("b-1", "app-b", "/127.0.0.2", None, {}, member_epoch=7,
                          target_assignment={"events": (2,)}),
    ),
    offsets=(PartitionOffsets("events", 0, 5, 12), PartitionOffsets("events", 1, 3, 3, committed_leader_epoch=4)),
    group_type="consumer", group_epoch=7, assignment_epoch=7, assignor="uniform")

CLASSIC_GROUP = GroupDescription(
    group="orders", state="Stable", protocol_type="consumer", protocol="range", generation=4, coordinator=NODE,
    members=(MemberDescription("app-1-x", "app-1", "/127.0.0.1", "i-1", {"payments": (0, 1)}),), offsets=())


@pytest.fixture
def describing(monkeypatch):
    """`group describe` answers with the description named by the group argument."""
    known = {"readers": CONSUMER_GROUP, "orders": CLASSIC_GROUP}
    monkeypatch.setattr("groupctl.ops.groups.describe_group",
                        lambda bootstrap, group, *, include_offsets=True, include_configs=False: known[group])


# -- group describe ------------------------------------------------------------------------------


def test_describe_json_of_a_consumer_group_has_its_type_epochs_assignor_and_member_epochs_and_targets(describing):
    document = json.loads(run(["--bootstrap", "h:1", "--output", "json", "group", "describe", "readers"]).stdout)

    assert (document["group_type"], document["group_epoch"], document["assignment_epoch"], document["assignor"]) == (
        "consumer", 7, 7, "uniform")
    assert document["generation"] == 7 and document["protocol"] == "uniform"
    first, second = document["members"]
    assert (first["member_epoch"], first["assignment"], first["target_assignment"]) == (
        6, {"audit": [0], "events": [0, 1, 2]}, {"audit": [0], "events": [0, 1]})
    assert (second["member_epoch"], second["assignment"], second["target_assignment"]) == (7, {}, {"events": [2]})


def test_describe_members_verbose_of_a_consumer_group_has_the_kafka_4_columns_and_assignments(describing):
    result = run(["--bootstrap", "h:1", "group", "describe", "readers", "--members", "--verbose"])

    assert result.exit_code == 0, result.output
    assert rows(result.stdout) == [
        ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "CURRENT-EPOCH", "CURRENT-ASSIGNMENT",
         "TARGET-EPOCH", "TARGET-ASSIGNMENT"],
        ["readers", "a-1", "/127.0.0.1", "app-a", "4", "6", "audit:0;events:0,1,2", "7", "audit:0;events:0,1"],
        ["readers", "b-1", "/127.0.0.2", "app-b", "0", "7", "-", "7", "events:2"],
    ]


def test_describe_members_verbose_of_a_classic_group_shows_dashes_for_epochs_and_targets_and_its_instance_ids(
        describing):
    result = run(["--bootstrap", "h:1", "group", "describe", "orders", "--members", "--verbose"])

    assert rows(result.stdout) == [
        ["GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "CURRENT-EPOCH",
         "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT"],
        ["orders", "app-1-x", "i-1", "/127.0.0.1", "app-1", "2", "-", "payments:0,1", "-", "-"],
    ]


def test_describe_members_verbose_of_a_group_migrating_online_says_which_members_are_upgraded(monkeypatch):
    classic_member = MemberDescription("k-1", "app-k", "/127.0.0.3", None, {"events": (3,)}, member_epoch=7,
                                       target_assignment={"events": (3,)}, upgraded=False)
    migrating = replace(CONSUMER_GROUP, members=(replace(CONSUMER_GROUP.members[1], upgraded=True), classic_member))
    monkeypatch.setattr("groupctl.ops.groups.describe_group", lambda bootstrap, group, *, include_offsets=True, include_configs=False: migrating)

    table = rows(run(["--bootstrap", "h:1", "group", "describe", "readers", "--members", "--verbose"]).stdout)
    document = json.loads(run(["--bootstrap", "h:1", "--output", "json", "group", "describe", "readers"]).stdout)

    assert table[0][-1] == "UPGRADED" and [row[-1] for row in table[1:]] == ["true", "false"]
    assert [m["upgraded"] for m in document["members"]] == [True, False]


def test_describe_state_verbose_has_the_kafka_4_columns_for_both_group_types(describing):
    consumer = run(["--bootstrap", "h:1", "group", "describe", "readers", "--state", "--verbose"])
    classic = run(["--bootstrap", "h:1", "group", "describe", "orders", "--state", "--verbose"])

    header = ["GROUP", "COORDINATOR", "(ID)", "ASSIGNMENT-STRATEGY", "STATE", "GROUP-EPOCH",
              "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS"]
    assert rows(consumer.stdout) == [header, ["readers", "127.0.0.1:9093", "(3)", "uniform", "Reconciling", "7", "7", "2"]]
    assert rows(classic.stdout) == [header, ["orders", "127.0.0.1:9093", "(3)", "range", "Stable", "-", "-", "1"]]


def test_describe_without_verbose_has_kafka_consumer_groups_columns_first_and_groupctls_after(describing):
    consumer = rows(run(["--bootstrap", "h:1", "group", "describe", "readers", "--state", "--members"]).stdout)
    classic = rows(run(["--bootstrap", "h:1", "group", "describe", "orders", "--state", "--members"]).stdout)

    assert consumer[0] == ["GROUP", "COORDINATOR", "(ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS",
                           "PROTOCOL-TYPE", "GENERATION", "TYPE"]
    assert consumer[1] == ["readers", "127.0.0.1:9093", "(3)", "uniform", "Reconciling", "2", "consumer", "7",
                           "consumer"]
    assert consumer[2:] == [["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT"],
                            ["readers", "a-1", "/127.0.0.1", "app-a", "4", "audit:0;events:0,1,2"],
                            ["readers", "b-1", "/127.0.0.2", "app-b", "0", "-"]]
    assert classic[1] == ["orders", "127.0.0.1:9093", "(3)", "range", "Stable", "1", "consumer", "4", "classic"]
    assert classic[2:] == [["GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS",
                            "ASSIGNMENT"],
                           ["orders", "app-1-x", "i-1", "/127.0.0.1", "app-1", "2", "payments:0,1"]]


def test_describe_offsets_is_kafka_consumer_groups_table_with_each_owners_id_host_and_client_id(describing):
    table = rows(run(["--bootstrap", "h:1", "group", "describe", "readers", "--offsets"]).stdout)

    assert table == [["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
                      "CLIENT-ID"],
                     ["readers", "events", "0", "5", "12", "7", "a-1", "/127.0.0.1", "app-a"],
                     ["readers", "events", "1", "3", "3", "0", "a-1", "/127.0.0.1", "app-a"]]


def test_describe_offsets_verbose_adds_kafka_consumer_groups_leader_epoch_column_after_partition(describing):
    table = rows(run(["--bootstrap", "h:1", "group", "describe", "readers", "--offsets", "--verbose"]).stdout)

    assert table == [["GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                      "CONSUMER-ID", "HOST", "CLIENT-ID"],
                     ["readers", "events", "0", "-", "5", "12", "7", "a-1", "/127.0.0.1", "app-a"],
                     ["readers", "events", "1", "4", "3", "3", "0", "a-1", "/127.0.0.1", "app-a"]]


# -- group list ----------------------------------------------------------------------------------


@pytest.fixture
def listing(monkeypatch):
    calls = []

    def fake(bootstrap, states=(), types=(), topics=()):
        calls.append((tuple(states), tuple(types), tuple(topics)))
        return (GroupListing("orders", "Stable", "consumer", NODE, "classic"),
                GroupListing("readers", "Reconciling", "consumer", NODE, "consumer"))

    monkeypatch.setattr("groupctl.ops.groups.list_groups", fake)
    return calls


def test_group_list_shows_each_groups_type_and_passes_the_type_filter_on(listing):
    table = run(["--bootstrap", "h:1", "group", "list", "--type", "consumer", "--type", "classic"])
    document = json.loads(run(["--bootstrap", "h:1", "--output", "json", "group", "list"]).stdout)

    assert rows(table.stdout) == [["GROUP", "STATE", "PROTOCOL-TYPE", "COORDINATOR", "TYPE"],
                                  ["orders", "Stable", "consumer", "3", "(127.0.0.1:9093)", "classic"],
                                  ["readers", "Reconciling", "consumer", "3", "(127.0.0.1:9093)", "consumer"]]
    assert [g["group_type"] for g in document] == ["classic", "consumer"]
    assert listing == [((), ("consumer", "classic"), ()), ((), (), ())]


@pytest.fixture
def unreachable_bootstrap():
    """A closed port: bad input must be rejected before anything is contacted (else exit 1)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


def test_group_list_with_an_unknown_type_is_one_line_and_exit_2(unreachable_bootstrap):
    result = run(["--bootstrap", unreachable_bootstrap, "group", "list", "--type", "share"])
    assert_one_line_error(result, 2, "unknown group type 'share'", "classic, consumer")


# -- watches -------------------------------------------------------------------------------------


def consumer_event(generation: int, previous: int, state: str) -> RebalanceEvent:
    return RebalanceEvent(
        group="readers", generation=generation, previous_generation=previous, state=state, members=2, reason=None,
        detail=None, caused_by=None, started_at_ms=None, completed_at_ms=None, duration_ms=None,
        members_joined=(MemberRef("b-1", "app-b"),) if state != "Stable" else (), members_left=(),
        partitions_moved=(PartitionMove("events", 2, "a-1", "b-1"),) if state == "Stable" else (),
        group_type="consumer", assignment_epoch=generation)


def test_rebalance_watch_prints_a_consumer_groups_new_epoch_and_its_becoming_stable(monkeypatch):
    def fake(group, *, bootstrap=None, zk=None, zk_auth=None, count=None, timeout_s=None, zk_timeout_s=None):
        yield from (consumer_event(7, 6, "Reconciling"), consumer_event(7, 7, "Stable"))

    monkeypatch.setattr("groupctl.ops.rebalance.watch", fake)
    lines = run(["--zk", "z:1", "rebalance", "watch", "readers", "--count", "2"]).stdout.splitlines()
    objects = [json.loads(line) for line in run(["--zk", "z:1", "--output", "json", "rebalance", "watch", "readers"])
               .stdout.splitlines()]

    assert lines == ["epoch 6 -> 7; Reconciling; 2 member(s); joined: app-b; 0 partition(s) moved",
                     "epoch 7; Stable; 2 member(s); 1 partition(s) moved"]
    assert [(o["group_type"], o["generation"], o["assignment_epoch"], o["state"]) for o in objects] == [
        ("consumer", 7, 7, "Reconciling"), ("consumer", 7, 7, "Stable")]


def test_zk_watch_prints_a_consumer_groups_epochs_state_and_assignor(monkeypatch):
    member = ConsumerMemberDocument(
        member_id="a-1", instance_id=None, rack_id=None, client_id="app-a", client_host="/127.0.0.1",
        rebalance_timeout_ms=300_000, subscribed_topic_names=["events"], subscribed_topic_regex=None,
        server_assignor=None, member_epoch=7, previous_member_epoch=6, member_state="stable",
        assigned={"t-id": [0]}, pending_revocation={}, target={"t-id": [0]})
    document = ConsumerGroupDocument(
        group="readers", group_epoch=7, assignment_epoch=7, assignor="uniform", state="Stable",
        topics={"t-id": "events"}, subscribed={"t-id": 1}, members=(member,), ownership={"events": {"0": "a-1"}},
        coordinator=0, updated_at_ms=1)
    monkeypatch.setattr("groupctl.ops.zk.zk_watch",
                        lambda zk, group, *, count=None, timeout_s=None, auth=None, connect_timeout_s=None: iter([StoredDocument(document, document.to_json())]))

    result = run(["--zk", "z:1", "zk", "watch", "readers", "--count", "1"])

    assert result.exit_code == 0, result.output
    assert result.stdout == "group epoch 7  assignment epoch 7  state=Stable  members=1  assignor=uniform\n"
