"""`groupctl members simulate --protocol classic` against a real coordinator on real ZooKeeper:
simulated classic members (JoinGroup/SyncGroup/Heartbeat, kafka-python's range or cooperative-sticky
assignor run by the elected leader) reach a Stable generation owning a disjoint cover of the topic,
leave an Empty group behind, commit before revoking, survive churn without a partition ever owned
twice, keep a static member's partitions across its restart, and recover from fencing and from a
coordinator that says it is not the coordinator."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Callable, Coroutine, Optional

import pytest

from groupctl.client import kafka_apis as apis
from groupctl.client.kafka import KafkaClient
from groupctl.simulate.context import Settings
from groupctl.simulate.ledger import Transition
from groupctl.simulate.simulation import Simulation, Snapshot, Summary
from tests.support.consumer_groups import coordinator_with_topic, produce

pytestmark = pytest.mark.zookeeper
TOPIC, PARTITIONS = "events", 12
FIND_COORDINATOR, HEARTBEAT = 10, 12
NOT_COORDINATOR, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID = 16, 22, 25
QUICK = dict(heartbeat_interval_ms=500, session_timeout_ms=6_000)  # the coordinator's smallest session


@pytest.fixture
def node(zk_connect, tmp_path):
    """A coordinator (no initial rebalance delay) with a 12-partition topic."""
    with coordinator_with_topic(zk_connect, tmp_path / "data", TOPIC, PARTITIONS) as running:
        yield running


@dataclass
class Rehearsal:
    simulation: Simulation
    transitions: list[Transition]
    summary: Optional[Summary] = None  # once the run ended
    loop_errors: list[dict] = field(default_factory=list)

    def moves(self, from_state: str, to_state: str) -> list[Transition]:
        return [t for t in self.transitions if (t.from_state, t.to_state) == (from_state, to_state)]


async def _rehearse(node, group: str, until: Optional[Callable[[Rehearsal, Snapshot], bool]],
                    duration_s: float = 30, **settings) -> Rehearsal:
    """Simulate classic members in `group` until stable (or, given `until`, until `until(rehearsal,
    snapshot)` says so), or for `duration_s`; every member has left when it returns."""
    settings = {"count": 10, "assignor": "range", **QUICK, **settings}
    transitions: list[Transition] = []
    simulation = Simulation(Settings(bootstrap=node.bootstrap, group=group, topics=(TOPIC,), protocol="classic",
                                     **settings), on_transition=transitions.append)
    stop = asyncio.Event()
    rehearsal = Rehearsal(simulation, transitions)

    def on_check(snapshot: Snapshot) -> None:
        if until is not None and until(rehearsal, snapshot):
            stop.set()

    rehearsal.summary = await simulation.run(stop, duration_s=duration_s, until_stable=until is None,
                                             on_check=on_check)
    return rehearsal


def run(*rehearsals: Coroutine[Any, Any, Rehearsal]) -> list[Rehearsal]:
    """Run `rehearsals` side by side on one event loop, each told what the loop caught."""
    async def main() -> list[Rehearsal]:
        errors: list[dict] = []
        asyncio.get_running_loop().set_exception_handler(lambda _, context: errors.append(context))
        done = await asyncio.gather(*rehearsals)
        for rehearsal in done:
            rehearsal.loop_errors = errors
        return done

    return asyncio.run(main())


def rehearse(node, group: str, *, until: Optional[Callable[[Rehearsal, Snapshot], bool]] = None,
             **settings) -> Rehearsal:
    (rehearsal,) = run(_rehearse(node, group, until, **settings))
    return rehearsal


def check_clean(rehearsal: Rehearsal) -> None:
    """Nobody went FATAL, nothing raised on the loop, and every member was out when the run ended."""
    members = rehearsal.simulation.members
    assert [m.reason for m in members if m.reason] == []
    assert rehearsal.loop_errors == []
    assert rehearsal.summary.left == len(members)
    assert rehearsal.simulation.ledger.state_counts() == {"UNSUBSCRIBED": len(members)}


def owners(summary: Summary) -> dict[tuple[str, int], str]:
    """partition -> owner, checking that no partition has two."""
    owned = [(tuple(tp), member) for member, tps in summary.assignment.items() for tp in tps]
    assert len(owned) == len(dict(owned))
    return dict(owned)


def describe_and_fetch(node, group: str) -> tuple[apis.GroupInfo, dict[tuple[str, int], int]]:
    with KafkaClient(node.bootstrap) as client:
        coordinator = client.find_coordinator(group)
        described, fetched = client.call_many([apis.describe_groups_call(coordinator, [group]),
                                               apis.offset_fetch_call(coordinator, group)])
    return apis.parse_describe_groups(described)[0], apis.parse_offset_fetch(fetched, group)


@pytest.mark.parametrize("assignor", ["range", "uniform"])
def test_members_reach_a_stable_generation_owning_a_disjoint_cover_of_the_topic(node, assignor):
    rehearsal = rehearse(node, f"cover-{assignor}", count=20, assignor=assignor)
    summary = rehearsal.summary
    assert summary.ended_by == "stable" and summary.states == {"STABLE": 20}
    assert summary.group_epoch is not None and summary.group_epoch >= 1
    assert set(owners(summary)) == {(TOPIC, p) for p in range(PARTITIONS)}
    sizes = sorted(len(tps) for tps in summary.assignment.values())
    assert sizes == [0] * 8 + [1] * 12  # 12 partitions over 20 members
    assert summary.overlaps == 0
    assert not rehearsal.moves("STABLE", "FENCED")
    check_clean(rehearsal)


def test_after_the_run_every_member_has_left_and_the_group_is_empty(node):
    rehearsal = rehearse(node, "empties", count=10, assignor="uniform")
    assert rehearsal.summary.ended_by == "stable"
    leaves = rehearsal.moves("LEAVING", "UNSUBSCRIBED")
    assert sorted(t.member_id for t in leaves) == sorted(m.member_id for m in rehearsal.simulation.members)
    assert {t.epoch for t in leaves} == {-1}
    described, _ = describe_and_fetch(node, "empties")
    assert described.state == "Empty" and described.members == ()
    check_clean(rehearsal)


def test_under_churn_no_partition_is_ever_owned_twice_and_cooperative_sticky_moves_fewer_than_eager_range(node):
    eager, cooperative = run(*(_rehearse(node, f"churn-{assignor}", lambda r, s: False, duration_s=10,
                                         assignor=assignor, churn_per_s=0.5) for assignor in ("range", "uniform")))
    for rehearsal in (eager, cooperative):
        summary = rehearsal.summary
        assert summary.ended_by == "duration" and summary.churned >= 3
        assert summary.overlaps == 0 and summary.heartbeats > 0
        check_clean(rehearsal)
    # Eager: every member revokes everything before each JoinGroup; cooperative: only what moves.
    assert cooperative.summary.partitions_moved < eager.summary.partitions_moved


def test_commit_with_churn_commits_the_revoked_positions_which_offset_fetch_then_shows(node):
    during_churn: list[int] = []

    def until(rehearsal: Rehearsal, snapshot: Snapshot) -> bool:
        # Stop at a Stable generation after the churn: every member owns its partitions, so each
        # final leave commits (stopped mid-rebalance, eager members would own nothing to commit).
        if rehearsal.simulation.churned < 3 or not snapshot.stable:
            return False
        during_churn.append(rehearsal.simulation.ledger.commits["ok"])  # before the final leaves commit
        return True

    produce(node.bootstrap, TOPIC, PARTITIONS, (f"r{i}" for i in range(3 * PARTITIONS)))  # 3 records a partition
    rehearsal = rehearse(node, "commits", until=until, count=10, assignor="range", commit=True, churn_per_s=1.0)
    summary = rehearsal.summary
    assert summary.churned >= 3 and during_churn[0] > 0
    assert summary.commits["ok"] > during_churn[0] and summary.commits.get("failed", 0) == 0
    _, committed = describe_and_fetch(node, "commits")
    # Every partition was revoked at least once, at the position it would resume from: the log end
    # offset as the rehearsal started (auto.offset.reset=latest: the members consume nothing).
    assert committed == {(TOPIC, p): 3 for p in range(PARTITIONS)}
    check_clean(rehearsal)


def test_a_static_member_churned_out_comes_back_with_its_instance_id_keeping_its_partitions_without_a_rebalance(node):
    generations: set[Optional[int]] = set()
    first_stable: list[int] = []

    def until(rehearsal: Rehearsal, snapshot: Snapshot) -> bool:
        if snapshot.stable:
            generations.add(snapshot.group_epoch)
            first_stable[:] = first_stable or [len(rehearsal.transitions)]
        return rehearsal.simulation.churned >= 3 and snapshot.stable

    rehearsal = rehearse(node, "statics", until=until, count=10, assignor="uniform", static=True, churn_per_s=1.0)
    summary = rehearsal.summary
    assert summary.ended_by == "interrupt" and summary.churned >= 3
    assert len(generations) == 1  # every stable check saw the same generation
    assert summary.partitions_moved == 0  # each restarted instance got its own partitions back
    since_stable = rehearsal.transitions[first_stable[0]:]
    assert not [t for t in since_stable if (t.from_state, t.to_state) == ("STABLE", "JOINING")]  # no rebalance
    restarted = rehearsal.moves("PREPARE_LEAVING", "UNSUBSCRIBED")  # left for now: no LeaveGroup
    assert len(restarted) == summary.churned and {t.epoch for t in restarted} == {-2}
    assert set(owners(summary)) == {(TOPIC, p) for p in range(PARTITIONS)}
    check_clean(rehearsal)


@pytest.mark.parametrize("code", [ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID])
def test_a_fenced_member_loses_its_partitions_rejoins_and_the_group_is_stable_again(node, code):
    injected: list[int] = []

    def until(rehearsal: Rehearsal, snapshot: Snapshot) -> bool:
        if snapshot.stable and not injected:
            injected.append(len(rehearsal.transitions))
            node.node.faults.replace_next(HEARTBEAT, lambda ctx, request: ctx.respond(error_code=code))
        return bool(rehearsal.moves("FENCED", "JOINING")) and snapshot.stable

    rehearsal = rehearse(node, f"fenced-{code}", until=until, count=10, assignor="uniform")
    summary = rehearsal.summary
    assert summary.ended_by == "interrupt" and summary.states == {"STABLE": 10}
    (fenced,) = rehearsal.moves("STABLE", "FENCED")
    assert fenced.epoch == 0 and fenced.member_id != ""
    (rejoined,) = rehearsal.moves("FENCED", "JOINING")
    if code == UNKNOWN_MEMBER_ID:  # forgotten: it comes back as a new member
        assert rejoined.member_id == "" and fenced.member_id not in summary.assignment
    else:  # its generation is stale, its id still good
        assert rejoined.member_id == fenced.member_id and fenced.member_id in summary.assignment
    assert set(owners(summary)) == {(TOPIC, p) for p in range(PARTITIONS)}
    assert summary.overlaps == 0
    check_clean(rehearsal)


def test_not_coordinator_sends_the_members_to_find_the_coordinator_again_and_they_carry_on(node):
    finds: list[str] = []
    node.node.faults.observe(FIND_COORDINATOR, lambda ctx, request: finds.append("find"))
    injected: list[tuple[int, int]] = []  # (finds, transitions) when NOT_COORDINATOR was injected

    def until(rehearsal: Rehearsal, snapshot: Snapshot) -> bool:
        if snapshot.stable and not injected:
            injected.append((len(finds), len(rehearsal.transitions)))
            node.node.faults.replace_next(HEARTBEAT, lambda ctx, request: ctx.respond(error_code=NOT_COORDINATOR))
        return bool(injected) and len(finds) > injected[0][0] and snapshot.stable

    rehearsal = rehearse(node, "moved", until=until, count=10, assignor="range")
    summary = rehearsal.summary
    assert summary.ended_by == "interrupt" and summary.states == {"STABLE": 10}
    assert len(finds) > injected[0][0]
    assert all(t.to_state in ("PREPARE_LEAVING", "LEAVING", "UNSUBSCRIBED")
               for t in rehearsal.transitions[injected[0][1]:])  # nobody rejoined or was fenced
    assert set(owners(summary)) == {(TOPIC, p) for p in range(PARTITIONS)}
    check_clean(rehearsal)
