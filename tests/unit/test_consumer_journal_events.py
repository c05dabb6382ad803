"""The consumer core's journal events (KIP-848): which operations emit which events, with which
fields, and that the journal's record of ownership is the group's own after every operation.

Events ride in each operation's `Result`; a heartbeat that changes nothing emits none, and taking
a group over emits none.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from groupctl.coordinator import journal
from groupctl.coordinator.consumer import admin, events, takeover, target
from groupctl.coordinator.consumer.context import ConsumerCore
from groupctl.coordinator.consumer.config import ConsumerGroupConfig
from groupctl.coordinator.consumer.document import build_document
from groupctl.coordinator.consumer.messages import ConsumerHeartbeat
from groupctl.coordinator.consumer.partitions import assignment
from groupctl.coordinator.consumer.topics import TopicImage, TopicInfo
from groupctl.coordinator.results import Result
from groupctl.coordinator.timers import ManualTimer
from tests.unit.consumer_harness import AUDIT, ORDERS, Client, Harness

MEMBERS = ("a", "b", "c", "d")


def emitted(h: Harness, since: int = 0, kind: str | None = None) -> list[dict]:
    return [e for r in h.results[since:] for e in r.events if kind is None or e["event"] == kind]


def kinds(h: Harness, since: int = 0) -> list[str]:
    return [e["event"] for e in emitted(h, since)]


def rows(member_id: str, *partitions: int, topic: str = "orders") -> list[dict]:
    return [{"member_id": member_id, "client_id": "", "topic": topic, "partition": p} for p in partitions]


def settle(h: Harness, *clients: Client, rounds: int = 4) -> None:
    for _ in range(rounds):
        for client in clients:
            client.beat()


# --- joining and reconciling ---------------------------------------------------------------------

def test_the_first_member_joins_bumps_the_epoch_gets_a_target_reconciles_and_the_group_is_stable():
    h = Harness()
    Client(h, "a").join()
    assert kinds(h) == ["member_joined", "group_epoch_bumped", "target_assignment_computed", "member_reconciled",
                        "group_stable"]
    joined, bumped, computed, reconciled, stable = emitted(h)
    common = {"v": 1, "ts": 0, "node": 0, "group": "g"}
    assert joined == {**common, "event": "member_joined", "member_id": "a", "client_id": "", "client_host": "",
                      "instance_id": None, "generation": 0, "replaced_member_id": None}
    assert bumped == {**common, "event": "group_epoch_bumped", "generation": 1, "reason": "join", "member_id": "a",
                      "client_id": "", "members": 1}
    assert computed == {**common, "event": "target_assignment_computed", "generation": 1, "protocol": "uniform",
                        "members": 1, "moved": 6, "member_ids": ["a"], "assignment": rows("a", *range(6))}
    assert reconciled == {**common, "event": "member_reconciled", "member_id": "a", "client_id": "",
                          "instance_id": None, "generation": 1, "member_epoch": 1, "state": "stable",
                          "assignment": rows("a", *range(6)), "revoking": None}
    assert stable == {**common, "event": "group_stable", "generation": 1, "members": 1}
    assert "seq" not in joined  # the journal writer numbers events


def test_a_second_member_moves_half_revoke_first_then_release_and_stable_comes_once_everyone_is_there():
    h = Harness()
    a, b = Client(h, "a"), Client(h, "b")
    a.join()
    h.advance(100)
    since = len(h.results)
    b.join()
    assert kinds(h, since) == ["member_joined", "group_epoch_bumped", "target_assignment_computed",
                               "member_reconciled"]
    computed = emitted(h, since, "target_assignment_computed")[0]
    assert (computed["generation"], computed["moved"], computed["member_ids"]) == (2, 3, ["a", "b"])
    assert computed["assignment"] == rows("a", 0, 1, 2) + rows("b", 3, 4, 5)  # each changed member's new target
    waiting = emitted(h, since, "member_reconciled")[0]
    assert (waiting["member_epoch"], waiting["state"], waiting["assignment"]) == (2, "unreleased_partitions", [])
    h.advance(100)
    since = len(h.results)
    a.beat()  # told to revoke 3, 4, 5: it still owns them, at its epoch
    [revoking] = emitted(h, since)
    assert (revoking["event"], revoking["member_epoch"], revoking["state"]) == (
        "member_reconciled", 1, "unrevoked_partitions")
    assert (revoking["assignment"], revoking["revoking"]) == (rows("a", 0, 1, 2), rows("a", 3, 4, 5))
    since = len(h.results)
    a.beat()  # revoked: on to epoch 2, keeping the same three
    [moved_on] = emitted(h, since)
    assert (moved_on["member_epoch"], moved_on["state"], moved_on["assignment"], moved_on["revoking"]) == (
        2, "stable", None, None)  # null: the same partitions as its previous event
    since = len(h.results)
    b.beat()  # the released partitions are free now
    assert kinds(h, since) == ["member_reconciled", "group_stable"]
    released, stable = emitted(h, since)
    assert (released["member_epoch"], released["state"], released["assignment"]) == (2, "stable", rows("b", 3, 4, 5))
    assert (stable["generation"], stable["members"], stable["ts"]) == (2, 2, 200)


def test_a_heartbeat_that_changes_nothing_emits_nothing_full_path_or_steady():
    h = Harness()
    a, b = Client(h, "a"), Client(h, "b")
    a.join()
    b.join()
    settle(h, a, b)
    since = len(h.results)
    a.beat()  # full path: says what it owns
    h.send(ConsumerHeartbeat("g", "a", a.epoch))  # the steady path
    h.send(ConsumerHeartbeat("g", "a", a.epoch + 5))  # refused: FENCED_MEMBER_EPOCH
    assert emitted(h, since) == []


def test_a_subscription_change_bumps_with_its_reason_and_a_topic_change_without_a_member():
    h = Harness()
    a = Client(h, "a")
    a.join()
    since = len(h.results)
    h.send(ConsumerHeartbeat("g", "a", a.epoch, subscribed_topic_names=("orders", "audit"),
                             owned=assignment(a.owned)))
    [bumped] = emitted(h, since, "group_epoch_bumped")
    assert (bumped["generation"], bumped["reason"], bumped["member_id"]) == (2, "subscription change", "a")
    [computed] = emitted(h, since, "target_assignment_computed")
    assert (computed["moved"], computed["member_ids"]) == (2, ["a"])
    assert rows("a", 0, 1, topic="audit") == computed["assignment"][:2]
    target.use_topics(h.core, TopicImage.of([ORDERS, TopicInfo("audit", "audit-id", 4)]))
    since = len(h.results)
    h.send(ConsumerHeartbeat("g", "a", 2, owned=None))
    [bumped] = emitted(h, since, "group_epoch_bumped")
    assert (bumped["generation"], bumped["reason"], bumped["member_id"], bumped["members"]) == (
        3, "topic change", None, 1)
    assert emitted(h, since, "target_assignment_computed")[0]["moved"] == 2  # audit-2 and audit-3


# --- leaving and fencing -------------------------------------------------------------------------

def test_leaving_is_member_left_at_the_epoch_it_leaves_then_a_bump_for_the_others():
    h = Harness()
    a, b = Client(h, "a"), Client(h, "b")
    a.join()
    b.join()
    settle(h, a, b)
    since = len(h.results)
    b.leave()
    assert emitted(h, since) == [
        {"v": 1, "ts": 0, "node": 0, "event": "member_left", "group": "g", "member_id": "b", "client_id": "",
         "generation": 2},
        {"v": 1, "ts": 0, "node": 0, "event": "group_epoch_bumped", "group": "g", "generation": 3, "reason": "leave",
         "member_id": "b", "client_id": "", "members": 1}]
    since = len(h.results)
    a.beat()
    assert kinds(h, since) == ["target_assignment_computed", "member_reconciled", "group_stable"]
    assert emitted(h, since, "target_assignment_computed")[0]["moved"] == 3


def test_a_session_expiry_and_a_missed_revocation_deadline_are_member_expired_with_their_reason():
    h = Harness(session_timeout_ms=10_000)
    a, b = Client(h, "a"), Client(h, "b")
    a.join()
    b.join()
    h.send(ConsumerHeartbeat("g", "a", a.epoch, owned=assignment(a.owned)))  # told to revoke, never does
    since = len(h.results)
    for _ in range(60):
        h.advance(5_000)
        h.send(ConsumerHeartbeat("g", "a", 1, owned=assignment(a.owned)))
        b.beat()
    expired = emitted(h, since, "member_expired")
    assert [(e["member_id"], e["reason"], e["generation"]) for e in expired] == [("a", "rebalance timeout", 2)]
    assert [(e["reason"], e["member_id"], e["generation"]) for e in emitted(h, since, "group_epoch_bumped")] == [
        ("rebalance timeout", "a", 3)]
    since = len(h.results)
    h.advance(10_000)  # b is silent now
    assert [(e["event"], e["reason"], e.get("members")) for e in emitted(h, since)] == [
        ("member_expired", "session expiry", None), ("group_epoch_bumped", "session expiry", 0)]


def test_a_static_member_leaving_for_now_is_member_left_without_a_bump_and_its_successor_replaces_it():
    h = Harness()
    a, b = Client(h, "a", instance_id="i-a"), Client(h, "b")
    a.join()
    b.join()
    settle(h, a, b)
    since = len(h.results)
    a.leave(-2)
    assert kinds(h, since) == ["member_left", "member_reconciled"]
    left = emitted(h, since, "member_reconciled")[0]
    assert (left["member_epoch"], left["assignment"], left["revoking"]) == (-2, None, None)  # keeps what it has
    since = len(h.results)
    Client(h, "a2", instance_id="i-a").join()
    assert kinds(h, since) == ["member_joined", "member_reconciled", "group_stable"]
    joined, reconciled, _ = emitted(h, since)
    assert (joined["member_id"], joined["instance_id"], joined["replaced_member_id"], joined["generation"]) == (
        "a2", "i-a", "a", 2)
    assert (reconciled["member_epoch"], reconciled["instance_id"]) == (2, "i-a")
    assert reconciled["assignment"] == rows("a2", 0, 1, 2)  # a new member id lists what it owns


def test_a_trigger_bumps_the_epoch_and_the_next_heartbeat_computes_a_target_that_moves_nothing():
    h = Harness()
    a = Client(h, "a")
    a.join()
    out = Result()
    admin.trigger(h.core, h.group(), h.now, out)
    assert [(e["event"], e["reason"], e["member_id"], e["generation"]) for e in out.events] == [
        ("group_epoch_bumped", "trigger", None, 2)]
    h.results.append(out)
    since = len(h.results)
    a.beat()
    computed, reconciled, stable = emitted(h, since)
    assert (computed["moved"], computed["member_ids"], computed["assignment"]) == (0, [], [])
    assert (reconciled["member_epoch"], reconciled["assignment"], stable["generation"]) == (2, None, 2)


def test_taking_a_group_over_emits_nothing():
    h = Harness()
    a = Client(h, "a")
    a.join()
    document = build_document(h.group(), h.core.topics, node_id=0, now_ms=h.now)
    other = ConsumerCore(timer=ManualTimer(), config=ConsumerGroupConfig(), node_id=1,
                         topics=TopicImage.of([ORDERS, AUDIT]))
    out = Result()
    takeover.load(other, document, 5, out)
    assert out.events == [] and out.records


def test_the_migration_events_name_the_new_type_and_an_upgrade_lists_what_every_member_owns():
    h = Harness()
    a, b = Client(h, "a"), Client(h, "b")
    a.join()
    b.join()
    settle(h, a, b)
    group = h.group()
    upgrade = events.upgraded(h.core, group, 9, member_id="new", client_id="app")
    assert upgrade[0] == {"v": 1, "ts": 9, "node": 0, "event": "group_migrated", "group": "g",
                          "group_type": "consumer", "generation": 2, "member_id": "new", "client_id": "app",
                          "members": 2}
    assert [(e["event"], e["member_id"], e["member_epoch"], len(e["assignment"])) for e in upgrade[1:]] == [
        ("member_reconciled", "a", 2, 3), ("member_reconciled", "b", 2, 3)]
    down = events.downgraded(h.core, group, group.members["b"], 9)
    assert (down["group_type"], down["generation"], down["member_id"], down["members"]) == (journal.CLASSIC, 2, "b", 1)


# --- the journal's view of ownership against the group's ------------------------------------------

class JournalView:
    """Ownership as the journal tells it: member id -> (member epoch, owned partitions), and every
    (owner, member epoch, partition) claim ever made (an owner is the instance id, else the member)."""

    def __init__(self) -> None:
        self.members: dict[str, tuple[int, frozenset]] = {}
        self.assigned: dict[str, frozenset] = {}
        self.claims: dict[tuple[int, str, int], set[str]] = {}

    def apply(self, event: dict) -> None:
        kind, member = event["event"], event.get("member_id")
        if kind == "member_reconciled":
            if event["assignment"] is not None:
                self.assigned[member] = frozenset((r["topic"], r["partition"]) for r in event["assignment"])
            revoking = frozenset((r["topic"], r["partition"]) for r in event["revoking"] or ())
            owned = self.assigned[member] | revoking
            self.members[member] = (event["member_epoch"], owned)
            for topic, partition in owned if event["member_epoch"] > 0 else ():  # -2: away, not an epoch
                self.claims.setdefault((event["member_epoch"], topic, partition), set()).add(
                    event["instance_id"] or member)
        elif kind == "member_expired" or (kind == "group_epoch_bumped" and event["reason"] == "leave"):
            self.members.pop(member, None)
        elif kind == "member_joined" and event["replaced_member_id"]:
            self.members.pop(event["replaced_member_id"], None)

    def check(self, harness: Harness) -> None:
        group = harness.core.groups.get("g")
        actual = {} if group is None else {
            m.member_id: frozenset((harness.core.topics.name_of(t), p) for block in (m.assigned, m.pending_revocation)
                                   for t, ps in block.items() for p in ps)
            for m in group.members.values()}  # a static member away (epoch -2) keeps what it owns
        assert {m: owned for m, (_, owned) in self.members.items()} == actual
        if group is not None:
            for m in group.members.values():
                if m.member_epoch > 0:
                    assert self.members[m.member_id][0] == m.member_epoch
        for (epoch, topic, partition), owners in self.claims.items():
            assert len(owners) == 1, f"{topic}-{partition} owned by {owners} at epoch {epoch}"


actions = st.lists(st.tuples(st.sampled_from(["join", "beat", "stubborn", "leave", "static-leave", "wait"]),
                             st.sampled_from(MEMBERS), st.sampled_from([("orders",), ("orders", "audit")])),
                   max_size=40)


@settings(max_examples=200, deadline=None)
@given(history=actions)
def test_the_journal_records_every_members_ownership_and_no_partition_has_two_owners_at_one_epoch(history):
    harness = Harness(session_timeout_ms=45_000)
    clients = {m: Client(harness, m, instance_id=f"i-{m}" if m in "ab" else None) for m in MEMBERS}
    view, seen = JournalView(), 0
    restarts = 0
    for action, member_id, topics in history:
        client = clients[member_id]
        if action == "join":
            if client.instance_id is not None:  # a static member restarts with a new member id
                restarts += 1
                client = clients[member_id] = Client(harness, f"{member_id}{restarts}", instance_id=client.instance_id)
            client.topics, client.epoch, client.owned = topics, 0, {}
            client.join()
        elif action == "beat":
            client.beat()
        elif action == "stubborn":
            kept = dict(client.owned)
            client.beat()
            client.owned = kept
        elif action == "leave":
            client.leave()
        elif action == "static-leave" and client.instance_id is not None:
            client.leave(-2)
        elif action == "wait":
            harness.advance(20_000)
        for event in emitted(harness, seen):
            view.apply(event)
        seen = len(harness.results)
        view.check(harness)
