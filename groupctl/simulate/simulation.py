"""A rebalance rehearsal: N simulated members of one group on one event loop, watched until the group
is stable, a duration passes, or the operator stops it; then every member leaves.

`Simulation.run` is the whole life: find the coordinator, learn the subscribed topics, start the
members, and every `CHECK_INTERVAL_S` ask the coordinator how the group stands (its epoch, and
whether it is stable at its target), churn members if asked, and offer a `Snapshot` to whoever
watches. It returns the `Summary`.

Invariants:
- The simulation ends through `_leave_all` whatever ended it (stable, duration, stop event): every
  member still in the group leaves (-1, static members too: nothing is left behind to expire),
  within `LEAVE_BOUND_S`.
- "Stable" is the coordinator's word and the members' together: the group is Stable at its target
  (consumer protocol: the group epoch is the assignment epoch; classic: a Stable generation), and
  every simulated member is STABLE at that epoch or generation.
- Churn is a rolling restart: every 1/rate seconds the next member (round robin) leaves, and once
  it is out a new member takes its slot (a static one keeps its instance id and leaves "for now",
  -2). A slot whose member is still restarting is skipped: restarts never overlap in one slot.
"""

from __future__ import annotations

import asyncio
import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from groupctl.coordinator.consumer.regex import InvalidRegex, matching
from groupctl.errors import BadInput
from groupctl.simulate import classic_member, consumer_member
from groupctl.simulate.context import CLASSIC, CONSUMER, Settings, SimulationContext
from groupctl.simulate.ledger import Ledger, Transition
from groupctl.simulate.link import CoordinatorLink
from groupctl.simulate.rules import GroupView, ProtocolRules, SimulatedMember

CHECK_INTERVAL_S = 0.25
LEAVE_BOUND_S = 10.0
STARTUP_BOUND_S = 10.0  # finding the coordinator, without --timeout: an unreachable cluster fails the command within it
DESCRIBE_BOUND_S = 5.0  # a check whose answer takes longer counts as "not stable"


@dataclass(frozen=True)
class Snapshot:
    elapsed_s: float
    states: dict[str, int]
    group_epoch: Optional[int]
    partitions_moved: int
    unowned: int
    partitions: int
    heartbeats: int
    stable: bool


@dataclass(frozen=True)
class Summary:
    """What the rehearsal measured; `states` and `assignment` are as the run ended (before leaving)."""

    states: dict[str, int]
    time_to_stable_s: Optional[float]
    assignment: dict[str, list[list]]
    partitions_moved: int
    max_unowned_ms: int
    heartbeats: int
    protocol: str
    members: int
    group_epoch: Optional[int]
    ended_by: str  # "stable", "duration" or "interrupt"
    elapsed_s: float  # when it ended, before the members left
    left: int  # members that were out of the group (left, or never in it) within LEAVE_BOUND_S
    churned: int = 0
    commits: dict[str, int] = field(default_factory=dict)
    overlaps: int = 0
    fatal: dict[str, int] = field(default_factory=dict)  # why members went FATAL -> how many

    def to_json(self) -> dict[str, Any]:
        return {"event": "summary", "states": self.states, "time_to_stable_s": self.time_to_stable_s,
                "assignment": self.assignment, "partitions_moved": self.partitions_moved,
                "max_unowned_ms": self.max_unowned_ms, "heartbeats": self.heartbeats, "protocol": self.protocol,
                "members": self.members, "group_epoch": self.group_epoch, "ended_by": self.ended_by,
                "elapsed_s": self.elapsed_s, "left": self.left, "churned": self.churned, "commits": self.commits,
                "overlaps": self.overlaps, "fatal": self.fatal}


