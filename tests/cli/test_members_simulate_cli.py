"""`groupctl members simulate` through CliRunner: the usage errors (exit 2, one line, nothing
contacted), an unreachable cluster (exit 1, one line), the wiring of --duration/--until-stable and
of Ctrl-C (with the engine replaced by a fake), and whole rehearsals against a real in-process
coordinator: JSON Lines to stable, the summary table when piped, --until-stable running out of time.

The real coordinators tell members to heartbeat every 200 ms (`fast_coordinator`: rehearsals
settle within a second) or keep Apache Kafka's 5 s (`paced_coordinator`: a joining member waits
for its partitions until the next heartbeat, so a short --duration passes before the group is
stable). Every run is bounded by --duration.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import time

import pytest
from typer.testing import CliRunner

from groupctl.cli.app import app
from groupctl.coordinator.consumer.config import ConsumerGroupConfig
from groupctl.simulate.simulation import Snapshot, Summary
from tests.support.cli import assert_one_line_error
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.ports import closed_port

TOPIC, PARTITIONS = "orders", 6
TRANSITION_KEYS = ["event", "member_id", "from", "to", "epoch", "at_ms"]


def run(args: list[str], env: dict | None = None):
    return CliRunner().invoke(app, args, env={"GROUPCTL_BOOTSTRAP": None, "GROUPCTL_ZK": None, **(env or {})},
                              catch_exceptions=False)


def simulate(*options: str) -> list[str]:
    return ["members", "simulate", "--group", "rehearsal", "--topic", TOPIC, *options]


def json_lines(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


def _coordinator(heartbeat_interval_ms: int):
    config = node_config(topics=((TOPIC, PARTITIONS),),
                         consumer_groups=ConsumerGroupConfig(heartbeat_interval_ms=heartbeat_interval_ms))
    node = InProcessCoordinator(config).start()
    try:
        yield node
    finally:
        node.stop()


@pytest.fixture
def fast_coordinator():
    yield from _coordinator(200)


@pytest.fixture
def paced_coordinator():
    yield from _coordinator(5_000)


# -- usage errors and an unreachable cluster -------------------------------------------------------


@pytest.mark.parametrize("options, fragment", [
    (["--count", "2", "--duration", "2x"], "--duration '2x' is not a duration"),
    (["--count", "2", "--duration", "0"], "--duration must be longer than zero"),
    (["--count", "2", "--churn", "fast"], "--churn 'fast' is not a rate"),
    (["--count", "2", "--churn", "2/d"], "--churn '2/d' is not a rate"),
    (["--count", "0"], "--count"),
    (["--count", "2", "--protocol", "sticky"], "--protocol"),
])
def test_bad_options_are_usage_errors_of_one_line_before_anything_is_contacted(options, fragment):
    result = run(simulate(*options), {"GROUPCTL_BOOTSTRAP": f"127.0.0.1:{closed_port()}"})

    assert_one_line_error(result, 2, fragment)


def test_no_topic_and_no_pattern_is_a_usage_error_of_one_line():
    result = run(["members", "simulate", "--group", "rehearsal", "--count", "2"],
                 {"GROUPCTL_BOOTSTRAP": f"127.0.0.1:{closed_port()}"})

    assert_one_line_error(result, 2, "--topic", "--pattern")


def test_an_unreachable_bootstrap_fails_with_one_line_within_10_seconds():
    port = closed_port()
    started = time.monotonic()
    result = run(["--bootstrap", f"127.0.0.1:{port}", *simulate("--count", "2", "--until-stable")])

    assert_one_line_error(result, 1, f"cannot reach bootstrap 127.0.0.1:{port}")
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("text, per_second", [("2", 2.0), ("0.5", 0.5), ("2/s", 2.0), ("30/m", 0.5),
                                              ("360/h", 0.1), ("0", 0.0)])
def test_churn_rates_are_members_restarted_per_second(text, per_second):
    from groupctl.cli.members import parse_churn

    assert parse_churn(text) == pytest.approx(per_second)


# -- the command's wiring, with the engine replaced --------------------------------------------------


def summary(ended_by: str, **overrides) -> Summary:
    fields = dict(states={"STABLE": 2}, time_to_stable_s=None, assignment={}, partitions_moved=0, max_unowned_ms=0,
                  heartbeats=4, protocol="consumer", members=2, group_epoch=2, ended_by=ended_by, elapsed_s=0.5,
                  left=2)
    return Summary(**{**fields, **overrides})


@pytest.fixture
def fake_engine(monkeypatch):
    """`Simulation.run` replaced by `fake_engine.behaviour(stop, on_check)` (a coroutine function),
    the coordinator lookup by a no-op; `fake_engine.calls` records how run was asked to run."""

    class Engine:
        calls: list[dict] = []
        behaviour = None

    async def run(self, stop, *, duration_s, until_stable, on_check=None):
        Engine.calls.append({"duration_s": duration_s, "until_stable": until_stable})
        return await Engine.behaviour(stop, on_check)

    monkeypatch.setattr("groupctl.simulate.simulation.Simulation.run", run)
    monkeypatch.setattr("groupctl.ops.groups.find_coordinator", lambda bootstrap, group: None)
    return Engine


def test_until_stable_runs_120s_unless_told_and_a_plain_run_runs_until_stopped(fake_engine):
    async def stable(stop, on_check):
        return summary("stable", time_to_stable_s=0.3)

    fake_engine.behaviour = stable
    for options in (["--until-stable"], ["--until-stable", "--duration", "2m"], ["--duration", "500ms"], []):
        assert run(["--bootstrap", "h:1", *simulate("--count", "2", *options)]).exit_code == 0

    assert [(c["duration_s"], c["until_stable"]) for c in fake_engine.calls] == [
        (120.0, True), (120.0, True), (0.5, False), (float("inf"), False)]


def test_a_first_ctrl_c_stops_the_rehearsal_and_exits_0_with_the_summary(fake_engine):
    async def interrupted(stop, on_check):
        on_check(Snapshot(0.25, {"STABLE": 2}, 2, 0, 6, 6, 4, False))
        os.kill(os.getpid(), signal.SIGINT)
        await asyncio.wait_for(stop.wait(), 5)
        return summary("interrupt")

    fake_engine.behaviour = interrupted
    result = run(["--bootstrap", "h:1", "--output", "json", *simulate("--count", "2", "--until-stable")])

    assert result.exit_code == 0, result.output
    (last,) = json_lines(result.stdout)
    assert last == summary("interrupt").to_json() and result.stderr == ""


def test_a_second_ctrl_c_while_members_leave_aborts_with_130_and_no_summary(fake_engine):
    async def leaving_slowly(stop, on_check):
        os.kill(os.getpid(), signal.SIGINT)
        await asyncio.wait_for(stop.wait(), 5)
        os.kill(os.getpid(), signal.SIGINT)
        await asyncio.sleep(10)  # the members' leave, cut short by the second Ctrl-C
        return summary("interrupt")

    fake_engine.behaviour = leaving_slowly
    started = time.monotonic()
    result = run(["--bootstrap", "h:1", "--output", "json", *simulate("--count", "2")])

    assert result.exit_code == 130 and result.stdout == ""
    assert result.stderr.startswith("groupctl: error: aborted while the members were leaving")
    assert time.monotonic() - started < 5


# -- whole rehearsals against a real coordinator -----------------------------------------------------


def test_json_until_stable_prints_transitions_then_a_summary_of_a_disjoint_cover_and_every_member_leaves(
        fast_coordinator):
    from groupctl.ops.groups import describe_group

    result = run(["--bootstrap", fast_coordinator.bootstrap, "--output", "json",
                  *simulate("--count", "5", "--until-stable", "--duration", "20s")])

    assert result.exit_code == 0, result.output
    *transitions, last = json_lines(result.stdout)
    assert transitions and all(list(t) == TRANSITION_KEYS and t["event"] == "transition" for t in transitions)
    assert last["event"] == "summary" and last["ended_by"] == "stable"
    assert last["states"] == {"STABLE": 5} and last["members"] == 5 and last["left"] == 5
    owned = [tuple(tp) for partitions in last["assignment"].values() for tp in partitions]
    assert len(last["assignment"]) == 5
    assert sorted(owned) == [(TOPIC, p) for p in range(PARTITIONS)]  # each partition exactly once
    assert last["overlaps"] == 0 and last["time_to_stable_s"] <= last["elapsed_s"]
    last_state_of = {t["member_id"]: t["to"] for t in transitions}  # each member's last transition
    assert last_state_of == {member: "UNSUBSCRIBED" for member in last["assignment"]}
    assert describe_group(fast_coordinator.bootstrap, "rehearsal", include_offsets=False).members == ()


def test_piped_table_output_is_the_summary_table_alone(fast_coordinator):
    result = run(["--bootstrap", fast_coordinator.bootstrap,
                  *simulate("--count", "3", "--until-stable", "--duration", "20s")])

    assert result.exit_code == 0, result.output
    rows = [re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in result.stdout.splitlines()]
    assert rows[0] == ["SUMMARY", "VALUE"]
    table = dict(rows[1:])
    assert (table["protocol"], table["ended by"], table["states"], table["left"]) == (
        "consumer", "stable", "STABLE 3", "3 of 3")
    assert table["overlaps"] == "0" and table["commits"] == "-"


def test_until_stable_past_its_duration_exits_1_after_the_summary_with_one_line_on_what_was_not_stable(
        paced_coordinator):
    result = run(["--bootstrap", paced_coordinator.bootstrap, "--output", "json",
                  *simulate("--count", "5", "--until-stable", "--duration", "0.3s")])

    assert result.exit_code == 1, result.output
    last = json_lines(result.stdout)[-1]
    assert last["event"] == "summary" and last["ended_by"] == "duration" and last["time_to_stable_s"] is None
    assert last["left"] == 5
    (line,) = result.stderr.splitlines()
    assert line.startswith("groupctl: error: the group was not stable within 0.3s: members ")
    assert f"of {PARTITIONS} partition(s) unowned" in line and "Traceback" not in result.output
