"""Member machines against the real sans-IO consumer group core on one manual clock: N members
join, reconcile through their callbacks and settle STABLE with a disjoint cover of the topic; a
member that leaves hands its partitions over; a member that stops heartbeating is fenced by the
session timeout and comes back through FENCED -> JOINING -> STABLE."""

from __future__ import annotations

from groupctl.coordinator.consumer.messages import ConsumerHeartbeat
from groupctl.member import HeartbeatRequest, HeartbeatResponse, MemberConfig, MemberState as S
from tests.unit.consumer_harness import AUDIT, ORDERS, Harness
from tests.unit.member_harness import RecordingMember

NAMES = {ORDERS.topic_id: ORDERS.name, AUDIT.topic_id: AUDIT.name}


def to_core(request: HeartbeatRequest) -> ConsumerHeartbeat:
    return ConsumerHeartbeat(request.group_id, request.member_id, request.member_epoch,
                             instance_id=request.instance_id, rack_id=request.rack_id,
                             rebalance_timeout_ms=request.rebalance_timeout_ms,
                             subscribed_topic_names=request.subscribed_topic_names,
                             subscribed_topic_regex=request.subscribed_topic_regex,
                             server_assignor=request.server_assignor, owned=request.topic_partitions)


class Rehearsal:
    """Plays the driver for many members: sends their heartbeats to the core at once, runs their
    callbacks at once, polls for them, and moves the one clock to the next thing due."""

    def __init__(self, count: int, **config) -> None:
        self.harness = Harness(**config)
        self.members = {f"m-{i}": RecordingMember(MemberConfig("g", f"m-{i}"), topic_names=NAMES)
                        for i in range(count)}
        self.silent: set[str] = set()  # members whose heartbeats are not delivered
        self.wake: dict[str, int] = {}

    @property
    def now(self) -> int:
        return self.harness.now

    def handle(self, name: str, out) -> None:
        m = self.members[name]
        while True:
            self.wake[name] = out.wake_at_ms if out.wake_at_ms is not None else 10 ** 12
            if out.callbacks:
                out = m.callback_done(self.now, out.callbacks[0].id)
                continue
            if out.heartbeat is None:
                return
            if name in self.silent:
                out = m.heartbeat_failed(self.now)
                out = m.coordinator_found(self.now)
                continue
            result = self.harness.send(to_core(out.heartbeat))
            out = m.heartbeat_response(self.now, HeartbeatResponse(
                result.error, result.error_message, result.member_id, result.member_epoch,
                result.heartbeat_interval_ms, result.assignment))

    def subscribe_all(self, topics=("orders",)) -> None:
        for name, m in self.members.items():
            self.handle(name, m.subscribe(self.now, topics))

    def run(self, until, limit_ms: int = 120_000) -> None:
        deadline = self.now + limit_ms
        while not until():
            assert self.now < deadline, {n: m.state for n, m in self.members.items()}
            step = max(1, min(min(self.wake.values()), self.now + 1_000) - self.now)
            self.harness.advance(step)
            for name, m in list(self.members.items()):
                if name not in self.silent:
                    self.handle(name, m.poll(self.now))
                self.handle(name, m.tick(self.now))

    def settled(self) -> bool:
        group = self.harness.group()
        return all(m.state is S.STABLE and m.epoch == group.group_epoch and not m.pending_callbacks
                   for m in self.members.values()) and group.state.name == "STABLE"

    def owned(self) -> list[set]:
        return [{(t, p) for t, ps in m.owned.items() for p in ps} for m in self.members.values()]


def disjoint_cover(owned: list[set], partitions: int) -> bool:
    every = set().union(*owned)
    return sum(len(o) for o in owned) == len(every) == partitions


def test_many_members_settle_stable_with_a_disjoint_cover_of_the_topic():
    r = Rehearsal(5)
    r.subscribe_all()
    r.run(r.settled)
    assert disjoint_cover(r.owned(), ORDERS.partitions)
    assert all(m.owned for m in r.members.values())  # 6 partitions over 5 members: nobody idle


def test_a_member_that_leaves_hands_its_partitions_to_the_others():
    r = Rehearsal(3)
    r.subscribe_all()
    r.run(r.settled)
    leaving = r.members["m-0"]
    r.handle("m-0", leaving.unsubscribe(r.now))
    assert leaving.state is S.UNSUBSCRIBED and leaving.owned == {}
    del r.members["m-0"], r.wake["m-0"]
    r.run(r.settled)
    assert disjoint_cover(r.owned(), ORDERS.partitions)


def test_a_silent_member_is_fenced_by_the_session_timeout_and_comes_back_stable():
    r = Rehearsal(2, session_timeout_ms=10_000)
    r.subscribe_all()
    r.run(r.settled)
    r.silent.add("m-1")
    quiet = r.members["m-1"]
    r.run(lambda: len(r.harness.group().members) == 1)
    r.silent.clear()
    quiet.seen.clear()
    r.run(r.settled)
    assert (S.STABLE, S.FENCED) in quiet.seen  # then onLost, JOINING at epoch 0, and STABLE again
    assert disjoint_cover(r.owned(), ORDERS.partitions)
