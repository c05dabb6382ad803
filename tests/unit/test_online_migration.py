"""Online migration between the classic and the consumer protocol (Apache Kafka 4.0's
group.consumer.migration.policy), on a manual clock: a consumer-protocol member joining a live
classic group upgrades it with every classic member keeping its partitions and its APIs; the
classic members reconcile through JoinGroup/SyncGroup/Heartbeat; when the last consumer-protocol
member leaves, the group is classic again."""

from __future__ import annotations

import itertools

import pytest
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

from groupctl.coordinator.classic.messages import LeavingMember
from groupctl.coordinator.consumer.config import ConsumerGroupConfig, MigrationPolicy
from groupctl.coordinator.consumer.messages import ConsumerHeartbeat
from groupctl.coordinator.consumer.partitions import assignment as by_id
from groupctl.coordinator.consumer.topics import TopicImage, TopicInfo
from groupctl.coordinator.consumer_protocol import parse_assignment
from groupctl.coordinator.coordinator import Coordinator
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.offsets.messages import CommitOffsets, FetchOffsets, PartitionOffset
from groupctl.coordinator.records import GroupMetadataRecord
from groupctl.layout.consumer_groups import ConsumerGroupDocument
from groupctl.layout.groups import GroupDocument
from tests.unit.classic_harness import FAST, START_MS, Harness, assignment, subscription

T = TopicInfo("t", "t-id", 4)


def cooperative(*topics: str, owned: dict[str, list[int]]) -> bytes:
    """A v1 subscription that says which partitions the member owns (cooperative rebalancing)."""
    return bytes(ConsumerProtocolSubscription(
        version=1, topics=list(topics), user_data=b"",
        owned_partitions=[ConsumerProtocolSubscription.TopicPartition(topic=t, partitions=ps)
                          for t, ps in owned.items()]).encode(version=1))


class Node(Harness):
    """The classic harness over the whole core (both group types), with topic "t" (4 partitions)."""

    def __init__(self, policy: MigrationPolicy = MigrationPolicy.BIDIRECTIONAL) -> None:
        super().__init__()
        uuids = itertools.count(1)
        self.core = Coordinator(timer=self.timer, config=FAST, new_uuid=lambda: f"u{next(uuids)}",
                                consumer_config=ConsumerGroupConfig(migration_policy=policy))
        self.core.use_topics(TopicImage.of([T]))

    def consumer_join(self, member: str = "c", instance=None):
        return self.ask("consumer_group_heartbeat", ConsumerHeartbeat(
            "g", member, 0, instance_id=instance, rebalance_timeout_ms=60_000, subscribed_topic_names=("t",),
            owned={}))

    def consumer_heartbeat(self, member: str, epoch: int, owned):
        return self.ask("consumer_group_heartbeat", ConsumerHeartbeat("g", member, epoch, owned=owned))

    def group(self):
        return self.core.consumer.groups["g"]

    def rejoin(self, member_id: str, metadata: bytes = subscription("t")):
        return self.reply(self.join("g", member_id, protocols=(("range", metadata),)))

    def synced(self, member_id: str, generation: int) -> dict[str, list[int]]:
        answer = self.reply(self.sync("g", generation, member_id))
        assert answer.error is ErrorCode.NONE, answer
        return parse_assignment(answer.assignment)


def classic_group(node: Node, *plans: list[int], instances=None) -> list:
    """A Stable classic group at generation 1 whose member i owns partitions `plans[i]` of "t"."""
    tokens = [node.join("g", client_id=f"c{i}", instance=instances[i] if instances else None)
              for i in range(len(plans))]
    node.advance(0)
    answers = [node.reply(t) for t in tokens]
    leader = next(x for x in answers if x.members)
    plan = [(x.member_id, assignment({"t": ps})) for x, ps in zip(answers, plans)]
    for x in answers:
        node.sync("g", x.generation_id, x.member_id, plan if x is leader else ())
    assert node.state() == "Stable"
    return answers


def upgraded() -> tuple[Node, list]:
    """A Stable classic group of two members (partition 0 and 1 of "t") at generation 1, then a
    consumer-protocol member "c" joins."""
    node = Node()
    answers = node.stable_group()
    node.consumer_join()
    return node, answers


