"""`groupctl config ...` and the global `--context`, in-process, in a temporary XDG_CONFIG_HOME:
storing and choosing contexts, precedence (option, then environment, then context), and the
one-line exit-2 failures of an unknown context or a malformed file.

Commands that would reach a cluster point at closed ports: the one-line failure names the
address (and the time bound) the command used, which is what precedence decides.
"""

from __future__ import annotations

import json
import stat

import pytest
from typer.testing import CliRunner

from groupctl.cli.app import app
from tests.support.cli import assert_one_line_error
from tests.support.ports import closed_port

CLEARED = ("GROUPCTL_BOOTSTRAP", "GROUPCTL_ZK", "GROUPCTL_CONTEXT", "GROUPCTL_TIMEOUT_MS", "GROUPCTL_COMMAND_CONFIG",
           "GROUPCTL_ZK_AUTH")


@pytest.fixture
def config_home(tmp_path):
    return tmp_path / "xdg"


@pytest.fixture
def run(config_home, tmp_path):
    """Run groupctl with its config under `config_home` and no GROUPCTL_* variables but `env`'s."""

    def invoke(*args: str, env: dict | None = None):
        variables = {name: None for name in CLEARED}
        variables.update({"XDG_CONFIG_HOME": str(config_home), "HOME": str(tmp_path / "home"), **(env or {})})
        return CliRunner().invoke(app, list(args), env=variables, catch_exceptions=False)

    return invoke


def ok(result):
    assert result.exit_code == 0, (result.exit_code, result.stdout, result.stderr)
    return result


def config_file(config_home):
    return config_home / "groupctl" / "config.toml"


# -- storing ----------------------------------------------------------------------------------


def test_set_use_get_and_delete_contexts(run, config_home):
    assert ok(run("config", "set-context", "local", "--bootstrap", "127.0.0.1:9092")).stdout == \
        "context 'local' created\n"
    ok(run("config", "set-context", "prod", "--bootstrap", "kafka:9092", "--zk", "zk:2181/groupctl",
           "--timeout", "5000"))
    assert ok(run("config", "use-context", "prod")).stdout == "switched to context 'prod'\n"
    assert ok(run("config", "current-context")).stdout == "prod\n"
    rows = [line.split() for line in ok(run("config", "get-contexts")).stdout.splitlines()]
    assert rows == [["CURRENT", "NAME", "BOOTSTRAP", "ZK", "COMMAND-CONFIG", "ZK-AUTH", "TIMEOUT-MS"],
                    ["local", "127.0.0.1:9092", "-", "-", "-", "-"],
                    ["*", "prod", "kafka:9092", "zk:2181/groupctl", "-", "-", "5000"]]
    assert ok(run("config", "delete-context", "prod")).stdout == "context 'prod' deleted; no context is current now\n"
    assert json.loads(ok(run("--output", "json", "config", "get-contexts")).stdout) == [
        {"name": "local", "current": False, "bootstrap": "127.0.0.1:9092", "zk": None, "command_config": None,
         "zk_auth_set": False, "timeout_ms": None}]
    assert_one_line_error(run("config", "current-context"), 1, "no current context is set")


def test_the_file_is_created_0600_in_a_0700_directory(run, config_home):
    ok(run("config", "set-context", "prod", "--zk-auth", "digest:ops:hunter2"))
    assert stat.S_IMODE(config_file(config_home).stat().st_mode) == 0o600
    assert stat.S_IMODE(config_file(config_home).parent.stat().st_mode) == 0o700


def test_set_context_changes_only_what_is_given_and_unsets_what_is_named(run, config_home):
    ok(run("config", "set-context", "prod", "--bootstrap", "kafka:9092", "--zk", "zk:2181", "--timeout", "5000"))
    assert ok(run("config", "set-context", "prod", "--zk", "zk2:2181", "--unset", "timeout")).stdout == \
        "context 'prod' modified\n"
    [context] = json.loads(ok(run("config", "get-contexts", "-o", "json")).stdout)
    assert (context["bootstrap"], context["zk"], context["timeout_ms"]) == ("kafka:9092", "zk2:2181", None)
    assert_one_line_error(run("config", "set-context", "prod", "--unset", "colour"), 2, "--unset 'colour'")


def test_set_context_stores_its_own_options_only_never_the_environment(run):
    ok(run("config", "set-context", "prod", "--zk", "zk:2181", env={"GROUPCTL_BOOTSTRAP": "env:9092"}))
    [context] = json.loads(ok(run("config", "get-contexts", "-o", "json")).stdout)
    assert context["bootstrap"] is None


def test_a_relative_command_config_is_stored_absolute(run, tmp_path, monkeypatch):
    (tmp_path / "client.properties").write_text("security.protocol=PLAINTEXT\n")
    monkeypatch.chdir(tmp_path)
    ok(run("config", "set-context", "prod", "--command-config", "client.properties"))
    [context] = json.loads(ok(run("config", "get-contexts", "-o", "json")).stdout)
    assert context["command_config"] == str(tmp_path / "client.properties")