class Simulation:
    def __init__(self, settings: Settings, on_transition: Optional[Callable[[Transition], None]] = None) -> None:
        if settings.protocol not in RULES:
            raise BadInput(f"--protocol must be consumer or classic, not '{settings.protocol}'")
        if settings.count < 1:
            raise BadInput("--count must be at least 1")
        if not settings.topics and settings.pattern is None:
            raise BadInput("name at least one --topic, or a --pattern")
        self.settings = settings
        self.ledger = Ledger(on_transition)
        self.members: list[SimulatedMember] = []
        self.view = GroupView(None, False)
        self.time_to_stable_s: Optional[float] = None
        self.churned = 0
        self._keys = itertools.count()
        self._ending = False  # the members are leaving for good: churn starts no replacement
        self._restarting: set[int] = set()  # slots whose member churn is restarting
        self._next_churn_slot = 0
        self._ctx: Optional[SimulationContext] = None

    def snapshot(self) -> Snapshot:
        ledger = self.ledger
        elapsed = 0.0 if self._ctx is None else self._ctx.now_ms() / 1000
        return Snapshot(elapsed, ledger.state_counts(), self.view.epoch, ledger.moved, ledger.unowned_now,
                        ledger.total_partitions, ledger.heartbeats, self.view.stable)

    async def run(self, stop: asyncio.Event, *, duration_s: float = math.inf, until_stable: bool = False,
                  on_check: Optional[Callable[[Snapshot], None]] = None) -> Summary:
        """Run until stable (with `until_stable`), `duration_s`, or `stop`; then every member leaves."""
        settings = self.settings
        rules = RULES[settings.protocol]
        link = CoordinatorLink(settings.bootstrap, settings.group, rules.connections(settings),
                               request_timeout=rules.request_timeout_s(settings))
        ended_by = "interrupt"  # if stopped while starting up
        try:
            ctx = self._ctx = SimulationContext(settings, link, self.ledger)
            if not await _unless_stopped(stop, self._start_up(ctx)):
                return self._summary_before_start(ended_by)
            for slot in range(settings.count):
                self._start_member(ctx, slot)
            try:
                ended_by = await self._watch(ctx, rules, stop, duration_s, until_stable, on_check)
            except Exception:
                await self._leave_all()  # whatever broke the watch, nothing is left to expire
                raise
            ledger = self.ledger
            states, assignment = ledger.state_counts(), ledger.assignment()  # as the run ended
            elapsed = round(ctx.now_ms() / 1000, 3)
            left = await self._leave_all()
        finally:
            link.close()
            if self._ctx is not None:
                self._ctx.close()
        return Summary(states, self.time_to_stable_s, assignment, ledger.moved, ledger.max_unowned_ms,
                       ledger.heartbeats, settings.protocol, settings.count, self.view.epoch, ended_by, elapsed,
                       left, self.churned, dict(ledger.commits), ledger.overlaps, dict(ledger.fatal))

    async def _watch(self, ctx: SimulationContext, rules: ProtocolRules, stop: asyncio.Event, duration_s: float,
                     until_stable: bool, on_check: Optional[Callable[[Snapshot], None]]) -> str:
        """Check the group every CHECK_INTERVAL_S and churn members, until the run ends; how it ended."""
        settings = self.settings
        next_churn = _churn_period(settings)
        deadline = ctx.now_ms() / 1000 + duration_s
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), CHECK_INTERVAL_S)
                break
            except asyncio.TimeoutError:
                pass
            try:  # bounded: the run ends on time even when the coordinator does not answer
                self.view = await asyncio.wait_for(rules.describe(ctx, self.members), DESCRIBE_BOUND_S)
            except asyncio.TimeoutError:
                self.view = GroupView(self.view.epoch, False)
            elapsed = ctx.now_ms() / 1000  # when the coordinator's answer confirmed it
            if self.view.stable and self.time_to_stable_s is None:
                self.time_to_stable_s = round(elapsed, 3)
            if on_check is not None:
                on_check(self.snapshot())
            if stop.is_set():
                break  # the watcher said stop: no churn after the snapshot it stopped on
            if until_stable and self.view.stable:
                return "stable"
            if elapsed >= deadline:
                return "duration"
            while next_churn is not None and elapsed >= next_churn:
                self._churn_one(ctx)
                next_churn += _churn_period(settings)
        return "interrupt"

    async def _start_up(self, ctx: SimulationContext) -> None:
        given = getattr(self.settings.bootstrap, "timeout_s", None)  # the CLI's --timeout, if any
        await ctx.link.find(timeout_s=given if given is not None else STARTUP_BOUND_S)
        await self._learn_subscription(ctx)

    def _summary_before_start(self, ended_by: str) -> Summary:
        """Stopped while finding the coordinator or the topics: no member ever started."""
        count = self.settings.count
        return Summary({}, None, {}, 0, 0, 0, self.settings.protocol, count, None, ended_by, 0.0, left=count)

    async def _learn_subscription(self, ctx: SimulationContext) -> None:
        settings = self.settings
        missing = await ctx.learn_topics(settings.topics or None)
        if missing:
            raise BadInput(f"topic '{sorted(missing)[0]}' does not exist")
        if settings.pattern is not None:  # the broker's semantics (RE2, full match), to count what it will assign
            try:
                subscribed = set(settings.topics) | matching(settings.pattern, ctx.partition_counts)
            except InvalidRegex as exc:
                raise BadInput(f"--pattern: {exc}") from None
        else:
            subscribed = set(settings.topics)
        self.ledger.total_partitions = sum(ctx.partition_counts.get(t, 0) for t in subscribed)
        if settings.commit:
            await ctx.learn_end_offsets(sorted(subscribed))

    def _start_member(self, ctx: SimulationContext, slot: int) -> None:
        """Start a member in `slot` of `members` (a churned member's replacement takes its slot; its
        ledger key is new, so the leaving member's last transitions stay its own)."""
        instance_id = f"{self.settings.group}-sim-{slot}" if self.settings.static else None
        member = RULES[self.settings.protocol].new_member(ctx, next(self._keys), slot, instance_id)
        if slot < len(self.members):
            self.members[slot] = member
        else:
            self.members.append(member)
        member.start()

    def _churn_one(self, ctx: SimulationContext) -> None:
        """Restart the next member (round robin): it leaves, and once it is out its replacement joins
        (a static replacement joining before the old member's leave would be refused, as a real
        restart never overlaps)."""
        slot = self._next_churn_slot
        if slot in self._restarting:
            return  # its member is still restarting (a rate faster than a restart): no overlap
        self._next_churn_slot = (slot + 1) % len(self.members)
        leaving = self.members[slot]
        self._restarting.add(slot)

        def restart(_: asyncio.Future) -> None:
            self._restarting.discard(slot)
            leaving.stop()
            self.ledger.left(leaving.key)
            if not self._ending:
                self._start_member(ctx, slot)

        left = leaving.leave(for_good=not self.settings.static)
        left.add_done_callback(restart)
        self.churned += 1

    async def _leave_all(self) -> int:
        """Every member leaves; how many are out of the group within LEAVE_BOUND_S."""
        self._ending = True
        # A member churn is restarting is asked again (for good now): the same leave, never a second.
        leaves = [member.leave(for_good=True) for member in self.members]
        if leaves:
            await asyncio.wait(leaves, timeout=LEAVE_BOUND_S)
        left = sum(1 for future in leaves if future.done())
        for member in self.members:
            member.stop()
        return left


async def _unless_stopped(stop: asyncio.Event, work: Any) -> bool:
    """Run `work` unless `stop` is set first (then cancel it); whether it ran to the end."""
    task = asyncio.ensure_future(work)
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait([task, stopped], return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
    if task.done():
        task.result()  # raises what the start-up raised
        return True
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return False


def _churn_period(settings: Settings) -> Optional[float]:
    return 1 / settings.churn_per_s if settings.churn_per_s > 0 else None


RULES: dict[str, ProtocolRules] = {CONSUMER: consumer_member.RULES, CLASSIC: classic_member.RULES}
