"""`coordinator run --inter-node-listener/--inter-node-config`: how a node reaches its peers
(Kafka's inter.broker.listener.name and the inter-broker client's properties) reaches the node's
configuration, and a listener or properties file that cannot work is one error line at start."""

from __future__ import annotations

from typer.testing import CliRunner

from groupctl.cli.app import app
from tests.support.cli import assert_one_line_error

runner = CliRunner()


def run(monkeypatch, *args: str):
    seen = {}
    monkeypatch.setattr("groupctl.server.main.run_node", lambda config, log_level: seen.update(config=config))
    return runner.invoke(app, ["coordinator", "run", *args], env={"GROUPCTL_ZK": None}), seen


def test_the_inter_node_listener_and_client_properties_reach_the_node(monkeypatch, tmp_path):
    properties = tmp_path / "inter-node.properties"
    properties.write_text("sasl.mechanism=SCRAM-SHA-512\nsasl.username=node\nsasl.password=secret\n")
    result, seen = run(monkeypatch, "--listener", "PLAINTEXT://127.0.0.1:0", "--listener",
                       "SASL_PLAINTEXT://127.0.0.1:0", "--inter-node-listener", "sasl_plaintext",
                       "--inter-node-config", str(properties))
    assert result.exit_code == 0, result.output
    assert (seen["config"].inter_node_listener, seen["config"].inter_node_config) == ("SASL_PLAINTEXT", properties)


def test_a_listener_the_node_does_not_open_is_refused(monkeypatch):
    result, seen = run(monkeypatch, "--inter-node-listener", "SSL")
    assert_one_line_error(result, 2, "--inter-node-listener", "PLAINTEXT")
    assert not seen


def test_a_missing_or_malformed_properties_file_is_refused(monkeypatch, tmp_path):
    result, _ = run(monkeypatch, "--inter-node-config", str(tmp_path / "absent.properties"))
    assert_one_line_error(result, 2, "--inter-node-config", "no such file")
    malformed = tmp_path / "malformed.properties"
    malformed.write_text("sasl.mechanism=GSSAPI\n")
    result, _ = run(monkeypatch, "--inter-node-config", str(malformed))
    assert_one_line_error(result, 2, "sasl.mechanism")
