"""`group describe`, `group delete` and `group list` over several groups, as kafka-consumer-groups.sh
users spell them (`--group G` repeatable, `--all-groups`, `--state stable,empty`, `--type
classic,consumer`, `--topic T`, `--only-with-lag`), against a real in-process coordinator.

Bad input is rejected before anything is contacted: those tests point --bootstrap at a closed
port, where any contact would turn the expected exit 2 into an exit 1.
"""

from __future__ import annotations

import json
import socket

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata, TopicPartition
from typer.testing import CliRunner

from groupctl.cli.app import app
from groupctl.client.kafka import Node
from groupctl.ops.groups import GroupDescription
from groupctl.ops.lag import PartitionOffsets
from tests.support.cli import assert_one_line_error

ORDERS_ENDS = (5, 3)  # records on orders:0 and orders:1


def run(*args: str):
    return CliRunner().invoke(app, list(args), env={"GROUPCTL_BOOTSTRAP": None, "GROUPCTL_ZK": None},
                              catch_exceptions=False)


def rows(output: str) -> list[list[str]]:
    return [line.split() for line in output.splitlines() if line.strip()]


def section(output: str, second_column: str) -> list[list[str]]:
    """The rows of the table whose header's second column is `second_column` (COORDINATOR: state,
    CONSUMER-ID: members, TOPIC: offsets), header included, up to the next blank line."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["GROUP", second_column])
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return rows("\n".join(lines[start:end]))


@pytest.fixture
def closed():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture
def cluster(coordinator):
    """Topics orders (2 partitions, 5 and 3 records) and audit (1 partition, 2 records); groups
    `billing` (orders:0=2, orders:1=3), `archive` (audit:0=2) and `shipping` (orders:0=9, past the
    log end), committed with kafka-python's admin client, none with members."""
    bootstrap = coordinator.bootstrap
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic("orders", 2, 1), NewTopic("audit", 1, 1)])
        sent = [producer.send("orders", b"r", partition=p) for p, n in enumerate(ORDERS_ENDS) for _ in range(n)]
        sent += [producer.send("audit", b"r", partition=0) for _ in range(2)]
        for future in sent:
            future.get(timeout=10)
        for group, offsets in {"billing": {("orders", 0): 2, ("orders", 1): 3}, "archive": {("audit", 0): 2},
                               "shipping": {("orders", 0): 9}}.items():
            admin.alter_group_offsets(group, {TopicPartition(t, p): OffsetAndMetadata(o, "", -1)
                                              for (t, p), o in offsets.items()})
    finally:
        producer.close()
        admin.close()
    return bootstrap


# -- bad input, before any contact ---------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ["group", "describe", "--group", "a", "--all-groups"],
    ["group", "describe", "a", "--all-groups"],
    ["group", "delete", "--group", "a", "--all-groups", "--force"],
    ["group", "delete", "a", "--all-groups", "--force"],
], ids=lambda a: " ".join(a))
def test_a_named_group_with_all_groups_is_a_usage_error_before_any_contact(closed, args):
    assert_one_line_error(run("--bootstrap", closed, *args), 2, "--all-groups", "not both")


@pytest.mark.parametrize("command", ["describe", "delete"])
def test_no_group_at_all_is_a_usage_error(closed, command):
    assert_one_line_error(run("--bootstrap", closed, "group", command), 2, "give GROUP, --group GROUP")


def test_delete_all_groups_without_force_is_refused_before_any_contact(closed):
    assert_one_line_error(run("--bootstrap", closed, "group", "delete", "--all-groups"), 2, "--force")


@pytest.mark.parametrize("args, fragment", [
    (["--state", "stable,sleepy"], "unknown group state 'sleepy'"),
    (["--state", "Stable", "--state", "empty,"], "unknown group state ''"),
    (["--type", "classic,share"], "unknown group type 'share'"),
    (["--topic", ""], "topic name must not be empty"),
], ids=["state", "empty-state", "type", "topic"])
def test_group_list_with_an_unknown_item_in_a_comma_list_is_a_usage_error(closed, args, fragment):
    assert_one_line_error(run("--bootstrap", closed, "group", "list", *args), 2, fragment)


@pytest.mark.parametrize("command", ["describe", "delete"])
def test_an_empty_group_option_is_a_usage_error(closed, command):
    assert_one_line_error(run("--bootstrap", closed, "group", command, "--group", "ok", "--group", ""), 2,
                          "must not be empty")


# -- describe ------------------------------------------------------------------------------------


def test_describe_of_several_groups_shows_one_table_per_section_with_a_row_per_group(cluster):
    result = run("--bootstrap", cluster, "group", "describe", "--group", "billing", "--group", "archive")

    assert result.exit_code == 0, result.output
    assert [row[0] for row in section(result.stdout, "COORDINATOR")] == ["GROUP", "billing", "archive"]
    assert section(result.stdout, "TOPIC") == [
        ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"],
        ["billing", "orders", "0", "2", "5", "3", "-", "-", "-"],
        ["billing", "orders", "1", "3", "3", "0", "-", "-", "-"],
        ["archive", "audit", "0", "2", "2", "0", "-", "-", "-"]]
    assert ["Consumer", "group", "'archive'", "has", "no", "active", "members."] in rows(result.stdout)


def test_describe_json_of_group_options_is_a_list_of_the_single_group_objects_even_for_one(cluster):
    single = json.loads(run("--bootstrap", cluster, "--output", "json", "group", "describe", "billing").stdout)
    one = json.loads(run("--bootstrap", cluster, "--output", "json", "group", "describe", "--group", "billing").stdout)
    two = json.loads(run("--bootstrap", cluster, "--output", "json", "group", "describe", "billing",
                         "--group", "archive").stdout)

    assert isinstance(single, dict) and one == [single]
    assert [d["group"] for d in two] == ["billing", "archive"] and two[0] == single


