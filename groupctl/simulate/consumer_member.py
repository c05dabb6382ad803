"""One simulated consumer-protocol (KIP-848) member: the asyncio driver of a `groupctl.member.Member`.

It plays the design's two threads without a task of its own. The background side owns the link and
the timers: it sends the heartbeats the machine asks for over the shared connection, feeds the
answers (or the failures) back, finds the coordinator again and learns topic names when asked, and
keeps one timer for the machine's next wake-up. The application side runs the callbacks one at a
time, in order, each on a later turn of the loop (as an application thread picks them up on its
next poll); with `--commit`, a REVOKE first commits the revoked partitions' positions through
OffsetCommit v9 with the member's epoch. The application polls all the time, so a simulated member
never goes STALE.

Invariants:
- Every machine input goes through `_apply`, which reports the transitions to the ledger and acts
  on the whole Output; nothing else changes the machine.
- At most one callback runs at a time; the next starts when the machine has its completion.
- One wake-up timer at a time, at the machine's `wake_at_ms` (never earlier than 1 ms from now).
"""

from __future__ import annotations

import asyncio
import base64
import math
import uuid
from collections import deque
from typing import Any, Optional

from groupctl.client.aio import DEFAULT_REQUEST_TIMEOUT_S
from groupctl.client.consumer_group_apis import consumer_group_describe_call, parse_consumer_group_describe
from groupctl.client.kafka import ConnectionFailed
from groupctl.client.kafka_apis import commit_errors, offset_commit_request
from groupctl.errors import OpsError
from groupctl.member import (Callback, CallbackKind, HeartbeatRequest, HeartbeatResponse, Member, MemberConfig,
                             MemberState, Output, partitions)
from groupctl.protocol.consumer_group import HEARTBEAT_KEY
from groupctl.simulate.context import Settings, SimulationContext
from groupctl.simulate.rules import GroupView

OFFSET_COMMIT = 8
HEARTBEAT_VERSIONS = (0, 1)
OFFSET_COMMIT_VERSIONS = (9, 9)  # the member epoch is checked from v9 on


