"""One simulated classic-protocol member: JoinGroup, SyncGroup and Heartbeat as a real classic
consumer sends them, with kafka-python's assignors run by whichever member the coordinator makes
the leader, so classic and consumer-protocol (KIP-848) groups can be rehearsed side by side.

The member is callbacks and one timer; it keeps no task. The background side sends the requests
and reads the answers: JoinGroup (protocol type "consumer", the v4+ MEMBER_ID_REQUIRED round trip,
the instance id of a static member), then SyncGroup (the leader's carrying the assignment it computed,
a follower's empty; v9's `skip_assignment` spares a static leader rejoining a stable group the
assignor), then a Heartbeat every `heartbeat_interval_ms` until one answers REBALANCE_IN_PROGRESS.
The application side runs the rebalance callbacks one at a time, each on a later turn of the loop,
and reports ownership to the ledger when it runs; with `--commit` a revocation first commits the
revoked partitions' positions (OffsetCommit with the generation, member id and instance id; counted
"ok" or "failed", and revoked either way, as Apache Kafka does), and an assignment is taken once
OffsetFetch said where to resume it (`SimulationContext.fetch_positions`).

`--assignor range` is kafka-python's RangePartitionAssignor under the eager protocol: everything
is revoked before each JoinGroup. `--assignor uniform` is its CooperativeStickyAssignor under
KIP-429's cooperative protocol: a member keeps its partitions through the rebalance (and says so
in its subscription), revokes only what the new assignment drops, and rejoins at once when it
revoked anything, for the second round that hands those partitions to their new owners.

States are the KIP-848 member's names (`groupctl.member.MemberState`) so both protocols read the
same, with classic meanings: UNSUBSCRIBED -> JOINING (JoinGroup on its way, after an eager
revocation) -> RECONCILING (SyncGroup sent, then the callbacks) -> STABLE (heartbeating);
REBALANCE_IN_PROGRESS -> JOINING; ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID -> FENCED (partitions
lost) -> JOINING; leave: PREPARE_LEAVING (revoke) -> LEAVING (LeaveGroup) -> UNSUBSCRIBED; FATAL.
The epoch reported is the generation: 0 before the first one and once fenced, -1 once leaving
(-2 for a static member leaving for now), as a KIP-848 member reports its epoch.

Invariants:
- Every state change goes through `_to`, which checks it against `PREVIOUS_STATES` (staying in a
  state is never a transition), reports it, cancels the timer, and starts a new *turn*: an answer
  or callback issued in an earlier turn is dropped when it arrives. `stop()` starts a turn too, so
  nothing that arrives after it acts.
- At most one request is in flight on the member's own connection (leaving adds one at a time on
  a quick lane), and at most one callback is pending.
- One timer at a time: the next heartbeat, or a retry's backoff.
- `_owned` changes only when a callback runs; that is when the ledger hears of it.

Decisions:
- Connections: a JoinGroup is parked until the rebalance completes and Kafka answers a
  connection's requests one at a time, so each member has a connection of its own (its slot in the
  simulation: a churned member's replacement, which starts once it is out, takes its slot), as
  each real consumer has. What must not wait behind a parked JoinGroup or SyncGroup goes over a few
  shared *quick lanes* (`settings.members_per_connection` members a lane), where nothing is ever
  parked: DescribeGroups (the simulation's watch awaits it), and a leaving member's OffsetCommit and
  LeaveGroup (behind its own parked JoinGroup a LeaveGroup would wait for the whole join phase, up
  to the rebalance timeout when a member is gone).
- Errors, as kafka-python and Apache Kafka's classic consumer treat them: REBALANCE_IN_PROGRESS
  rejoins (a JoinGroup is sent again); ILLEGAL_GENERATION and UNKNOWN_MEMBER_ID fence the member
  (only UNKNOWN_MEMBER_ID forgets the member id, as kafka-python's `reset_generation` calls do);
  COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR and a failed connection find the coordinator again and
  carry on; FENCED_INSTANCE_ID (another process took the instance id: rejoining would fence it
  back), authorization, protocol, group-size and session-timeout errors, an unsupported version and
  an undecodable assignment are FATAL, the reason kept in `reason`; anything else is retried after
  a backoff of 100 ms doubling to 1 s.
- A static member that leaves for now (churn) sends no LeaveGroup: a restarting static member
  keeps its place until its session timeout (KIP-345), and its replacement takes it over.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any, Callable, Iterable, Optional

from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

from groupctl.client.kafka import ConnectionFailed, error_name
from groupctl.client.kafka_apis import commit_errors, describe_groups_call, offset_commit_request, parse_describe_groups
from groupctl.coordinator.consumer.regex import matching
from groupctl.coordinator.consumer_protocol import CONSUMER_PROTOCOL_TYPE, parse_assignment
from groupctl.errors import BadInput, OpsError
from groupctl.member import IllegalTransition, MemberState
from groupctl.simulate.context import Settings, SimulationContext
from groupctl.simulate.ledger import TopicPartition
from groupctl.simulate.rules import GroupView

OFFSET_COMMIT, JOIN_GROUP, HEARTBEAT, LEAVE_GROUP, SYNC_GROUP = 8, 11, 12, 13, 14
JOIN_VERSIONS = (5, 9)  # v4+ MEMBER_ID_REQUIRED, v5+ group_instance_id, v9 skip_assignment
SYNC_VERSIONS = (3, 5)  # v3+ group_instance_id
HEARTBEAT_VERSIONS = (3, 4)  # v3+ group_instance_id
LEAVE_VERSIONS = (3, 5)  # v3+ members[] with their instance ids
OFFSET_COMMIT_VERSIONS = (2, 9)

ILLEGAL_GENERATION = 22
UNKNOWN_MEMBER_ID = 25
REBALANCE_IN_PROGRESS = 27
MEMBER_ID_REQUIRED = 79
COORDINATOR_MOVED = frozenset({15, 16})  # COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
FATAL_ERRORS = frozenset({
    23,  # INCONSISTENT_GROUP_PROTOCOL
    24,  # INVALID_GROUP_ID
    26,  # INVALID_SESSION_TIMEOUT
    30,  # GROUP_AUTHORIZATION_FAILED
    35,  # UNSUPPORTED_VERSION
    81,  # GROUP_MAX_SIZE_REACHED
    82,  # FENCED_INSTANCE_ID
})

# The epochs a leaving member reports, as a KIP-848 member's leave heartbeat carries them: -1 gone
# (kafka-python's generation after LeaveGroup), -2 a static member gone for now.
LEAVE_EPOCH, STATIC_LEAVE_EPOCH = -1, -2

FIRST_BACKOFF_MS = 100
MAX_BACKOFF_MS = 1_000
ASSIGNORS = {"range": RangePartitionAssignor, "uniform": CooperativeStickyAssignor}  # --assignor -> eager / cooperative

_S = MemberState
# Each state with the states a classic member may enter it from.
PREVIOUS_STATES: dict[MemberState, frozenset[MemberState]] = {
    _S.JOINING: frozenset({_S.UNSUBSCRIBED, _S.STABLE, _S.RECONCILING, _S.FENCED}),
    _S.RECONCILING: frozenset({_S.JOINING}),
    _S.STABLE: frozenset({_S.RECONCILING}),
    _S.FENCED: frozenset({_S.JOINING, _S.RECONCILING, _S.STABLE}),
    _S.PREPARE_LEAVING: frozenset({_S.JOINING, _S.RECONCILING, _S.STABLE, _S.FENCED}),
    _S.LEAVING: frozenset({_S.PREPARE_LEAVING}),
    _S.UNSUBSCRIBED: frozenset({_S.PREPARE_LEAVING, _S.LEAVING}),
    _S.FATAL: frozenset({_S.JOINING, _S.RECONCILING, _S.STABLE}),
    _S.ACKNOWLEDGING: frozenset(),
    _S.STALE: frozenset(),
}

Answered = Callable[[Any, Optional[BaseException], int], None]  # (response, failure, link epoch at send)


class ClassicProtocolMember:
    __slots__ = ("ctx", "key", "slot", "instance_id", "member_id", "generation", "reason", "_state", "_owned", "_timer",
                 "_turn", "_backoff_ms", "_left")

    def __init__(self, ctx: SimulationContext, key: int, slot: int, instance_id: Optional[str] = None) -> None:
        if ctx.settings.assignor not in ASSIGNORS:
            raise BadInput(f"--assignor must be uniform or range, not '{ctx.settings.assignor}'")
        self.ctx = ctx
        self.key = key
        self.slot = slot
        self.instance_id = instance_id
        self.member_id = ""
        self.generation = 0
        self.reason: Optional[str] = None  # why the member is FATAL
        self._state = _S.UNSUBSCRIBED
        self._owned: frozenset[TopicPartition] = frozenset()
        self._timer: Optional[asyncio.TimerHandle] = None
        self._turn = 0
        self._backoff_ms = 0
        self._left: Optional[asyncio.Future] = None

    # -- what the simulation does with a member ---------------------------------------------------

    @property
    def state(self) -> str:
        return self._state.value

    @property
    def epoch(self) -> int:
        return self.generation

    def start(self) -> None:
        self.ctx.ledger.joined(self.key, self.member_id, self.state, self.instance_id)
        self._join()

    def leave(self, *, for_good: bool) -> asyncio.Future:
        """Revoke everything (committing first with --commit), then LeaveGroup; a static member
        leaving for now sends none. The future ends once the member is out: UNSUBSCRIBED after the
        LeaveGroup was answered or failed, at once if it never joined or is FATAL."""
        if self._left is not None:
            return self._left
        self._left = self.ctx.loop.create_future()
        if self._state in (_S.UNSUBSCRIBED, _S.FATAL):
            self._left.set_result(None)
            return self._left
        self._to(_S.PREPARE_LEAVING)
        self._revoke(self._owned, self._quick_lane(), lambda: self._leave_group(for_good))
        return self._left

    def stop(self) -> None:
        """Forget the member without a word to the coordinator (after leaving, or as a crash would):
        no timer fires and no later answer or callback acts."""
        self._turn += 1
        self._cancel_timer()
        if self._left is not None and not self._left.done():
            self._left.set_result(None)

    # -- states -----------------------------------------------------------------------------------

    def _to(self, state: MemberState) -> None:
        before = self._state
        if before not in PREVIOUS_STATES[state]:
            raise IllegalTransition(f"classic member {self.member_id or self.key}: invalid transition "
                                    f"from {before.name} to {state.name}")
        self._state = state
        self._turn += 1
        self._cancel_timer()
        self.ctx.ledger.transition(self.key, self.member_id, before.value, state.value, self.generation,
                                   self.ctx.now_ms())

    def _fenced(self, code: int) -> None:
        """Out of the group: lose the partitions, then rejoin (with no member id after
        UNKNOWN_MEMBER_ID, with the same one after ILLEGAL_GENERATION)."""
        self.generation = 0
        self._to(_S.FENCED)
        if code == UNKNOWN_MEMBER_ID:
            self.member_id = ""
        self._callback(False, self._owned, self._join)

    def _fatal(self, reason: str) -> None:
        self.reason = reason
        self.ctx.ledger.fatal[reason] += 1
        self._to(_S.FATAL)
        if self._owned:
            self._callback(False, self._owned, None)

    # -- joining ----------------------------------------------------------------------------------

    @property
    def _eager(self) -> bool:
        return self.ctx.settings.assignor == "range"

    def _join(self) -> None:
        """JOINING: under the eager protocol revoke everything first (committing with --commit),
        then send JoinGroup."""
        self._to(_S.JOINING)
        if self._eager and self._owned:
            self._revoke(self._owned, self._slot, self._send_join)
        else:
            self._send_join()

    def _send_join(self) -> None:
        settings = self.ctx.settings
        member_id, instance_id = self.member_id, self.instance_id
        name, metadata = ASSIGNORS[settings.assignor].name, self._subscription()

        def build(cls: type, version: int) -> Any:
            return cls(group_id=settings.group, session_timeout_ms=settings.session_timeout_ms,
                       rebalance_timeout_ms=settings.rebalance_timeout_ms, member_id=member_id,
                       group_instance_id=instance_id, protocol_type=CONSUMER_PROTOCOL_TYPE,
                       protocols=[cls.JoinGroupRequestProtocol(name=name, metadata=metadata)], reason=None)

        self._send(self._slot, JOIN_GROUP, JOIN_VERSIONS, build, self._join_answered)

    def _subscription(self) -> bytes:
        """The ConsumerProtocolSubscription: v0 (eager, as kafka-python's range assignor sends), or
        v1 with the partitions the member owns (cooperative)."""
        topics = subscribed_topics(self.ctx)
        if self._eager:
            return ConsumerProtocolSubscription(version=0, topics=topics, user_data=b"").encode(version=0)
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(self._owned):
            by_topic.setdefault(topic, []).append(partition)
        owned = [ConsumerProtocolSubscription.TopicPartition(topic=t, partitions=ps) for t, ps in by_topic.items()]
        return ConsumerProtocolSubscription(version=1, topics=topics, user_data=b"",
                                            owned_partitions=owned).encode(version=1)

    def _join_answered(self, response: Any, failure: Optional[BaseException], sent_at: int) -> None:
        if failure is not None:
            return self._failed(failure, sent_at, self._send_join)
        code = response.error_code
        if code == MEMBER_ID_REQUIRED:
            self.member_id = response.member_id
            return self._send_join()
        if code == REBALANCE_IN_PROGRESS:
            return self._send_join()
        if code != 0:
            return self._error(code, sent_at, self._send_join)
        if response.protocol_type not in (None, CONSUMER_PROTOCOL_TYPE):
            return self._fatal(f"the group's protocol type is '{response.protocol_type}', not consumer")
        self.member_id = response.member_id
        self.generation = response.generation_id
        self._backoff_ms = 0
        self._to(_S.RECONCILING)
        if response.leader != self.member_id or response.skip_assignment:
            return self._send_sync(response.protocol_name, [])
        joined = [(m.member_id, m.group_instance_id, bytes(m.metadata)) for m in response.members]
        computing = self.ctx.run_apart(leader_assignment, self.ctx.settings.assignor, self.ctx.partition_counts,
                                       joined)
        turn, protocol_name = self._turn, response.protocol_name

        def computed(future: asyncio.Future) -> None:
            failure = None if future.cancelled() else future.exception()
            if turn != self._turn or future.cancelled():
                return
            if failure is not None:  # a peer's undecodable subscription, or the worker died
                return self._fatal(f"the assignor failed: {failure}")
            self._send_sync(protocol_name, future.result())

        computing.add_done_callback(computed)

    def _send_sync(self, protocol_name: Optional[str], assignments: list[tuple[str, bytes]]) -> None:
        group, generation, member_id, instance_id = (self.ctx.settings.group, self.generation, self.member_id,
                                                     self.instance_id)

        def build(cls: type, version: int) -> Any:
            return cls(group_id=group, generation_id=generation, member_id=member_id, group_instance_id=instance_id,
                       protocol_type=CONSUMER_PROTOCOL_TYPE, protocol_name=protocol_name,
                       assignments=[cls.SyncGroupRequestAssignment(member_id=m, assignment=a) for m, a in assignments])

        self._send(self._slot, SYNC_GROUP, SYNC_VERSIONS, build, self._sync_answered)

    def _sync_answered(self, response: Any, failure: Optional[BaseException], sent_at: int) -> None:
        if failure is not None:
            return self._failed(failure, sent_at, self._join)
        code = response.error_code
        if code == REBALANCE_IN_PROGRESS:
            return self._join()
        if code != 0:
            return self._error(code, sent_at, self._join)
        assignment = parse_assignment(response.assignment)
        if assignment is None:
            return self._fatal("the leader's assignment does not decode")
        self._backoff_ms = 0
        self._reconcile(frozenset((t, p) for t, ps in assignment.items() for p in ps))

    def _reconcile(self, target: frozenset[TopicPartition]) -> None:
        """Revoke what the assignment drops (cooperative; nothing is held here under eager), assign
        what it adds (with --commit, once OffsetFetch said where to resume it), then heartbeat as
        STABLE, or rejoin at once after a revocation (KIP-429's second round)."""
        revoked = self._owned - target

        def assign() -> None:
            added = target - self._owned
            then = self._join if revoked else self._stable
            if not (self.ctx.settings.commit and added):
                return self._callback(True, added, then)
            self._then(asyncio.ensure_future(self.ctx.fetch_positions(self._slot, added)),
                       lambda: self._callback(True, added, then))

        if revoked:
            self._revoke(revoked, self._slot, assign)
        else:
            assign()

    def _stable(self) -> None:
        self._to(_S.STABLE)
        self._later(self.ctx.settings.heartbeat_interval_ms, self._heartbeat)

    # -- heartbeats -------------------------------------------------------------------------------

    def _heartbeat(self) -> None:
        settings = self.ctx.settings
        group, generation, member_id, instance_id = settings.group, self.generation, self.member_id, self.instance_id

        def build(cls: type, version: int) -> Any:
            return cls(group_id=group, generation_id=generation, member_id=member_id, group_instance_id=instance_id)

        self.ctx.ledger.heartbeats += 1
        self._send(self._slot, HEARTBEAT, HEARTBEAT_VERSIONS, build, self._heartbeat_answered)

    def _heartbeat_answered(self, response: Any, failure: Optional[BaseException], sent_at: int) -> None:
        if failure is not None:
            return self._failed(failure, sent_at, self._heartbeat)
        code = response.error_code
        if code == REBALANCE_IN_PROGRESS:
            return self._join()
        if code != 0:
            return self._error(code, sent_at, self._heartbeat)
        self._backoff_ms = 0
        self._later(self.ctx.settings.heartbeat_interval_ms, self._heartbeat)

    # -- leaving ----------------------------------------------------------------------------------

    def _leave_group(self, for_good: bool) -> None:
        if self.instance_id is not None and not for_good:
            self.generation = STATIC_LEAVE_EPOCH
            return self._out()
        self.generation = LEAVE_EPOCH
        if not self.member_id:
            return self._out()
        self._to(_S.LEAVING)
        group, member_id, instance_id = self.ctx.settings.group, self.member_id, self.instance_id

        def build(cls: type, version: int) -> Any:
            return cls(group_id=group, member_id=member_id,
                       members=[cls.MemberIdentity(member_id=member_id, group_instance_id=instance_id, reason=None)])

        self._send(self._quick_lane(), LEAVE_GROUP, LEAVE_VERSIONS, build, lambda *_: self._out())

    def _out(self) -> None:
        self._to(_S.UNSUBSCRIBED)
        if self._left is not None and not self._left.done():
            self._left.set_result(None)

    # -- the application side ---------------------------------------------------------------------

    def _revoke(self, partitions: frozenset[TopicPartition], slot: int, then: Callable[[], None]) -> None:
        """The revoke callback, after committing the partitions' positions with --commit (in a
        generation: a fenced member's partitions are lost, not committed)."""
        ctx = self.ctx
        offsets = ctx.offsets_to_commit(partitions) if ctx.settings.commit and self.generation > 0 else {}
        if not offsets:
            return self._callback(False, partitions, then)
        build = offset_commit_request(ctx.settings.group, offsets, generation=self.generation,
                                      member_id=self.member_id, instance_id=self.instance_id)
        future = self._send(slot, OFFSET_COMMIT, OFFSET_COMMIT_VERSIONS, build,
                            lambda *_: self._callback(False, partitions, then))
        future.add_done_callback(self._count_commit)

    def _count_commit(self, future: asyncio.Future) -> None:
        if future.cancelled():
            return
        failed = future.exception() is not None or any(commit_errors(future.result()).values())
        self.ctx.ledger.commits["failed" if failed else "ok"] += 1

    def _callback(self, assign: bool, partitions: Iterable[TopicPartition], then: Optional[Callable[[], None]]) -> None:
        """Run the assign (or revoke/lost) callback on a later turn of the loop, then `then`."""
        self.ctx.run_soon(self._run_callback, self._turn, assign, frozenset(partitions), then)

    def _run_callback(self, turn: int, assign: bool, partitions: frozenset[TopicPartition],
                      then: Optional[Callable[[], None]]) -> None:
        if turn != self._turn:
            return
        ctx = self.ctx
        if assign:
            ctx.ledger.assigned(self.key, partitions, ctx.now_ms())
            self._owned |= partitions
        else:
            ctx.ledger.released(self.key, partitions, ctx.now_ms())
            self._owned -= partitions
        if then is not None:
            then()

    # -- requests, failures, timers ---------------------------------------------------------------

    @property
    def _slot(self) -> int:
        """The member's own connection (see the module docstring)."""
        return self.slot

    def _quick_lane(self) -> int:
        settings = self.ctx.settings
        return settings.count + self.slot % quick_lanes(settings)

    def _send(self, slot: int, api: int, versions: tuple[int, int], build: Callable[[type, int], Any],
              answered: Answered) -> asyncio.Future:
        """Send on `slot`; `answered` hears of the answer (or the failure) unless the member moved
        on to another turn meanwhile."""
        link = self.ctx.link
        sent_at = link.epoch
        try:
            future = link.send(slot, api, versions, build)
        except OpsError as exc:  # Unsupported: the open connection does not serve these versions
            future = self.ctx.loop.create_future()
            future.set_exception(exc)
        turn = self._turn

        def done(f: asyncio.Future) -> None:
            if f.cancelled():
                return
            failure = f.exception()
            if turn == self._turn:
                answered(None if failure is not None else f.result(), failure, sent_at)

        future.add_done_callback(done)
        return future

    def _then(self, future: asyncio.Future, action: Callable[[], None]) -> None:
        """`action` once `future` ends, whatever its outcome, unless the member moved on to another
        turn meanwhile."""
        turn = self._turn

        def done(f: asyncio.Future) -> None:
            if not f.cancelled():
                f.exception()  # retrieved: the outcome is not this member's business
            if turn == self._turn:
                action()

        future.add_done_callback(done)

    def _failed(self, failure: BaseException, sent_at: int, retry: Callable[[], None]) -> None:
        """A request failed without an answer: find the coordinator again if the connection
        failed; anything else (an unsupported version) is FATAL."""
        if not isinstance(failure, ConnectionFailed):
            return self._fatal(str(failure))
        link = self.ctx.link
        link.rediscover(sent_at)
        turn = self._turn
        link.when_found(lambda: turn == self._turn and retry())

    def _error(self, code: int, sent_at: int, retry: Callable[[], None]) -> None:
        """An error answer that is not the request's own business (see the module docstring)."""
        if code in (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID):
            self._fenced(code)
        elif code in COORDINATOR_MOVED:
            self._failed(ConnectionFailed(error_name(code), None), sent_at, retry)
        elif code in FATAL_ERRORS:
            self._fatal(error_name(code))
        else:
            self._backoff_ms = min(max(self._backoff_ms * 2, FIRST_BACKOFF_MS), MAX_BACKOFF_MS)
            self._later(self._backoff_ms, retry)

    def _later(self, delay_ms: int, action: Callable[[], None]) -> None:
        """`action` in `delay_ms` (the handle is kept after it fires: cancelling it then is harmless)."""
        self._cancel_timer()
        self._timer = self.ctx.loop.call_later(delay_ms / 1000, action)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class _Joined:
    """A JoinGroup member as kafka-python's assignors read it."""

    __slots__ = ("member_id", "group_instance_id", "metadata")

    def __init__(self, member_id: str, group_instance_id: Optional[str], metadata: Any) -> None:
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.metadata = metadata


def leader_assignment(assignor_name: str, partition_counts: dict[str, int],
                      joined: list[tuple[str, Optional[str], bytes]]) -> list[tuple[str, bytes]]:
    """The leader's assignment of the group (member id -> ConsumerProtocolAssignment bytes) by
    kafka-python's assignor, as its consumer computes it, from the JoinGroup members (member id,
    instance id, ConsumerProtocolSubscription bytes). Runs in a worker process (see
    `SimulationContext.run_apart`)."""
    members = [_Joined(member_id, instance_id, ConsumerProtocolSubscription.decode(metadata))
               for member_id, instance_id, metadata in joined]
    topics = {t for m in members for t in m.metadata.topics}
    assignor = ASSIGNORS[assignor_name]
    if assignor_name != "range":
        assignor = assignor()  # cooperative-sticky is an instance: it keeps the last rebalance's movements
    assigned = assignor.assign(_Cluster({t: partition_counts[t] for t in topics if t in partition_counts}), members)
    return [(member_id, a.encode(version=a.version)) for member_id, a in assigned.items()]


class _Cluster:
    """What kafka-python's assignors ask of its ClusterMetadata, over the simulation's partition counts."""

    __slots__ = ("counts",)

    def __init__(self, counts: dict[str, int]) -> None:
        self.counts = counts

    def topics(self) -> set[str]:
        return set(self.counts)

    def partitions_for_topic(self, topic: str) -> Optional[set[int]]:
        count = self.counts.get(topic)
        return None if count is None else set(range(count))


def subscribed_topics(ctx: SimulationContext) -> list[str]:
    """The topics a member subscribes to: `--topic`s, and with `--pattern` the known topics it
    fully matches (RE2, the broker's semantics, which the simulation counts by; a classic client
    matches its regex itself)."""
    settings = ctx.settings
    topics = set(settings.topics)
    if settings.pattern is not None:
        topics |= matching(settings.pattern, ctx.partition_counts)
    return sorted(topics)


def quick_lanes(settings: Settings) -> int:
    """How many shared connections carry the requests answered at once (see the module docstring)."""
    return math.ceil(settings.count / settings.members_per_connection)


class ClassicRules:
    """The classic protocol's rehearsal: a connection per member plus the quick lanes; the group is
    stable when DescribeGroups says Stable with every simulated member in it and STABLE at the
    newest generation any of them was given (DescribeGroups has no generation)."""

    def connections(self, settings: Settings) -> int:
        return settings.count + quick_lanes(settings)

    def request_timeout_s(self, settings: Settings) -> float:
        """The rebalance timeout and 5 s more: a JoinGroup may be parked for a whole rebalance
        (kafka-python's and Apache Kafka's JoinGroup timeout)."""
        return settings.rebalance_timeout_ms / 1000 + 5

    def new_member(self, ctx: SimulationContext, key: int, slot: int,
                   instance_id: Optional[str]) -> ClassicProtocolMember:
        return ClassicProtocolMember(ctx, key, slot, instance_id)

    async def describe(self, ctx: SimulationContext, members: list) -> GroupView:
        call = describe_groups_call(None, [ctx.settings.group])  # type: ignore[arg-type]
        try:
            response = await ctx.link.send(ctx.settings.count, call.key, call.versions, call.build)
            (info,) = parse_describe_groups(response)
        except (ConnectionFailed, OpsError):
            return GroupView(None, False)
        generation = max((m.epoch for m in members if m.epoch > 0), default=None)
        described = {m.member_id for m in info.members}
        stable = (info.state == "Stable" and generation is not None
                  and all(m.state == "STABLE" and m.epoch == generation and m.member_id in described
                          for m in members))
        return GroupView(generation, stable)


RULES = ClassicRules()
