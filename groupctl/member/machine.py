"""The KIP-848 member: a sans-IO state machine a driver feeds with inputs, each at `now_ms`.

Inputs (methods): `subscribe`, `unsubscribe` (= `close`), `heartbeat_response`, `heartbeat_failed`,
`callback_done`, `poll`, `coordinator_found`, `topic_names_learned`, and `tick` (timers). Each returns
an `Output`: the heartbeat to send now (if one is due), the callbacks to run, the transitions it
caused, when to call `tick` again, and the flags that ask the driver to find the coordinator or to
resolve topic ids. The machine never reads a clock, sleeps or does I/O.

Invariants:
- `state` changes only through `_to`, which checks the legality table (states.py).
- `owned` (what the application holds) changes only when a callback completes: REVOKE success
  removes its partitions, ASSIGN success adds its partitions, a release (LOST, or the REVOKE of a
  leave) empties it, failed or not. `acknowledged` (the reconciled assignment the heartbeats carry)
  is set when ASSIGN completes and cleared when the member leaves, is fenced, goes stale or fails.
- At most one heartbeat other than a leave is in flight; responses and failures answer the oldest request
  in flight (one connection answers in order). The leave heartbeat goes out even with one in
  flight, and any answer to it is ignored (librdkafka).
- While the member is in the group and nothing is in flight, a heartbeat is due no later than one
  interval (or one backoff) from now. UNSUBSCRIBED, FENCED, STALE and FATAL send nothing.
- A release (fenced, leave, stale, fatal) supersedes every callback asked for before it: their
  completions are ignored, and the release names what they were assigning too, so the application
  gives back everything it may hold.

Decisions (the seed's open questions, and where this differs from Apache Kafka):
- Subscription change while in the group: a heartbeat at once, and a full one (every field).
  (AK sends only the changed names on the next interval.)
- FATAL is terminal: nothing leaves it; subscribe/unsubscribe in FATAL do nothing; a new member
  is needed (AK and librdkafka: the consumer must be recreated). Replacing an invalid regex does
  not revive a member that failed with INVALID_REGULAR_EXPRESSION.
- A reconciliation in progress is cancelled by fencing, leaving, going stale or failing (the
  release supersedes its callbacks). A newer target arriving meanwhile supersedes it too: the
  running callback completes and what it did to `owned` is kept (the application really revoked
  or took those partitions), but its continuation is dropped and the member reconciles from what it
  holds to the newest target. (AK finishes and acknowledges the older target first.)
- subscribe from UNSUBSCRIBED joins at once and starts the poll timer (AK waits for the next poll).
- A failed REVOKE or ASSIGN callback leaves the member RECONCILING without an acknowledgement;
  the next `poll` tries again (the coordinator fences it if that takes longer than the rebalance
  timeout). A failed ASSIGN takes nothing (AK keeps the partitions, unfetchable).
- The backoff (retry.backoff.ms doubling to retry.backoff.max.ms, no jitter) also holds back a
  JOINING member after an error; fencing and a coordinator change clear it (as AK).
- Before a REVOKE the driver commits the revoked partitions when auto-commit is on (AK commits
  everything consumed before any reconciliation).
- Topic ids stay ids inside the machine; names come from `topic_names` / `topic_names_learned`, and
  target topics without a name wait (Output.unresolved_topic_ids) while the rest is reconciled.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from enum import Enum
from typing import Iterable, Mapping, Optional

from groupctl.coordinator.errors import ErrorCode
from groupctl.member.errors import Reaction, fatal_reason, reaction
from groupctl.member.heartbeat_state import HeartbeatState
from groupctl.member.messages import (JOIN_EPOCH, LEAVE_EPOCH, Callback, CallbackKind, Fatal, HeartbeatRequest,
                                      HeartbeatResponse, MemberConfig, Output, Partitions, Subscription,
                                      difference, union)
from groupctl.member.reconciler import NONE, LocalAssignment, Plan, plan
from groupctl.member.states import (CAN_HANDLE_NEW_ASSIGNMENT, HEARTBEAT_NOW, NOT_IN_GROUP, MemberState,
                                    check_transition)

S = MemberState

# The states in which the application's poll timer matters (AK: not leaving, not out of the group).
POLL_TIMER_STATES = frozenset({S.JOINING, S.RECONCILING, S.ACKNOWLEDGING, S.STABLE})


class Purpose(Enum):
    RECONCILE_REVOKE = "reconcile-revoke"
    RECONCILE_ASSIGN = "reconcile-assign"
    FENCED = "fenced"
    LEAVE = "leave"
    STALE = "stale"
    FATAL = "fatal"


@dataclass(frozen=True)
class _Pending:
    callback: Callback
    purpose: Purpose
    generation: int  # a release bumps the generation: older callbacks are superseded


@dataclass
class _Reconciliation:
    plan: Plan
    callback_id: int


class Member:
    __slots__ = ("config", "state", "member_id", "epoch", "subscription", "owned", "acknowledged", "target",
                 "fatal", "heartbeat_interval_ms", "_names", "_fields", "_in_flight", "_interval_due_ms",
                 "_backoff_until_ms", "_failures", "_send_now", "_coordinator_known", "_poll_deadline_ms",
                 "_stale", "_stale_released", "_rejoin_on_release", "_resubscribe", "_leave_epoch",
                 "_retry_reconcile", "_reconciliation", "_pending", "_generation", "_ids", "_now_ms",
                 "_callbacks", "_transitions")  # thousands of members share a simulator's memory

    def __init__(self, config: MemberConfig, topic_names: Optional[Mapping[str, str]] = None) -> None:
        self.config = config
        self.state = S.UNSUBSCRIBED
        self.member_id = config.member_id
        self.epoch = JOIN_EPOCH
        self.subscription = Subscription()
        self.owned: dict[str, frozenset[int]] = {}
        self.acknowledged: LocalAssignment = NONE
        self.target: LocalAssignment = NONE
        self.fatal: Optional[Fatal] = None
        self.heartbeat_interval_ms = config.heartbeat_interval_ms
        self._names: dict[str, str] = dict(topic_names or {})
        self._fields = HeartbeatState(config)
        self._in_flight: list[HeartbeatRequest] = []  # at most two: an interval heartbeat and a leave
        self._interval_due_ms = 0  # the interval timer: when a heartbeat is due on the interval
        self._backoff_until_ms = 0
        self._failures = 0
        self._send_now = False  # a subscription change asked for a heartbeat at once
        self._coordinator_known = True  # the driver finds the coordinator before subscribing
        self._poll_deadline_ms: Optional[int] = None
        self._stale = False  # the leave in progress is because the poll timer expired
        self._stale_released = False  # the stale member's LOST callback completed
        self._rejoin_on_release = False  # the application polled while the STALE release ran
        self._resubscribe: Optional[Subscription] = None  # subscribed again while leaving
        self._leave_epoch = config.leave_epoch  # the epoch of the leave heartbeat (-1, or -2 if static)
        self._retry_reconcile = False  # a callback failed: try again on the next poll
        self._reconciliation: Optional[_Reconciliation] = None
        self._pending: dict[int, _Pending] = {}
        self._generation = 0
        self._ids = itertools.count(1)
        self._now_ms = 0
        self._callbacks: list[Callback] = []
        self._transitions: list[tuple[MemberState, MemberState]] = []

    # -- views -----------------------------------------------------------------------------------

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    @property
    def pending_callbacks(self) -> tuple[Callback, ...]:
        return tuple(p.callback for p in self._pending.values())

    def next_heartbeat_ms(self, now_ms: int) -> Optional[int]:
        """When the next heartbeat is due (None: none will be until an input changes something)."""
        if self.state in NOT_IN_GROUP or not self._coordinator_known:
            return None
        if self.state is S.LEAVING:
            return now_ms
        if any(not request.leaving for request in self._in_flight):
            return None
        due = now_ms if (self.state in HEARTBEAT_NOW or self._send_now) else self._interval_due_ms
        return max(due, self._backoff_until_ms)

    # -- inputs ----------------------------------------------------------------------------------

    def subscribe(self, now_ms: int, topics: Iterable[str] = (), regex: Optional[str] = None) -> Output:
        """Subscribe to topic names and/or a regex; an empty subscription is an unsubscribe."""
        subscription = Subscription.of(topics, regex)
        if subscription.empty:
            return self.unsubscribe(now_ms)
        self._begin(now_ms)
        if self.state is S.FATAL:
            return self._finish(now_ms)
        if self.state in (S.PREPARE_LEAVING, S.LEAVING):
            self._resubscribe = subscription
            return self._finish(now_ms)
        changed = subscription != self.subscription
        self.subscription = subscription
        if self.state is S.UNSUBSCRIBED:
            self._poll_deadline_ms = now_ms + self.config.max_poll_interval_ms
            self._join()
        elif changed and self.state in POLL_TIMER_STATES:
            self._fields.reset()
            self._send_now = True
        return self._finish(now_ms)

    def unsubscribe(self, now_ms: int, *, leave_group: bool = False) -> Output:
        """Leave the group: release the partitions (REVOKE while in the group with an epoch, else
        LOST), then send the leave heartbeat (epoch -1, or -2 with an instance id unless
        `leave_group`: a static member closing for good leaves with -1, AK's KIP-1092 option)."""
        self._begin(now_ms)
        self._leave_epoch = LEAVE_EPOCH if leave_group else self.config.leave_epoch
        state = self.state
        if state in (S.PREPARE_LEAVING, S.LEAVING):
            self._resubscribe = None
        elif state in (S.FENCED, S.STALE):
            self.subscription = Subscription()
            self._to(S.UNSUBSCRIBED)  # the LOST callback in progress still empties `owned`
        elif state in POLL_TIMER_STATES:
            self._to(S.PREPARE_LEAVING)
            kind = CallbackKind.REVOKE if self.epoch > 0 else CallbackKind.LOST
            if self._release(kind, Purpose.LEAVE) is None:
                self._released(Purpose.LEAVE)
        else:
            self.subscription = Subscription()
        return self._finish(now_ms)

    close = unsubscribe

    def heartbeat_response(self, now_ms: int, response: HeartbeatResponse) -> Output:
        """The answer to the oldest heartbeat in flight."""
        self._begin(now_ms)
        request = self._pop_in_flight()
        if request.leaving:
            return self._finish(now_ms)
        if response.error == ErrorCode.NONE:
            self._succeeded(now_ms, response)
        else:
            self._error(now_ms, response.error, response.error_message)
        return self._finish(now_ms)

    def heartbeat_failed(self, now_ms: int, retriable: bool = True, message: str = "") -> Output:
        """The oldest heartbeat in flight got no answer (timeout, disconnect). Retriable: find the
        coordinator again and retry after the backoff; otherwise FATAL."""
        self._begin(now_ms)
        request = self._pop_in_flight()
        if request.leaving or self.state in (S.FENCED, S.STALE, S.FATAL, S.UNSUBSCRIBED):
            return self._finish(now_ms)
        self._failed_attempt(now_ms)
        if retriable:
            self._coordinator_known = False
        else:
            self._to_fatal(ErrorCode.UNKNOWN_SERVER_ERROR, f"heartbeat request failed: {message}".rstrip(": "))
        return self._finish(now_ms)

    def callback_done(self, now_ms: int, callback_id: int, ok: bool = True) -> Output:
        """The application ran callback `callback_id` (ok: it did not raise)."""
        self._begin(now_ms)
        pending = self._pending.pop(callback_id, None)
        if pending is None:
            raise KeyError(f"no callback {callback_id} is pending")
        if pending.generation == self._generation:
            self._completed(pending, ok)
        return self._finish(now_ms)

    def poll(self, now_ms: int) -> Output:
        """The application polled: reset the max.poll.interval timer; a STALE member rejoins (once
        its LOST callback completed); a failed reconciliation is tried again."""
        self._begin(now_ms)
        self._poll_deadline_ms = now_ms + self.config.max_poll_interval_ms
        if self.state is S.STALE:
            self._rejoin_on_release = True
            if self._stale_released:
                self._join()
        elif self.state is S.RECONCILING and self._retry_reconcile:
            self._retry_reconcile = False
            self._maybe_reconcile()
        return self._finish(now_ms)

    def coordinator_found(self, now_ms: int) -> Output:
        self._begin(now_ms)
        self._coordinator_known = True
        return self._finish(now_ms)

    def topic_names_learned(self, now_ms: int, names: Mapping[str, str]) -> Output:
        """Metadata named some topic ids: reconcile the part of the target that was waiting for them."""
        self._begin(now_ms)
        self._names.update(names)
        if self.state is S.RECONCILING and self._reconciliation is None:
            self._maybe_reconcile()
        return self._finish(now_ms)

    def tick(self, now_ms: int) -> Output:
        """Timers: the poll timer and the heartbeat interval."""
        self._begin(now_ms)
        return self._finish(now_ms)

    # -- heartbeats ------------------------------------------------------------------------------

    def _pop_in_flight(self) -> HeartbeatRequest:
        if not self._in_flight:
            raise RuntimeError("no heartbeat is in flight")
        return self._in_flight.pop(0)

    def _succeeded(self, now_ms: int, response: HeartbeatResponse) -> None:
        self._failures, self._backoff_until_ms = 0, 0
        interval = response.heartbeat_interval_ms
        if interval > 0 and interval != self.heartbeat_interval_ms:
            self.heartbeat_interval_ms = interval  # AK resets the interval timer on a new interval
            self._interval_due_ms = now_ms + interval
        if self.state is S.LEAVING or self.state in NOT_IN_GROUP:
            return
        if response.member_id:
            self.member_id = response.member_id
        self.epoch = response.member_epoch
        if response.assignment is not None and self.state in CAN_HANDLE_NEW_ASSIGNMENT:
            self._take_target(response.assignment)

    def _failed_attempt(self, now_ms: int) -> None:
        """AK onFailedAttempt: forget the sent fields, the interval timer expires now, back off."""
        self._fields.reset()
        self._interval_due_ms = now_ms
        self._failures += 1
        delay = min(self.config.retry_backoff_ms * 2 ** (self._failures - 1), self.config.retry_backoff_max_ms)
        self._backoff_until_ms = now_ms + delay

    def _reset_backoff(self) -> None:
        self._failures, self._backoff_until_ms = 0, 0

    def _error(self, now_ms: int, code: int, message: Optional[str]) -> None:
        if self.state in (S.FENCED, S.STALE, S.FATAL):
            return  # an answer to a request sent before the member left the group
        self._failed_attempt(now_ms)
        what = reaction(code)
        if what is Reaction.RETRY:
            return
        if what is Reaction.FIND_COORDINATOR:
            self._coordinator_known = False
            self._reset_backoff()
        elif what is Reaction.FENCED:
            self._fenced()
        else:
            self._to_fatal(code, fatal_reason(code, message))

    def _maybe_send(self, now_ms: int) -> Optional[HeartbeatRequest]:
        if self.state is S.LEAVING:
            request = None
            if self._coordinator_known:  # else the leave is skipped: the session timeout removes it
                request = self._fields.leave(self.member_id, self.epoch)
                self._in_flight.append(request)
            self._left()
            return request
        due = self.next_heartbeat_ms(now_ms)
        if due is None or due > now_ms:
            return None
        request = self._fields.build(self.member_id, self.epoch, self.state is S.JOINING, self.subscription,
                                     self.acknowledged)
        self._in_flight.append(request)
        self._interval_due_ms = now_ms + self.heartbeat_interval_ms
        self._send_now = False
        if self.state is S.ACKNOWLEDGING:
            if self._reconciled():
                self._to(S.STABLE)
            else:
                self._to(S.RECONCILING)
                self._maybe_reconcile()
        return request

    # -- joining, fencing, leaving, failing ------------------------------------------------------

    def _join(self) -> None:
        self.epoch = JOIN_EPOCH
        self.target = NONE
        self._leave_epoch = self.config.leave_epoch
        self._stale = self._stale_released = self._rejoin_on_release = False
        self._fields.reset()
        self._to(S.JOINING)

    def _fenced(self) -> None:
        if self.state is S.PREPARE_LEAVING:
            # AK: stop here, as if the leave had been sent; the release callback still completes.
            self._leaving()
            self._left(skip=True)
            return
        if self.state is S.LEAVING:
            self._to(S.UNSUBSCRIBED)
            return
        if self.state is S.UNSUBSCRIBED:
            return
        self._to(S.FENCED)
        self.epoch = JOIN_EPOCH
        self._reset_backoff()
        if self._release(CallbackKind.LOST, Purpose.FENCED) is None:
            self._released(Purpose.FENCED)

    def _to_fatal(self, code: int, reason: str) -> None:
        before = self.state
        self._to(S.FATAL)
        self.fatal = Fatal(int(code), reason)
        if before in (S.UNSUBSCRIBED, S.PREPARE_LEAVING, S.LEAVING):
            return  # AK: the leave in progress is dropped; its release callback still completes
        if self._release(CallbackKind.LOST, Purpose.FATAL) is None:
            self._released(Purpose.FATAL)

    def _leaving(self) -> None:
        """PREPARE_LEAVING -> LEAVING: the next heartbeat is the leave."""
        if not self._stale:
            self.subscription = Subscription()
        self.epoch = self._leave_epoch
        self.acknowledged = NONE
        self._to(S.LEAVING)

    def _left(self, skip: bool = False) -> None:
        """The leave heartbeat went out (or could not): UNSUBSCRIBED, or STALE after a poll timeout."""
        if self._stale and not skip:
            self._to(S.STALE)
            if self._release(CallbackKind.LOST, Purpose.STALE) is None:
                self._released(Purpose.STALE)
            return
        self._to(S.UNSUBSCRIBED)
        self._stale = False
        if self._resubscribe is not None:
            self.subscription, self._resubscribe = self._resubscribe, None
            self._poll_deadline_ms = self._now_ms + self.config.max_poll_interval_ms
            self._join()

    def _expire_poll_timer(self, now_ms: int) -> None:
        if self.state not in POLL_TIMER_STATES or self._poll_deadline_ms is None or now_ms < self._poll_deadline_ms:
            return
        self._stale = True
        self._to(S.PREPARE_LEAVING)  # briefly, without callbacks: STALE releases as lost (AK)
        self._leaving()

    # -- callbacks -------------------------------------------------------------------------------

    def _ask(self, kind: CallbackKind, parts: Partitions, purpose: Purpose) -> int:
        commit = dict(parts) if kind is CallbackKind.REVOKE and self.config.auto_commit else {}
        names = {t: self._names[t] for t in parts if t in self._names}
        callback = Callback(next(self._ids), kind, dict(parts), names, commit)
        self._pending[callback.id] = _Pending(callback, purpose, self._generation)
        self._callbacks.append(callback)
        return callback.id

    def _release(self, kind: CallbackKind, purpose: Purpose) -> Optional[int]:
        """Give back everything the application holds or is being given; supersede every callback
        asked for before. None when there is nothing to give back (then it is done at once)."""
        held: Partitions = self.owned
        for pending in self._pending.values():
            if pending.generation == self._generation and pending.purpose is Purpose.RECONCILE_ASSIGN:
                held = union(held, pending.callback.partitions)
        self._generation += 1
        self._reconciliation = None
        self._retry_reconcile = False
        if not held:
            return None
        return self._ask(kind, held, purpose)

    def _completed(self, pending: _Pending, ok: bool) -> None:
        purpose, parts = pending.purpose, pending.callback.partitions
        if purpose is Purpose.RECONCILE_REVOKE:
            if ok:
                self.owned = difference(self.owned, parts)
            self._step_done(pending.callback.id, ok, assign_next=True)
        elif purpose is Purpose.RECONCILE_ASSIGN:
            if ok:
                self.owned = union(self.owned, parts)
            self._step_done(pending.callback.id, ok, assign_next=False)
        else:
            self._released(purpose)

    def _released(self, purpose: Purpose) -> None:
        """A release completed (or had nothing to give back)."""
        self.owned = {}
        self.acknowledged = NONE
        self.target = NONE
        if purpose is Purpose.FENCED and self.state is S.FENCED:
            self._join()
        elif purpose is Purpose.STALE:
            self._stale_released = True
            if self.state is S.STALE and self._rejoin_on_release:
                self._join()
        elif purpose is Purpose.LEAVE and self.state is S.PREPARE_LEAVING:
            self._leaving()

    # -- reconciliation --------------------------------------------------------------------------

    def _take_target(self, assignment: Partitions) -> None:
        updated = self.target.updated_with(assignment)
        if updated is not None:
            self.target = updated
        if self._reconciliation is not None:
            return  # the step in progress completes, then the member reconciles to the newest target
        if not self._reconciled():
            self._to(S.RECONCILING)
            self._maybe_reconcile()
        elif self.state in (S.RECONCILING, S.JOINING):
            self._to(S.STABLE)

    def _reconciled(self) -> bool:
        return self.acknowledged == self.target and self.owned == dict(self.acknowledged.partitions)

    def _maybe_reconcile(self) -> None:
        if self.state is not S.RECONCILING or self._reconciliation is not None:
            return
        if self._reconciled():
            self._to(S.STABLE)
            return
        step = plan(self.owned, self.target, self._names)
        if not step.revoke and not step.add and not self.acknowledged.is_none \
                and step.resolved == dict(self.acknowledged.partitions):
            # Only unresolved topics differ: acknowledge the resolved part once, then wait for names.
            if self.acknowledged.local_epoch != self.target.local_epoch:
                self.acknowledged = LocalAssignment(self.target.local_epoch, step.resolved)
                self._to(S.ACKNOWLEDGING)
            return
        if step.revoke:
            self._reconciliation = _Reconciliation(step, self._ask(CallbackKind.REVOKE, step.revoke,
                                                                   Purpose.RECONCILE_REVOKE))
        else:
            self._reconciliation = _Reconciliation(step, self._ask(CallbackKind.ASSIGN, step.add,
                                                                   Purpose.RECONCILE_ASSIGN))

    def _step_done(self, callback_id: int, ok: bool, assign_next: bool) -> None:
        running = self._reconciliation
        if running is None or running.callback_id != callback_id:
            return
        self._reconciliation = None
        if self.state is not S.RECONCILING:
            return
        if running.plan.target_epoch != self.target.local_epoch:
            self._maybe_reconcile()  # superseded: reconcile from what is held to the newest target
            return
        if not ok:
            self._retry_reconcile = True
            return
        if assign_next:
            self._reconciliation = _Reconciliation(running.plan, self._ask(
                CallbackKind.ASSIGN, running.plan.add, Purpose.RECONCILE_ASSIGN))
            return
        self.acknowledged = LocalAssignment(running.plan.target_epoch, running.plan.resolved)
        self._to(S.ACKNOWLEDGING)

    # -- plumbing --------------------------------------------------------------------------------

    def _to(self, state: MemberState) -> None:
        check_transition(self.state, state)
        if state is not self.state:
            self._transitions.append((self.state, state))
            self.state = state

    def _begin(self, now_ms: int) -> None:
        self._now_ms = now_ms
        self._callbacks = []
        self._transitions = []

    def _finish(self, now_ms: int) -> Output:
        self._expire_poll_timer(now_ms)
        heartbeat = self._maybe_send(now_ms)
        due = self.next_heartbeat_ms(now_ms)
        wake = due
        if self.state in POLL_TIMER_STATES and self._poll_deadline_ms is not None:
            wake = self._poll_deadline_ms if wake is None else min(wake, self._poll_deadline_ms)
        unresolved = frozenset(t for t in self.target.partitions if t not in self._names)
        return Output(self.state, heartbeat, tuple(self._callbacks), tuple(self._transitions), due, wake,
                      find_coordinator=not self._coordinator_known and self.state not in NOT_IN_GROUP,
                      unresolved_topic_ids=unresolved, fatal=self.fatal)