def test_zookeeper_credentials_are_never_printed(run, config_home):
    ok(run("config", "set-context", "prod", "--zk-auth", "digest:ops:hunter2"))
    table, document = run("config", "get-contexts"), run("config", "get-contexts", "--output", "json")
    assert "hunter2" not in table.output + document.output
    assert table.stdout.splitlines()[1].split()[-2] == "set"
    assert json.loads(document.stdout)[0]["zk_auth_set"] is True


def test_without_a_file_get_contexts_says_how_to_add_one(run, config_home):
    result = ok(run("config", "get-contexts"))
    assert result.stdout == "" and "set-context" in result.stderr
    assert json.loads(ok(run("-o", "json", "config", "get-contexts")).stdout) == []


# -- choosing and precedence ------------------------------------------------------------------


def test_the_current_context_supplies_the_bootstrap(run):
    port = closed_port()
    ok(run("config", "set-context", "local", "--bootstrap", f"127.0.0.1:{port}"))
    ok(run("config", "use-context", "local"))
    assert_one_line_error(run("group", "list"), 1, f"cannot reach bootstrap 127.0.0.1:{port}")


def test_the_option_wins_over_the_environment_which_wins_over_the_context(run):
    from_context, from_env, from_option = closed_port(), closed_port(), closed_port()
    ok(run("config", "set-context", "local", "--bootstrap", f"127.0.0.1:{from_context}"))
    ok(run("config", "use-context", "local"))
    env = {"GROUPCTL_BOOTSTRAP": f"127.0.0.1:{from_env}"}
    assert_one_line_error(run("group", "list", env=env), 1, f"127.0.0.1:{from_env}")
    assert_one_line_error(run("--bootstrap", f"127.0.0.1:{from_option}", "group", "list", env=env), 1,
                          f"127.0.0.1:{from_option}")
    assert_one_line_error(run("group", "list", "--bootstrap", f"127.0.0.1:{from_option}", env=env), 1,
                          f"127.0.0.1:{from_option}")


def test_each_setting_is_chosen_on_its_own(run):
    port = closed_port()
    ok(run("config", "set-context", "local", "--bootstrap", "127.0.0.1:1", "--timeout", "1500"))
    # the option gives the bootstrap, the context still gives the timeout
    assert_one_line_error(run("--context", "local", "--bootstrap", f"127.0.0.1:{port}", "group", "list"), 1,
                          f"cannot reach bootstrap 127.0.0.1:{port} within 1.5s")
    assert_one_line_error(run("--context", "local", "--timeout", "2500", "--bootstrap", f"127.0.0.1:{port}",
                              "group", "list"), 1, "within 2.5s")
    assert_one_line_error(run("--context", "local", "--bootstrap", f"127.0.0.1:{port}", "group", "list",
                              env={"GROUPCTL_TIMEOUT_MS": "3500"}), 1, "within 3.5s")


def test_context_and_groupctl_context_choose_over_the_current_context(run):
    current, chosen = closed_port(), closed_port()
    ok(run("config", "set-context", "a", "--bootstrap", f"127.0.0.1:{current}"))
    ok(run("config", "set-context", "b", "--bootstrap", f"127.0.0.1:{chosen}"))
    ok(run("config", "use-context", "a"))
    assert_one_line_error(run("--context", "b", "group", "list"), 1, f"127.0.0.1:{chosen}")
    assert_one_line_error(run("group", "list", "--context", "b"), 1, f"127.0.0.1:{chosen}")
    assert_one_line_error(run("group", "list", env={"GROUPCTL_CONTEXT": "b"}), 1, f"127.0.0.1:{chosen}")
    assert_one_line_error(run("--context", "a", "group", "list", env={"GROUPCTL_CONTEXT": "b"}), 1,
                          f"127.0.0.1:{current}")


def test_a_contexts_command_config_is_read_with_its_timeouts(run, tmp_path):
    port = closed_port()
    (tmp_path / "client.properties").write_text("request.timeout.ms=1500\n")
    ok(run("config", "set-context", "local", "--bootstrap", f"127.0.0.1:{port}",
           "--command-config", str(tmp_path / "client.properties")))
    assert_one_line_error(run("--context", "local", "group", "list"), 1, "within 1.5s")
    (tmp_path / "client.properties").write_text("fetch.max.bytes=1\n")
    assert_one_line_error(run("--context", "local", "group", "list"), 2,
                          "unsupported client property 'fetch.max.bytes'")