def new_member_id() -> str:
    """A client-made member id (KIP-1082), as Apache Kafka's `Uuid.randomUuid().toString()`."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


class ConsumerProtocolMember:
    __slots__ = ("ctx", "key", "slot", "machine", "_sent_at_epoch", "_wake", "_wake_at", "_callbacks", "_running",
                 "_finding", "_resolving", "_left", "_stopped")

    def __init__(self, ctx: SimulationContext, key: int, slot: int, instance_id: Optional[str] = None) -> None:
        settings = ctx.settings
        self.ctx = ctx
        self.key = key
        self.slot = slot  # the connection it shares: slot % the link's size
        config = MemberConfig(group_id=settings.group, member_id=new_member_id(), instance_id=instance_id,
                              rebalance_timeout_ms=settings.rebalance_timeout_ms,
                              max_poll_interval_ms=settings.rebalance_timeout_ms,
                              server_assignor=settings.assignor, auto_commit=settings.commit)
        self.machine = Member(config, ctx.topic_names)
        self._sent_at_epoch = 0
        self._wake: Optional[asyncio.TimerHandle] = None
        self._wake_at: Optional[int] = None
        self._callbacks: Optional[deque[Callback]] = None
        self._running = False
        self._finding = False
        self._resolving = False
        self._left: Optional[asyncio.Future] = None
        self._stopped = False

    # -- what the simulation does with a member ---------------------------------------------------

    @property
    def member_id(self) -> str:
        return self.machine.member_id

    @property
    def state(self) -> str:
        return self.machine.state.value

    @property
    def epoch(self) -> int:
        return self.machine.epoch

    def start(self) -> None:
        self.ctx.ledger.joined(self.key, self.member_id, self.state, self.machine.config.instance_id)
        settings = self.ctx.settings
        self._apply(self.machine.subscribe(self.ctx.now_ms(), settings.topics, settings.pattern))

    def leave(self, *, for_good: bool) -> asyncio.Future:
        """Unsubscribe: revoke (committing first with --commit), then send the leave heartbeat. A
        static member leaves for now (-2) unless `for_good` (-1). The future ends once the member is
        UNSUBSCRIBED and its leave was answered (or could not be sent)."""
        if self._left is not None:  # leaving already: a for-good leave still turns a static -2 into -1
            if for_good and not self._left.done():
                self._apply(self.machine.unsubscribe(self.ctx.now_ms(), leave_group=True))
            return self._left
        self._left = self.ctx.loop.create_future()
        self._apply(self.machine.unsubscribe(self.ctx.now_ms(), leave_group=for_good))
        return self._left

    def stop(self) -> None:
        """Forget the member: nothing it hears afterwards acts (after its leave, or as a crash)."""
        self._stopped = True
        if self._wake is not None:
            self._wake.cancel()
            self._wake = None

    # -- the background side ---------------------------------------------------------------------

    def _apply(self, out: Output) -> None:
        if self._stopped:
            return
        ctx = self.ctx
        now = ctx.now_ms()
        for from_state, to_state in out.transitions:
            ctx.ledger.transition(self.key, self.member_id, from_state.value, to_state.value, self.machine.epoch, now)
            if to_state is MemberState.FATAL and out.fatal is not None:
                ctx.ledger.fatal[out.fatal.reason] += 1
        if out.heartbeat is not None:
            self._send(out.heartbeat)
        if out.callbacks:
            if self._callbacks is None:
                self._callbacks = deque()
            self._callbacks.extend(out.callbacks)
            self._next_callback()
        if out.find_coordinator and not self._finding:
            self._finding = True
            ctx.link.rediscover(self._sent_at_epoch)
            ctx.link.when_found(self._coordinator_found)
        if out.unresolved_topic_ids and not self._resolving:
            self._resolving = True
            ctx.resolve_topic_ids(out.unresolved_topic_ids, self._names_learned)
        self._schedule(out.wake_at_ms, now)
        out_of_group = (out.state is MemberState.UNSUBSCRIBED and self.machine.in_flight == 0
                        or out.state is MemberState.FATAL)  # a FATAL member sends nothing more
        if self._left is not None and out_of_group and not self._left.done():
            self._left.set_result(None)

    def _schedule(self, wake_at: Optional[int], now: int) -> None:
        if wake_at is not None:
            wake_at = max(wake_at, now + 1)
        if wake_at == self._wake_at and self._wake is not None:
            return
        if self._wake is not None:
            self._wake.cancel()
            self._wake = None
        self._wake_at = wake_at
        if wake_at is not None:
            self._wake = self.ctx.loop.call_at(self.ctx.at(wake_at), self._woken)

    def _woken(self) -> None:
        self._wake = None
        self._wake_at = None
        self._apply(self.machine.poll(self.ctx.now_ms()))

    def _send(self, heartbeat: HeartbeatRequest) -> None:
        link = self.ctx.link
        self._sent_at_epoch = link.epoch
        self.ctx.ledger.heartbeats += 1
        try:
            future = link.send(self.slot, HEARTBEAT_KEY, HEARTBEAT_VERSIONS, _heartbeat_build(heartbeat))
        except OpsError as exc:  # the coordinator does not serve ConsumerGroupHeartbeat (Unsupported)
            self.ctx.run_soon(self._failed, exc)
            return
        future.add_done_callback(self._answered)

    def _answered(self, future: asyncio.Future) -> None:
        if future.cancelled():
            return self._failed(ConnectionFailed("the heartbeat was cancelled", None))
        error = future.exception()
        if error is not None:
            return self._failed(error)
        now = self.ctx.now_ms()
        response = future.result()
        assignment = response.assignment
        self._apply(self.machine.heartbeat_response(now, HeartbeatResponse(
            error=response.error_code, error_message=response.error_message, member_id=response.member_id,
            member_epoch=response.member_epoch, heartbeat_interval_ms=response.heartbeat_interval_ms,
            assignment=None if assignment is None else partitions(
                {str(t.topic_id): t.partitions for t in assignment.topic_partitions}))))

    def _failed(self, error: BaseException) -> None:
        """No answer: a lost connection is retried after finding the coordinator again; anything
        else (an API the coordinator does not serve) is FATAL."""
        retriable = isinstance(error, ConnectionFailed)
        self._apply(self.machine.heartbeat_failed(self.ctx.now_ms(), retriable=retriable, message=str(error)))

    def _coordinator_found(self) -> None:
        self._finding = False
        self._apply(self.machine.coordinator_found(self.ctx.now_ms()))

    def _names_learned(self, names: dict[str, str]) -> None:
        self._resolving = False
        self._apply(self.machine.topic_names_learned(self.ctx.now_ms(), names))

    # -- the application side --------------------------------------------------------------------

    def _next_callback(self) -> None:
        if self._running or not self._callbacks:
            return
        callback = self._callbacks.popleft()
        self._running = True
        if callback.kind is CallbackKind.REVOKE and callback.commit:
            asyncio.ensure_future(self._commit_then_run(callback))
        elif callback.kind is CallbackKind.ASSIGN and self.ctx.settings.commit and callback.partitions:
            asyncio.ensure_future(self._fetch_then_run(callback))
        else:
            self.ctx.run_soon(self._run, callback)

    async def _fetch_then_run(self, callback: Callback) -> None:
        """Before taking partitions, learn where to resume them (what a revoke will commit)."""
        await self.ctx.fetch_positions(self.slot, _named(callback, callback.partitions))
        self._run(callback)

    async def _commit_then_run(self, callback: Callback) -> None:
        ctx = self.ctx
        offsets = ctx.offsets_to_commit(_named(callback, callback.commit))
        if offsets:
            build = offset_commit_request(ctx.settings.group, offsets, generation=self.machine.epoch,
                                          member_id=self.member_id, instance_id=self.machine.config.instance_id)
            try:
                response = await ctx.link.send(self.slot, OFFSET_COMMIT, OFFSET_COMMIT_VERSIONS, build)
                failed = any(code != 0 for code in commit_errors(response).values())
            except Exception:  # noqa: BLE001 - a failed commit is counted; AK revokes anyway
                failed = True
            ctx.ledger.commits["failed" if failed else "ok"] += 1
        self._run(callback)

    def _run(self, callback: Callback) -> None:
        ctx = self.ctx
        now = ctx.now_ms()
        taken = _named(callback, callback.partitions)
        if callback.kind is CallbackKind.ASSIGN:
            ctx.ledger.assigned(self.key, taken, now)
        else:
            ctx.ledger.released(self.key, taken, now)
        self._running = False
        self._apply(self.machine.callback_done(now, callback.id, ok=True))
        self._next_callback()


def _named(callback: Callback, partitions: Any) -> list[tuple[str, int]]:
    """(topic name, partition) of `partitions` (topic id -> partitions) of `callback`."""
    names = callback.names
    return [(names.get(t, t), p) for t, ps in partitions.items() for p in ps]


def _heartbeat_build(heartbeat: HeartbeatRequest) -> Any:
    def build(cls: type, version: int) -> Any:
        owned = heartbeat.topic_partitions
        return cls(
            group_id=heartbeat.group_id, member_id=heartbeat.member_id, member_epoch=heartbeat.member_epoch,
            instance_id=heartbeat.instance_id, rack_id=heartbeat.rack_id,
            rebalance_timeout_ms=heartbeat.rebalance_timeout_ms,
            subscribed_topic_names=None if heartbeat.subscribed_topic_names is None
            else list(heartbeat.subscribed_topic_names),
            subscribed_topic_regex=heartbeat.subscribed_topic_regex, server_assignor=heartbeat.server_assignor,
            topic_partitions=None if owned is None else [
                cls.TopicPartitions(topic_id=uuid.UUID(t), partitions=sorted(ps)) for t, ps in owned.items()])

    return build


class ConsumerRules:
    """The consumer protocol's rehearsal: heartbeats share connections; the group is stable when
    ConsumerGroupDescribe says Stable at the target's epoch and every simulated member is STABLE there."""

    def connections(self, settings: Settings) -> int:
        return math.ceil(settings.count / settings.members_per_connection)

    def request_timeout_s(self, settings: Settings) -> float:
        return DEFAULT_REQUEST_TIMEOUT_S

    def new_member(self, ctx: SimulationContext, key: int, slot: int,
                   instance_id: Optional[str]) -> ConsumerProtocolMember:
        return ConsumerProtocolMember(ctx, key, slot, instance_id)

    async def describe(self, ctx: SimulationContext, members: list) -> GroupView:
        call = consumer_group_describe_call(None, [ctx.settings.group])  # type: ignore[arg-type]
        try:
            response = await ctx.link.send(0, call.key, call.versions, call.build)
            (info,) = parse_consumer_group_describe(response)
        except (ConnectionFailed, OpsError):
            return GroupView(None, False)
        if info is None:
            return GroupView(None, False)
        epoch = info.group_epoch
        described = {m.member_id: m.member_epoch for m in info.members}
        stable = (info.state == "Stable" and info.assignment_epoch == epoch
                  and all(e == epoch for e in described.values())
                  and all(m.state == "STABLE" and described.get(m.member_id) == epoch for m in members))
        return GroupView(epoch, stable)


RULES = ConsumerRules()