def test_a_consumer_member_joining_a_live_classic_group_upgrades_it_and_the_classic_members_keep_their_partitions():
    node, (a, b) = upgraded()
    assert node.core.classic.state_of("g") is None
    group = node.group()
    assert (group.group_epoch, group.assignment_epoch) == (2, 2)
    assert node.core.consumer.groups["g"].members[a.member_id].classic is not None
    kept = {m: (group.members[m].member_epoch, group.members[m].assigned) for m in (a.member_id, b.member_id)}
    assert kept == {a.member_id: (1, by_id({T.topic_id: [0]})), b.member_id: (1, by_id({T.topic_id: [1]}))}
    (document,) = [r.document for r in node.records
                   if isinstance(r, GroupMetadataRecord) and isinstance(r.document, ConsumerGroupDocument)]
    assert {m.member_id: m.classic is not None for m in document.members} == {
        a.member_id: True, b.member_id: True, "c": False}


def test_classic_members_are_told_to_rejoin_and_reconcile_through_join_and_sync():
    node, (a, b) = upgraded()
    assert node.heartbeat("g", 1, a.member_id) is ErrorCode.REBALANCE_IN_PROGRESS
    joined = node.rejoin(a.member_id)  # eager: it gave everything up before rejoining
    assert (joined.error, joined.generation_id, joined.leader, joined.protocol_name) == (ErrorCode.NONE, 2, "", "range")
    mine = node.synced(a.member_id, 2)
    assert mine["t"] and set(mine["t"]).isdisjoint(node.group().members[b.member_id].assigned[T.topic_id])
    assert node.heartbeat("g", 2, a.member_id) in (ErrorCode.NONE, ErrorCode.REBALANCE_IN_PROGRESS)
    assert node.heartbeat("g", 1, a.member_id) is ErrorCode.ILLEGAL_GENERATION


def test_a_cooperative_classic_member_keeps_its_epoch_until_it_has_revoked():
    node = Node()
    (a,) = classic_group(node, [0, 1, 2, 3])
    node.consumer_join()
    assert node.heartbeat("g", 1, a.member_id) is ErrorCode.REBALANCE_IN_PROGRESS
    joined = node.rejoin(a.member_id, cooperative("t", owned={"t": [0, 1, 2, 3]}))
    assert joined.generation_id == 1 and node.group().members[a.member_id].state.value == "unrevoked_partitions"
    kept = node.synced(a.member_id, 1)
    assert len(kept["t"]) == 2
    node.consumer_heartbeat("c", 2, {})
    assert node.group().members["c"].assigned == {}  # what it is to get is still a's
    joined = node.rejoin(a.member_id, cooperative("t", owned=kept))
    assert joined.generation_id == 2 and node.synced(a.member_id, 2) == kept
    released = node.consumer_heartbeat("c", 2, {}).assignment
    assert released == by_id({T.topic_id: set(range(4)) - set(kept["t"])})


def test_a_classic_member_syncing_an_older_generation_is_refused_and_one_behind_the_group_rejoins():
    node, (a, _) = upgraded()
    assert node.reply(node.sync("g", 0, a.member_id)).error is ErrorCode.ILLEGAL_GENERATION
    assert node.reply(node.sync("g", 1, a.member_id)).error is ErrorCode.REBALANCE_IN_PROGRESS
    assert node.reply(node.sync("g", 1, a.member_id, protocol_type="connect")).error \
        is ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_a_classic_member_told_to_rejoin_is_fenced_after_its_rebalance_timeout():
    node, (a, b) = upgraded()
    assert node.heartbeat("g", 1, a.member_id) is ErrorCode.REBALANCE_IN_PROGRESS
    for _ in range(3):  # b and c keep their sessions; a heartbeats but never rejoins
        node.advance(9_000)
        node.heartbeat("g", 1, a.member_id)
        node.heartbeat("g", 1, b.member_id)
        node.consumer_heartbeat("c", node.group().members["c"].member_epoch, None)
    node.advance(9_000)
    assert a.member_id not in node.group().members


def test_a_classic_members_session_is_its_own_session_timeout():
    node, (a, b) = upgraded()
    node.advance(10_001)  # the classic members asked for 10 s; the consumer protocol's is 45 s
    assert set(node.group().members) == {"c"}


