"""The `groupctl` command line without a cluster: parsing, the bad-input matrix, rendering.

Commands run in-process through Typer's CliRunner. Bad input must be rejected before anything
is contacted, so those tests point GROUPCTL_BOOTSTRAP at a closed port: reaching the network
would turn the expected exit 2 into an exit 1. Rendering tests replace the ops function a
command calls with one returning known data (ops itself is tested against real servers).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from groupctl.cli.app import app
from groupctl.ops import reset as reset_ops
from groupctl.errors import Refused
from groupctl.ops.groups import GroupDescription, MemberDescription
from groupctl.client.kafka import Node
from groupctl.ops.lag import PartitionOffsets
from groupctl.ops.rebalance import MemberRef, PartitionMove, RebalanceEvent
from groupctl.ops.reset import PlannedOffset, ResetPlan
from tests.support.cli import assert_one_line_error
from tests.support.ports import closed_port

ROOT = Path(__file__).resolve().parents[2]
DESCRIBE_KEYS = ["group", "group_type", "state", "protocol_type", "protocol", "generation", "group_epoch",
                 "assignment_epoch", "assignor", "coordinator", "members", "offsets", "configs",
                 "pending_offsets"]


@pytest.fixture
def unreachable():
    """Environment with both sources set to closed ports: nothing may be contacted."""
    return {"GROUPCTL_BOOTSTRAP": f"127.0.0.1:{closed_port()}", "GROUPCTL_ZK": f"127.0.0.1:{closed_port()}"}


def run(args: list[str], env: dict | None = None):
    """Invoke the app in-process; an unexpected exception fails the test with its traceback."""
    return CliRunner().invoke(app, args, env={"GROUPCTL_BOOTSTRAP": None, "GROUPCTL_ZK": None, **(env or {})},
                              catch_exceptions=False)


def assert_bad_input(result, *fragments: str) -> str:
    return assert_one_line_error(result, 2, *fragments)


def command_paths() -> list[list[str]]:
    """Every command and command group of the app, as argument lists ([] is the root)."""
    paths: list[list[str]] = []

    def walk(command, path):
        paths.append(path)
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            walk(sub, [*path, name])

    walk(get_command(app), [])
    return paths


# -- help ------------------------------------------------------------------------------------


def test_the_command_tree_has_every_command_of_the_design():
    leaves = {" ".join(p) for p in command_paths() if len(p) == 2}
    assert leaves >= {
        "coordinator run", "coordinator find", "group list", "group describe", "group delete",
        "zk show", "zk ls", "zk get", "zk tree", "zk watch", "rebalance trigger", "rebalance watch",
        "offsets show", "offsets commit", "offsets reset", "offsets export", "offsets import", "offsets delete",
    }


@pytest.mark.parametrize("path", command_paths(), ids=lambda p: " ".join(p) or "groupctl")
def test_every_command_has_help_that_exits_zero(path):
    result = run([*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage: groupctl" in result.stdout
    short = run([*path, "-h"])
    assert short.exit_code == 0 and short.stdout == result.stdout


def test_a_command_group_without_a_command_prints_its_help_and_exits_2():
    result = run(["offsets"])
    assert result.exit_code == 2
    assert "reset" in result.output and "Traceback" not in result.output


def test_importing_the_cli_does_not_import_the_kafka_client_kazoo_or_spark():
    code = ("import sys, groupctl.cli.app; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'kafka', 'kazoo', 'pyspark'}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# -- the bad-input matrix: exit 2, one line, nothing contacted --------------------------------


@pytest.mark.parametrize("assignment, fragment", [
    ("orders:0", "is not TOPIC:PARTITION=OFFSET"),
    ("orders0=5", "is not TOPIC:PARTITION=OFFSET"),
    (":0=5", "is not TOPIC:PARTITION=OFFSET"),
    ("orders:x=5", "partition 'x'"),
    ("orders:0=-1", "offset '-1'"),
    ("orders:0=five", "offset 'five'"),
    ("orders:-1=5", "partition '-1'"),
    ("bad topic:0=5", "invalid topic name"),
])
def test_offsets_commit_rejects_a_malformed_assignment(unreachable, assignment, fragment):
    assert_bad_input(run(["offsets", "commit", "g", assignment], unreachable), fragment)


def test_offsets_commit_rejects_one_partition_given_two_offsets(unreachable):
    assert_bad_input(run(["offsets", "commit", "g", "orders:0=1", "orders:0=2"], unreachable), "orders:0", "two")


@pytest.mark.parametrize("text", ["yesterday", "2024-02-30T00:00:00", "2024-01-01T25:00:00Z", "2024-01-01T10:00:00+25:00", ""])
def test_reset_rejects_an_unparseable_datetime(unreachable, text):
    assert_bad_input(run(["offsets", "reset", "g", "--all-topics", "--to-datetime", text], unreachable),
                     "date-time")


@pytest.mark.parametrize("text", ["5min", "PT", "P1H", "-PT5M", "P"])
def test_reset_rejects_an_unparseable_duration(unreachable, text):
    assert_bad_input(run(["offsets", "reset", "g", "--all-topics", "--by-duration", text], unreachable), "duration")


def test_reset_rejects_a_missing_plan_file(unreachable, tmp_path):
    missing = tmp_path / "nope.csv"
    assert_bad_input(run(["offsets", "reset", "g", "--from-file", str(missing)], unreachable),
                     str(missing), "does not exist")


def test_import_rejects_a_missing_plan_file(unreachable, tmp_path):
    missing = tmp_path / "nope.csv"
    assert_bad_input(run(["offsets", "import", "g", str(missing)], unreachable), "does not exist")


@pytest.mark.parametrize("content, line, fragment", [
    ("orders,0,5\norders,zero,7\n", 2, "partition 'zero'"),
    ("orders,0,5\norders,1\n", 2, "expected topic,partition,offset"),
    ("orders,0,5\norders,1,6\norders,2,-3\n", 3, "offset '-3'"),
    ("orders,0,5\norders,0,6\n", 2, "appears twice"),
])
def test_a_malformed_plan_file_is_rejected_naming_its_line(unreachable, tmp_path, content, line, fragment):
    plan = tmp_path / "plan.csv"
    plan.write_text(content)
    for args in (["offsets", "reset", "g", "--from-file", str(plan)], ["offsets", "import", "g", str(plan)]):
        assert_bad_input(run(args, unreachable), f"{plan}:{line}:", fragment)


def test_an_empty_plan_file_is_rejected(unreachable, tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text("")
    assert_bad_input(run(["offsets", "import", "g", str(plan)], unreachable), "no offsets")


def test_reset_without_a_target_names_the_targets(unreachable):
    assert_bad_input(run(["offsets", "reset", "g", "--all-topics"], unreachable), "needs a target", "--to-earliest")


@pytest.mark.parametrize("targets", [
    ["--to-earliest", "--to-latest"],
    ["--to-offset", "5", "--shift-by", "1"],
    ["--to-current", "--by-duration", "PT1H"],
])
def test_reset_with_two_targets_is_rejected(unreachable, targets):
    assert_bad_input(run(["offsets", "reset", "g", "--all-topics", *targets], unreachable), "exactly one target")


def test_reset_without_a_scope_is_rejected(unreachable):
    assert_bad_input(run(["offsets", "reset", "g", "--to-earliest"], unreachable), "--topic", "--all-topics")


def test_reset_with_both_scopes_is_rejected(unreachable):
    assert_bad_input(run(["offsets", "reset", "g", "--all-topics", "--topic", "t", "--to-earliest"], unreachable),
                     "not both")


@pytest.mark.parametrize("scope, fragment", [
    ("orders:a", "partition 'a'"),
    ("orders:", "is not TOPIC or TOPIC:PARTITION"),
    ("orders:1,,2", "is not TOPIC or TOPIC:PARTITION"),
    ("orders:-1", "partition '-1'"),
    ("bad topic", "invalid topic name"),
])
def test_reset_rejects_a_topic_scope_with_bad_partitions(unreachable, scope, fragment):
    assert_bad_input(run(["offsets", "reset", "g", "--topic", scope, "--to-earliest"], unreachable), fragment)


def test_reset_rejects_a_negative_target_offset(unreachable):
    assert_bad_input(run(["offsets", "reset", "g", "--all-topics", "--to-offset", "-5"], unreachable), "-5")


@pytest.mark.parametrize("args, fragment", [
    (["offsets", "reset", "g", "--all-topics", "--to-offset", "abc"], "--to-offset"),
    (["offsets", "reset", "g", "--all-topics", "--shift-by", "1.5"], "--shift-by"),
    (["offsets", "reset", "g", "--bogus"], "--bogus"),
    (["group", "list", "--output", "yaml"], "--output"),
    (["--output", "yaml", "group", "list"], "--output"),
    (["no-such-command"], "no-such-command"),
])
def test_usage_errors_found_while_parsing_are_one_line_too(unreachable, args, fragment):
    assert_bad_input(run(args, unreachable), fragment, "--help")


def test_group_list_rejects_an_unknown_state(unreachable):
    assert_bad_input(run(["group", "list", "--state", "Sleepy"], unreachable), "unknown group state 'Sleepy'")


@pytest.mark.parametrize("args", [["rebalance", "watch", "g", "--count", "0"], ["rebalance", "watch", "g", "--timeout", "0"],
                                  ["zk", "watch", "g", "--timeout", "-1"]])
def test_watches_reject_a_count_or_timeout_that_cannot_be_met(unreachable, args):
    assert_bad_input(run(args, unreachable))


@pytest.mark.parametrize("args", [["group", "list"], ["group", "describe", "g"], ["group", "delete", "g"],
                                  ["offsets", "show", "g"], ["offsets", "export", "g"],
                                  ["offsets", "reset", "g", "--all-topics", "--to-latest"]])
def test_kafka_commands_need_a_bootstrap(args):
    assert_bad_input(run(args), "--bootstrap", "GROUPCTL_BOOTSTRAP")


@pytest.mark.parametrize("args", [["zk", "show", "g"], ["zk", "ls", "/"], ["zk", "get", "/"], ["zk", "tree"],
                                  ["zk", "watch", "g"]])
def test_zookeeper_commands_need_a_connect_string(args):
    assert_bad_input(run(args, {"GROUPCTL_BOOTSTRAP": "127.0.0.1:9092"}), "--zk", "GROUPCTL_ZK")


@pytest.mark.parametrize("args", [["coordinator", "find", "g"], ["rebalance", "trigger", "g"], ["rebalance", "watch", "g"]])
def test_commands_that_take_either_source_need_one_of_them(args):
    assert_bad_input(run(args), "--bootstrap", "--zk")


# -- unreachable clusters: exit 1, one line, within 10 s -------------------------------------


@pytest.mark.parametrize("args", [["group", "list"], ["group", "describe", "g"], ["coordinator", "find", "g"],
                                  ["offsets", "reset", "g", "--all-topics", "--to-latest"], ["rebalance", "trigger", "g"]])
def test_an_unreachable_bootstrap_fails_within_10_seconds_with_one_line(args):
    port = closed_port()
    started = time.monotonic()
    result = run(["--bootstrap", f"127.0.0.1:{port}", *args])
    elapsed = time.monotonic() - started
    assert_one_line_error(result, 1, f"cannot reach bootstrap 127.0.0.1:{port}")
    assert elapsed < 10, elapsed


def test_an_unreachable_zookeeper_fails_within_10_seconds_with_one_line():
    connect = f"127.0.0.1:{closed_port()}"
    started = time.monotonic()
    result = run(["--zk", connect, "zk", "ls", "/"])
    elapsed = time.monotonic() - started
    assert_one_line_error(result, 1, f"cannot reach ZooKeeper at {connect}")
    assert elapsed < 10, elapsed


# -- global options ----------------------------------------------------------------------------


def test_global_options_after_the_command_override_those_before_it_and_the_environment():
    before, after = closed_port(), closed_port()
    result = run(["--bootstrap", f"127.0.0.1:{before}", "group", "list", "--bootstrap", f"127.0.0.1:{after}"],
                 {"GROUPCTL_BOOTSTRAP": "127.0.0.1:1"})
    assert_one_line_error(result, 1, f"127.0.0.1:{after}")


def test_the_environment_supplies_the_bootstrap():
    port = closed_port()
    assert_one_line_error(run(["group", "list"], {"GROUPCTL_BOOTSTRAP": f"127.0.0.1:{port}"}), 1, f"127.0.0.1:{port}")


# -- rendering (ops replaced by fakes returning known data) -----------------------------------

NODE = Node(3, "127.0.0.1", 9093)


def description(generation) -> GroupDescription:
    return GroupDescription(
        group="orders", state="Stable", protocol_type="consumer", protocol="range", generation=generation,
        coordinator=NODE,
        members=(MemberDescription("app-1-abc", "app-1", "/127.0.0.1", None, {"payments": (0, 1)}),),
        offsets=(PartitionOffsets("payments", 0, 5, 12), PartitionOffsets("payments", 1, None, 4),
                 PartitionOffsets("payments", 2, 30, 20)),
    )


@pytest.fixture
def described(monkeypatch):
    calls = []

    def fake(bootstrap, group, *, include_offsets=True, include_configs=False):
        calls.append((str(bootstrap), group, include_offsets))
        return description(None)

    monkeypatch.setattr("groupctl.ops.groups.describe_group", fake)
    return calls


def test_describe_json_has_exactly_the_documented_keys(described):
    result = run(["--bootstrap", "h:1", "group", "describe", "orders", "--output", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert list(document) == DESCRIBE_KEYS
    assert document["generation"] is None
    assert document["coordinator"] == {"node_id": 3, "host": "127.0.0.1", "port": 9093}
    assert document["members"] == [{"member_id": "app-1-abc", "group_instance_id": None, "client_id": "app-1",
                                    "client_host": "/127.0.0.1", "member_epoch": None,
                                    "assignment": {"payments": [0, 1]}, "target_assignment": None,
                                    "upgraded": None}]
    assert (document["group_type"], document["group_epoch"], document["assignment_epoch"], document["assignor"]) == (
        "classic", None, None, None)
    assert [list(o) for o in document["offsets"]] == [
        ["topic", "partition", "committed_offset", "log_end_offset", "lag", "ahead_of_log_end",
         "committed_leader_epoch"]] * 3
    assert document["offsets"][1]["lag"] is None
    assert described == [("h:1", "orders", True)]


def test_describe_table_shows_unknown_values_as_dashes_and_owners_per_partition(described):
    result = run(["--bootstrap", "h:1", "group", "describe", "orders"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert ["orders", "127.0.0.1:9093", "(3)", "range", "Stable", "1", "consumer", "-", "classic"] in [
        line.split() for line in lines], result.stdout
    assert any(line.split() == ["orders", "payments", "0", "5", "12", "7", "app-1-abc", "/127.0.0.1", "app-1"]
               for line in lines), result.stdout
    assert any(line.split() == ["orders", "payments", "1", "-", "4", "-", "app-1-abc", "/127.0.0.1", "app-1"]
               for line in lines), result.stdout
    assert "\x1b" not in result.output


def test_a_committed_offset_past_the_log_end_has_lag_0_marked_ahead_in_describe(described):
    table = run(["--bootstrap", "h:1", "group", "describe", "orders", "--offsets"])
    document = json.loads(run(["--bootstrap", "h:1", "--output", "json", "group", "describe", "orders"]).stdout)
    assert any(line.split() == ["orders", "payments", "2", "30", "20", "0", "(ahead)", "-", "-", "-"]
               for line in table.stdout.splitlines()), table.stdout
    assert [(o["lag"], o["ahead_of_log_end"]) for o in document["offsets"]] == [(7, False), (None, False), (0, True)]


def test_offsets_show_marks_a_committed_offset_past_the_log_end_and_never_shows_a_negative_lag(monkeypatch):
    from groupctl.ops.offsets import GroupOffsets

    found = GroupOffsets("orders", "Empty", (PartitionOffsets("payments", 0, 900, 750), PartitionOffsets("payments", 1, 5, 12)))
    monkeypatch.setattr("groupctl.ops.offsets.show_offsets", lambda bootstrap, group: found)
    table = run(["--bootstrap", "h:1", "offsets", "show", "orders"])
    document = json.loads(run(["--bootstrap", "h:1", "--output", "json", "offsets", "show", "orders"]).stdout)
    rows = [line.split() for line in table.stdout.splitlines()[1:]]
    assert rows == [["orders", "payments", "0", "900", "750", "0", "(ahead)"], ["orders", "payments", "1", "5", "12", "7"]]
    assert document["offsets"][0] == {"topic": "payments", "partition": 0, "committed_offset": 900,
                                      "log_end_offset": 750, "lag": 0, "ahead_of_log_end": True,
                                      "committed_leader_epoch": None}


def test_describe_members_does_not_ask_for_offsets(described):
    result = run(["--bootstrap", "h:1", "group", "describe", "orders", "--members"])
    assert result.exit_code == 0
    assert "app-1-abc" in result.stdout and "payments:0,1" in result.stdout and "LAG" not in result.stdout
    assert described == [("h:1", "orders", False)]


SECTION_HEADERS = {"state": "COORDINATOR", "members": "CONSUMER-ID", "offsets": "TOPIC"}
"""The second column of each section's header (every section's first is GROUP)."""


@pytest.mark.parametrize("flags, sections", [
    ([], ["state", "members", "offsets"]),
    (["--members", "--offsets"], ["members", "offsets"]),
    (["--offsets", "--members"], ["members", "offsets"]),
    (["--state", "--offsets"], ["state", "offsets"]),
    (["--state", "--members"], ["state", "members"]),
    (["--state", "--members", "--offsets"], ["state", "members", "offsets"]),
    (["--offsets"], ["offsets"]),
], ids=lambda v: " ".join(v) if v and v[0].startswith("--") else None)
def test_describe_section_flags_combine_and_none_shows_every_section(described, flags, sections):
    result = run(["--bootstrap", "h:1", "group", "describe", "orders", *flags])
    assert result.exit_code == 0, result.output
    headers = [line.split()[1] for line in result.stdout.splitlines() if line.split()[:1] == ["GROUP"]]
    assert headers == [SECTION_HEADERS[s] for s in sections], result.stdout
    assert described == [("h:1", "orders", "offsets" in sections)]


@pytest.mark.parametrize("flags", [["--members"], ["--members", "--offsets"], ["--state"]])
def test_describe_json_carries_every_section_whatever_the_flags(described, flags):
    result = run(["--bootstrap", "h:1", "--output", "json", "group", "describe", "orders", *flags])
    document = json.loads(result.stdout)
    assert list(document) == DESCRIBE_KEYS and document["members"] and len(document["offsets"]) == 3


@pytest.fixture
def planned(monkeypatch):
    calls = []

    def fake(bootstrap, group, scope, target, *, execute=False):
        calls.append((scope, target, execute))
        return ResetPlan(group, (PlannedOffset("payments", 0, 5, 2), PlannedOffset("payments", 1, None, 0)),
                         executed=execute)

    monkeypatch.setattr("groupctl.ops.offsets.reset_offsets", fake)
    return calls


@pytest.mark.parametrize("option, target", [
    (["--to-earliest"], reset_ops.ToEarliest()),
    (["--to-latest"], reset_ops.ToLatest()),
    (["--to-offset", "7"], reset_ops.ToOffset(7)),
    (["--shift-by", "-3"], reset_ops.ShiftBy(-3)),
    (["--to-datetime", "2024-05-01T12:00:00Z"], reset_ops.ToDatetime(1714564800000)),
    (["--to-datetime", "2024-05-01T14:00:00.000+02:00"], reset_ops.ToDatetime(1714564800000)),
    (["--by-duration", "P1DT2H3M4S"], reset_ops.ByDuration(((24 + 2) * 3600 + 3 * 60 + 4) * 1000)),
    (["--to-current"], reset_ops.ToCurrent()),
])
def test_reset_passes_the_parsed_target_and_is_a_dry_run_by_default(planned, option, target):
    result = run(["--bootstrap", "h:1", "offsets", "reset", "orders", "--topic", "payments:1,0", "--topic", "audit",
                  *option])
    assert result.exit_code == 0, result.output
    [(scope, passed, execute)] = planned
    assert passed == target and execute is False
    assert scope == reset_ops.Scope((reset_ops.TopicScope("payments", (0, 1)), reset_ops.TopicScope("audit")))
    assert "dry run" in result.stderr


def test_reset_from_a_file_needs_no_scope_and_reads_the_file(planned, tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text("payments,0,2\npayments,1,0\n")
    result = run(["--bootstrap", "h:1", "offsets", "reset", "orders", "--from-file", str(plan), "--execute"])
    assert result.exit_code == 0, result.output
    [(scope, target, execute)] = planned
    assert scope is None and execute is True
    assert target == reset_ops.FromFile({("payments", 0): 2, ("payments", 1): 0})
    assert "dry run" not in result.stderr


def test_reset_export_prints_the_plan_as_csv_only(planned):
    result = run(["--bootstrap", "h:1", "offsets", "reset", "orders", "--all-topics", "--to-earliest", "--export"])
    assert result.exit_code == 0
    assert result.stdout == "payments,0,2\npayments,1,0\n"
    assert result.stderr.strip() == "dry run: nothing was changed (add --execute to apply)"


def test_reset_json_is_the_plan_document(planned):
    result = run(["--bootstrap", "h:1", "--output", "json", "offsets", "reset", "orders", "--all-topics",
                  "--to-earliest", "--execute"])
    assert json.loads(result.stdout) == {"group": "orders", "executed": True, "timestamp_ms": None, "timestamp": None,
                                         "partitions": [
        {"topic": "payments", "partition": 0, "current_offset": 5, "new_offset": 2, "clamped_from": None,
         "leader_epoch": None},
        {"topic": "payments", "partition": 1, "current_offset": None, "new_offset": 0, "clamped_from": None,
         "leader_epoch": None}]}


@pytest.fixture
def clamped(monkeypatch):
    """reset_offsets answering a plan whose two partitions were clamped (one past the log end,
    one before the log start) and one that was not."""

    def fake(bootstrap, group, scope, target, *, execute=False):
        return ResetPlan(group, (PlannedOffset("orders", 3, 100, 750, clamped_from=900),
                                 PlannedOffset("orders", 4, 100, 10, clamped_from=2),
                                 PlannedOffset("orders", 5, 100, 300)))

    monkeypatch.setattr("groupctl.ops.offsets.reset_offsets", fake)


@pytest.mark.parametrize("output", [[], ["--output", "json"], ["--export"]], ids=["table", "json", "export"])
def test_reset_warns_once_per_clamped_partition_on_stderr(clamped, output):
    result = run(["--bootstrap", "h:1", "offsets", "reset", "orders", "--topic", "orders", "--to-offset", "900", *output])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        "warning: offset 900 of orders:3 is past the log end 750; resetting to 750",
        "warning: offset 2 of orders:4 is before the log start 10; resetting to 10",
        "dry run: nothing was changed (add --execute to apply)"]
    if output == ["--output", "json"]:
        partitions = json.loads(result.stdout)["partitions"]
        assert [(p["new_offset"], p["clamped_from"]) for p in partitions] == [(750, 900), (10, 2), (300, None)]


def test_a_time_target_plan_is_titled_with_the_instant_it_resolved_to_in_utc(monkeypatch):
    def fake(bootstrap, group, scope, target, *, execute=False):
        return ResetPlan(group, (PlannedOffset("orders", 0, 7, 5),), timestamp_ms=target.timestamp_ms)

    monkeypatch.setattr("groupctl.ops.offsets.reset_offsets", fake)
    args = ["--bootstrap", "h:1", "offsets", "reset", "orders", "--all-topics", "--to-datetime", "2020-01-01T10:30:00+05:30"]
    table = run(args)
    document = json.loads(run([*args, "--output", "json"]).stdout)
    assert table.stdout.splitlines()[0] == "first offsets at or after 2020-01-01T05:00:00Z"
    assert table.stdout.splitlines()[2].split() == ["orders", "orders", "0", "7", "5"]
    assert (document["timestamp_ms"], document["timestamp"]) == (1577854800000, "2020-01-01T05:00:00Z")


def test_a_refusal_from_ops_is_one_line_and_exit_1(monkeypatch):
    def refuse(*args, **kwargs):
        raise Refused("group 'orders' is Stable with 2 member(s); offsets can only be changed while the group is inactive (Empty)")

    monkeypatch.setattr("groupctl.ops.offsets.reset_offsets", refuse)
    result = run(["--bootstrap", "h:1", "offsets", "reset", "orders", "--all-topics", "--to-latest", "--execute"])
    assert_one_line_error(result, 1, "Stable")


def event(generation: int) -> RebalanceEvent:
    return RebalanceEvent(
        group="orders", generation=generation, previous_generation=generation - 1, state="Stable", members=2,
        reason="join", detail=None, caused_by=None, started_at_ms=1000, completed_at_ms=1250, duration_ms=250,
        members_joined=(MemberRef("app-2-x", "app-2"),), members_left=(),
        partitions_moved=(PartitionMove("payments", 1, "app-1-a", "app-2-x"),))


@pytest.fixture
def rebalances(monkeypatch):
    def fake(group, *, bootstrap=None, zk=None, zk_auth=None, count=None, timeout_s=None, zk_timeout_s=None):
        yield from (event(g) for g in range(5, 5 + (count or 2)))

    monkeypatch.setattr("groupctl.ops.rebalance.watch", fake)


def test_rebalance_watch_json_prints_one_object_per_line(rebalances):
    result = run(["--zk", "z:1", "--output", "json", "rebalance", "watch", "orders", "--count", "2"])
    assert result.exit_code == 0, result.output
    objects = [json.loads(line) for line in result.stdout.splitlines()]
    assert [o["generation"] for o in objects] == [5, 6]
    assert objects[0]["partitions_moved"] == [{"topic": "payments", "partition": 1, "from": "app-1-a", "to": "app-2-x"}]


def test_rebalance_watch_piped_prints_plain_lines_without_escape_codes(rebalances):
    result = run(["--zk", "z:1", "rebalance", "watch", "orders", "--count", "1"])
    assert result.exit_code == 0
    assert result.stdout == ("generation 4 -> 5; 2 member(s); reason: join; joined: app-2; "
                             "1 partition(s) moved; took 250 ms\n")
    assert "\x1b" not in result.output
