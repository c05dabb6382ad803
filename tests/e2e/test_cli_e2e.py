"""The installed `groupctl` command against a running coordinator, real ZooKeeper and real consumers.

Every command runs as a subprocess of the installed console script, with its output piped: so
each run also checks that piped output is quiet (no spinner or colour escape codes) and that no
expected failure prints a traceback.

One coordinator (group metadata in a real ZooKeeper, own chroot) serves the whole module; each
test uses groups of its own. The active group `live` has a real confluent-kafka consumer for
the module's lifetime; the offset tests use inactive groups whose offsets they commit first.
One test uses a coordinator of its own with the embedded store (describe, trigger and watch
given only --bootstrap).
"""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import select
import shutil
import subprocess
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic
from kazoo.client import KazooClient

from groupctl.coordinator.placement import group_partition
from tests.support.consumers import ConsumerProcess
from tests.support.polling import wait_until
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.fixtures import require
from tests.support.ports import closed_port

pytestmark = pytest.mark.zookeeper

DESCRIBE_KEYS = ["group", "group_type", "state", "protocol_type", "protocol", "generation", "group_epoch",
                 "assignment_epoch", "assignor", "coordinator", "members", "offsets", "configs",
                 "pending_offsets"]
MEMBER_KEYS = ["member_id", "group_instance_id", "client_id", "client_host", "member_epoch", "assignment",
               "target_assignment", "upgraded"]
OFFSET_KEYS = ["topic", "partition", "committed_offset", "log_end_offset", "lag", "ahead_of_log_end",
               "committed_leader_epoch"]
EVENTS, EVENTS_PARTITIONS, EVENTS_PER_PARTITION = "events", 3, (4, 7, 9)
LEDGER, LEDGER_PARTITIONS, LEDGER_PER_PARTITION = "ledger", 2, 10
HOUR_MS = 3600_000


def installed_groupctl() -> str:
    found = shutil.which("groupctl") or str(Path(sys.executable).parent / "groupctl")
    require("the installed groupctl command", os.access(found, os.X_OK), "pip install -e . into the venv")
    return found


class Cluster:
    """The module's coordinator: its addresses and a runner for the installed command."""

    def __init__(self, executable: str, bootstrap: str, zk: str, produced_at_ms: int) -> None:
        self.executable = executable
        self.bootstrap = bootstrap
        self.zk = zk
        self.produced_at_ms = produced_at_ms  # "now" of the ledger's record timestamps

    def env(self, *, bootstrap: bool = True, zk: bool = True, tz: str | None = None) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GROUPCTL_")}
        env.pop("COLUMNS", None)
        if bootstrap:
            env["GROUPCTL_BOOTSTRAP"] = self.bootstrap
        if zk:
            env["GROUPCTL_ZK"] = self.zk
        if tz is not None:
            env["TZ"] = tz
        return env

    def run(self, *args: str, bootstrap: bool = True, zk: bool = True, tz: str | None = None,
            timeout: float = 30) -> subprocess.CompletedProcess:
        done = subprocess.run([self.executable, *args], env=self.env(bootstrap=bootstrap, zk=zk, tz=tz),
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        assert_quiet(done.stdout, done.stderr)
        return done

    def ok(self, *args: str, **kwargs) -> subprocess.CompletedProcess:
        done = self.run(*args, **kwargs)
        assert done.returncode == 0, (args, done.returncode, done.stdout, done.stderr)
        return done

    def json(self, *args: str, **kwargs):
        return json.loads(self.ok("--output", "json", *args, **kwargs).stdout)

    def spawn(self, *args: str, bootstrap: bool = True, zk: bool = True) -> subprocess.Popen:
        return subprocess.Popen([self.executable, *args], env=self.env(bootstrap=bootstrap, zk=zk),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)

    def committed(self, group: str) -> dict:
        """{(topic, partition): offset} as `offsets export` prints them."""
        rows = csv.reader(io.StringIO(self.ok("offsets", "export", group).stdout))
        return {(topic, int(partition)): int(offset) for topic, partition, offset in rows}


def assert_quiet(*outputs: str) -> None:
    for output in outputs:
        assert "\x1b" not in output, f"escape codes in piped output: {output!r}"
        assert "Traceback" not in output, output


def assert_one_line_error(done: subprocess.CompletedProcess, status: int, *fragments: str) -> str:
    lines = done.stderr.splitlines()
    assert done.returncode == status, (done.returncode, done.stdout, done.stderr)
    assert len(lines) == 1 and lines[0].startswith("groupctl: error: "), done.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(name, partitions, 1)])
    finally:
        admin.close()