def test_a_classic_member_that_leaves_bumps_the_group_epoch():
    node, (a, _) = upgraded()
    left = node.leave("g", LeavingMember(a.member_id))
    assert [m.error for m in left.members] == [ErrorCode.NONE]
    assert a.member_id not in node.group().members and node.group().group_epoch == 3
    assert node.leave("g", LeavingMember("c")).members[0].error is ErrorCode.UNKNOWN_MEMBER_ID  # not classic


def test_a_classic_member_commits_at_its_generation_which_is_its_member_epoch():
    node, (a, _) = upgraded()
    offset = PartitionOffset("t", 0, 5)
    assert node.commit("g", 1, a.member_id, offset) == [ErrorCode.NONE]
    assert node.commit("g", 0, a.member_id, offset) == [ErrorCode.ILLEGAL_GENERATION]


def test_the_last_consumer_member_leaving_makes_the_group_classic_again():
    node, (a, b) = upgraded()
    node.ask("consumer_group_heartbeat", ConsumerHeartbeat("g", "c", -1))
    assert "g" not in node.core.consumer.groups
    assert node.core.classic.state_of("g").value == "PreparingRebalance"
    classic = [r.document for r in node.records if isinstance(r, GroupMetadataRecord)][-1]
    assert isinstance(classic, GroupDocument) and classic.generation == 2
    assert node.heartbeat("g", 2, a.member_id) is ErrorCode.REBALANCE_IN_PROGRESS
    answers = [node.join("g", m.member_id) for m in (a, b)]
    node.advance(0)
    assert {node.reply(t).generation_id for t in answers} == {3}


def test_a_consumer_member_whose_session_expires_downgrades_the_group_too():
    node, answers = upgraded()
    generations = {a.member_id: a.generation_id for a in answers}
    for _ in range(6):  # the classic members keep up; "c" never heartbeats again
        node.advance(8_000)
        if "g" not in node.core.consumer.groups:
            break
        for member_id, generation in generations.items():
            if node.heartbeat("g", generation, member_id) is ErrorCode.REBALANCE_IN_PROGRESS:
                generations[member_id] = node.rejoin(member_id).generation_id
                node.synced(member_id, generations[member_id])
    assert "g" not in node.core.consumer.groups
    assert node.describe().state == "PreparingRebalance"
    assert {m.member_id for m in node.describe().members} == set(generations)


@pytest.mark.parametrize("policy", [MigrationPolicy.DISABLED, MigrationPolicy.DOWNGRADE])
def test_without_upgrades_a_consumer_join_cannot_take_a_live_classic_group(policy):
    node = Node(policy)
    node.stable_group()
    assert node.consumer_join().error is ErrorCode.GROUP_ID_NOT_FOUND
    assert node.core.classic.state_of("g").value == "Stable"


def test_a_classic_group_of_another_protocol_type_is_never_upgraded():
    node = Node()
    node.joined_members("g", 1, protocol_type="connect")
    assert node.consumer_join().error is ErrorCode.GROUP_ID_NOT_FOUND


def test_without_downgrades_the_group_stays_a_consumer_group_of_classic_members():
    node = Node(MigrationPolicy.UPGRADE)
    node.stable_group()
    node.consumer_join()
    node.ask("consumer_group_heartbeat", ConsumerHeartbeat("g", "c", -1))
    assert len(node.group().members) == 2 and node.core.classic.state_of("g") is None


def test_a_parked_classic_join_is_answered_rebalance_in_progress_by_the_upgrade():
    node = Node()
    (a, b) = node.stable_group()
    parked = node.join("g", a.member_id)  # a rejoins: the join phase waits for b
    assert not node.answered(parked)
    node.consumer_join()
    assert node.reply(parked).error is ErrorCode.REBALANCE_IN_PROGRESS


def test_a_static_classic_member_upgrading_its_client_keeps_its_partitions():
    node = Node()
    a, _ = classic_group(node, [0, 2], [1, 3], instances=["i0", "i1"])
    answer = node.consumer_join(member="new", instance="i0")
    assert answer.error is ErrorCode.NONE
    assert a.member_id not in node.group().members
    assert node.group().members["new"].assigned == by_id({T.topic_id: [0, 2]})


def test_a_classic_join_takes_an_empty_consumer_groups_id_and_keeps_its_offsets():
    node = Node()
    node.consumer_join()
    node.ask("commit_offsets", _commit("c", 1))
    node.ask("consumer_group_heartbeat", ConsumerHeartbeat("g", "c", -1))
    (answer,) = node.joined_members("g", 1)
    assert answer.error is ErrorCode.NONE and "g" not in node.core.consumer.groups
    assert node.ask("fetch_offsets", _fetch()).offsets[0].offset == 9


