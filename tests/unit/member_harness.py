"""Helpers for the member machine's tests: a member on topics t1/t2, responses, and a loop that
runs the callbacks an output asks for (as the application thread would, in order)."""

from __future__ import annotations

from typing import Mapping, Optional

from groupctl.coordinator.errors import ErrorCode
from groupctl.member import HeartbeatResponse, Member, MemberConfig, Output, partitions

T1, T2, T3 = "t1-id", "t2-id", "t3-id"
NAMES = {T1: "t1", T2: "t2"}  # T3 is not known until a test says so


def member(names: Optional[Mapping[str, str]] = None, **config) -> Member:
    return Member(MemberConfig("g", "m-1", **config), topic_names=NAMES if names is None else names)


def ok(epoch: int, assignment: Optional[Mapping] = None, interval: int = 5_000,
       member_id: Optional[str] = None) -> HeartbeatResponse:
    return HeartbeatResponse(ErrorCode.NONE, member_id=member_id or "m-1", member_epoch=epoch,
                             heartbeat_interval_ms=interval,
                             assignment=None if assignment is None else partitions(assignment))


def error(code: int, message: Optional[str] = None) -> HeartbeatResponse:
    return HeartbeatResponse(code, error_message=message, member_epoch=-1)


def run_callbacks(m: Member, out: Output, now: int, ok: bool = True) -> list[Output]:
    """Complete every callback `out` asked for, and those their completions ask for, in order."""
    outputs, queue = [], list(out.callbacks)
    while queue:
        callback = queue.pop(0)
        done = m.callback_done(now, callback.id, ok)
        outputs.append(done)
        queue.extend(done.callbacks)
    return outputs


def stable(assignment: Mapping, epoch: int = 1, now: int = 0, **config) -> Member:
    """A member that joined, reconciled `assignment`, acknowledged it and got the answer."""
    m = member(**config)
    m.subscribe(now, ["t1", "t2"])
    out = m.heartbeat_response(now, ok(epoch, assignment))
    outputs = run_callbacks(m, out, now)
    assert outputs[-1].heartbeat is not None and outputs[-1].heartbeat.topic_partitions == partitions(assignment)
    m.heartbeat_response(now, ok(epoch))
    assert m.state.name == "STABLE", m.state
    return m


class RecordingMember(Member):
    """A member that remembers every transition it made (for the transition-coverage tests)."""

    def __init__(self, *args, **kwargs) -> None:
        self.seen: list = []
        super().__init__(*args, **kwargs)

    def _to(self, state) -> None:
        before = self.state
        super()._to(state)
        if state is not before:
            self.seen.append((before, state))


def recording(names: Optional[Mapping[str, str]] = None, **config) -> RecordingMember:
    return RecordingMember(MemberConfig("g", "m-1", **config), topic_names=NAMES if names is None else names)
