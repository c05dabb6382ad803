"""The member machine's values: its configuration, the heartbeat it sends and the response it
reads, the callbacks it asks the application to run, and the `Output` every input returns.

Invariants:
- Every value is frozen. Partitions are named by topic id (the uuid string the coordinator sends):
  `Partitions` maps a topic id to a non-empty frozenset of partition numbers, and a topic with no
  partition is left out, so two values are equal exactly when they name the same partitions.
- In a `HeartbeatRequest`, None (and -1 for the rebalance timeout) means "unchanged since the
  last request", exactly as on the wire; `subscribed_topic_regex` "" means "no regex".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Iterable, Mapping, Optional

from groupctl.coordinator.errors import ErrorCode
from groupctl.member.states import MemberState

Partitions = Mapping[str, frozenset[int]]

NO_PARTITIONS: Partitions = {}

JOIN_EPOCH = 0
LEAVE_EPOCH = -1
STATIC_LEAVE_EPOCH = -2


def partitions(pairs: Mapping[str, Iterable[int]]) -> dict[str, frozenset[int]]:
    """The normal form of `pairs`: frozensets, topics without a partition dropped."""
    return {topic: frozenset(ps) for topic, ps in pairs.items() if ps}


def union(a: Partitions, b: Partitions) -> dict[str, frozenset[int]]:
    return partitions({t: a.get(t, frozenset()) | b.get(t, frozenset()) for t in a.keys() | b.keys()})


def difference(a: Partitions, b: Partitions) -> dict[str, frozenset[int]]:
    return partitions({t: a[t] - b.get(t, frozenset()) for t in a})


def count(a: Partitions) -> int:
    return sum(len(ps) for ps in a.values())


@dataclass(frozen=True)
class MemberConfig:
    """What the application configured (AK consumer configs, their defaults)."""

    group_id: str
    member_id: str  # made by the client (KIP-1082) and kept for the member's lifetime
    instance_id: Optional[str] = None  # group.instance.id: static membership
    rack_id: Optional[str] = None  # client.rack
    rebalance_timeout_ms: int = 300_000  # max.poll.interval.ms is sent as the rebalance timeout
    max_poll_interval_ms: int = 300_000
    server_assignor: Optional[str] = None  # group.remote.assignor
    auto_commit: bool = True  # enable.auto.commit: commit the revoked partitions before revoking
    heartbeat_interval_ms: int = 5_000  # used until the first response names the interval
    retry_backoff_ms: int = 100
    retry_backoff_max_ms: int = 1_000

    @property
    def leave_epoch(self) -> int:
        """A static member leaves "for now" (-2) and keeps its partitions for the session timeout."""
        return STATIC_LEAVE_EPOCH if self.instance_id is not None else LEAVE_EPOCH


@dataclass(frozen=True)
class Subscription:
    """Literal topic names, or a (broker-side, RE2/J) regex, or both; empty is no subscription."""

    topics: tuple[str, ...] = ()
    regex: Optional[str] = None

    @classmethod
    def of(cls, topics: Iterable[str] = (), regex: Optional[str] = None) -> "Subscription":
        return cls(tuple(sorted(set(topics))), regex or None)

    @property
    def empty(self) -> bool:
        return not self.topics and self.regex is None


@dataclass(frozen=True)
class HeartbeatRequest:
    """ConsumerGroupHeartbeat's fields. None/-1: unchanged since the last request."""

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: Optional[str] = None
    rack_id: Optional[str] = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: Optional[tuple[str, ...]] = None
    subscribed_topic_regex: Optional[str] = None
    server_assignor: Optional[str] = None
    topic_partitions: Optional[Partitions] = None  # what the member owns (its acknowledged assignment)

    @property
    def leaving(self) -> bool:
        return self.member_epoch < 0

    @property
    def full(self) -> bool:
        """Whether the coordinator will treat it as full (and answer with the whole assignment)."""
        return self.member_epoch == JOIN_EPOCH or (
            self.rebalance_timeout_ms != -1 and self.subscribed_topic_names is not None
            and self.topic_partitions is not None)


@dataclass(frozen=True)
class HeartbeatResponse:
    """ConsumerGroupHeartbeat's response. `assignment` None: unchanged since the member last heard it."""

    error: int = ErrorCode.NONE
    error_message: Optional[str] = None
    member_id: Optional[str] = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: Optional[Partitions] = None


class CallbackKind(Enum):
    REVOKE = "revoke"  # onPartitionsRevoked: the member gives the partitions back in good order
    ASSIGN = "assign"  # onPartitionsAssigned: run even when nothing is added (as AK)
    LOST = "lost"  # onPartitionsLost: the partitions are already someone else's


@dataclass(frozen=True)
class Callback:
    """A callback for the application thread to run, then report with `callback_done(id, ok)`.

    The driver runs callbacks one at a time in the order they were asked for. For a REVOKE,
    `commit` names the partitions whose positions to commit first (empty without auto-commit).
    `names` maps each topic id of `partitions` to its name, for the application's listener.
    """

    id: int
    kind: CallbackKind
    partitions: Partitions
    names: Mapping[str, str] = field(default_factory=dict)
    commit: Partitions = field(default_factory=dict)


@dataclass(frozen=True)
class Fatal:
    error: int  # the error code (an int: not every code a coordinator sends is an ErrorCode)
    reason: str


@dataclass(frozen=True)
class Output:
    """What the driver does after an input, all at `now_ms`:

    - send `heartbeat` (if any) now; it is already counted as in flight;
    - run `callbacks` in order on the application side;
    - find the coordinator again when `find_coordinator`, then call `coordinator_found`;
    - ask Metadata for `unresolved_topic_ids`, then call `topic_names_learned`;
    - call `tick` again at `wake_at_ms` (None: nothing will happen without an input).
    `transitions` lists the state changes the input caused, in order; `fatal` is set once FATAL.
    """

    state: MemberState
    heartbeat: Optional[HeartbeatRequest] = None
    callbacks: tuple[Callback, ...] = ()
    transitions: tuple[tuple[MemberState, MemberState], ...] = ()
    next_heartbeat_ms: Optional[int] = None
    wake_at_ms: Optional[int] = None
    find_coordinator: bool = False
    unresolved_topic_ids: frozenset[str] = frozenset()
    fatal: Optional[Fatal] = None