def test_a_loaded_consumer_group_keeps_its_classic_members_on_the_classic_protocol():
    node, (a, _) = upgraded()
    document = [r for r in node.records if isinstance(r, GroupMetadataRecord)][-1]
    after = Node()
    after.core.load([document], START_MS, "takeover")
    member = after.core.consumer.groups["g"].members[a.member_id]
    assert member.classic == node.group().members[a.member_id].classic
    assert after.heartbeat("g", 1, a.member_id) is ErrorCode.REBALANCE_IN_PROGRESS


def _commit(member: str, epoch: int):
    return CommitOffsets("g", epoch, member, None, (PartitionOffset("t", 0, 9),), 9)


def _fetch():
    return FetchOffsets("g", (("t", 0),))



def test_consumer_group_describe_tells_classic_protocol_members_apart():
    node, (a, b) = upgraded()
    (described,) = node.ask("describe_consumer_groups", ("g",))
    assert {m.member_id: m.classic_protocol for m in described.members} == {
        a.member_id: True, b.member_id: True, "c": False}


def test_the_journal_records_both_migrations_with_what_each_member_owns():
    node, (a, b) = upgraded()
    kinds = [e["event"] for r in node.results for e in r.events]
    assert kinds[kinds.index("group_migrated"):][:3] == ["group_migrated", "member_reconciled", "member_reconciled"]
    node.ask("consumer_group_heartbeat", ConsumerHeartbeat("g", "c", -1))
    last = [e for e in node.results[-1].events]
    assert [e["event"] for e in last][:3] == ["member_left", "group_migrated", "rebalance_started"]
    assert (last[1]["group_type"], last[2]["reason"]) == ("classic", "migration")


def test_a_new_classic_member_told_member_id_required_joins_with_the_id_it_was_given():
    node, _ = upgraded()
    first = node.reply(node.join("g", require_known=True))
    assert first.error is ErrorCode.MEMBER_ID_REQUIRED
    joined = node.reply(node.join("g", first.member_id, require_known=True))
    assert joined.error is ErrorCode.NONE and first.member_id in node.group().members


def test_a_member_id_handed_out_is_forgotten_after_its_session_timeout():
    node, _ = upgraded()
    first = node.reply(node.join("g", require_known=True, session_ms=10_000))
    node.advance(10_001)
    assert node.reply(node.join("g", first.member_id, require_known=True)).error is ErrorCode.UNKNOWN_MEMBER_ID


def test_a_join_with_a_session_timeout_out_of_bounds_is_refused():
    node, _ = upgraded()
    assert node.reply(node.join("g", session_ms=0)).error is ErrorCode.INVALID_SESSION_TIMEOUT


def test_the_old_process_of_a_restarted_static_member_is_fenced_not_let_back_in():
    node = Node()
    old, _ = classic_group(node, [0, 1], [2, 3], instances=["i0", "i1"])
    node.consumer_join()
    restarted = node.reply(node.join("g", instance="i0"))
    assert restarted.error is ErrorCode.NONE
    zombie = node.reply(node.join("g", old.member_id, instance="i0"))
    assert zombie.error is ErrorCode.FENCED_INSTANCE_ID
    assert node.group().static_member("i0").member_id == restarted.member_id


def test_a_static_classic_member_replacing_the_last_consumer_member_makes_the_group_classic():
    node = Node()
    classic_group(node, [0, 1], [2, 3])
    node.consumer_join(member="c", instance="i-c")
    answer = node.reply(node.join("g", instance="i-c"))  # the same instance, back on a classic client
    assert answer.error is ErrorCode.REBALANCE_IN_PROGRESS
    assert "g" not in node.core.consumer.groups and node.describe().state == "PreparingRebalance"
    assert len(node.describe().members) == 3


def test_a_loaded_classic_member_keeps_its_own_session_timeout():
    node, (a, _) = upgraded()
    document = [r for r in node.records if isinstance(r, GroupMetadataRecord)][-1]
    after = Node()
    after.core.load([document], after.timer.now_ms, "takeover")
    after.advance(10_001)
    assert a.member_id not in after.core.consumer.groups["g"].members
