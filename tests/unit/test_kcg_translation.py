"""kafka-consumer-groups.sh command lines as the groupctl commands that do the same
(`groupctl.cli.kcg.translate`), and the lines K-CG itself refuses."""

import pytest

from groupctl.cli.errors import BadInput
from groupctl.cli.kcg import translate

B = ["--bootstrap-server", "kafka:9092"]
GLOBAL = ["--bootstrap", "kafka:9092"]


@pytest.mark.parametrize("kcg, groupctl", [
    (["--list"], ["group", "list"]),
    (["--list", "--state"], ["group", "list"]),
    (["--list", "--state", "stable,empty", "--type", "consumer"],
     ["group", "list", "--state", "stable,empty", "--type", "consumer"]),
    (["--describe", "--group", "g"], ["group", "describe", "--group", "g", "--offsets"]),
    (["--describe", "--group", "a", "--group", "b", "--members", "--verbose"],
     ["group", "describe", "--group", "a", "--group", "b", "--members", "--verbose"]),
    (["--describe", "--all-groups", "--state"], ["group", "describe", "--all-groups", "--state"]),
    (["--delete", "--group", "a", "--group", "b"], ["group", "delete", "--group", "a", "--group", "b"]),
    (["--delete", "--all-groups"], ["group", "delete", "--all-groups", "--force"]),
    (["--reset-offsets", "--group", "g", "--topic", "t:0,1", "--to-earliest"],
     ["offsets", "reset", "--group", "g", "--topic", "t:0,1", "--to-earliest", "--dry-run"]),
    (["--reset-offsets", "--all-groups", "--all-topics", "--shift-by", "-5", "--execute"],
     ["offsets", "reset", "--all-groups", "--all-topics", "--shift-by", "-5", "--execute"]),
    (["--reset-offsets", "--group", "g", "--all-topics", "--by-duration", "PT1H", "--dry-run", "--export"],
     ["offsets", "reset", "--group", "g", "--all-topics", "--by-duration", "PT1H", "--dry-run", "--export"]),
    (["--reset-offsets", "--group", "g", "--from-file", "plan.csv", "--execute"],
     ["offsets", "reset", "--group", "g", "--from-file", "plan.csv", "--execute"]),
    (["--delete-offsets", "--group", "g", "--topic", "t"], ["offsets", "delete", "g", "--topic", "t"]),
])
def test_a_kcg_line_becomes_the_groupctl_command_doing_the_same(kcg, groupctl):
    assert translate([*B, *kcg]) == [*GLOBAL, *groupctl]


def test_timeout_and_command_config_become_the_global_options():
    assert translate([*B, "--timeout", "1500", "--command-config", "client.properties", "--list"]) == [
        *GLOBAL, "--timeout", "1500", "--command-config", "client.properties", "group", "list"]


@pytest.mark.parametrize("kcg, fragment", [
    (["--describe"], "--describe takes one of these options: --group, --all-groups"),
    (["--list", "--describe", "--group", "g"], "exactly one of"),
    ([], "exactly one of"),
    (["--describe", "--group", "g", "--members", "--offsets"], "at most one of"),
    (["--describe", "--group", "g", "--state", "stable"], "does not take a value for --state"),
    (["--reset-offsets", "--group", "g", "--topic", "t", "--to-earliest", "--dry-run", "--execute"],
     "only accepts one of --execute and --dry-run"),
    (["--reset-offsets", "--group", "g", "--to-earliest"], "--topic or --all-topics"),
    (["--reset-offsets", "--group", "g", "--topic", "t"], "exactly one of --to-offset"),
    (["--delete", "--group", "g", "--topic", "t"], "--topic does not go with --delete"),
    (["--list", "--members"], "--members does not go with --list"),
    (["--describe", "--group", "g", "--all-groups"], "not both"),
    (["--delete-offsets", "--group", "g"], "takes one --group and --topic"),
    (["--list", "--bogus"], "unrecognized arguments: --bogus"),
    (["--list", "--timeout", "0"], "--timeout 0: a positive number of milliseconds"),
    (["--list", "--timeout", "-5"], "--timeout -5: a positive number of milliseconds"),
])
def test_a_line_kcg_would_refuse_is_a_usage_error_naming_the_rule(kcg, fragment):
    with pytest.raises(BadInput) as refused:
        translate([*B, *kcg])
    assert fragment in str(refused.value)


def test_the_bootstrap_server_is_required_as_kcg_requires_it():
    with pytest.raises(BadInput, match="--bootstrap-server is required"):
        translate(["--list"])
