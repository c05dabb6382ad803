"""`groupctl members simulate`, the installed command, against a coordinator that keeps its groups in
a real ZooKeeper: 200 KIP-848 members reach STABLE with a disjoint cover of the topic; simulated
members share a group with unmodified confluent-kafka consumers (`group.protocol=consumer`); a
simulator stopped with SIGSTOP past the session timeout has its members fenced, and after SIGCONT
they go FENCED -> JOINING -> STABLE again; Ctrl-C makes every member leave at once (the group is
Empty immediately, not after a session timeout); and `--protocol classic` rehearses the same with
JoinGroup/SyncGroup and a client-side assignor."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from collections import Counter

import pytest

from tests.e2e.test_cli_e2e import installed_groupctl
from tests.support.consumer_groups import FAST_CONSUMER_GROUPS, coordinator_with_topic
from tests.support.consumers import ConsumerProcess
from tests.support.polling import wait_until

pytestmark = pytest.mark.zookeeper
TOPIC, PARTITIONS = "events", 256
SESSION_S = FAST_CONSUMER_GROUPS.session_timeout_ms / 1000


@pytest.fixture
def node(zk_connect, tmp_path):
    """A coordinator whose consumer group members heartbeat every second and are fenced after 6 s."""
    with coordinator_with_topic(zk_connect, tmp_path / "data", TOPIC, PARTITIONS) as running:
        yield running


class Simulator:
    """`groupctl --output json members simulate ...` running, its JSON lines read as they come."""

    def __init__(self, node, group: str, *args: str) -> None:
        self.proc = subprocess.Popen(
            [installed_groupctl(), "--bootstrap", node.bootstrap, "--output", "json", "members", "simulate",
             "--group", group, "--topic", TOPIC, *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
        self.lines: list[dict] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(json.loads(line))

    def finish(self, timeout: float = 60) -> tuple[int, dict, str]:
        """(exit status, summary line, stderr) once the simulator exits by itself."""
        try:
            status = self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(10)
        self._reader.join(10)
        stderr = self.proc.stderr.read()
        assert self.lines and self.lines[-1]["event"] == "summary", stderr
        return status, self.lines[-1], stderr

    def interrupt(self, timeout: float = 30) -> tuple[int, dict, str]:
        self.proc.send_signal(signal.SIGINT)
        return self.finish(timeout)

    def transitions(self, member_id: str) -> list[tuple[str, str]]:
        return [(t["from"], t["to"]) for t in list(self.lines)
                if t["event"] == "transition" and t["member_id"] == member_id]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def describe(node, group: str) -> dict:
    """`group describe` in JSON; a group nobody joined yet is Dead with no members."""
    done = subprocess.run([installed_groupctl(), "--bootstrap", node.bootstrap, "--output", "json", "group",
                           "describe", group], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    if done.returncode == 1 and "does not exist" in done.stderr:
        return {"state": "Dead", "members": []}
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def owners(members: list[dict]) -> Counter:
    """How many members own each (topic, partition), from `group describe` members."""
    return Counter((topic, p) for m in members for topic, ps in m["assignment"].items() for p in ps)


def covered_once(assignment: dict[str, list[list]]) -> bool:
    held = Counter((topic, p) for tps in assignment.values() for topic, p in tps)
    return set(held) == {(TOPIC, p) for p in range(PARTITIONS)} and set(held.values()) == {1}


def stable_with(node, group: str, count: int) -> dict | None:
    described = describe(node, group)
    if described["state"] != "Stable" or len(described["members"]) != count:
        return None
    return described


def test_200_simulated_members_reach_stable_with_a_disjoint_cover_and_leave_nothing_behind(node):
    simulator = Simulator(node, "rehearsal", "--count", "200", "--until-stable", "--duration", "90s")
    try:
        status, summary, stderr = simulator.finish(timeout=150)
    finally:
        simulator.kill()
    assert status == 0, stderr
    assert summary["states"] == {"STABLE": 200} and summary["ended_by"] == "stable"
    assert len(summary["assignment"]) == 200 and covered_once(summary["assignment"])
    assert summary["overlaps"] == 0 and summary["left"] == 200
    assert summary["time_to_stable_s"] is not None and summary["heartbeats"] >= 400
    joined = {t["member_id"] for t in simulator.lines if t["event"] == "transition" and t["to"] == "STABLE"}
    assert joined == set(summary["assignment"])
    described = describe(node, "rehearsal")
    assert described["state"] == "Empty" and described["members"] == []


def test_simulated_members_and_confluent_consumers_share_one_group(node):
    real = [ConsumerProcess("confluent", node.bootstrap, "mixed", TOPIC, client_id=f"real-{i}",
                            group_protocol="consumer", max_seconds=120) for i in range(2)]
    simulator = None
    try:
        wait_until(lambda: stable_with(node, "mixed", 2), 40, message="the confluent consumers settled")
        simulator = Simulator(node, "mixed", "--count", "30", "--duration", "90s")
        described = wait_until(lambda: stable_with(node, "mixed", 32), 60, interval=0.5,
                               message="32 members stable")
        held = owners(described["members"])
        assert set(held) == {(TOPIC, p) for p in range(PARTITIONS)} and set(held.values()) == {1}
        assert all(m["assignment"] for m in described["members"] if m["client_id"].startswith("real-"))
        status, summary, stderr = simulator.interrupt()
        assert status == 0, stderr
        assert summary["left"] == 30 and summary["overlaps"] == 0
        back = wait_until(lambda: stable_with(node, "mixed", 2), 30, message="the real consumers hold everything again")
        assert set(owners(back["members"])) == {(TOPIC, p) for p in range(PARTITIONS)}
    finally:
        if simulator is not None:
            simulator.kill()
        for consumer in real:
            consumer.stop()


def test_a_stopped_simulator_is_fenced_and_after_sigcont_its_members_rejoin_to_stable(node):
    simulator = Simulator(node, "paused", "--count", "10", "--duration", "120s")
    try:
        first = wait_until(lambda: stable_with(node, "paused", 10), 40, message="10 members stable")
        before = {m["member_id"] for m in first["members"]}
        os.kill(simulator.proc.pid, signal.SIGSTOP)
        try:
            wait_until(lambda: describe(node, "paused")["state"] == "Empty", SESSION_S + 20,
                       message="every stopped member fenced by the session timeout")
        finally:
            os.kill(simulator.proc.pid, signal.SIGCONT)
        again = wait_until(lambda: stable_with(node, "paused", 10), 40, message="stable again after SIGCONT")
        assert {m["member_id"] for m in again["members"]} == before  # fenced members rejoin with their ids
        status, summary, stderr = simulator.interrupt()
        assert status == 0, stderr
        for member_id in before:
            steps = simulator.transitions(member_id)
            fenced = steps.index(("STABLE", "FENCED"))
            assert ("FENCED", "JOINING") in steps[fenced:]
            assert any(to == "STABLE" for _, to in steps[fenced + 1:])
        assert summary["states"].get("STABLE") == 10
    finally:
        simulator.kill()


def test_ctrl_c_makes_every_member_leave_at_once(node):
    simulator = Simulator(node, "interrupted", "--count", "20", "--commit")
    try:
        wait_until(lambda: stable_with(node, "interrupted", 20), 40, message="20 members stable")
        status, summary, stderr = simulator.interrupt(timeout=20)
        assert status == 0, stderr
        assert summary["ended_by"] == "interrupt" and summary["left"] == 20
        assert summary["commits"].get("ok", 0) >= 1 and not summary["commits"].get("failed")
        described = describe(node, "interrupted")  # at once: a session timeout would take 6 s
        assert described["state"] == "Empty" and described["members"] == []
        leaves = [t for t in simulator.lines if t["event"] == "transition" and t["to"] == "UNSUBSCRIBED"]
        assert len({t["member_id"] for t in leaves}) == 20 and all(t["from"] == "LEAVING" for t in leaves)
    finally:
        simulator.kill()


def test_the_classic_protocol_is_rehearsed_with_a_client_side_assignor(node):
    simulator = Simulator(node, "classic-rehearsal", "--count", "40", "--protocol", "classic", "--assignor", "range",
                          "--until-stable", "--duration", "90s")
    try:
        status, summary, stderr = simulator.finish(timeout=120)
    finally:
        simulator.kill()
    assert status == 0, stderr
    assert summary["protocol"] == "classic" and summary["states"] == {"STABLE": 40}
    assert covered_once(summary["assignment"]) and summary["overlaps"] == 0 and summary["left"] == 40
    described = describe(node, "classic-rehearsal")
    assert described["state"] == "Empty"