def produce(bootstrap: str, records: list[tuple[str, int, int | None]]) -> None:
    """Send (topic, partition, timestamp_ms) records and wait until every one is acknowledged."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    try:
        futures = [producer.send(topic, value=f"m{i}".encode(), partition=partition, timestamp_ms=timestamp)
                   for i, (topic, partition, timestamp) in enumerate(records)]
        producer.flush(30)
        for future in futures:
            future.get(timeout=10)
    finally:
        producer.close()


def stable_member(cluster: "Cluster", group: str, client_id: str) -> dict | None:
    """`group describe` once `group` is Stable with `client_id` owning every events partition
    (None before, including while the group does not exist yet)."""
    done = cluster.run("--output", "json", "group", "describe", group, zk=False)  # --bootstrap alone
    if done.returncode == 1 and "does not exist" in done.stderr:
        return None
    assert done.returncode == 0, (done.stdout, done.stderr)
    described = json.loads(done.stdout)
    if described["state"] != "Stable" or len(described["members"]) != 1:
        return None
    [member] = described["members"]
    if member["client_id"] != client_id or member["assignment"] != {EVENTS: list(range(EVENTS_PARTITIONS))}:
        return None
    return described


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    executable = installed_groupctl()
    zk = f"{zookeeper.connect}/t-{uuid.uuid4().hex}"
    node = InProcessCoordinator(node_config(zk=zk, data_dir=tmp_path_factory.mktemp("cli-e2e"))).start()
    try:
        create_topic(node.bootstrap, EVENTS, EVENTS_PARTITIONS)
        create_topic(node.bootstrap, LEDGER, LEDGER_PARTITIONS)
        produce(node.bootstrap, [(EVENTS, p, None) for p, n in enumerate(EVENTS_PER_PARTITION) for _ in range(n)])
        # ledger: record i of each partition is stamped (10 - i) hours before `now`.
        now_ms = int(time.time() * 1000)
        produce(node.bootstrap, [(LEDGER, p, now_ms - (LEDGER_PER_PARTITION - i) * HOUR_MS)
                                 for p in range(LEDGER_PARTITIONS) for i in range(LEDGER_PER_PARTITION)])
        yield Cluster(executable, node.bootstrap, zk, now_ms)
    finally:
        node.stop()


@pytest.fixture(scope="module")
def live(cluster):
    """The group `live`: one confluent-kafka consumer owning all of `events`, Stable."""
    consumer = ConsumerProcess("confluent", cluster.bootstrap, "live", EVENTS, client_id="live-app",
                               session_timeout_ms=6000, max_seconds=300)
    try:
        wait_until(lambda: stable_member(cluster, "live", "live-app"), 60, interval=0.5,
                   message="the live group Stable with its consumer owning every partition")
        yield consumer
    finally:
        consumer.stop()


def fresh_group(cluster: Cluster, offsets: dict) -> str:
    """A new inactive group with `offsets` committed through `offsets commit`."""
    group = f"g-{uuid.uuid4().hex[:8]}"
    cluster.ok("offsets", "commit", group, *(f"{t}:{p}={o}" for (t, p), o in sorted(offsets.items())))
    assert cluster.committed(group) == offsets
    return group


def ledger(first: int, second: int) -> dict:
    return {(LEDGER, 0): first, (LEDGER, 1): second}


# -- describe, list, find -----------------------------------------------------------------------


def test_describe_json_has_the_documented_keys_and_lag_is_log_end_minus_committed(cluster):
    committed = {(EVENTS, 0): 1, (EVENTS, 1): 7, (EVENTS, 2): 0}
    group = fresh_group(cluster, committed)
    described = cluster.json("group", "describe", group, zk=False)
    assert list(described) == DESCRIBE_KEYS
    assert described["state"] == "Empty" and described["members"] == []
    assert described["coordinator"] == {"node_id": 0, "host": "127.0.0.1", "port": int(cluster.bootstrap.rsplit(":", 1)[1])}
    rows = described["offsets"]
    assert all(list(row) == OFFSET_KEYS for row in rows)
    assert [(r["topic"], r["partition"], r["committed_offset"], r["log_end_offset"], r["lag"]) for r in rows] == [
        (EVENTS, 0, 1, 4, 3), (EVENTS, 1, 7, 7, 0), (EVENTS, 2, 0, 9, 9)]
    assert not any(r["ahead_of_log_end"] for r in rows)
    shown = json.loads(cluster.ok("offsets", "show", group, "--output", "json").stdout)
    assert shown["offsets"] == rows  # the same rows, committed leader epochs included


def test_describe_of_an_active_group_shows_members_and_the_generation_stored_in_zookeeper(cluster, live):
    def agreeing():
        described = stable_member(cluster, "live", "live-app")
        stored = cluster.json("zk", "show", "live", bootstrap=False)
        if described and described["generation"] == stored["document"]["generation"]:
            return described, stored
        return None

    described, stored = wait_until(agreeing, 30, interval=0.5, message="describe and zk show agreeing")
    assert list(described) == DESCRIBE_KEYS
    [member] = described["members"]
    assert list(member) == MEMBER_KEYS
    assert member["member_id"].startswith("live-app") and member["client_host"].endswith("127.0.0.1")
    assert described["protocol_type"] == "consumer" and described["protocol"]
    assert isinstance(described["generation"], int) and described["generation"] >= 1
    assert [m["member_id"] for m in stored["document"]["members"]] == [member["member_id"]]
    # The consumer commits what it consumed: eventually no lag, log end = records produced.
    drained = wait_until(
        lambda: (d := cluster.json("group", "describe", "live"))["offsets"] and all(o["lag"] == 0 for o in d["offsets"]) and d,
        30, interval=0.5, message="the consumer's commits catching up")
    assert [(o["partition"], o["log_end_offset"], o["committed_offset"]) for o in drained["offsets"]] == [
        (p, n, n) for p, n in enumerate(EVENTS_PER_PARTITION)]


def test_describe_table_piped_keeps_whole_member_ids(cluster, live):
    member_id = stable_member(cluster, "live", "live-app")["members"][0]["member_id"]
    table = cluster.ok("group", "describe", "live").stdout
    assert member_id in table and "…" not in table


def test_describe_of_an_unknown_group_says_it_does_not_exist(cluster):
    assert_one_line_error(cluster.run("group", "describe", "no-such-group"), 1, "does not exist")


def test_describe_members_and_offsets_flags_show_both_sections(cluster, live):
    wait_until(lambda: stable_member(cluster, "live", "live-app"), 30, interval=0.5, message="live Stable")
    # Every table starts with GROUP; the second column tells the section (state: COORDINATOR (ID)).
    second_words = [line.split()[1] for line in cluster.ok("group", "describe", "live", "--members", "--offsets")
                    .stdout.splitlines() if line.strip()]
    assert second_words[0] == "CONSUMER-ID" and "COORDINATOR" not in second_words, second_words
    assert second_words[second_words.index("TOPIC") + 1:] == [EVENTS] * EVENTS_PARTITIONS, second_words  # its rows
    everything = [line.split()[1] for line in cluster.ok("group", "describe", "live").stdout.splitlines() if line.strip()]
    assert [w for w in everything if w in ("COORDINATOR", "CONSUMER-ID", "TOPIC")] == [
        "COORDINATOR", "CONSUMER-ID", "TOPIC"]
    described = cluster.json("group", "describe", "live", "--members", "--offsets")
    assert list(described) == DESCRIBE_KEYS and described["members"] and described["offsets"]


def test_a_committed_offset_past_the_log_end_shows_lag_0_flagged_ahead(cluster):
    group = fresh_group(cluster, {(EVENTS, 0): 100, (EVENTS, 1): 7})  # events:0 ends at 4, events:1 at 7
    expected = [(EVENTS, 0, 100, 4, 0, True), (EVENTS, 1, 7, 7, 0, False)]
    for command, row in ((["group", "describe", group, "--offsets"],
                          [group, EVENTS, "0", "100", "4", "0", "(ahead)", "-", "-", "-"]),
                         (["offsets", "show", group], [group, EVENTS, "0", "100", "4", "0", "(ahead)"])):
        rows = cluster.json(*command)["offsets"]
        assert [tuple(r[k] for k in OFFSET_KEYS[:6]) for r in rows] == expected, command
        table = [line.split() for line in cluster.ok(*command).stdout.splitlines()]
        assert row in table, table


UNKNOWN_GROUP_COMMANDS = [
    ["offsets", "reset", "GROUP", "--all-topics", "--to-earliest"],
    ["offsets", "reset", "GROUP", "--topic", LEDGER, "--to-offset", "3", "--execute"],
    ["offsets", "import", "GROUP", "PLAN", "--execute"],
    ["offsets", "show", "GROUP"],
    ["offsets", "export", "GROUP"],
    ["--output", "json", "offsets", "export", "GROUP"],
    ["offsets", "delete", "GROUP", "--all-topics"],
    ["group", "delete", "GROUP"],
]


@pytest.mark.parametrize("command", UNKNOWN_GROUP_COMMANDS, ids=lambda c: " ".join(a for a in c if a != "GROUP"))
def test_commands_on_an_unknown_group_exit_1_saying_it_does_not_exist(cluster, tmp_path, command):
    group = f"no-such-group-{uuid.uuid4().hex[:8]}"
    plan = tmp_path / "plan.csv"
    plan.write_text(f"{LEDGER},0,1\n")
    done = cluster.run(*[{"GROUP": group, "PLAN": str(plan)}.get(a, a) for a in command])
    line = assert_one_line_error(done, 1)
    assert line == f"groupctl: error: group '{group}' does not exist" and done.stdout == ""
    assert_one_line_error(cluster.run("group", "describe", group), 1, "does not exist")  # nothing was created


def test_group_delete_deletes_the_groups_that_exist_and_names_each_that_does_not(cluster):
    first, second = fresh_group(cluster, ledger(1, 1)), fresh_group(cluster, ledger(2, 2))
    done = cluster.run("group", "delete", "ghost-1", first, "ghost-2")
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stdout == f"deleted group {first}\n"
    assert done.stderr.splitlines() == ["groupctl: error: group 'ghost-1' does not exist",
                                        "groupctl: error: group 'ghost-2' does not exist"]
    assert_one_line_error(cluster.run("group", "describe", first), 1, "does not exist")
    as_json = cluster.run("--output", "json", "group", "delete", second, "ghost-3")
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout) == [{"group": second, "deleted": True, "error": None},
                                          {"group": "ghost-3", "deleted": False,
                                           "error": "group 'ghost-3' does not exist"}]


def test_group_list_with_a_state_filter_lists_only_groups_in_that_state(cluster, live):
    idle = fresh_group(cluster, {(EVENTS, 0): 1})
    wait_until(lambda: stable_member(cluster, "live", "live-app"), 30, interval=0.5, message="live Stable")
    stable = cluster.json("group", "list", "--state", "Stable")
    assert "live" in [g["group"] for g in stable] and all(g["state"] == "Stable" for g in stable)
    assert idle not in [g["group"] for g in stable]
    empty = cluster.json("group", "list", "--state", "empty")
    assert idle in [g["group"] for g in empty] and "live" not in [g["group"] for g in empty]
    table = cluster.ok("group", "list").stdout
    assert any(line.split()[:2] == ["live", "Stable"] for line in table.splitlines()), table


@pytest.mark.parametrize("sources", [{"zk": False}, {"bootstrap": False}, {}], ids=["bootstrap", "zk", "both"])
def test_coordinator_find_agrees_between_find_coordinator_and_zookeeper(cluster, live, sources):
    found = cluster.json("coordinator", "find", "live", **sources)
    address = {"node_id": 0, "host": "127.0.0.1", "port": int(cluster.bootstrap.rsplit(":", 1)[1])}
    assert {k: found[k] for k in address} == address
    if sources.get("zk", True):  # ZooKeeper's answer also names the group partition and its leader epoch
        assert found["partition"] == group_partition("live") and found["epoch"] >= 1


# -- rebalances ----------------------------------------------------------------------------------


def generation(cluster: Cluster) -> int:
    return cluster.json("zk", "show", "live", bootstrap=False)["document"]["generation"]


def watch_a_trigger(cluster: Cluster, group: str, watch_args: list[str], **sources) -> tuple[list[dict], str]:
    """Start `watch_args` (a watch with --count 1) first, then trigger rebalances of `group` until
    the watch exits (at most 3 triggers: the watch may still have been starting). Returns the
    JSON objects the watch printed and its stderr."""
    watcher = cluster.spawn("--output", "json", *watch_args, **sources)
    try:
        for _ in range(3):
            cluster.ok("rebalance", "trigger", group, "--reason", "cli e2e", **sources)
            try:
                watcher.wait(timeout=15)
                break
            except subprocess.TimeoutExpired:
                continue
        out, err = watcher.communicate(timeout=30)
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.wait(10)
    assert_quiet(out, err)
    assert watcher.returncode == 0, (out, err)
    return [json.loads(line) for line in out.splitlines()], err


@pytest.mark.parametrize("sources", [{"zk": False}, {"bootstrap": False}], ids=["bootstrap", "zk"])
def test_a_triggered_rebalance_is_observed_by_rebalance_watch(cluster, live, sources):
    before = generation(cluster)
    events, _ = watch_a_trigger(cluster, "live", ["rebalance", "watch", "live", "--count", "1", "--timeout", "60"],
                                **sources)
    [event] = events
    assert event["generation"] > before
    assert event["members"] == 1 and event["state"] == "Stable"
    assert event["reason"] == "trigger"


def test_zk_watch_prints_the_document_of_the_next_generation(cluster, live):
    before = generation(cluster)
    documents, _ = watch_a_trigger(cluster, "live", ["zk", "watch", "live", "--count", "1", "--timeout", "60"],
                                   bootstrap=False)
    [document] = documents
    assert document["group"] == "live" and document["generation"] > before


def test_with_the_embedded_store_describe_trigger_and_watch_work_over_bootstrap_alone(coordinator):
    embedded = Cluster(installed_groupctl(), coordinator.bootstrap, "", 0)
    create_topic(coordinator.bootstrap, EVENTS, EVENTS_PARTITIONS)
    consumer = ConsumerProcess("confluent", coordinator.bootstrap, "solo", EVENTS, client_id="solo-app",
                               session_timeout_ms=6000, max_seconds=120)
    try:
        described = wait_until(lambda: stable_member(embedded, "solo", "solo-app"), 60, interval=0.5,
                               message="the solo group Stable")
        assert isinstance(described["generation"], int) and described["generation"] >= 1
        [event], _ = watch_a_trigger(embedded, "solo", ["rebalance", "watch", "solo", "--count", "1", "--timeout", "60"],
                                     zk=False)
        assert event["generation"] > described["generation"] and event["group"] == "solo"
    finally:
        consumer.stop()


def test_rebalance_watch_exits_1_when_its_timeout_runs_out(cluster):
    started = time.monotonic()
    done = cluster.run("rebalance", "watch", "quiet-group", "--timeout", "2", zk=False)
    assert_one_line_error(done, 1, "timed out")
    assert time.monotonic() - started < 15


def test_rebalance_trigger_of_an_unknown_group_fails_with_one_line(cluster):
    assert_one_line_error(cluster.run("rebalance", "trigger", "no-such-group", zk=False), 1)


# -- offsets: refusals and dry runs -------------------------------------------------------------


@pytest.mark.parametrize("command", [
    ["offsets", "reset", "live", "--all-topics", "--to-earliest", "--execute"],
    ["offsets", "reset", "live", "--all-topics", "--to-earliest"],
    ["offsets", "commit", "live", f"{EVENTS}:0=0"],
], ids=["reset-execute", "reset-dry-run", "commit"])
def test_changing_offsets_of_an_active_group_is_refused_naming_its_state(cluster, live, command):
    before = wait_until(lambda: stable_member(cluster, "live", "live-app") and cluster.committed("live"), 30,
                        interval=0.5, message="live Stable with offsets")
    line = assert_one_line_error(cluster.run(*command), 1, "live")
    assert any(state in line for state in ("Stable", "PreparingRebalance", "CompletingRebalance")), line
    assert cluster.committed("live") == before


def test_import_into_an_active_group_is_refused_and_changes_nothing(cluster, live, tmp_path):
    before = cluster.committed("live")
    plan = tmp_path / "plan.csv"
    plan.write_text(f"{EVENTS},0,0\n")
    assert_one_line_error(cluster.run("offsets", "import", "live", str(plan), "--execute"), 1, "live")
    assert cluster.committed("live") == before


def test_a_dry_run_reset_shows_the_plan_and_changes_nothing(cluster):
    group = fresh_group(cluster, ledger(5, 5))
    done = cluster.ok("offsets", "reset", group, "--all-topics", "--to-earliest")
    assert "dry run" in done.stderr
    assert [line.split()[1:] for line in done.stdout.splitlines()[1:]] == [[LEDGER, "0", "5", "0"], [LEDGER, "1", "5", "0"]]
    plan = cluster.json("offsets", "reset", group, "--all-topics", "--to-latest")
    assert plan["executed"] is False
    assert [p["new_offset"] for p in plan["partitions"]] == [10, 10]
    exported = cluster.ok("offsets", "reset", group, "--topic", f"{LEDGER}:1", "--shift-by", "2", "--export").stdout
    assert exported == f"{LEDGER},1,7\n"
    assert cluster.committed(group) == ledger(5, 5)


def test_reset_of_an_unknown_partition_is_bad_input(cluster):
    group = fresh_group(cluster, ledger(5, 5))
    assert_one_line_error(cluster.run("offsets", "reset", group, "--topic", f"{LEDGER}:7", "--to-earliest"), 2, "unknown partition")
    assert_one_line_error(cluster.run("offsets", "reset", group, "--topic", "nope", "--to-earliest"), 2, "unknown topic")
    assert cluster.committed(group) == ledger(5, 5)


# -- offsets: every reset target, executed on an inactive group ---------------------------------


def iso_utc(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def iso_offset(ms: int, hours: int) -> str:
    zone = timezone(timedelta(hours=hours))
    return datetime.fromtimestamp(ms / 1000, zone).strftime("%Y-%m-%dT%H:%M:%S") + f"{hours:+03d}:00"


def target_cases():
    """(id, target options, scope options, committed before, expected after)."""
    return [
        ("to-earliest", ["--to-earliest"], ["--all-topics"], ledger(5, 6), ledger(0, 0)),
        ("to-latest", ["--to-latest"], ["--all-topics"], ledger(5, 6), ledger(10, 10)),
        ("to-offset", ["--to-offset", "3"], ["--topic", LEDGER], ledger(5, 6), ledger(3, 3)),
        ("to-offset-clamped-to-log-end", ["--to-offset", "1000"], ["--topic", LEDGER], ledger(5, 6), ledger(10, 10)),
        ("to-offset-one-partition", ["--to-offset", "2"], ["--topic", f"{LEDGER}:1"], ledger(5, 6), ledger(5, 2)),
        ("shift-by-back", ["--shift-by", "-2"], ["--all-topics"], ledger(5, 6), ledger(3, 4)),
        ("shift-by-forward", ["--shift-by", "3"], ["--all-topics"], ledger(5, 6), ledger(8, 9)),
        ("shift-by-clamped-to-log-start", ["--shift-by", "-100"], ["--all-topics"], ledger(5, 6), ledger(0, 0)),
        ("shift-by-clamped-to-log-end", ["--shift-by", "100"], ["--all-topics"], ledger(5, 6), ledger(10, 10)),
        ("to-current", ["--to-current"], ["--all-topics"], ledger(5, 6), ledger(5, 6)),
    ]


@pytest.mark.parametrize("target, scope, before, after", [c[1:] for c in target_cases()],
                         ids=[c[0] for c in target_cases()])
def test_reset_with_execute_commits_the_target(cluster, target, scope, before, after):
    group = fresh_group(cluster, before)
    plan = cluster.json("offsets", "reset", group, *scope, *target, "--execute")
    assert plan["executed"] is True
    assert cluster.committed(group) == after


def test_reset_to_datetime_moves_to_the_first_record_at_or_after_it(cluster):
    # Record i is stamped (10 - i) hours before produced_at: 7.5 hours before is record 3.
    group = fresh_group(cluster, ledger(9, 9))
    cluster.ok("offsets", "reset", group, "--all-topics", "--to-datetime",
               iso_utc(cluster.produced_at_ms - 7 * HOUR_MS - HOUR_MS // 2), "--execute")
    assert cluster.committed(group) == ledger(3, 3)
    cluster.ok("offsets", "reset", group, "--topic", f"{LEDGER}:0", "--to-datetime",
               iso_offset(cluster.produced_at_ms - 2 * HOUR_MS - HOUR_MS // 2, 2), "--execute")
    assert cluster.committed(group) == ledger(8, 3)
    # No record at or after the time: the log end, as Kafka does.
    cluster.ok("offsets", "reset", group, "--topic", f"{LEDGER}:1", "--to-datetime", "2999-01-01T00:00:00Z", "--execute")
    assert cluster.committed(group) == ledger(8, 10)


def test_reset_by_duration_moves_to_the_first_record_within_the_duration(cluster):
    # now - 5h30m lies between records 4 (6 h old) and 5 (5 h old), however long the test took.
    group = fresh_group(cluster, ledger(0, 0))
    cluster.ok("offsets", "reset", group, "--all-topics", "--by-duration", "PT5H30M", "--execute")
    assert cluster.committed(group) == ledger(5, 5)
    cluster.ok("offsets", "reset", group, "--all-topics", "--by-duration", "P1D", "--execute")
    assert cluster.committed(group) == ledger(0, 0)


def test_reset_from_a_file_commits_the_file_clamped_to_the_log(cluster, tmp_path):
    group = fresh_group(cluster, ledger(5, 6))
    plan = tmp_path / "plan.csv"
    plan.write_text(f"{LEDGER},0,2\n{LEDGER},1,4000\n")
    done = cluster.ok("offsets", "reset", group, "--from-file", str(plan), "--execute")
    assert done.stderr.splitlines() == [f"warning: offset 4000 of {LEDGER}:1 is past the log end 10; resetting to 10"]
    assert cluster.committed(group) == ledger(2, 10)


@pytest.mark.parametrize("target, clamped", [
    (["--to-offset", "1000"], [1000, 1000]),
    (["--shift-by", "-7"], [None, -1]),
], ids=["to-offset", "shift-by"])
def test_reset_warns_once_per_partition_clamped_to_the_log(cluster, target, clamped):
    group = fresh_group(cluster, ledger(7, 6))
    done = cluster.ok("offsets", "reset", group, "--topic", LEDGER, *target)
    bounds = {1000: "past the log end 10; resetting to 10", -1: "before the log start 0; resetting to 0"}
    assert done.stderr.splitlines() == [
        f"warning: offset {c} of {LEDGER}:{p} is {bounds[c]}" for p, c in enumerate(clamped) if c is not None
    ] + ["dry run: nothing was changed (add --execute to apply)"]
    plan = cluster.json("offsets", "reset", group, "--topic", LEDGER, *target)
    assert [p["clamped_from"] for p in plan["partitions"]] == clamped
    assert all(0 <= p["new_offset"] <= 10 for p in plan["partitions"])


@pytest.fixture(scope="module")
def new_year(cluster):
    """Topic "new-year": 10 records, record i stamped 2020-01-01T0i:00:00Z."""
    create_topic(cluster.bootstrap, "new-year", 1)
    midnight = 1577836800000  # 2020-01-01T00:00:00Z
    produce(cluster.bootstrap, [("new-year", 0, midnight + i * HOUR_MS) for i in range(10)])
    return "new-year"


@pytest.mark.parametrize("tz", ["UTC", "America/New_York", "Asia/Kolkata"])
@pytest.mark.parametrize("when", ["2020-01-01T05:00:00", "2020-01-01T05:00:00Z", "2020-01-01T00:00:00-05:00",
                                  "2020-01-01T10:30:00+05:30"])
def test_reset_to_datetime_resolves_to_the_same_utc_instant_under_every_tz(cluster, new_year, tz, when):
    # Zone-less is UTC, as kafka-consumer-groups.sh reads it; read as local time, New York would
    # land on 10:00Z (offset 10) and Kolkata on 23:30Z the day before (offset 0).
    group = fresh_group(cluster, {(new_year, 0): 9})
    plan = json.loads(cluster.ok("--output", "json", "offsets", "reset", group, "--topic", new_year,
                                 "--to-datetime", when, tz=tz).stdout)
    assert [(p["partition"], p["new_offset"]) for p in plan["partitions"]] == [(0, 5)]
    assert (plan["timestamp"], plan["timestamp_ms"]) == ("2020-01-01T05:00:00Z", 1577854800000)
    table = cluster.ok("offsets", "reset", group, "--topic", new_year, "--to-datetime", when, tz=tz).stdout
    assert table.splitlines()[0] == "first offsets at or after 2020-01-01T05:00:00Z", table
    assert table.splitlines()[2].split() == [group, new_year, "0", "9", "5"], table


def test_export_edit_import_round_trip(cluster, tmp_path):
    group = fresh_group(cluster, {**ledger(5, 6), (EVENTS, 2): 3})
    exported = cluster.ok("offsets", "export", group).stdout
    plan = tmp_path / "plan.csv"
    plan.write_text(exported.replace(f"{LEDGER},1,6", f"{LEDGER},1,9"))
    dry = cluster.ok("offsets", "import", group, str(plan))
    assert "dry run" in dry.stderr
    assert cluster.committed(group) == {**ledger(5, 6), (EVENTS, 2): 3}
    cluster.ok("offsets", "import", group, str(plan), "--execute")
    assert cluster.committed(group) == {**ledger(5, 9), (EVENTS, 2): 3}
    assert cluster.ok("offsets", "export", group).stdout == plan.read_text()


def test_a_malformed_plan_file_is_bad_input_naming_the_line(cluster, tmp_path):
    group = fresh_group(cluster, ledger(5, 6))
    plan = tmp_path / "plan.csv"
    plan.write_text(f"{LEDGER},0,2\n{LEDGER},one,4\n")
    assert_one_line_error(cluster.run("offsets", "import", group, str(plan), "--execute"), 2, f"{plan}:2:")
    assert cluster.committed(group) == ledger(5, 6)


def test_offsets_delete_removes_the_offsets_of_a_topic(cluster):
    group = fresh_group(cluster, {**ledger(4, 2), (EVENTS, 0): 1})
    results = cluster.json("offsets", "delete", group, "--topic", LEDGER)
    assert [(r["topic"], r["partition"], r["deleted"]) for r in results] == [(LEDGER, 0, True), (LEDGER, 1, True)]
    assert cluster.committed(group) == {(EVENTS, 0): 1}


# -- groups and ZooKeeper ---------------------------------------------------------------------


def test_group_delete_removes_an_inactive_group_and_refuses_an_active_one(cluster, live):
    group = fresh_group(cluster, ledger(1, 1))
    deleted = cluster.ok("group", "delete", group)
    assert f"deleted group {group}" in deleted.stdout
    assert_one_line_error(cluster.run("group", "describe", group), 1, "does not exist")
    assert_one_line_error(cluster.run("group", "delete", "live"), 1, "live")
    assert cluster.json("group", "describe", "live")["members"]


def test_zk_ls_get_and_tree_show_the_stored_group(cluster, live):
    group = fresh_group(cluster, ledger(4, 2))
    children = cluster.ok("zk", "ls", "/groups", bootstrap=False).stdout.split()
    assert {"live", group} <= set(children)
    node = cluster.json("zk", "get", f"/groups/{group}", bootstrap=False)
    assert node["path"] == f"/groups/{group}" and node["encoding"] == "utf-8"
    assert node["document"]["group"] == group and json.loads(node["data"]) == node["document"]
    assert node["stat"]["num_children"] >= 1
    listed = cluster.json("zk", "ls", "/groups", bootstrap=False)
    assert listed["path"] == "/groups" and set(listed["children"]) == set(children)
    got = cluster.ok("zk", "get", f"/groups/{group}", bootstrap=False)
    assert json.loads(got.stdout)["group"] == group and "version=" in got.stderr
    tree = cluster.ok("zk", "tree", "/groups", bootstrap=False).stdout.splitlines()
    assert tree[0] == "/groups"
    below = tree[tree.index(f"  {group}") + 1:]
    assert below[:2] == ["    offsets", f"      {LEDGER}"], tree
    walked = cluster.json("zk", "tree", f"/groups/{group}", bootstrap=False)
    assert [(n["path"], n["depth"]) for n in walked["nodes"]][:3] == [
        (f"/groups/{group}", 0), (f"/groups/{group}/offsets", 1), (f"/groups/{group}/offsets/{LEDGER}", 2)]
    assert walked["truncated"] is False
    assert_one_line_error(cluster.run("zk", "ls", "/no/such/znode", bootstrap=False), 1, "/no/such/znode")


def test_zk_show_json_is_the_stored_document(cluster, live):
    shown = cluster.json("zk", "show", "live", bootstrap=False)
    assert shown["layout"] == "groupctl" and shown["path"] == "/groups/live"
    assert shown["document"]["group"] == "live" and shown["document"]["protocol_type"] == "consumer"
    table = cluster.ok("zk", "show", "live", bootstrap=False).stdout
    assert "/groups/live" in table and '"generation"' in table


def test_zk_show_reads_a_legacy_kafka_0_8_consumer_group(cluster):
    client = KazooClient(hosts=cluster.zk)
    client.start(timeout=10)
    try:
        base = "/consumers/old-app"
        client.create(f"{base}/ids/old-app_host-1", json.dumps(
            {"version": 1, "subscription": {"clicks": 1}, "pattern": "white_list", "timestamp": "1400000000000"}).encode(),
            makepath=True)
        client.create(f"{base}/owners/clicks/0", b"old-app_host-1-0", makepath=True)
        client.create(f"{base}/owners/clicks/1", b"old-app_host-1-0", makepath=True)
        client.create(f"{base}/offsets/clicks/0", b"42", makepath=True)
        client.create(f"{base}/offsets/clicks/1", b"7", makepath=True)
    finally:
        client.stop()
        client.close()
    shown = cluster.json("zk", "show", "old-app", bootstrap=False)
    assert shown["layout"] == "kafka-0.8" and shown["path"] == "/consumers/old-app"
    assert shown["document"]["members"] == [{"consumer_id": "old-app_host-1", "subscription": {"clicks": 1},
                                             "pattern": "white_list", "timestamp": "1400000000000"}]
    assert shown["document"]["ownership"] == {"clicks": {"0": "old-app_host-1-0", "1": "old-app_host-1-0"}}
    assert shown["offsets"] == {"clicks": {"0": {"offset": 42}, "1": {"offset": 7}}}
    table = cluster.ok("zk", "show", "old-app", bootstrap=False).stdout
    assert "kafka-0.8" in table and any(line.split() == ["clicks", "0", "42"] for line in table.splitlines()), table


def test_piped_output_has_no_spinner_or_colour_codes(cluster, live):
    """Commands that show a spinner or a live view on a terminal print only their result when
    piped (every run in this module also checks this)."""
    for args, sources in [
        (["group", "list"], {}), (["group", "describe", "live"], {}), (["offsets", "show", "live"], {}),
        (["zk", "tree", "/"], {"bootstrap": False}), (["zk", "show", "live"], {"bootstrap": False}),
    ]:
        done = cluster.ok(*args, **sources)
        assert done.stderr == "", (args, done.stderr)
        assert_quiet(done.stdout)
    watched = cluster.run("rebalance", "watch", "live", "--timeout", "1", zk=False)
    assert watched.returncode == 1 and watched.stdout == ""
    assert_quiet(watched.stderr)


def on_a_terminal(cluster: Cluster, *args: str, timeout: float = 30, **sources) -> tuple[int, str]:
    """Run the command with a pseudo-terminal as stdout and stderr: (exit status, what it wrote)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([cluster.executable, *args], env={**cluster.env(**sources), "COLUMNS": "160"},
                            stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, close_fds=True)
    os.close(follower)
    written = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            readable, _, _ = select.select([leader], [], [], 0.2)
            if not readable:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            written += chunk
        status = proc.wait(timeout=max(deadline - time.monotonic(), 1))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        os.close(leader)
    return status, written.decode(errors="replace")


