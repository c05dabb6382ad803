"""`groupctl group config show|set|delete` and `group describe --configs` through CliRunner
against an in-process node: the group's configs as the node describes them after each command,
text and JSON, and the node's refusals as one error line."""

from __future__ import annotations

import json

import pytest
from kafka import KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.structs import OffsetAndMetadata
from typer.testing import CliRunner

from groupctl.cli.app import app
from groupctl.coordinator.consumer.config import ConsumerGroupConfig
from tests.support.cli import assert_one_line_error
from tests.support.coordinator import InProcessCoordinator, node_config


@pytest.fixture
def node():
    running = InProcessCoordinator(node_config(consumer_groups=ConsumerGroupConfig(min_session_timeout_ms=10_000))
                                   ).start()
    yield running
    running.stop()


def run(node, *args: str):
    return CliRunner().invoke(app, ["--bootstrap", node.bootstrap, *args],
                              env={"GROUPCTL_BOOTSTRAP": None, "GROUPCTL_ZK": None}, catch_exceptions=False)


def configs(result) -> dict[str, tuple[str, str]]:
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    return {c["name"]: (c["value"], c["source"]) for c in document["configs"]}


def test_show_gives_a_group_without_configs_the_brokers_values(node):
    shown = run(node, "--output", "json", "group", "config", "show", "billing")
    assert json.loads(shown.stdout)["group"] == "billing"
    assert configs(shown) == {"consumer.session.timeout.ms": ("45000", "DEFAULT_CONFIG"),
                              "consumer.heartbeat.interval.ms": ("5000", "DEFAULT_CONFIG")}
    table = run(node, "group", "config", "show", "billing")
    assert table.stdout.splitlines()[0].split() == ["NAME", "VALUE", "SOURCE"]
    assert table.stdout.splitlines()[1].split() == ["consumer.session.timeout.ms", "45000", "DEFAULT_CONFIG"]


def test_set_then_delete_change_the_stored_group_configs(node):
    assert configs(run(node, "--output", "json", "group", "config", "set", "billing",
                       "consumer.session.timeout.ms=20000", "consumer.heartbeat.interval.ms=6000")) == {
        "consumer.session.timeout.ms": ("20000", "GROUP_CONFIG"),
        "consumer.heartbeat.interval.ms": ("6000", "GROUP_CONFIG")}
    assert node.node.configs.stored.groups["billing"] == {"consumer.session.timeout.ms": "20000",
                                                          "consumer.heartbeat.interval.ms": "6000"}
    assert configs(run(node, "--output", "json", "group", "config", "delete", "billing",
                       "consumer.heartbeat.interval.ms")) == {
        "consumer.session.timeout.ms": ("20000", "GROUP_CONFIG"),
        "consumer.heartbeat.interval.ms": ("5000", "DEFAULT_CONFIG")}


def test_a_value_outside_the_brokers_bounds_is_refused_whole_with_kafkas_message(node):
    refused = run(node, "group", "config", "set", "billing", "consumer.heartbeat.interval.ms=6000",
                  "consumer.session.timeout.ms=9000")
    assert_one_line_error(refused, 1, "INVALID_CONFIG", "consumer.session.timeout.ms must be greater than or equal "
                                      "to group.consumer.min.session.timeout.ms")
    assert "billing" not in node.node.configs.stored.groups


def test_an_argument_that_is_not_key_value_is_a_usage_error(node):
    assert_one_line_error(run(node, "group", "config", "set", "billing", "consumer.session.timeout.ms"), 2,
                          "expected key=value")


def test_group_describe_shows_the_configs_with_the_flag_and_always_in_json(node):
    admin = KafkaAdminClient(bootstrap_servers=node.bootstrap)
    admin.create_topics([NewTopic("invoices", 1, 1)])
    admin.close()
    consumer = KafkaConsumer(bootstrap_servers=node.bootstrap, group_id="billing", enable_auto_commit=False)
    consumer.commit({TopicPartition("invoices", 0): OffsetAndMetadata(3, "", -1)})  # an Empty group with offsets
    consumer.close()
    run(node, "group", "config", "set", "billing", "consumer.session.timeout.ms=20000")
    table = run(node, "group", "describe", "billing", "--configs")
    assert table.exit_code == 0, table.output
    assert [line.split() for line in table.stdout.splitlines()] == [
        ["GROUP", "NAME", "VALUE", "SOURCE"],
        ["billing", "consumer.session.timeout.ms", "20000", "GROUP_CONFIG"],
        ["billing", "consumer.heartbeat.interval.ms", "5000", "DEFAULT_CONFIG"]]
    assert "consumer.session.timeout.ms" not in run(node, "group", "describe", "billing").stdout
    document = json.loads(run(node, "--output", "json", "group", "describe", "billing").stdout)
    assert document["configs"][0] == {"name": "consumer.session.timeout.ms", "value": "20000", "source": "GROUP_CONFIG"}
