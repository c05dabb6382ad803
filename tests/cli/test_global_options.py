"""The global options kafka-consumer-groups.sh users type: `-o` for `--output`, and `--timeout MS`
(before or after the command, or GROUPCTL_TIMEOUT_MS), which watches with a `--timeout SECONDS`
of their own keep for how long they watch."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from groupctl.cli.app import app
from groupctl.client.kafka import Node
from groupctl.ops.groups import GroupListing
from tests.support.cli import assert_one_line_error
from tests.support.ports import closed_port


def run(args: list[str], env: dict | None = None, tmp_path=None):
    base = {"GROUPCTL_BOOTSTRAP": None, "GROUPCTL_ZK": None, "GROUPCTL_TIMEOUT_MS": None, "GROUPCTL_CONTEXT": None}
    if tmp_path is not None:
        base["XDG_CONFIG_HOME"] = str(tmp_path)  # no contexts
    return CliRunner().invoke(app, args, env={**base, **(env or {})}, catch_exceptions=False)


@pytest.fixture
def listing(monkeypatch):
    seen = []

    def fake(bootstrap, states=(), types=(), *args, **kwargs):
        seen.append(bootstrap)
        return (GroupListing("orders", "Stable", "consumer", Node(0, "127.0.0.1", 9092), "classic"),)

    monkeypatch.setattr("groupctl.ops.groups.list_groups", fake)
    return seen


@pytest.mark.parametrize("args", [["-o", "json", "--bootstrap", "h:1", "group", "list"],
                                  ["--bootstrap", "h:1", "group", "list", "-o", "json"]])
def test_o_is_output_before_and_after_the_command(listing, tmp_path, args):
    result = run(args, tmp_path=tmp_path)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["group"] == "orders"


@pytest.mark.parametrize("args, env", [
    (["--timeout", "2500", "--bootstrap", "h:1", "group", "list"], None),
    (["--bootstrap", "h:1", "group", "list", "--timeout", "2500"], None),
    (["--bootstrap", "h:1", "group", "list"], {"GROUPCTL_TIMEOUT_MS": "2500"}),
    (["--timeout", "9000", "--bootstrap", "h:1", "group", "list", "--timeout", "2500"], {"GROUPCTL_TIMEOUT_MS": "1"}),
])
def test_the_timeout_reaches_the_kafka_client_from_any_place(listing, tmp_path, args, env):
    assert run(args, env, tmp_path=tmp_path).exit_code == 0
    assert listing[0].timeout_s == 2.5


def test_without_a_timeout_the_clients_keep_their_defaults(listing, tmp_path):
    assert run(["--bootstrap", "h:1", "group", "list"], tmp_path=tmp_path).exit_code == 0
    assert listing[0].timeout_s is None


@pytest.mark.parametrize("args, env", [
    (["--timeout", "0", "group", "list"], None),
    (["--timeout", "1.5", "group", "list"], None),
    (["--timeout", "soon", "group", "list"], None),
    (["group", "list", "--timeout", "-1"], None),
    (["group", "list"], {"GROUPCTL_TIMEOUT_MS": "5s"}),
    (["--timeout", "0", "zk", "ls", "/"], None),
])
def test_a_bad_timeout_is_one_line_exit_2_before_anything_is_contacted(tmp_path, args, env):
    unreachable = {"GROUPCTL_BOOTSTRAP": f"127.0.0.1:{closed_port()}", "GROUPCTL_ZK": f"127.0.0.1:{closed_port()}"}
    assert_one_line_error(run(args, {**unreachable, **(env or {})}, tmp_path=tmp_path), 2,
                          "--timeout", "not a positive whole number of milliseconds")


@pytest.mark.parametrize("command", [["rebalance", "watch", "g"], ["zk", "watch", "g"]])
def test_a_watch_keeps_its_own_timeout_in_seconds(tmp_path, command):
    """`--timeout 2.5` after a watch is its duration in seconds (as before): accepted, not read as
    milliseconds; the closed ports then fail it as unreachable, exit 1."""
    sources = ["--bootstrap", f"127.0.0.1:{closed_port()}"] if command[0] == "rebalance" else \
        ["--zk", f"127.0.0.1:{closed_port()}"]
    assert_one_line_error(run([*sources, *command, "--timeout", "2.5"], tmp_path=tmp_path), 1, "127.0.0.1")


def test_the_global_timeout_before_a_watch_bounds_its_network_waits(tmp_path):
    port = closed_port()
    result = run(["--timeout", "1500", "--bootstrap", f"127.0.0.1:{port}", "rebalance", "watch", "g",
                  "--timeout", "30"], tmp_path=tmp_path)
    assert_one_line_error(result, 1, f"cannot reach bootstrap 127.0.0.1:{port} within 1.5s")


def test_watch_help_says_which_timeout_is_which():
    for command in (["rebalance", "watch"], ["zk", "watch"]):
        help_text = " ".join(run([*command, "--help"]).stdout.split())
        assert "how long to watch" in help_text and "in milliseconds" in help_text
