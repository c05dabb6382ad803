"""The installed `groupctl` over several groups at once, as kafka-consumer-groups.sh users spell it
(`--group G` repeatable, `--all-groups`, `--only-with-lag`, `group list --state stable,empty`,
`--topic T`), on a coordinator keeping its groups in a real ZooKeeper, with real members:
a confluent-kafka consumer of the classic protocol, one with `group.protocol=consumer`
(KIP-848), and idle groups whose offsets kafka-python's admin client committed.

Checked: the tables have K-CG's columns in its order with the members' real ids, hosts and
client ids, the JSON of several groups is a list of the objects one group gives, a KIP-848 group
among several is still described with its epochs and target assignment, and `group delete
--all-groups --force` deletes what can go and names each group that cannot.
"""

from __future__ import annotations

import json
import subprocess
import uuid

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaAdminClient
from kafka.structs import OffsetAndMetadata, TopicPartition

from tests.e2e.test_cli_e2e import assert_quiet, installed_groupctl
from tests.support.consumer_groups import coordinator_with_topic, produce
from tests.support.consumers import ConsumerProcess
from tests.support.polling import wait_until

pytestmark = pytest.mark.zookeeper
TOPIC, PARTITIONS, RECORDS = "events", 2, 10
OTHER = "other"
CLASSIC, KIP848, LAGGING, ELSEWHERE = "classic-readers", "kip848-readers", "idle-lagging", "idle-elsewhere"
OFFSETS_HEADER = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
                  "CLIENT-ID"]


