"""Server-side assignors of consumer groups (KIP-848): pure functions over frozen values.

`ASSIGNORS` maps a name to its assignor, in Apache Kafka's default preference order
(`group.consumer.assignors` = uniform, range); `DEFAULT_ASSIGNORS` is that order. Each assignor
has a `name` and `assign(spec: GroupSpec) -> GroupAssignment` (see `spec` for both values).
`choose` picks a group's assignor the way Apache Kafka does.
"""

from __future__ import annotations

from collections import Counter
from types import MappingProxyType
from typing import Iterable, Mapping, Optional, Protocol, Sequence

from groupctl.coordinator.consumer.assignors.range import RangeAssignor
from groupctl.coordinator.consumer.assignors.spec import (
    EMPTY,
    Assignment,
    GroupAssignment,
    GroupSpec,
    MemberSpec,
    freeze,
)
from groupctl.coordinator.consumer.assignors.uniform import UniformAssignor

# NB: importing the submodule `range` binds the name `range` in this module's namespace.


class Assignor(Protocol):
    name: str

    def assign(self, spec: GroupSpec) -> GroupAssignment: ...


ASSIGNORS: Mapping[str, Assignor] = MappingProxyType({"uniform": UniformAssignor(), "range": RangeAssignor()})
DEFAULT_ASSIGNORS: tuple[str, ...] = tuple(ASSIGNORS)


def choose(requested: Iterable[Optional[str]], configured: Sequence[str] = DEFAULT_ASSIGNORS) -> str:
    """The assignor of a group: the one most of its members name (ConsumerGroupHeartbeat's
    ServerAssignor; None = no preference), else the first configured. Apache Kafka breaks a tie
    in its hash map's order; here the configured order breaks it, then the name."""
    votes = Counter(name for name in requested if name is not None)
    if not votes:
        return configured[0]
    rank = {name: i for i, name in enumerate(configured)}
    return min(votes, key=lambda name: (-votes[name], rank.get(name, len(rank)), name))


__all__ = ["ASSIGNORS", "DEFAULT_ASSIGNORS", "EMPTY", "Assignment", "Assignor", "GroupAssignment", "GroupSpec",
           "MemberSpec", "RangeAssignor", "UniformAssignor", "choose", "freeze"]