def test_on_a_terminal_tables_are_styled_and_the_watch_view_ends_with_one_error_line(cluster, live):
    status, written = on_a_terminal(cluster, "group", "describe", "live")
    assert status == 0, written
    assert "\x1b[" in written and "live-app" in written
    status, written = on_a_terminal(cluster, "zk", "show", "live", bootstrap=False)
    assert status == 0 and "\x1b[" in written and "generation" in written, written
    status, written = on_a_terminal(cluster, "rebalance", "watch", "live", "--timeout", "1", zk=False)
    assert status == 1, written
    assert "Traceback" not in written
    assert written.count("groupctl: error:") == 1 and "timed out" in written, written


# -- a wrong chroot ------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["coordinator", "status"], ["coordinator", "find", "live"], ["zk", "show", "live"]],
                         ids=lambda c: " ".join(c))
def test_a_wrong_chroot_fails_with_one_line_hinting_at_the_chroot(cluster, command):
    wrong = cluster.zk + "-typo"
    done = cluster.run("--zk", wrong, *command, bootstrap=False, zk=False)
    assert_one_line_error(done, 1, f"nothing is registered in ZooKeeper at {wrong}",
                          f"is the chroot '/{wrong.split('/', 1)[1]}' right?")
    assert done.stdout == ""


# -- unreachable sources, measured on the installed command -----------------------------------


@pytest.mark.parametrize("args", [["--zk", "ZK", "zk", "ls", "/"], ["--zk", "ZK", "coordinator", "find", "g"],
                                  ["--bootstrap", "BOOT", "group", "describe", "g"]])
def test_an_unreachable_source_fails_the_command_within_10_seconds(cluster, args):
    address = f"127.0.0.1:{closed_port()}"
    argv = [address if a in ("ZK", "BOOT") else a for a in args]
    started = time.monotonic()
    done = subprocess.run([cluster.executable, *argv], env=cluster.env(bootstrap=False, zk=False),
                          capture_output=True, text=True, timeout=30)
    elapsed = time.monotonic() - started
    assert_one_line_error(done, 1, address)
    assert elapsed < 10, elapsed
