"""The installed `groupctl` on a live KIP-848 consumer group: unmodified confluent-kafka consumers
(`group.protocol=consumer`) on a coordinator that keeps its groups in a real ZooKeeper, and the
command given only --bootstrap. `group describe` reports the group type, epochs, assignor and
each member's epoch and target (JSON, and kafka-consumer-groups.sh 4.x's verbose tables), `group
list` its type (and filters by it), and `rebalance watch` a member joining as the new group epoch
and then the group Stable at it."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.e2e.test_cli_e2e import assert_quiet, installed_groupctl
from tests.support.consumer_groups import coordinator_with_topic
from tests.support.consumers import ConsumerProcess
from tests.support.polling import wait_until

pytestmark = pytest.mark.zookeeper
GROUP, TOPIC, PARTITIONS = "cli-readers", "events", 4
WHOLE = f"{TOPIC}:0,1,2,3"


@pytest.fixture
def node(zk_connect, tmp_path):
    """A coordinator whose consumer group members heartbeat every second (reconciling quickly)."""
    with coordinator_with_topic(zk_connect, tmp_path / "data", TOPIC, PARTITIONS) as running:
        yield running


def member(node, client_id: str) -> ConsumerProcess:
    return ConsumerProcess("confluent", node.bootstrap, GROUP, TOPIC, client_id=client_id, group_protocol="consumer",
                           max_seconds=90)


def command(node, *args: str) -> list[str]:
    return [installed_groupctl(), "--bootstrap", node.bootstrap, *args]


def groupctl(node, *args: str) -> str:
    """The command's stdout; it must exit 0, quietly."""
    done = subprocess.run(command(node, *args), capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert_quiet(done.stdout, done.stderr)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def rows(output: str) -> list[list[str]]:
    return [line.split() for line in output.splitlines() if line.strip()]


def settled_alone(node) -> dict | None:
    """`group describe` in JSON once the group is Stable with one member owning every partition
    (None before, including before the member's first heartbeat has created the group)."""
    if GROUP not in groupctl(node, "group", "list"):
        return None
    described = json.loads(groupctl(node, "--output", "json", "group", "describe", GROUP))
    if described["state"] != "Stable" or [m["assignment"] for m in described["members"]] != [
            {TOPIC: list(range(PARTITIONS))}]:
        return None
    return described


def test_describe_and_list_show_a_live_consumer_groups_type_epochs_assignor_and_targets(node):
    first = member(node, "first")
    try:
        described = wait_until(lambda: settled_alone(node), 60, interval=0.5,
                               message="the group Stable with its member owning every partition")
        epoch = described["group_epoch"]
        assert (described["group_type"], described["protocol_type"], described["assignor"]) == (
            "consumer", "consumer", "uniform")
        assert described["generation"] == epoch >= 1 and described["assignment_epoch"] == epoch
        [owner] = described["members"]
        assert (owner["client_id"], owner["member_epoch"]) == ("first", epoch)
        assert owner["target_assignment"] == owner["assignment"]
        assert [o["partition"] for o in described["offsets"]] == list(range(PARTITIONS))

        assert rows(groupctl(node, "group", "describe", GROUP, "--members", "--verbose")) == [
            ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "CURRENT-EPOCH", "CURRENT-ASSIGNMENT",
             "TARGET-EPOCH", "TARGET-ASSIGNMENT"],
            [GROUP, owner["member_id"], owner["client_host"], "first", str(PARTITIONS), str(epoch), WHOLE,
             str(epoch), WHOLE]]
        assert rows(groupctl(node, "group", "describe", GROUP, "--state", "--verbose"))[1] == [
            GROUP, f"127.0.0.1:{node.port}", "(0)", "uniform", "Stable", str(epoch), str(epoch), "1"]

        assert [GROUP, "Stable", "consumer", "0", f"(127.0.0.1:{node.port})", "consumer"] in rows(
            groupctl(node, "group", "list"))
        listed = json.loads(groupctl(node, "--output", "json", "group", "list", "--type", "consumer"))
        assert [(g["group"], g["group_type"]) for g in listed] == [(GROUP, "consumer")]
        assert json.loads(groupctl(node, "--output", "json", "group", "list", "--type", "classic")) == []
    finally:
        first.stop()


def test_rebalance_watch_reports_a_joining_members_new_epoch_and_then_the_group_stable_at_it(node):
    first = member(node, "first")
    second = None
    try:
        epoch = wait_until(lambda: settled_alone(node), 60, interval=0.5,
                           message="the group Stable with its member owning every partition")["group_epoch"]
        watch = subprocess.Popen(command(node, "--output", "json", "rebalance", "watch", GROUP, "--count", "2",
                                         "--timeout", "60"),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
        try:
            wait_until(lambda: node.node.documents.waiting(GROUP), 15, 0.05, message="the watch's long poll waiting")
            second = member(node, "second")
            out, err = watch.communicate(timeout=75)
        finally:
            if watch.poll() is None:
                watch.kill()
                watch.wait(10)
        assert_quiet(out, err)
        assert watch.returncode == 0, (out, err)
        moving, settling = (json.loads(line) for line in out.splitlines())
        assert (moving["group_type"], moving["previous_generation"], moving["generation"]) == (
            "consumer", epoch, epoch + 1)
        assert moving["state"] != "Stable" and [m["client_id"] for m in moving["members_joined"]] == ["second"]
        assert (settling["previous_generation"], settling["generation"], settling["state"]) == (
            epoch + 1, epoch + 1, "Stable")
        assert (settling["assignment_epoch"], settling["members"], len(settling["partitions_moved"])) == (
            epoch + 1, 2, 2)
    finally:
        first.stop()
        if second is not None:
            second.stop()
