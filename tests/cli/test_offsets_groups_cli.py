"""The `offsets` commands with kafka-consumer-groups.sh's spellings: several groups at once
(`--group G...`, `--all-groups`), 4-column plans and stdin, `--dry-run`, `--by-duration 1h`, and
`offsets copy`.

Commands run in-process through Typer's CliRunner. Bad input must be rejected before anything is
contacted, so those tests point GROUPCTL_BOOTSTRAP at a closed port (reaching the network would
turn the expected exit 2 into an exit 1). The others run against a real in-process coordinator
(topics `orders`, 3 partitions of 10 records, and `audit`, 1 partition of 10), with groups of
their own whose offsets they commit first with kafka-python's admin client.
"""

from __future__ import annotations

import json
import time
import uuid

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.structs import OffsetAndMetadata, TopicPartition
from typer.testing import CliRunner

from groupctl.cli.app import app
from groupctl.client.kafka import KafkaClient
from groupctl.client.kafka_apis import OFFSET_COMMIT
from tests.support.cli import assert_one_line_error
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.ports import closed_port

HOUR_MS = 3_600_000
TOPICS = (("orders", 3), ("audit", 1))


def invoke(args: list[str], env: dict | None = None, input: str | None = None):
    return CliRunner().invoke(app, args, env={"GROUPCTL_BOOTSTRAP": None, "GROUPCTL_ZK": None, **(env or {})},
                              input=input, catch_exceptions=False)


@pytest.fixture
def unreachable():
    return {"GROUPCTL_BOOTSTRAP": f"127.0.0.1:{closed_port()}"}


def start_node(topics) -> InProcessCoordinator:
    node = InProcessCoordinator(node_config(topics=topics)).start()
    producer = KafkaProducer(bootstrap_servers=node.bootstrap)
    try:
        futures = [producer.send(t, b"r", partition=p) for t, n in topics for p in range(n) for _ in range(10)]
        for future in futures:
            future.get(timeout=10)
    finally:
        producer.close()
    return node


@pytest.fixture(scope="module")
def node():
    running = start_node(TOPICS)
    yield running
    running.stop()


class Cluster:
    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap

    def run(self, *args: str, input: str | None = None):
        return invoke(list(args), {"GROUPCTL_BOOTSTRAP": self.bootstrap}, input=input)

    def ok(self, *args: str, input: str | None = None):
        result = self.run(*args, input=input)
        assert result.exit_code == 0, (args, result.stdout, result.stderr)
        return result

    def json(self, *args: str, input: str | None = None):
        return json.loads(self.ok("--output", "json", *args, input=input).stdout)

    def commit(self, group: str, offsets: dict) -> None:
        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap)
        try:
            admin.alter_group_offsets(group, {TopicPartition(t, p): OffsetAndMetadata(o, "", -1)
                                              for (t, p), o in offsets.items()})
        finally:
            admin.close()

    def committed(self, group: str) -> dict:
        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap)
        try:
            fetched = admin.list_group_offsets(group).get(group, {})
        finally:
            admin.close()
        return {(tp.topic, tp.partition): m.offset for tp, m in fetched.items() if m.offset >= 0}

    def leader_epoch(self, topic: str, partition: int):
        """The partition's leader epoch as the node's Metadata reports it (None: none)."""
        with KafkaClient(self.bootstrap) as client:
            return client.metadata([topic]).leader_epoch(topic, partition)

    def group(self, offsets: dict) -> str:
        """A new inactive group with `offsets` committed."""
        name = f"g-{uuid.uuid4().hex[:8]}"
        self.commit(name, offsets)
        return name


@pytest.fixture
def cluster(node):
    return Cluster(node.bootstrap)


def orders(*offsets: int) -> dict:
    return {("orders", p): o for p, o in enumerate(offsets)}


def rows(stdout: str) -> list[list[str]]:
    return [line.split() for line in stdout.splitlines()[1:]]


