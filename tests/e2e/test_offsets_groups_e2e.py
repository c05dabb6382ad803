"""The installed `groupctl offsets` commands on several groups at once and `offsets copy`, against
a coordinator keeping its groups in a real ZooKeeper, with real confluent-kafka consumers.

- Groups drained by real consumers (then stopped) are reset together: a dry run, then
  `--execute`, checked with `offsets show --group ... --group ...`.
- One live group among several is left alone with one line naming it, the others are reset (as K-CG).
- `offsets export --group ...` (4 columns) goes back through `offsets import -` on stdin.
- `offsets copy` dry run, then `--execute`: a consumer of the target group starts at the copied
  offsets; `--to-bootstrap` copies to a second coordinator by topic name.
"""

from __future__ import annotations

import json
import subprocess
import uuid

import pytest

from tests.e2e.test_cli_e2e import assert_one_line_error, assert_quiet, installed_groupctl
from tests.support.consumer_groups import coordinator_with_topic, produce
from tests.support.consumers import ConsumerProcess
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.polling import wait_until

pytestmark = pytest.mark.zookeeper
TOPIC, PARTITIONS, PER_PARTITION = "payments", 3, 10


@pytest.fixture(scope="module")
def node(zookeeper, tmp_path_factory):
    """A coordinator on ZooKeeper with PER_PARTITION records in each partition of TOPIC."""
    with coordinator_with_topic(f"{zookeeper.connect}/t-{uuid.uuid4().hex}", tmp_path_factory.mktemp("offsets-e2e"),
                                TOPIC, PARTITIONS) as running:
        produce(running.bootstrap, TOPIC, PARTITIONS, (f"m{i}" for i in range(PER_PARTITION * PARTITIONS)))
        yield running


