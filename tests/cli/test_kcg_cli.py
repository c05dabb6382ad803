"""`groupctl kafka-consumer-groups ARGS...`: kafka-consumer-groups.sh command lines run as the
groupctl commands that do the same, against a real in-process coordinator (the translation
itself: tests/unit/test_kcg_translation.py)."""

from __future__ import annotations

import json

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata, TopicPartition
from typer.testing import CliRunner

from groupctl.cli.app import app
from tests.support.cli import assert_one_line_error


def run(*args: str):
    return CliRunner().invoke(app, list(args), env={"GROUPCTL_BOOTSTRAP": None, "GROUPCTL_ZK": None},
                              catch_exceptions=False)


@pytest.fixture
def cluster(coordinator):
    """Topic orders (2 partitions, 5 and 3 records); groups billing (orders:0=2, orders:1=3) and
    archive (orders:0=5), committed with kafka-python's admin client, without members."""
    bootstrap = coordinator.bootstrap
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic("orders", 2, 1)])
        for future in [producer.send("orders", b"r", partition=p) for p, n in ((0, 5), (1, 3)) for _ in range(n)]:
            future.get(timeout=10)
        for group, offsets in {"billing": {0: 2, 1: 3}, "archive": {0: 5}}.items():
            admin.alter_group_offsets(group, {TopicPartition("orders", p): OffsetAndMetadata(o, "", -1)
                                              for p, o in offsets.items()})
    finally:
        producer.close()
        admin.close()
    return bootstrap


def test_describe_shows_kcgs_default_offsets_table(cluster):
    result = run("kafka-consumer-groups", "--bootstrap-server", cluster, "--describe", "--group", "billing")
    assert result.exit_code == 0, result.output
    lines = [line.split() for line in result.stdout.splitlines() if line.strip()]
    assert lines[0][:6] == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG"]
    assert [row[:6] for row in lines[1:]] == [["billing", "orders", "0", "2", "5", "3"],
                                              ["billing", "orders", "1", "3", "3", "0"]]


def test_global_options_before_it_apply_and_the_script_name_works_too(cluster):
    result = run("-o", "json", "kafka-consumer-groups.sh", "--bootstrap-server", cluster, "--list")
    assert result.exit_code == 0, result.output
    assert [g["group"] for g in json.loads(result.stdout)] == ["archive", "billing"]


def test_reset_offsets_is_a_dry_run_unless_execute_as_in_kcg(cluster):
    base = ["kafka-consumer-groups", "--bootstrap-server", cluster, "--reset-offsets", "--all-groups",
            "--topic", "orders:0", "--to-earliest"]
    assert run(*base).exit_code == 0
    committed = json.loads(run("-o", "json", "offsets", "show", "--bootstrap", cluster, "--all-groups").stdout)
    assert {g["group"]: g["offsets"][0]["committed_offset"] for g in committed} == {"archive": 5, "billing": 2}
    assert run(*base, "--execute").exit_code == 0
    committed = json.loads(run("-o", "json", "offsets", "show", "--bootstrap", cluster, "--all-groups").stdout)
    assert {g["group"]: g["offsets"][0]["committed_offset"] for g in committed} == {"archive": 0, "billing": 0}


def test_print_shows_the_groupctl_command_without_contacting_anything():
    result = run("kafka-consumer-groups", "--bootstrap-server", "127.0.0.1:9", "--delete-offsets", "--group", "g",
                 "--topic", "orders", "--print")
    assert result.exit_code == 0
    assert result.stdout == "groupctl --bootstrap 127.0.0.1:9 offsets delete g --topic orders\n"


def test_a_line_kcg_refuses_is_one_line_and_exit_2():
    assert_one_line_error(run("kafka-consumer-groups", "--bootstrap-server", "127.0.0.1:9", "--describe",
                              "--group", "g", "--members", "--state"), 2, "at most one of")