# -- bad input: exit 2, one line, nothing contacted -----------------------------------------------

CHOOSING_COMMANDS = {
    "show": ["offsets", "show"],
    "reset": ["offsets", "reset", "--all-topics", "--to-earliest"],
    "export": ["offsets", "export"],
    "delete": ["offsets", "delete", "--all-topics"],
}


@pytest.mark.parametrize("command", CHOOSING_COMMANDS.values(), ids=CHOOSING_COMMANDS.keys())
@pytest.mark.parametrize("choice", [["--group", "a", "--all-groups"], ["a", "--all-groups"]], ids=["option", "positional"])
def test_group_and_all_groups_together_are_a_usage_error_before_any_contact(unreachable, command, choice):
    assert_one_line_error(invoke([*command, *choice], unreachable), 2, "--all-groups", "not both")


@pytest.mark.parametrize("command", CHOOSING_COMMANDS.values(), ids=CHOOSING_COMMANDS.keys())
def test_no_group_at_all_is_a_usage_error_naming_the_ways_to_choose(unreachable, command):
    assert_one_line_error(invoke(command, unreachable), 2, "GROUP", "--group", "--all-groups")


@pytest.mark.parametrize("command", [
    ["offsets", "reset", "g", "--all-topics", "--to-earliest"],
    ["offsets", "import", "g", "plan.csv"],
    ["offsets", "copy", "--from-group", "a", "--to-group", "b"],
], ids=["reset", "import", "copy"])
def test_dry_run_with_execute_is_a_usage_error(unreachable, command):
    assert_one_line_error(invoke([*command, "--dry-run", "--execute"], unreachable), 2, "--dry-run", "--execute")


MALFORMED_4_COLUMN = [
    ("a,orders,0,5\na,orders,one,6\n", 2, "partition 'one' is not a non-negative integer"),
    ("a,orders,0,5\norders,1,6\n", 2, "expected group,topic,partition,offset, got 'orders,1,6'"),
    ("a,orders,0,5\n,orders,1,6\n", 2, "the group id is empty"),
    ("a,orders,0,5\nb,orders,0,5\na,orders,0,6\n", 3, "orders:0 of group 'a' appears twice"),
    ('a,orders,0,5\n"b,orders,1,6\n', 2, "a quoted field is not closed"),
]


@pytest.mark.parametrize("content, line, fragment", MALFORMED_4_COLUMN)
def test_a_malformed_4_column_plan_file_is_bad_input_naming_its_line(unreachable, tmp_path, content, line, fragment):
    plan = tmp_path / "plan.csv"
    plan.write_text(content)
    for args in (["offsets", "reset", "--from-file", str(plan)], ["offsets", "import", str(plan)],
                 ["offsets", "reset", "--all-groups", "--from-file", str(plan), "--execute"]):
        assert_one_line_error(invoke(args, unreachable), 2, f"{plan}:{line}: ", fragment)


@pytest.mark.parametrize("content, line, fragment", MALFORMED_4_COLUMN)
def test_a_malformed_plan_on_stdin_is_bad_input_naming_its_line(unreachable, content, line, fragment):
    for args in (["offsets", "import", "-"], ["offsets", "reset", "--from-file", "-"]):
        assert_one_line_error(invoke(args, unreachable, input=content), 2, f"<stdin>:{line}: ", fragment)