def test_describe_all_groups_describes_every_group_by_name(cluster):
    described = json.loads(run("--bootstrap", cluster, "--output", "json", "group", "describe",
                               "--all-groups").stdout)

    assert [d["group"] for d in described] == ["archive", "billing", "shipping"]
    assert [(o["topic"], o["partition"], o["committed_offset"]) for o in described[1]["offsets"]] == [
        ("orders", 0, 2), ("orders", 1, 3)]


def test_a_group_that_does_not_exist_among_several_is_one_error_line_the_others_shown_and_exit_1(cluster):
    table = run("--bootstrap", cluster, "group", "describe", "--group", "billing", "--group", "ghost",
                "--group", "archive", "--state")
    as_json = run("--bootstrap", cluster, "--output", "json", "group", "describe", "--group", "ghost",
                  "--group", "billing")

    assert table.exit_code == 1
    assert [row[0] for row in rows(table.stdout)] == ["GROUP", "billing", "archive"]
    assert table.stderr.splitlines() == ["groupctl: error: group 'ghost' does not exist"]
    assert as_json.exit_code == 1 and [d["group"] for d in json.loads(as_json.stdout)] == ["billing"]
    assert as_json.stderr.splitlines() == ["groupctl: error: group 'ghost' does not exist"]


def test_describe_only_with_lag_keeps_the_partitions_whose_lag_is_above_0_in_the_table_and_in_json(cluster):
    table = run("--bootstrap", cluster, "group", "describe", "--all-groups", "--offsets", "--only-with-lag")
    described = json.loads(run("--bootstrap", cluster, "--output", "json", "group", "describe", "--all-groups",
                               "--only-with-lag").stdout)

    # billing's orders:1 has caught up, archive's audit:0 too, shipping's orders:0 is past the log end.
    assert rows(table.stdout)[1:] == [["billing", "orders", "0", "2", "5", "3", "-", "-", "-"]]
    assert [(d["group"], [(o["topic"], o["partition"]) for o in d["offsets"]]) for d in described] == [
        ("archive", []), ("billing", [("orders", 0)]), ("shipping", [])]


def test_only_with_lag_keeps_a_partition_whose_lag_is_unknown(monkeypatch):
    unknown = GroupDescription("g", "Empty", "consumer", "range", None, Node(0, "h", 1), (),
                               (PartitionOffsets("t", 0, None, 9), PartitionOffsets("t", 1, 2, None),
                                PartitionOffsets("t", 2, 1, 9), PartitionOffsets("t", 3, 9, 9)))
    monkeypatch.setattr("groupctl.ops.groups.describe_group", lambda bootstrap, group, *, include_offsets, include_configs: unknown)

    document = json.loads(run("--bootstrap", "h:1", "--output", "json", "group", "describe", "g",
                              "--only-with-lag").stdout)

    assert [o["partition"] for o in document["offsets"]] == [0, 1, 2]


# -- list ----------------------------------------------------------------------------------------


def test_group_list_takes_states_and_types_as_comma_lists_in_any_case(cluster):
    def listed(*args: str) -> list[str]:
        result = run("--bootstrap", cluster, "--output", "json", "group", "list", *args)
        assert result.exit_code == 0, result.output
        return [g["group"] for g in json.loads(result.stdout)]

    assert listed("--state", "stable,EMPTY") == ["archive", "billing", "shipping"]
    assert listed("--state", "Stable, PreparingRebalance") == []
    assert listed("--type", "CONSUMER,classic") == ["archive", "billing", "shipping"]
    assert listed("--type", "consumer") == []


def test_group_list_topic_lists_only_the_groups_with_committed_offsets_on_the_topic(cluster):
    table = run("--bootstrap", cluster, "group", "list", "--topic", "orders")
    either = json.loads(run("--bootstrap", cluster, "--output", "json", "group", "list", "--topic", "audit",
                            "--topic", "orders").stdout)
    none = json.loads(run("--bootstrap", cluster, "--output", "json", "group", "list", "--topic", "nothing").stdout)

    assert [row[0] for row in rows(table.stdout)] == ["GROUP", "billing", "shipping"]
    assert [g["group"] for g in either] == ["archive", "billing", "shipping"]
    assert list(either[0]) == ["group", "state", "protocol_type", "group_type", "coordinator"]
    assert none == []


# -- delete --------------------------------------------------------------------------------------


def test_delete_takes_group_options_beside_positional_groups(cluster):
    result = run("--bootstrap", cluster, "group", "delete", "billing", "--group", "ghost", "--group", "archive")

    assert result.exit_code == 1
    assert result.stdout.splitlines() == ["deleted group billing", "deleted group archive"]
    assert result.stderr.splitlines() == ["groupctl: error: group 'ghost' does not exist"]


def test_delete_all_groups_with_force_deletes_every_group_without_members(cluster):
    result = run("--bootstrap", cluster, "--output", "json", "group", "delete", "--all-groups", "--force")
    again = run("--bootstrap", cluster, "group", "delete", "--all-groups", "--force")

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"group": g, "deleted": True, "error": None}
                                         for g in ("archive", "billing", "shipping")]
    assert (again.exit_code, again.stdout, again.stderr) == (0, "", "")
    assert json.loads(run("--bootstrap", cluster, "--output", "json", "group", "list").stdout) == []