def groupctl(node, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([installed_groupctl(), "--bootstrap", node.bootstrap, *args], capture_output=True,
                          text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert_quiet(done.stdout, done.stderr)
    return done


def ok(node, *args: str) -> str:
    done = groupctl(node, *args)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def rows(output: str) -> list[list[str]]:
    return [line.split() for line in output.splitlines() if line.strip()]


def settled(node) -> dict | None:
    """The two live groups in JSON once each is Stable with its one member owning every
    partition and every record committed (None before)."""
    done = groupctl(node, "--output", "json", "group", "describe", "--group", CLASSIC, "--group", KIP848)
    if done.returncode != 0:
        return None
    described = {d["group"]: d for d in json.loads(done.stdout)}
    for d in described.values():
        if d["state"] != "Stable" or [m["assignment"] for m in d["members"]] != [{TOPIC: list(range(PARTITIONS))}]:
            return None
        if [o["lag"] for o in d["offsets"]] != [0] * PARTITIONS:
            return None
    return described


@pytest.fixture(scope="module")
def node(zookeeper, tmp_path_factory):
    """A coordinator with `events` (2 partitions, 5 records each) and `other` (1 partition), the
    groups CLASSIC and KIP848 (one live member each, caught up), LAGGING (committed 1 on
    events:0, 5 on events:1) and ELSEWHERE (committed on `other` only)."""
    zk = f"{zookeeper.connect}/many-{uuid.uuid4().hex}"
    with coordinator_with_topic(zk, tmp_path_factory.mktemp("data"), TOPIC, PARTITIONS) as running:
        admin = AdminClient({"bootstrap.servers": running.bootstrap, "broker.address.family": "v4"})
        admin.create_topics([NewTopic(OTHER, 1, 1)])[OTHER].result(15)
        produce(running.bootstrap, TOPIC, PARTITIONS, [f"r{i}" for i in range(RECORDS)])
        committer = KafkaAdminClient(bootstrap_servers=running.bootstrap)
        try:
            committer.alter_group_offsets(LAGGING, {TopicPartition(TOPIC, 0): OffsetAndMetadata(1, "", -1),
                                                    TopicPartition(TOPIC, 1): OffsetAndMetadata(5, "", -1)})
            committer.alter_group_offsets(ELSEWHERE, {TopicPartition(OTHER, 0): OffsetAndMetadata(0, "", -1)})
        finally:
            committer.close()
        members = [ConsumerProcess("confluent", running.bootstrap, CLASSIC, TOPIC, client_id="classic-app",
                                   max_seconds=240),
                   ConsumerProcess("confluent", running.bootstrap, KIP848, TOPIC, client_id="kip848-app",
                                   group_protocol="consumer", max_seconds=240)]
        try:
            wait_until(lambda: settled(running), 60, interval=0.5,
                       message="both live groups Stable, owning every partition, caught up")
            yield running
        finally:
            for member in members:
                member.stop()


def test_describe_of_several_groups_has_kcg_columns_with_the_real_members_ids_hosts_and_client_ids(node):
    described = settled(node)
    out = ok(node, "group", "describe", "--group", CLASSIC, "--group", KIP848, "--group", LAGGING, "--offsets")

    member = {g: d["members"][0] for g, d in described.items()}
    assert rows(out) == [OFFSETS_HEADER] + [
        [g, TOPIC, str(p), "5", "5", "0", member[g]["member_id"], member[g]["client_host"], member[g]["client_id"]]
        for g in (CLASSIC, KIP848) for p in range(PARTITIONS)] + [
        [LAGGING, TOPIC, "0", "1", "5", "4", "-", "-", "-"], [LAGGING, TOPIC, "1", "5", "5", "0", "-", "-", "-"]]
    assert {m["client_id"] for m in member.values()} == {"classic-app", "kip848-app"}
    assert all(m["client_host"].endswith("127.0.0.1") for m in member.values())


def test_members_and_state_of_several_groups_are_kcg_tables_a_row_per_member_and_group(node):
    described = settled(node)
    members = rows(ok(node, "group", "describe", "--group", CLASSIC, "--group", KIP848, "--group", LAGGING,
                      "--members"))
    states = rows(ok(node, "group", "describe", "--group", KIP848, "--group", CLASSIC, "--state"))

    whole = f"{TOPIC}:0,1"
    assert members == [["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT"]] + [
        [g, described[g]["members"][0]["member_id"], described[g]["members"][0]["client_host"],
         described[g]["members"][0]["client_id"], str(PARTITIONS), whole] for g in (CLASSIC, KIP848)] + [
        ["Consumer", "group", f"'{LAGGING}'", "has", "no", "active", "members."]]
    port = node.bootstrap.rsplit(":", 1)[1]
    assert states[0] == ["GROUP", "COORDINATOR", "(ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS", "PROTOCOL-TYPE",
                         "GENERATION", "TYPE"]
    assert [row[:7] + row[8:] for row in states[1:]] == [  # GENERATION left out: epochs move
        [KIP848, f"127.0.0.1:{port}", "(0)", "uniform", "Stable", "1", "consumer", "consumer"],
        [CLASSIC, f"127.0.0.1:{port}", "(0)", described[CLASSIC]["protocol"], "Stable", "1", "consumer", "classic"]]


def test_a_kip848_group_among_all_groups_keeps_its_epochs_and_target_assignment(node):
    described = settled(node)
    epoch = described[KIP848]["group_epoch"]
    verbose = rows(ok(node, "group", "describe", "--all-groups", "--members", "--verbose"))

    by_group = {row[0]: row for row in verbose[1:] if row[0] in (CLASSIC, KIP848)}
    assert verbose[0] == ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "CURRENT-EPOCH",
                          "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT"]
    assert by_group[KIP848][4:] == [str(PARTITIONS), str(epoch), f"{TOPIC}:0,1", str(epoch), f"{TOPIC}:0,1"]
    assert by_group[CLASSIC][4:] == [str(PARTITIONS), "-", f"{TOPIC}:0,1", "-", "-"]


def test_all_groups_json_is_a_list_of_the_single_group_objects(node):
    settled(node)
    every = json.loads(ok(node, "--output", "json", "group", "describe", "--all-groups"))
    single = json.loads(ok(node, "--output", "json", "group", "describe", LAGGING))

    assert [d["group"] for d in every] == sorted([CLASSIC, ELSEWHERE, LAGGING, KIP848])
    assert all(list(d) == list(single) for d in every)
    assert next(d for d in every if d["group"] == LAGGING) == single
    consumer = next(d for d in every if d["group"] == KIP848)
    assert (consumer["group_type"], consumer["assignor"], consumer["members"][0]["target_assignment"]) == (
        "consumer", "uniform", {TOPIC: [0, 1]})


def test_only_with_lag_keeps_the_lagging_partitions_of_every_group(node):
    settled(node)
    table = rows(ok(node, "group", "describe", "--all-groups", "--offsets", "--only-with-lag"))
    every = json.loads(ok(node, "--output", "json", "group", "describe", "--all-groups", "--only-with-lag"))

    assert table == [OFFSETS_HEADER, [LAGGING, TOPIC, "0", "1", "5", "4", "-", "-", "-"]]
    assert {d["group"]: [(o["partition"], o["lag"]) for o in d["offsets"]] for d in every} == {
        CLASSIC: [], ELSEWHERE: [], LAGGING: [(0, 4)], KIP848: []}


def test_a_missing_group_among_several_is_one_error_line_and_exit_1_after_the_others(node):
    done = groupctl(node, "--output", "json", "group", "describe", "--group", "ghost", "--group", LAGGING)

    assert done.returncode == 1
    assert [d["group"] for d in json.loads(done.stdout)] == [LAGGING]
    assert done.stderr.splitlines() == ["groupctl: error: group 'ghost' does not exist"]


def test_group_list_filters_by_comma_separated_states_and_by_committed_topic(node):
    settled(node)

    def listed(*args: str) -> list[str]:
        return [g["group"] for g in json.loads(ok(node, "--output", "json", "group", "list", *args))]

    assert listed("--state", "stable,EMPTY") == sorted([CLASSIC, ELSEWHERE, LAGGING, KIP848])
    assert listed("--state", "Stable") == [CLASSIC, KIP848]
    assert listed("--state", "empty", "--type", "classic,consumer") == [ELSEWHERE, LAGGING]
    assert listed("--topic", TOPIC) == [CLASSIC, LAGGING, KIP848]
    assert listed("--topic", OTHER) == [ELSEWHERE]
    assert listed("--topic", TOPIC, "--state", "stable", "--type", "consumer") == [KIP848]


def test_delete_all_groups_with_force_deletes_the_empty_groups_and_names_each_live_one(node):
    """Last in the module: it deletes the idle groups the tests above describe."""
    settled(node)
    assert groupctl(node, "group", "delete", "--all-groups").returncode == 2  # not without --force

    done = groupctl(node, "group", "delete", "--all-groups", "--force")

    assert done.returncode == 1
    assert sorted(done.stdout.splitlines()) == [f"deleted group {ELSEWHERE}", f"deleted group {LAGGING}"]
    errors = done.stderr.splitlines()
    assert len(errors) == 2 and all(e.startswith("groupctl: error: group '") for e in errors)
    assert [g for g in (CLASSIC, KIP848) if any(f"'{g}' is Stable with 1 member(s)" in e for e in errors)] == [
        CLASSIC, KIP848]
    assert [g["group"] for g in json.loads(ok(node, "--output", "json", "group", "list"))] == [CLASSIC, KIP848]
