"""`groupctl user add|remove|list` through CliRunner: against an in-process node (--bootstrap)
and directly against a real ZooKeeper (--zk, before any node runs). Passwords come from stdin
and never appear in any output."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from groupctl.cli.app import app
from groupctl.layout.credentials import decode_credentials
from groupctl.layout.paths import user_path
from groupctl.security.scram import password_matches
from tests.support.cli import assert_one_line_error
from tests.support.coordinator import InProcessCoordinator, node_config

PASSWORD = "p4ss-W0rd-never-shown"


def run(args: list[str], stdin: str | None = None):
    result = CliRunner().invoke(app, args, input=stdin, env={"GROUPCTL_BOOTSTRAP": None, "GROUPCTL_ZK": None},
                                catch_exceptions=False)
    assert PASSWORD not in result.output
    return result


def stored(coordinator, user):
    node = coordinator.call(coordinator.node.store.get(user_path(user)))
    return decode_credentials(user, node.data) if node is not None else None


# -- through a node ---------------------------------------------------------------------------


def test_add_list_and_remove_through_a_node(coordinator):
    boot = ["--bootstrap", coordinator.bootstrap]
    added = run([*boot, "user", "add", "alice", "--password-stdin"], stdin=PASSWORD + "\n")
    assert added.exit_code == 0, added.output
    assert added.stdout.strip() == "SCRAM-SHA-256 credential of user alice set (4096 iterations) via bootstrap"
    assert password_matches(stored(coordinator, "alice")["SCRAM-SHA-256"], PASSWORD)

    run([*boot, "user", "add", "alice", "--mechanism", "scram-sha-512", "--iterations", "8192",
         "--password-stdin"], stdin=PASSWORD)
    run([*boot, "user", "add", "bob", "--password-stdin"], stdin="bob-pw\n")
    listed = run([*boot, "user", "list"])
    assert listed.stdout.split("\n")[0].split() == ["USER", "MECHANISM", "ITERATIONS"]
    assert [line.split() for line in listed.stdout.splitlines()[1:]] == [
        ["alice", "SCRAM-SHA-256", "4096"], ["alice", "SCRAM-SHA-512", "8192"], ["bob", "SCRAM-SHA-256", "4096"]]
    as_json = json.loads(run([*boot, "--output", "json", "user", "list", "bob"]).stdout)
    assert as_json == [{"user": "bob", "credentials": [{"mechanism": "SCRAM-SHA-256", "iterations": 4096}]}]

    removed = run([*boot, "user", "remove", "alice", "--mechanism", "SCRAM-SHA-256"])
    assert removed.stdout.strip() == "removed the SCRAM-SHA-256 credential(s) of user alice via bootstrap"
    assert list(stored(coordinator, "alice")) == ["SCRAM-SHA-512"]
    removed_all = json.loads(run([*boot, "user", "remove", "bob", "--output", "json"]).stdout)
    assert removed_all == {"user": "bob", "source": "bootstrap", "added": None, "removed": ["SCRAM-SHA-256"]}
    assert stored(coordinator, "bob") is None


def test_unknown_users_fail_with_one_line_and_exit_1(coordinator):
    boot = ["--bootstrap", coordinator.bootstrap]
    assert_one_line_error(run([*boot, "user", "list", "nobody"]), 1, "nobody", "no SCRAM credentials")
    assert_one_line_error(run([*boot, "user", "remove", "nobody"]), 1, "nobody")
    run([*boot, "user", "add", "carol", "--password-stdin"], stdin="x\n")
    assert_one_line_error(run([*boot, "user", "remove", "carol", "--mechanism", "SCRAM-SHA-512"]), 1,
                          "carol", "RESOURCE_NOT_FOUND")


@pytest.mark.parametrize("args, stdin, fragment", [
    (["alice"], "", "--password-stdin"),  # stdin is not a terminal: no prompt
    (["alice", "--password-stdin"], "\n", "must not be empty"),
    (["alice", "--password-stdin"], "two\nlines\n", "one line"),
    (["alice", "--password-stdin", "--iterations", "100"], PASSWORD, "4096..16384"),
    (["alice", "--password-stdin", "--mechanism", "PLAIN"], PASSWORD, "PLAIN"),
    (["", "--password-stdin"], PASSWORD, "must not be empty"),
    (["alice", "hunter2"], "", "unexpected extra argument"),  # never a command-line argument
])
def test_bad_input_to_add_is_a_usage_error_before_anything_is_contacted(args, stdin, fragment):
    # A closed port: contacting anything would be exit 1, not 2.
    result = run(["--bootstrap", "127.0.0.1:1", "user", "add", *args], stdin=stdin)
    assert result.exit_code == 2, result.output
    assert fragment in result.stderr and "Traceback" not in result.output


def test_user_commands_need_a_source():
    assert_one_line_error(run(["user", "list"]), 2, "--bootstrap", "--zk")


# -- directly in ZooKeeper --------------------------------------------------------------------


@pytest.mark.zookeeper
def test_the_first_user_added_with_zk_before_a_node_starts_is_the_nodes(zk_connect, tmp_path):
    zk = ["--zk", zk_connect]
    added = run([*zk, "user", "add", "admin", "--password-stdin"], stdin=PASSWORD + "\n")
    assert added.exit_code == 0, added.output
    assert added.stdout.strip() == "SCRAM-SHA-256 credential of user admin set (4096 iterations) via zk"
    run([*zk, "user", "add", "admin", "--mechanism", "SCRAM-SHA-512", "--password-stdin"], stdin=PASSWORD)
    assert json.loads(run([*zk, "user", "list", "--output", "json"]).stdout) == [
        {"user": "admin", "credentials": [{"mechanism": "SCRAM-SHA-256", "iterations": 4096},
                                          {"mechanism": "SCRAM-SHA-512", "iterations": 4096}]}]

    node = InProcessCoordinator(node_config(zk=zk_connect, data_dir=tmp_path / "data")).start()
    try:
        creds = stored(node, "admin")
        assert password_matches(creds["SCRAM-SHA-256"], PASSWORD) and password_matches(creds["SCRAM-SHA-512"], PASSWORD)
        listed = run(["--bootstrap", node.bootstrap, "user", "list", "admin"])
        assert [line.split() for line in listed.stdout.splitlines()[1:]] == [
            ["admin", "SCRAM-SHA-256", "4096"], ["admin", "SCRAM-SHA-512", "4096"]]
    finally:
        node.stop()

    removed = run([*zk, "user", "remove", "admin"])
    assert removed.stdout.strip() == "removed the SCRAM-SHA-256, SCRAM-SHA-512 credential(s) of user admin via zk"
    assert run([*zk, "user", "list", "--output", "json"]).stdout.strip() == "[]"
    assert_one_line_error(run([*zk, "user", "remove", "admin"]), 1, "admin", "no SCRAM credentials")
    assert_one_line_error(run([*zk, "user", "list", "admin"]), 1, "admin")
