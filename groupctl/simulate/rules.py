"""What a simulation needs of each protocol's members (`consumer_member`, `classic_member`), so
both can be rehearsed side by side by the same `Simulation`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Optional, Protocol

from groupctl.simulate.context import Settings, SimulationContext


class SimulatedMember(Protocol):
    key: int  # the member's ledger key: unique per simulated member (a churned member's replacement has a new one)

    @property
    def member_id(self) -> str: ...

    @property
    def state(self) -> str: ...  # a `groupctl.member.MemberState` value

    @property
    def epoch(self) -> int: ...  # member epoch (consumer) or generation (classic)

    def start(self) -> None:
        """Join the group (report `ledger.joined(key, member_id, state, instance_id)`, then every transition)."""

    def leave(self, *, for_good: bool) -> asyncio.Future:
        """Release the partitions and leave; the future ends once the member is out of the group.
        A static member leaves for now unless `for_good`."""

    def stop(self) -> None:
        """Cancel the member's timers (after leaving, or to vanish as a crash would)."""


@dataclass(frozen=True)
class GroupView:
    """How the coordinator describes the group: its epoch (or generation), and whether it is stable
    at its target with every simulated member STABLE there."""

    epoch: Optional[int]
    stable: bool


class ProtocolRules(Protocol):
    def connections(self, settings: Settings) -> int:
        """How many connections to the coordinator the members share."""

    def request_timeout_s(self, settings: Settings) -> float: ...

    def new_member(self, ctx: SimulationContext, key: int, slot: int, instance_id: Optional[str]) -> SimulatedMember:
        """A member with ledger `key` in `slot` of the simulation (0..count-1; a churned member's
        replacement takes its slot, so a protocol can tie a connection to it)."""

    async def describe(self, ctx: SimulationContext, members: list[SimulatedMember]) -> GroupView: ...