def test_a_plan_mixing_both_forms_is_bad_input_naming_the_line(unreachable, tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text("orders,0,5\n# then\na,orders,1,6\n")
    assert_one_line_error(invoke(["offsets", "import", "g", str(plan)], unreachable), 2,
                          f"{plan}:3: expected topic,partition,offset", "one form per file")


def test_import_of_a_3_column_plan_needs_the_group(unreachable, tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text("orders,0,5\n")
    assert_one_line_error(invoke(["offsets", "import", str(plan)], unreachable), 2, "3 columns", "GROUP")


def test_import_into_one_group_of_a_plan_naming_others_is_bad_input(unreachable, tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text("a,orders,0,5\nb,orders,0,5\n")
    assert_one_line_error(invoke(["offsets", "import", "a", str(plan)], unreachable), 2, "'b'", "not only of 'a'")


def test_import_takes_at_most_a_group_and_a_file(unreachable):
    assert_one_line_error(invoke(["offsets", "import", "a", "b", "c"], unreachable), 2, "[GROUP] FILE")


def test_reset_of_a_group_a_4_column_plan_does_not_name_is_bad_input(unreachable, tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text("a,orders,0,5\n")
    assert_one_line_error(invoke(["offsets", "reset", "--group", "z", "--from-file", str(plan)], unreachable), 2,
                          "no offsets for group 'z'", "'a'")


@pytest.mark.parametrize("choice", [["--group", "a", "--group", "b"], ["--all-groups"]])
def test_a_3_column_plan_for_several_groups_is_bad_input_as_in_kcg(unreachable, tmp_path, choice):
    plan = tmp_path / "plan.csv"
    plan.write_text("orders,0,5\n")
    assert_one_line_error(invoke(["offsets", "reset", *choice, "--from-file", str(plan)], unreachable), 2,
                          "a topic,partition,offset plan is for one group")


@pytest.mark.parametrize("text", ["30M", "1h30", "5min", "-1h", "P1M"])
def test_reset_rejects_a_duration_in_neither_spelling(unreachable, text):
    assert_one_line_error(invoke(["offsets", "reset", "g", "--all-topics", "--by-duration", text], unreachable), 2,
                          "duration", "30m, 1h", "PnDTnHnMnS")


@pytest.mark.parametrize("args, fragments", [
    (["--from-group", "a", "--to-group", "a"], ["both 'a'"]),
    (["--from-group", "a", "--to-group", "b", "--to-command-config", "x.properties"], ["--to-bootstrap"]),
    (["--from-group", "a", "--to-group", "b", "--to-bootstrap", "nohost"], ["'nohost' is not HOST:PORT"]),
    (["--from-group", "a", "--to-group", "b", "--topic", "t", "--all-topics"], ["not both"]),
    (["--to-group", "b"], ["--from-group"]),
])
def test_copy_rejects_bad_input_before_any_contact(unreachable, args, fragments):
    assert_one_line_error(invoke(["offsets", "copy", *args], unreachable), 2, *fragments)


# -- several groups against a real coordinator --------------------------------------------------


def test_show_of_several_groups_is_one_table_led_by_the_group_column_and_a_json_list(cluster):
    a, b = cluster.group(orders(1, 2, 3)), cluster.group({("audit", 0): 4})
    table = cluster.ok("offsets", "show", "--group", a, "--group", b)
    assert table.stdout.splitlines()[0].split() == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG"]
    assert rows(table.stdout) == [[a, "orders", "0", "1", "10", "9"], [a, "orders", "1", "2", "10", "8"],
                                  [a, "orders", "2", "3", "10", "7"], [b, "audit", "0", "4", "10", "6"]]
    shown = cluster.json("offsets", "show", "--group", a, "--group", b)
    assert [s["group"] for s in shown] == [a, b] and [list(s) for s in shown] == [["group", "state", "offsets"]] * 2
    assert shown[0] == cluster.json("offsets", "show", a)  # the one-group object, as the positional form prints it


def test_one_group_named_with_the_option_is_a_list_and_the_positional_form_an_object(cluster):
    a = cluster.group(orders(1))
    assert isinstance(cluster.json("offsets", "show", "--group", a), list)
    assert isinstance(cluster.json("offsets", "show", a), dict)
    assert isinstance(cluster.json("offsets", "export", "--group", a), list)


def test_show_names_each_missing_group_on_its_own_line_after_printing_the_others(cluster):
    a = cluster.group(orders(1))
    result = cluster.run("--output", "json", "offsets", "show", "--group", "ghost-1", "--group", a, "--group", "ghost-2")
    assert result.exit_code == 1
    assert [s["group"] for s in json.loads(result.stdout)] == [a]
    assert result.stderr.splitlines() == ["groupctl: error: group 'ghost-1' does not exist",
                                          "groupctl: error: group 'ghost-2' does not exist"]


def test_all_groups_covers_every_group_of_the_cluster(cluster):
    a, b = cluster.group(orders(1)), cluster.group(orders(2))
    listed = [s["group"] for s in cluster.json("offsets", "show", "--all-groups")]
    assert {a, b} <= set(listed) and listed == sorted(listed)


def test_export_of_several_groups_writes_kafka_consumer_groups_4_column_csv(cluster):
    a, b = cluster.group(orders(1, 2)), cluster.group({("audit", 0): 4})
    assert cluster.ok("offsets", "export", "--group", a, "--group", b).stdout == (
        f"{a},orders,0,1\n{a},orders,1,2\n{b},audit,0,4\n")
    assert cluster.ok("offsets", "export", a).stdout == "orders,0,1\norders,1,2\n"
    # one --group: K-CG's 3 columns (its isSingleGroupQuery), for export and reset --export alike
    assert cluster.ok("offsets", "export", "--group", a).stdout == "orders,0,1\norders,1,2\n"
    assert cluster.ok("offsets", "reset", "--group", a, "--all-topics", "--to-current", "--export").stdout == (
        "orders,0,1\norders,1,2\n")
    assert cluster.ok("offsets", "reset", "--group", a, "--group", b, "--all-topics", "--to-current",
                      "--export").stdout == f"{a},orders,0,1\n{a},orders,1,2\n{b},audit,0,4\n"
    assert cluster.json("offsets", "export", "--group", a, "--group", b) == [
        {"group": a, "offsets": [{"topic": "orders", "partition": 0, "offset": 1, "leader_epoch": None},
                                 {"topic": "orders", "partition": 1, "offset": 2, "leader_epoch": None}]},
        {"group": b, "offsets": [{"topic": "audit", "partition": 0, "offset": 4, "leader_epoch": None}]}]


def test_a_4_column_export_imports_back_from_stdin_dry_run_first(cluster):
    a, b = cluster.group(orders(1, 2)), cluster.group({("audit", 0): 4})
    exported = cluster.ok("offsets", "export", "--group", a, "--group", b).stdout
    edited = exported.replace(f"{a},orders,1,2", f"{a},orders,1,9").replace(f"{b},audit,0,4", f"{b},audit,0,0")
    dry = cluster.ok("offsets", "import", "-", "--dry-run", input=edited)
    assert rows(dry.stdout) == [[a, "orders", "0", "1", "1"], [a, "orders", "1", "2", "9"], [b, "audit", "0", "4", "0"]]
    assert dry.stderr.splitlines() == ["dry run: nothing was changed (add --execute to apply)"]
    assert (cluster.committed(a), cluster.committed(b)) == (orders(1, 2), {("audit", 0): 4})
    plans = cluster.json("offsets", "import", "-", "--execute", input=edited)
    assert [(p["group"], p["executed"]) for p in plans] == [(a, True), (b, True)]
    assert (cluster.committed(a), cluster.committed(b)) == (orders(1, 9), {("audit", 0): 0})
    assert cluster.ok("offsets", "export", "--group", a, "--group", b).stdout == edited


def test_import_of_a_4_column_plan_into_its_one_group_is_the_one_group_form(cluster, tmp_path):
    a = cluster.group(orders(1))
    plan = tmp_path / "plan.csv"
    plan.write_text(f"{a},orders,0,5\n")
    done = cluster.json("offsets", "import", a, str(plan), "--execute")
    assert done["group"] == a and done["executed"] and cluster.committed(a) == orders(5)


def test_reset_from_stdin_reads_a_3_column_plan_for_the_named_group(cluster):
    a = cluster.group(orders(1, 2))
    cluster.ok("offsets", "reset", a, "--from-file", "-", "--execute", input="orders,0,7\n")
    assert cluster.committed(a) == orders(7, 2)


def test_reset_from_a_4_column_plan_resets_the_groups_it_names_or_those_chosen(cluster, tmp_path):
    a, b = cluster.group(orders(1)), cluster.group(orders(2))
    plan = tmp_path / "plan.csv"
    plan.write_text(f"{a},orders,0,5\n{b},orders,0,6\n")
    cluster.ok("offsets", "reset", "--group", b, "--from-file", str(plan), "--execute")
    assert (cluster.committed(a), cluster.committed(b)) == (orders(1), orders(6))
    cluster.ok("offsets", "reset", "--from-file", str(plan), "--execute")
    assert (cluster.committed(a), cluster.committed(b)) == (orders(5), orders(6))


def test_reset_of_several_groups_is_planned_together_and_applied_with_execute(cluster):
    a, b = cluster.group(orders(1, 2, 3)), cluster.group(orders(4, 5, 6))
    dry = cluster.ok("offsets", "reset", "--group", a, "--group", b, "--topic", "orders:0,1", "--shift-by", "2")
    assert rows(dry.stdout) == [[a, "orders", "0", "1", "3"], [a, "orders", "1", "2", "4"],
                                [b, "orders", "0", "4", "6"], [b, "orders", "1", "5", "7"]]
    assert "dry run" in dry.stderr and cluster.committed(a) == orders(1, 2, 3)
    exported = cluster.ok("offsets", "reset", "--group", a, "--group", b, "--topic", "orders:2", "--to-latest",
                          "--export").stdout
    assert exported == f"{a},orders,2,10\n{b},orders,2,10\n"
    plans = cluster.json("offsets", "reset", "--group", a, "--group", b, "--all-topics", "--to-earliest", "--execute")
    assert [(p["group"], p["executed"], [q["new_offset"] for q in p["partitions"]]) for p in plans] == [
        (a, True, [0, 0, 0]), (b, True, [0, 0, 0])]
    assert cluster.committed(a) == cluster.committed(b) == orders(0, 0, 0)


def test_reset_of_several_groups_leaves_a_missing_group_alone_with_a_line_and_resets_the_others(cluster):
    a = cluster.group(orders(1, 2, 3))
    result = cluster.run("offsets", "reset", "--group", a, "--group", "ghost", "--group", "ghost-2", "--all-topics",
                         "--to-earliest", "--execute")
    assert result.exit_code == 1
    assert [row[0] for row in rows(result.stdout)] == [a, a, a]
    assert result.stderr.splitlines() == [
        "groupctl: error: group 'ghost' does not exist", "groupctl: error: group 'ghost-2' does not exist",
        f"groupctl: error: reset applied to 1 of 3 group(s) ({a}); not applied to ghost, ghost-2"]
    assert cluster.committed(a) == orders(0, 0, 0)


def test_a_failure_while_applying_says_which_groups_were_applied_and_which_not(node, cluster):
    first, second = cluster.group(orders(1)), cluster.group(orders(2))

    def refuse(ctx, request):
        topic = ctx.response_class.OffsetCommitResponseTopic
        return ctx.respond(throttle_time_ms=0, topics=[topic(name=t.name, topic_id=t.topic_id, partitions=[
            topic.OffsetCommitResponsePartition(partition_index=p.partition_index, error_code=30)
            for p in t.partitions]) for t in request.topics])

    node.node.faults.replace_next(OFFSET_COMMIT, refuse)  # the first group's commit
    result = cluster.run("offsets", "reset", "--group", first, "--group", second, "--all-topics", "--to-offset", "5",
                         "--execute")
    assert result.exit_code == 1
    assert rows(result.stdout) == [[first, "orders", "0", "1", "5"], [second, "orders", "0", "2", "5"]]
    assert result.stderr.splitlines() == [
        f"groupctl: error: committing orders:0 for group '{first}' failed: GROUP_AUTHORIZATION_FAILED",
        f"groupctl: error: reset applied to 1 of 2 group(s) ({second}); not applied to {first}"]
    assert (cluster.committed(first), cluster.committed(second)) == (orders(1), orders(5))


@pytest.mark.parametrize("spelling, duration_ms", [
    ("1h", HOUR_MS), ("30m", HOUR_MS // 2), ("90s", 90_000), ("2d", 48 * HOUR_MS), ("1h30m", 90 * 60_000),
    ("PT1H", HOUR_MS), ("P1DT2H", 26 * HOUR_MS), ("pt30m", HOUR_MS // 2),
])
def test_by_duration_takes_units_and_iso_8601_and_looks_up_now_minus_the_duration(cluster, spelling, duration_ms):
    a = cluster.group(orders(1))
    before = int(time.time() * 1000)
    plan = cluster.json("offsets", "reset", a, "--topic", "orders:0", "--by-duration", spelling)
    after = int(time.time() * 1000)
    assert before - duration_ms <= plan["timestamp_ms"] <= after - duration_ms
    assert plan["partitions"][0]["new_offset"] == 0  # every record is younger than the duration


def test_delete_of_several_groups_has_a_group_column_and_a_list_of_groups(cluster):
    a, b = cluster.group({**orders(1), ("audit", 0): 1}), cluster.group({("audit", 0): 2})
    table = cluster.ok("offsets", "delete", "--group", a, "--group", b, "--topic", "audit")
    assert table.stdout.splitlines()[0].split() == ["GROUP", "TOPIC", "PARTITION", "RESULT"]
    assert rows(table.stdout) == [[a, "audit", "0", "deleted"], [b, "audit", "0", "deleted"]]
    assert cluster.committed(a) == orders(1)
    c = cluster.group({("audit", 0): 3})
    assert cluster.json("offsets", "delete", "--group", c, "--all-topics") == [
        {"group": c, "partitions": [{"topic": "audit", "partition": 0, "deleted": True, "error": None}]}]


def test_delete_with_all_groups_leaves_out_the_groups_without_offsets_for_the_topic(node):
    own = start_node((("orders", 1), ("audit", 1)))
    try:
        cluster = Cluster(own.bootstrap)
        a, b = cluster.group({("orders", 0): 1, ("audit", 0): 1}), cluster.group({("orders", 0): 2})
        assert cluster.json("offsets", "delete", "--all-groups", "--topic", "audit") == [
            {"group": a, "partitions": [{"topic": "audit", "partition": 0, "deleted": True, "error": None}]}]
        named = cluster.run("offsets", "delete", "--group", b, "--topic", "audit")
        assert_one_line_error(named, 2, f"group '{b}' has no committed offsets for topic 'audit'")
    finally:
        own.stop()


# -- offsets copy --------------------------------------------------------------------------------


def test_copy_is_a_dry_run_by_default_showing_the_target_groups_plan(cluster):
    source, target = cluster.group(orders(4, 5, 6)), cluster.group(orders(1))
    dry = cluster.ok("offsets", "copy", "--from-group", source, "--to-group", target)
    assert dry.stdout.splitlines()[0] == f"committed offsets of group {source} for group {target}"
    assert rows(dry.stdout)[1:] == [[target, "orders", "0", "1", "4"], [target, "orders", "1", "-", "5"],
                                    [target, "orders", "2", "-", "6"]]
    assert dry.stderr.splitlines() == ["dry run: nothing was changed (add --execute to apply)"]
    assert cluster.committed(target) == orders(1)
    plan = cluster.json("offsets", "copy", "--from-group", source, "--to-group", target, "--topic", "orders:1", "--dry-run")
    assert plan == {"from_group": source, "group": target, "to_bootstrap": None, "executed": False, "partitions": [
        {"topic": "orders", "partition": 1, "current_offset": None, "new_offset": 5, "clamped_from": None,
         "leader_epoch": cluster.leader_epoch("orders", 1)}],
        "skipped": []}


def test_copy_with_execute_commits_the_source_offsets_for_a_new_group(cluster):
    source = cluster.group({**orders(4, 5, 6), ("audit", 0): 7})
    target = f"new-{uuid.uuid4().hex[:8]}"
    done = cluster.json("offsets", "copy", "--from-group", source, "--to-group", target, "--topic", "orders", "--execute")
    assert done["executed"] is True
    assert cluster.committed(target) == orders(4, 5, 6)


def test_copy_from_a_group_without_offsets_or_of_a_topic_it_lacks_fails_with_one_line(cluster):
    assert_one_line_error(cluster.run("offsets", "copy", "--from-group", "ghost", "--to-group", "x"), 1,
                          "group 'ghost' does not exist")
    source = cluster.group(orders(1))
    assert_one_line_error(cluster.run("offsets", "copy", "--from-group", source, "--to-group", "x", "--topic", "audit"),
                          2, f"group '{source}' has no committed offsets for topic 'audit'")


def test_copy_to_another_cluster_skips_and_reports_the_partitions_it_lacks(cluster):
    other = start_node((("orders", 2),))  # no audit; orders has 2 partitions there
    try:
        source = cluster.group({**orders(4, 5, 6), ("audit", 0): 7})
        target = f"copied-{uuid.uuid4().hex[:8]}"
        done = cluster.run("offsets", "copy", "--from-group", source, "--to-group", target,
                           "--to-bootstrap", other.bootstrap, "--execute")
        assert done.exit_code == 0, done.stderr
        assert done.stderr.splitlines() == [
            f"warning: audit:0 of group '{source}' is not copied: the topic does not exist on the target cluster",
            f"warning: orders:2 of group '{source}' is not copied: the target topic has 2 partition(s)"]
        assert Cluster(other.bootstrap).committed(target) == orders(4, 5)
        assert cluster.committed(target) == {}  # nothing on the source cluster
        same = cluster.json("offsets", "copy", "--from-group", source, "--to-group", source,
                            "--to-bootstrap", other.bootstrap, "--topic", "orders:0")
        assert same["to_bootstrap"] == other.bootstrap and same["partitions"][0]["new_offset"] == 4
    finally:
        other.stop()


def test_when_every_group_fails_only_their_error_lines_are_printed(cluster):
    for command in (["offsets", "show"], ["offsets", "export"], ["offsets", "delete", "--all-topics"]):
        result = cluster.run(*command, "--group", "ghost-1", "--group", "ghost-2")
        assert (result.exit_code, result.stdout) == (1, ""), command
        assert result.stderr.splitlines() == ["groupctl: error: group 'ghost-1' does not exist",
                                              "groupctl: error: group 'ghost-2' does not exist"]


def test_dry_run_spelled_out_is_the_default_and_changes_nothing(cluster, tmp_path):
    a = cluster.group(orders(1))
    plan = tmp_path / "plan.csv"
    plan.write_text("orders,0,5\n")
    for command in (["offsets", "reset", a, "--all-topics", "--to-latest", "--dry-run"],
                    ["offsets", "import", a, str(plan), "--dry-run"],
                    ["offsets", "copy", "--from-group", a, "--to-group", f"{a}-copy", "--dry-run"]):
        result = cluster.ok(*command)
        assert result.stderr.splitlines()[-1] == "dry run: nothing was changed (add --execute to apply)", command
    assert cluster.committed(a) == orders(1) and cluster.committed(f"{a}-copy") == {}