def run(bootstrap: str, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([installed_groupctl(), "--bootstrap", bootstrap, *args], capture_output=True, text=True,
                          timeout=60, input=input, stdin=None if input is not None else subprocess.DEVNULL)
    assert_quiet(done.stdout, done.stderr)
    return done


def ok(bootstrap: str, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    done = run(bootstrap, *args, input=input)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def as_json(bootstrap: str, *args: str, input: str | None = None):
    return json.loads(ok(bootstrap, "--output", "json", *args, input=input).stdout)


def committed(bootstrap: str, *groups: str) -> dict:
    """{group: [committed offset of each partition]} from `offsets show --group ...`."""
    options = [a for g in groups for a in ("--group", g)]
    return {s["group"]: [o["committed_offset"] for o in s["offsets"]] for s in as_json(bootstrap, "offsets", "show", *options)}


def group_name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def state(bootstrap: str, group: str) -> str | None:
    done = run(bootstrap, "--output", "json", "offsets", "show", group)
    return json.loads(done.stdout)["state"] if done.returncode == 0 else None


def drained_by_a_consumer(bootstrap: str, group: str) -> None:
    """`group` consumes every record with a real consumer (committing as it goes), which then leaves."""
    consumer = ConsumerProcess("confluent", bootstrap, group, TOPIC, client_id=f"{group}-app", max_seconds=90)
    try:
        wait_until(lambda: state(bootstrap, group) == "Stable"
                   and committed(bootstrap, group)[group] == [PER_PARTITION] * PARTITIONS,
                   60, interval=0.5, message=f"{group} Stable with every record committed")
    finally:
        consumer.stop()
    wait_until(lambda: state(bootstrap, group) == "Empty", 30, interval=0.5, message=f"{group} Empty once it left")


def test_several_groups_drained_by_real_consumers_are_reset_together(node):
    first, second = group_name("drained"), group_name("drained")
    for group in (first, second):
        drained_by_a_consumer(node.bootstrap, group)
    both = ["--group", first, "--group", second]

    dry = ok(node.bootstrap, "offsets", "reset", *both, "--topic", f"{TOPIC}:0,2", "--to-offset", "4")
    assert [line.split() for line in dry.stdout.splitlines()] == [
        ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET"],
        [first, TOPIC, "0", "10", "4"], [first, TOPIC, "2", "10", "4"],
        [second, TOPIC, "0", "10", "4"], [second, TOPIC, "2", "10", "4"]]
    assert dry.stderr == "dry run: nothing was changed (add --execute to apply)\n"
    assert committed(node.bootstrap, first, second) == {first: [10, 10, 10], second: [10, 10, 10]}

    plans = as_json(node.bootstrap, "offsets", "reset", *both, "--topic", f"{TOPIC}:0,2", "--to-offset", "4", "--execute")
    assert [(p["group"], p["executed"]) for p in plans] == [(first, True), (second, True)]
    assert committed(node.bootstrap, first, second) == {first: [4, 10, 4], second: [4, 10, 4]}


def test_a_live_group_among_several_is_left_alone_with_an_error_line_and_the_others_are_reset(node):
    idle = group_name("idle")
    ok(node.bootstrap, "offsets", "commit", idle, *(f"{TOPIC}:{p}=5" for p in range(PARTITIONS)))
    live = group_name("live")
    consumer = ConsumerProcess("confluent", node.bootstrap, live, TOPIC, client_id="live-app", max_seconds=90)
    try:
        wait_until(lambda: state(node.bootstrap, live) == "Stable", 60, interval=0.5, message=f"{live} Stable")
        choice = ["--group", idle, "--group", live, "--all-topics", "--to-earliest"]
        dry = run(node.bootstrap, "offsets", "reset", *choice, "--dry-run")
        assert dry.returncode == 1, dry.stderr
        assert {line.split()[0] for line in dry.stdout.splitlines()[1:]} == {idle}  # the idle group's plan only
        assert [line for line in dry.stderr.splitlines() if line.startswith("groupctl: error:")] == [
            next(line for line in dry.stderr.splitlines() if f"group '{live}' is Stable with 1 member(s)" in line)]
        assert committed(node.bootstrap, idle) == {idle: [5, 5, 5]}

        done = run(node.bootstrap, "offsets", "reset", *choice, "--execute")
        assert done.returncode == 1, done.stderr
        assert f"reset applied to 1 of 2 group(s) ({idle}); not applied to {live}" in done.stderr
        assert committed(node.bootstrap, idle) == {idle: [0, 0, 0]}
    finally:
        consumer.stop()


def test_a_4_column_export_goes_back_through_import_on_stdin(node):
    first, second = group_name("exported"), group_name("exported")
    ok(node.bootstrap, "offsets", "commit", first, f"{TOPIC}:0=1", f"{TOPIC}:1=2")
    ok(node.bootstrap, "offsets", "commit", second, f"{TOPIC}:2=3")
    exported = ok(node.bootstrap, "offsets", "export", "--group", first, "--group", second).stdout
    assert exported == f"{first},{TOPIC},0,1\n{first},{TOPIC},1,2\n{second},{TOPIC},2,3\n"
    edited = exported.replace(f"{first},{TOPIC},1,2", f"{first},{TOPIC},1,8").replace(f"{TOPIC},2,3", f"{TOPIC},2,9")

    dry = ok(node.bootstrap, "offsets", "import", "-", input=edited)
    assert "dry run" in dry.stderr and committed(node.bootstrap, first, second) == {first: [1, 2], second: [3]}
    done = ok(node.bootstrap, "offsets", "import", "-", "--execute", input=edited)
    assert "dry run" not in done.stderr
    assert committed(node.bootstrap, first, second) == {first: [1, 8], second: [9]}
    assert ok(node.bootstrap, "offsets", "export", "--group", first, "--group", second).stdout == edited


def test_copy_dry_run_then_execute_and_a_consumer_of_the_target_starts_at_the_copied_offsets(node):
    source, target = group_name("source"), group_name("target")
    ok(node.bootstrap, "offsets", "commit", source, *(f"{TOPIC}:{p}={3 + 2 * p}" for p in range(PARTITIONS)))

    dry = ok(node.bootstrap, "offsets", "copy", "--from-group", source, "--to-group", target)
    assert [line.split() for line in dry.stdout.splitlines()[2:]] == [
        [target, TOPIC, str(p), "-", str(3 + 2 * p)] for p in range(PARTITIONS)]
    assert "dry run" in dry.stderr
    assert_one_line_error(run(node.bootstrap, "offsets", "show", target), 1, "does not exist")

    copied = as_json(node.bootstrap, "offsets", "copy", "--from-group", source, "--to-group", target, "--execute")
    assert copied["executed"] is True and copied["skipped"] == []
    assert committed(node.bootstrap, target) == {target: [3, 5, 7]}

    consumer = ConsumerProcess("confluent", node.bootstrap, target, TOPIC, client_id="target-app", max_seconds=90)
    try:
        def first_offsets():
            _, records = consumer.snapshot()
            firsts = {}
            for _, partition, offset, _ in records:
                firsts[partition] = min(offset, firsts.get(partition, offset))
            return firsts if len(firsts) == PARTITIONS else None

        assert wait_until(first_offsets, 60, interval=0.5, message="the target's consumer reading every partition") == {
            0: 3, 1: 5, 2: 7}
        refused = run(node.bootstrap, "offsets", "copy", "--from-group", source, "--to-group", target, "--execute")
        assert_one_line_error(refused, 1, f"group '{target}' is", "member(s)")
    finally:
        consumer.stop()


def test_copy_to_another_cluster_by_topic_name(node):
    other = InProcessCoordinator(node_config(topics=((TOPIC, 2),))).start()  # two partitions there
    try:
        produce(other.bootstrap, TOPIC, 2, (f"o{i}" for i in range(2 * PER_PARTITION)))
        source = group_name("mirrored")
        ok(node.bootstrap, "offsets", "commit", source, *(f"{TOPIC}:{p}={p + 1}" for p in range(PARTITIONS)))
        done = ok(node.bootstrap, "offsets", "copy", "--from-group", source, "--to-group", source,
                  "--to-bootstrap", other.bootstrap, "--execute")
        assert done.stderr.splitlines() == [
            f"warning: {TOPIC}:2 of group '{source}' is not copied: the target topic has 2 partition(s)"]
        assert committed(other.bootstrap, source) == {source: [1, 2]}
        assert committed(node.bootstrap, source) == {source: [1, 2, 3]}
    finally:
        other.stop()