def test_a_contexts_command_config_goes_to_its_own_bootstrap_only(run, tmp_path):
    own, other = closed_port(), closed_port()
    (tmp_path / "client.properties").write_text("fetch.max.bytes=1\n")  # refused whenever it is read
    ok(run("config", "set-context", "prod", "--bootstrap", f"127.0.0.1:{own}",
           "--command-config", str(tmp_path / "client.properties")))
    ok(run("config", "use-context", "prod"))
    assert_one_line_error(run("group", "list"), 2, "fetch.max.bytes")
    assert_one_line_error(run("--bootstrap", f"127.0.0.1:{own}", "group", "list"), 2, "fetch.max.bytes")
    # another cluster, named on the command line, in the environment or in a K-CG line: no credentials
    assert_one_line_error(run("--bootstrap", f"127.0.0.1:{other}", "group", "list"), 1, f"127.0.0.1:{other}")
    assert_one_line_error(run("group", "list", env={"GROUPCTL_BOOTSTRAP": f"127.0.0.1:{other}"}), 1,
                          f"127.0.0.1:{other}")
    assert_one_line_error(run("kafka-consumer-groups", "--bootstrap-server", f"127.0.0.1:{other}", "--list"), 1,
                          f"127.0.0.1:{other}")


def test_a_contexts_zookeeper_credentials_go_to_its_own_zookeeper_only():
    from groupctl.cli.context import CliEnv
    from groupctl.ops.contexts import Context

    current = CliEnv()
    current._context = Context("prod", zk="zk.prod:2181", zk_auth="digest:ops:pw")
    assert current.zk_auth == "digest:ops:pw"
    current.give(zk="zk.staging:2181")
    assert (current.zk, current.zk_auth) == ("zk.staging:2181", None)


def test_a_contexts_zookeeper_settings_reach_coordinator_run(run, monkeypatch, tmp_path):
    seen = {}
    monkeypatch.setattr("groupctl.server.main.run_node", lambda config, log_level: seen.update(config=config))
    ok(run("config", "set-context", "local", "--zk", "127.0.0.1:2181/from-context", "--zk-auth", "digest:ops:pw"))
    ok(run("--context", "local", "coordinator", "run", "--port", "0", "--data-dir", str(tmp_path / "data")))
    assert seen["config"].zk == "127.0.0.1:2181/from-context"
    assert seen["config"].zk_auth == "digest:ops:pw"
    ok(run("--context", "local", "coordinator", "run", "--port", "0", "--zk", "127.0.0.1:2181/own"))
    assert seen["config"].zk == "127.0.0.1:2181/own"


def test_the_current_context_alone_does_not_make_coordinator_run_join_its_zookeeper(run, monkeypatch, tmp_path):
    seen = {}
    monkeypatch.setattr("groupctl.server.main.run_node", lambda config, log_level: seen.update(config=config))
    ok(run("config", "set-context", "prod", "--zk", "zk.prod:2181", "--zk-auth", "digest:ops:pw"))
    ok(run("config", "use-context", "prod"))
    ok(run("coordinator", "run", "--port", "0", "--data-dir", str(tmp_path / "data")))
    assert (seen["config"].zk, seen["config"].zk_auth) == (None, None)  # embedded, as `make run` promises


def test_a_contexts_zk_reaches_zookeeper_commands(run):
    port = closed_port()
    ok(run("config", "set-context", "local", "--zk", f"127.0.0.1:{port}", "--timeout", "1000"))
    assert_one_line_error(run("--context", "local", "zk", "ls", "/"), 1,
                          f"cannot reach ZooKeeper at 127.0.0.1:{port} within 1s")


# -- failures ---------------------------------------------------------------------------------


def test_an_unknown_context_is_one_line_exit_2_naming_the_known_ones(run):
    ok(run("config", "set-context", "prod", "--bootstrap", "kafka:9092"))
    ok(run("config", "set-context", "dev", "--bootstrap", "dev:9092"))
    for args, env in [(("--context", "stage", "group", "list"), None),
                      (("group", "list", "--context", "stage"), None),
                      (("group", "list"), {"GROUPCTL_CONTEXT": "stage"}),
                      (("--context", "stage", "--bootstrap", f"127.0.0.1:{closed_port()}", "group", "list"), None),
                      (("config", "use-context", "stage"), None),
                      (("config", "delete-context", "stage"), None)]:
        assert_one_line_error(run(*args, env=env), 2, "unknown context 'stage' (known: 'prod', 'dev')")


def test_an_unknown_context_without_any_file_says_none_is_defined(run):
    assert_one_line_error(run("--context", "prod", "group", "list"), 2, "unknown context 'prod'",
                          "no context is defined in")


def test_a_malformed_file_is_one_line_exit_2_naming_the_file(run, config_home):
    config_file(config_home).parent.mkdir(parents=True)
    config_file(config_home).write_text("[contexts.prod]\nbootstrap = 'kafka:9092\n")
    for args in (("group", "list"), ("--bootstrap", "127.0.0.1:1", "group", "list"), ("config", "get-contexts"),
                 ("config", "set-context", "prod", "--zk", "zk:2181")):
        assert_one_line_error(run(*args), 2, str(config_file(config_home)), "not valid TOML")


def test_help_never_reads_the_file(run, config_home):
    config_file(config_home).parent.mkdir(parents=True)
    config_file(config_home).write_text("not toml at all [\n")
    assert ok(run("group", "list", "--help")).stdout
    assert ok(run("config", "--help")).stdout
