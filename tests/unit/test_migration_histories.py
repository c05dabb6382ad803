"""Random histories of a migrated group (a live classic group upgraded by a consumer-protocol
member) against what the clients believe: no two members the coordinator knows ever believe they
own the same partition, whatever mix of eager and cooperative classic members and consumer-protocol
members join, heartbeat, rejoin, leave or go silent; and once everyone keeps heartbeating, every
partition is owned by exactly one of them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from groupctl.coordinator.classic.messages import LeavingMember
from groupctl.coordinator.consumer.messages import ConsumerHeartbeat
from groupctl.coordinator.consumer.partitions import assignment as by_id
from groupctl.coordinator.consumer_protocol import parse_assignment
from groupctl.coordinator.errors import ErrorCode
from tests.unit.classic_harness import subscription
from tests.unit.test_online_migration import T, Node, classic_group, cooperative

ALL = {("t", p) for p in range(T.partitions)}


class ClassicClient:
    """A classic consumer as kafka-python (eager) or the Java client (cooperative) behaves."""

    def __init__(self, node: Node, member_id: str, generation: int, owned: set, eager: bool) -> None:
        self.node, self.member_id, self.generation, self.owned, self.eager = node, member_id, generation, owned, eager
        self.syncing = False

    def rejoin(self) -> None:
        """JoinGroup; its SyncGroup is a later step (the member consumes what it owns meanwhile)."""
        if self.eager:
            self.owned = set()  # onPartitionsRevoked(all) before JoinGroup
        metadata = cooperative("t", owned={"t": sorted(p for _, p in self.owned)}) if not self.eager \
            else subscription("t")
        joined = self.node.reply(self.node.join("g", self.member_id, protocols=(("range", metadata),),
                                                require_known=True))
        if joined.error is ErrorCode.MEMBER_ID_REQUIRED:  # JoinGroup v4+: again, with the id given
            joined = self.node.reply(self.node.join("g", joined.member_id, protocols=(("range", metadata),),
                                                    require_known=True))
        if joined.error is not ErrorCode.NONE:
            return self.out()
        self.member_id, self.generation, self.syncing = joined.member_id, joined.generation_id, True

    def sync(self) -> None:
        self.syncing = False
        synced = self.node.reply(self.node.sync("g", self.generation, self.member_id))
        if synced.error is ErrorCode.NONE:
            self.owned = {("t", p) for p in parse_assignment(synced.assignment).get("t", [])}
        elif synced.error is not ErrorCode.REBALANCE_IN_PROGRESS:
            self.out()

    def beat(self) -> None:
        if self.syncing:
            return self.sync()
        error = self.node.heartbeat("g", self.generation, self.member_id)
        if error is ErrorCode.REBALANCE_IN_PROGRESS:
            self.rejoin()
        elif error is not ErrorCode.NONE:
            self.out()

    def leave(self) -> None:
        self.node.leave("g", LeavingMember(self.member_id))
        self.out()

    def out(self) -> None:
        self.owned, self.member_id, self.generation, self.syncing = set(), "", -1, False


class ConsumerClient:
    """A consumer-protocol member: revokes what it is no longer told it owns, reports what it owns."""

    def __init__(self, node: Node, member_id: str) -> None:
        self.node, self.member_id, self.epoch, self.owned = node, member_id, -1, set()

    def beat(self) -> None:
        owned = by_id({T.topic_id: [p for _, p in self.owned]})
        answer = (self.node.consumer_join(self.member_id) if self.epoch < 0
                  else self.node.consumer_heartbeat(self.member_id, self.epoch, owned))
        if answer.error is not ErrorCode.NONE:
            self.owned, self.epoch = set(), -1
            return
        self.epoch = answer.member_epoch
        if answer.assignment is not None:
            self.owned = {("t", p) for p in answer.assignment.get(T.topic_id, ())}

    def leave(self) -> None:
        if self.epoch >= 0:
            self.node.ask("consumer_group_heartbeat", ConsumerHeartbeat("g", self.member_id, -1))
        self.owned, self.epoch = set(), -1


def assert_known_members_never_share(node: Node, clients: list) -> None:
    group = node.core.consumer.groups.get("g")
    known = set(group.members) if group is not None else set()
    seen: set = set()
    for client in clients:
        if client.member_id in known:
            assert not (client.owned & seen), f"{sorted(client.owned & seen)} believed owned twice"
            seen |= client.owned


actions = st.lists(st.tuples(st.sampled_from(["beat", "rejoin", "leave", "wait"]), st.integers(0, 4)), max_size=30)


@settings(max_examples=150, deadline=None)
@given(history=actions)
def test_members_of_a_migrated_group_never_believe_they_share_a_partition_and_it_settles(history):
    node = Node()
    answers = classic_group(node, [0, 1], [2], [3])
    classic = [ClassicClient(node, a.member_id, a.generation_id, {("t", p) for p in ps}, eager=i != 2)
               for i, (a, ps) in enumerate(zip(answers, ([0, 1], [2], [3])))]
    anchor, extra = ConsumerClient(node, "c1"), ConsumerClient(node, "c2")  # c1 keeps the group a consumer group
    anchor.beat()
    clients = [*classic, anchor, extra]
    for action, index in history:
        client = clients[index]
        if action == "wait":
            node.advance(3_000)
            anchor.beat()
        elif action == "beat":
            if isinstance(client, ClassicClient) and client.member_id:
                client.beat()
            elif isinstance(client, ConsumerClient):
                client.beat()
        elif action == "rejoin" and isinstance(client, ClassicClient):
            client.rejoin()
        elif action == "leave" and client is not anchor:
            if not isinstance(client, ClassicClient) or client.member_id:
                client.leave()
        assert_known_members_never_share(node, clients)
    for _ in range(16):  # everyone heartbeats (a classic member that was fenced joins anew)
        for client in clients:
            if isinstance(client, ClassicClient) and not client.member_id:
                client.rejoin()
            else:
                client.beat()
            assert_known_members_never_share(node, clients)
        node.advance(1_000)
    owned = [p for c in clients for p in c.owned]
    assert sorted(owned) == sorted(ALL)
