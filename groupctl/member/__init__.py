"""The KIP-848 member (the consumer side of the consumer group protocol) as a sans-IO state machine.

`Member` (machine.py) takes inputs with `now_ms` and returns `Output`s; states.py holds the states
and their legality table, heartbeat_state.py which fields a heartbeat carries, reconciler.py the
revoke-then-assign plan, errors.py what each heartbeat error means. No I/O, no clock, no asyncio:
the asyncio driver (`groupctl members simulate`) is built on top. See docs/member.md.
"""

from groupctl.member.machine import Member
from groupctl.member.messages import (Callback, CallbackKind, Fatal, HeartbeatRequest, HeartbeatResponse,
                                      MemberConfig, Output, Subscription, partitions)
from groupctl.member.states import IllegalTransition, MemberState

__all__ = ["Callback", "CallbackKind", "Fatal", "HeartbeatRequest", "HeartbeatResponse", "IllegalTransition",
           "Member", "MemberConfig", "MemberState", "Output", "Subscription", "partitions"]
