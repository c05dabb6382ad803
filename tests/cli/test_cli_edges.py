"""Edges found in review: names that look like markup, the global --zk for `coordinator run`,
out-of-range ports, and piped tables without trailing padding."""

from __future__ import annotations

import io

from rich.console import Console
from typer.testing import CliRunner

from groupctl.cli import render
from groupctl.cli.app import app
from groupctl.cli.context import CliEnv

runner = CliRunner()


def piped_env() -> tuple[CliEnv, io.StringIO]:
    buffer = io.StringIO()
    return CliEnv(out=Console(file=buffer, width=200), err=Console(file=io.StringIO())), buffer


def test_a_group_name_that_looks_like_rich_markup_is_printed_literally():
    current, buffer = piped_env()
    render.show(current, render.table(["GROUP", "STATE"], [("x[/y]", "Empty"), ("[red]z", None)]))
    output = buffer.getvalue()
    assert "x[/y]" in output and "[red]z" in output and "-" in output


def test_piped_tables_carry_no_padding_after_the_last_column():
    current, buffer = piped_env()
    render.show(current, render.table(["GROUP", "COORDINATOR"], [("a", "0 (127.0.0.1:9092)"), ("longer-name", "1")]))
    assert all(line == line.rstrip() for line in buffer.getvalue().splitlines())


def test_the_global_zk_option_reaches_coordinator_run(monkeypatch):
    seen = {}
    monkeypatch.setattr("groupctl.server.main.run_node", lambda config, log_level: seen.update(config=config))
    result = runner.invoke(app, ["--zk", "127.0.0.1:2181/chroot", "coordinator", "run", "--port", "0"])
    assert result.exit_code == 0, result.output
    assert seen["config"].zk == "127.0.0.1:2181/chroot"


def test_coordinator_run_refuses_a_port_out_of_range_and_a_malformed_connect_string():
    assert runner.invoke(app, ["coordinator", "run", "--port", "99999"]).exit_code == 2
    result = runner.invoke(app, ["coordinator", "run", "--zk", "bad host::"])
    assert result.exit_code == 2


def test_coordinator_run_without_options_configures_the_documented_defaults(monkeypatch):
    from groupctl.server.config import NodeConfig

    seen = {}
    monkeypatch.setattr("groupctl.server.main.run_node", lambda config, log_level: seen.update(config=config))
    assert runner.invoke(app, ["coordinator", "run"], env={"GROUPCTL_ZK": None}).exit_code == 0
    assert seen["config"] == NodeConfig()


def test_coordinator_run_max_group_size_reaches_the_groups_and_must_be_positive(monkeypatch):
    seen = {}
    monkeypatch.setattr("groupctl.server.main.run_node", lambda config, log_level: seen.update(config=config))
    assert runner.invoke(app, ["coordinator", "run", "--max-group-size", "3"]).exit_code == 0
    assert seen["config"].groups.max_group_size == 3
    assert runner.invoke(app, ["coordinator", "run", "--max-group-size", "0"]).exit_code == 2


def test_coordinator_run_consumer_group_config_bounds_reach_the_consumer_groups(monkeypatch):
    seen = {}
    monkeypatch.setattr("groupctl.server.main.run_node", lambda config, log_level: seen.update(config=config))
    result = runner.invoke(app, ["coordinator", "run", "--consumer-min-session-timeout-ms", "1000",
                                 "--consumer-max-session-timeout-ms", "90000", "--consumer-min-heartbeat-interval-ms",
                                 "100", "--consumer-max-heartbeat-interval-ms", "20000"])
    assert result.exit_code == 0, result.output
    bounds = seen["config"].consumer_groups
    assert (bounds.min_session_timeout_ms, bounds.max_session_timeout_ms, bounds.min_heartbeat_interval_ms,
            bounds.max_heartbeat_interval_ms) == (1000, 90000, 100, 20000)
