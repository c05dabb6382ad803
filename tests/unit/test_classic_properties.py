"""Property: random sequences of joins, syncs, heartbeats, leaves, commits and time never break
the classic core's invariants.

- every transition is in the legality table;
- a group's generation never decreases; each generation has one leader, who is a member;
- every request is answered at most once, and every parked JoinGroup/SyncGroup is answered
  once the clock has run far enough;
- every written document is well formed (unique members, leader among them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupctl.coordinator.classic.coordinator import GroupConfig
from groupctl.coordinator.classic.group import ClassicGroup
from groupctl.coordinator.classic.messages import JoinGroupResult, LeavingMember, SyncGroupResult
from groupctl.coordinator.offsets.messages import PartitionOffset
from groupctl.coordinator.classic.state import GroupState
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.records import GroupMetadataRecord
from tests.unit.classic_harness import Harness, subscription

SLOTS = 4
PROTOCOLS = [
    (("range", subscription("t")),),
    (("range", subscription("t", "u")), ("rr", subscription("t", "u"))),
    (("rr", subscription("u")), ("range", subscription("u"))),
]
E, P, C, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                 GroupState.STABLE, GroupState.DEAD)
LEGAL = {(P, E), (S, P), (C, P), (E, P), (P, C), (C, S), *((s, D) for s in GroupState)}


@dataclass
class Client:
    """What a client remembers between requests."""

    instance: Optional[str]
    member_id: str = ""
    generation: int = -1
    is_leader: bool = False
    members: tuple[str, ...] = ()


steps = st.one_of(
    st.tuples(st.just("join"), st.integers(0, SLOTS - 1), st.integers(0, len(PROTOCOLS) - 1), st.booleans()),
    st.tuples(st.just("sync"), st.integers(0, SLOTS - 1)),
    st.tuples(st.just("heartbeat"), st.integers(0, SLOTS - 1)),
    st.tuples(st.just("leave"), st.lists(st.integers(0, SLOTS - 1), min_size=1, max_size=2)),
    st.tuples(st.just("commit"), st.integers(0, SLOTS - 1)),
    st.tuples(st.just("trigger"),),
    st.tuples(st.just("advance"), st.sampled_from([0, 1, 1000, 6000, 10_000, 30_000, 300_000])),
    # whole-group moves, so that histories often reach Stable and go round again
    st.tuples(st.just("join_all"), st.integers(0, len(PROTOCOLS) - 1)),
    st.tuples(st.just("sync_all"), st.booleans()),
    st.tuples(st.just("round"), st.integers(0, len(PROTOCOLS) - 1), st.booleans()),
)


class Run:
    def __init__(self, config: GroupConfig) -> None:
        self.h = Harness(config)
        self.clients = [Client(instance=f"i-{i}" if i == SLOTS - 1 else None) for i in range(SLOTS)]
        self.owner: dict = {}  # token -> (client index, kind)
        self.parked: set = set()
        self.seen_replies = 0
        self.generation = 0
        self.leaders: dict[int, str] = {}

    def track(self, token, index: int, kind: str) -> None:
        self.owner[token] = (index, kind)
        if token not in self.h.replies:
            self.parked.add(token)

    def learn(self) -> None:
        """Clients read their answers, in the order they arrived."""
        for token, response in list(self.h.replies.items())[self.seen_replies:]:
            self.parked.discard(token)
            if token not in self.owner:
                continue
            client = self.clients[self.owner[token][0]]
            if isinstance(response, JoinGroupResult):
                if response.error is ErrorCode.NONE:
                    client.member_id, client.generation = response.member_id, response.generation_id
                    client.is_leader = response.leader == response.member_id
                    client.members = tuple(m.member_id for m in response.members)
                    leader = self.leaders.setdefault(response.generation_id, response.leader)
                    assert leader == response.leader, "two leaders in one generation"
                elif response.error is ErrorCode.MEMBER_ID_REQUIRED:
                    client.member_id = response.member_id
                elif response.error in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_INSTANCE_ID):
                    client.member_id, client.generation = "", -1
            elif isinstance(response, SyncGroupResult) and response.error is ErrorCode.UNKNOWN_MEMBER_ID:
                client.member_id, client.generation = "", -1
        self.seen_replies = len(self.h.replies)

    def step(self, step: tuple) -> None:
        h, kind = self.h, step[0]
        if kind == "join":
            _, i, protocols, require_known = step
            c = self.clients[i]
            token = h.join(member_id=c.member_id, client_id=f"c{i}", instance=c.instance, session_ms=10_000,
                           rebalance_ms=20_000, protocols=PROTOCOLS[protocols], require_known=require_known)
            self.track(token, i, "join")
        elif kind == "sync":
            c = self.clients[step[1]]
            plan = [(m, b"assigned") for m in c.members] if c.is_leader else []
            self.track(h.sync("g", c.generation, c.member_id, plan, instance=c.instance), step[1], "sync")
        elif kind == "heartbeat":
            c = self.clients[step[1]]
            h.heartbeat("g", c.generation, c.member_id, c.instance)
        elif kind == "leave":
            h.leave("g", *(LeavingMember(self.clients[i].member_id, self.clients[i].instance) for i in step[1]))
        elif kind == "commit":
            c = self.clients[step[1]]
            h.commit("g", c.generation, c.member_id, PartitionOffset("t", 0, 1), instance=c.instance)
        elif kind == "join_all":
            for i in range(SLOTS):
                self.step(("join", i, step[1], False))
            return
        elif kind == "sync_all":
            order = sorted(range(SLOTS), key=lambda i: self.clients[i].is_leader, reverse=step[1])
            for i in order:
                if self.clients[i].member_id:
                    self.step(("sync", i))
            return
        elif kind == "round":  # everyone rejoins, the join phase ends, everyone syncs
            self.step(("join_all", step[1]))
            self.step(("advance", 0))
            self.step(("sync_all", step[2]))
            return
        elif kind == "trigger":
            h.ask("trigger_rebalance", "g")
        else:
            h.advance(step[1])
        self.learn()
        self.check()

    def check(self) -> None:
        group = self.h.core._core.groups.get("g")
        if group is not None:
            assert group.generation >= self.generation, "generation went backwards"
            self.generation = group.generation
            assert (group.leader is None) == (not group.members)
            assert group.leader is None or group.leader in group.members
            assert group.pending_sync <= set(group.members)
            assert not (group.pending_join & set(group.members))
            assert set(group.static_members.values()) <= set(group.members)
        for record in self.h.records:
            if isinstance(record, GroupMetadataRecord):
                ids = [m.member_id for m in record.document.members]
                assert len(ids) == len(set(ids))
                assert (record.document.leader in ids) if ids else record.document.leader is None


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=st.lists(steps, max_size=40), delay=st.sampled_from([0, 3000]))
def test_random_histories_keep_the_invariants(script, delay):
    transitions: list[tuple[GroupState, GroupState]] = []
    original = ClassicGroup.transition_to

    def recording(group: ClassicGroup, target: GroupState) -> None:
        transitions.append((group.state, target))
        original(group, target)

    with mock.patch.object(ClassicGroup, "transition_to", recording):
        run = Run(GroupConfig(initial_rebalance_delay_ms=delay))
        for step in script:
            run.step(step)
        for _ in range(6):  # every deadline is at most 5 minutes away
            if not run.parked:
                break
            run.step(("advance", 300_000))
    assert not run.parked, f"parked requests never answered: {run.parked}"
    assert all(t in LEGAL for t in transitions), transitions
