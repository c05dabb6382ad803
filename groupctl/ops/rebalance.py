"""Rebalances: asking a coordinator for one (`trigger`), and following them as they complete (`watch`).

Invariants:
- A rebalance is seen as a new group document: the coordinator writes the document once per
  completed rebalance, so consecutive documents bracket it and `diff_documents` turns a pair into
  a `RebalanceEvent`. A long-poll or a ZooKeeper watch reports the latest state, so documents
  written in quick succession can be seen as one: `previous_generation` may then be more than one
  below `generation`, and the diff spans those rebalances.
- The same diff serves both sources (docs/commands.md, "How trigger and watch work"):
  `--bootstrap`, the extension APIs 32000/32001 (any store); `--zk`, a DataWatch on the group's
  znode and a rebalance-request znode. Given both, the coordinator is asked: it is the authority.
- Over `--bootstrap` every request follows the group when its coordinator moves
  (`kafka_apis.GroupCoordinator`, within the client's timeout); a watch keeps going across a move.
- Two different bounds: a watch's `timeout_s` is how long to watch (`rebalance watch --timeout
  SECONDS`); each network wait is bounded by the operator's global `--timeout MS`, which the
  Bootstrap carries over Kafka and `zk_timeout_s` in ZooKeeper (None: the session's default).
- A group with no document yet is waited for (neither source tells it from one whose first
  members are still joining); its first document is an event whose members all joined.
- Timing, `reason`, `detail` and `caused_by` come from the document's "rebalance" block
  (`groupctl.coordinator.classic.causes`), and are null for documents written without one (and
  for consumer groups, whose documents have none).
- A consumer group (KIP-848) has no rebalance that completes: its document is rewritten at each
  step of a reconciliation. Its events are its milestones (`groupctl.ops.documents`): one when
  the group epoch moves, one when the group settles (Stable) at it. The coordinator's long-poll
  only answers early for a new epoch, so while a group reconciles the watch polls every
  SETTLE_POLL_MS instead.
"""

from __future__ import annotations

import math
import time
from contextlib import closing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Optional

from groupctl.coordinator.errors import ErrorCode
from groupctl.errors import BadInput, NotFound, Refused, Timeout, Unreachable, Unsupported
from groupctl.layout.any_group import AnyGroupDocument
from groupctl.layout.consumer_groups import ConsumerGroupDocument
from groupctl.layout.groups import CLASSIC, LastRebalance
from groupctl.ops.documents import StoredDocument, milestones, read_group_document, settled

if TYPE_CHECKING:
    from groupctl.client.kafka import BootstrapLike

LONG_POLL_MS = 5000
"""The longest one GroupctlDescribeGroup long-poll waits (bounded by the remaining timeout)."""
SETTLE_POLL_MS = 250
"""How long one poll waits while a consumer group reconciles: the coordinator answers a
long-poll early only for a new epoch, not for the group becoming Stable at the same one."""


@dataclass(frozen=True)
class MemberRef:
    member_id: Optional[str]  # None only in a trigger's `caused_by` (a client, not a member)
    client_id: Optional[str]

    def to_json(self) -> dict[str, Any]:
        return {"member_id": self.member_id, "client_id": self.client_id}


@dataclass(frozen=True)
class PartitionMove:
    """A partition whose owner changed; None is "no owner" (newly assigned, or revoked)."""

    topic: str
    partition: int
    from_member: Optional[str]
    to_member: Optional[str]

    def to_json(self) -> dict[str, Any]:
        return {"topic": self.topic, "partition": self.partition, "from": self.from_member, "to": self.to_member}


@dataclass(frozen=True)
class RebalanceEvent:
    group: Optional[str]
    generation: Optional[int]
    previous_generation: Optional[int]  # None: no earlier document was seen
    state: Optional[str]
    members: int
    reason: Optional[str]  # why it started: "join", "leave", "session expiry", "trigger", ...
    detail: Optional[str]  # one sentence for people (for a trigger: the operator's reason)
    caused_by: Optional[MemberRef]  # the member (or, for a trigger, the client) that caused it
    started_at_ms: Optional[int]
    completed_at_ms: Optional[int]
    duration_ms: Optional[int]
    members_joined: tuple[MemberRef, ...]
    members_left: tuple[MemberRef, ...]
    partitions_moved: tuple[PartitionMove, ...]
    group_type: str = CLASSIC  # "consumer": `generation` is the group epoch
    assignment_epoch: Optional[int] = None  # a consumer group's target assignment epoch

    def to_json(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "group_type": self.group_type,
            "generation": self.generation,
            "previous_generation": self.previous_generation,
            "assignment_epoch": self.assignment_epoch,
            "state": self.state,
            "members": self.members,
            "reason": self.reason,
            "detail": self.detail,
            "caused_by": self.caused_by.to_json() if self.caused_by is not None else None,
            "started_at_ms": self.started_at_ms,
            "completed_at_ms": self.completed_at_ms,
            "duration_ms": self.duration_ms,
            "members_joined": [m.to_json() for m in self.members_joined],
            "members_left": [m.to_json() for m in self.members_left],
            "partitions_moved": [p.to_json() for p in self.partitions_moved],
        }


@dataclass(frozen=True)
class TriggerResult:
    group: str
    source: str  # "bootstrap" or "zk"
    reason: Optional[str]
    requested_at_ms: int
    already_pending: bool  # zk only: a request znode was already waiting for the coordinator
    message: Optional[str] = None  # bootstrap only: the coordinator's note, e.g. already rebalancing

    def to_json(self) -> dict[str, Any]:
        return {"group": self.group, "source": self.source, "reason": self.reason,
                "requested_at_ms": self.requested_at_ms, "already_pending": self.already_pending,
                "message": self.message}


def _members(document: Optional[AnyGroupDocument]) -> dict[str, MemberRef]:
    if document is None:
        return {}
    return {m.member_id: MemberRef(m.member_id, m.client_id) for m in document.members}


def _owners(document: Optional[AnyGroupDocument]) -> dict[tuple[str, int], str]:
    if document is None:
        return {}
    return {(topic, int(partition)): owner
            for topic, owners in document.ownership.items()
            for partition, owner in owners.items()}


def _cause(block: LastRebalance) -> Optional[MemberRef]:
    if block.member_id is None and block.client_id is None:
        return None
    return MemberRef(block.member_id, block.client_id)


def diff_documents(previous: Optional[AnyGroupDocument], current: AnyGroupDocument) -> RebalanceEvent:
    """The rebalance(s) that led from `previous` (None: nothing seen before) to `current` (for
    a consumer group: the reconciliation steps between the two milestones)."""
    before, after = _members(previous), _members(current)
    owners_before, owners_after = _owners(previous), _owners(current)
    moved = tuple(
        PartitionMove(topic, partition, owners_before.get((topic, partition)), owners_after.get((topic, partition)))
        for topic, partition in sorted(owners_before.keys() | owners_after.keys())
        if owners_before.get((topic, partition)) != owners_after.get((topic, partition))
    )
    block = current.rebalance
    return RebalanceEvent(
        group=current.group,
        generation=current.generation,
        previous_generation=previous.generation if previous is not None else None,
        state=current.state,
        members=len(after),
        reason=block.reason if block is not None else None,
        detail=block.detail if block is not None else None,
        caused_by=_cause(block) if block is not None else None,
        started_at_ms=block.started_at_ms if block is not None else None,
        completed_at_ms=block.completed_at_ms if block is not None else None,
        duration_ms=block.completed_at_ms - block.started_at_ms if block is not None else None,
        members_joined=tuple(after[m] for m in sorted(after.keys() - before.keys())),
        members_left=tuple(before[m] for m in sorted(before.keys() - after.keys())),
        partitions_moved=moved,
        group_type=current.TYPE,
        assignment_epoch=current.assignment_epoch if isinstance(current, ConsumerGroupDocument) else None,
    )


def events(documents: Iterator[Optional[StoredDocument]]) -> Iterator[RebalanceEvent]:
    """Events from a stream of documents whose first item is the baseline (None: no document
    yet), each later item a document at a new milestone (None: the group was deleted)."""
    first = next(documents, None)
    previous = first.document if first is not None else None
    for stored in documents:
        if stored is None:
            previous = None
            continue
        yield diff_documents(previous, stored.document)
        previous = stored.document


def _extension_coordinator(client: Any, group: str) -> Any:
    """The group's `GroupCoordinator` (which follows the group when it moves), checked to be a
    groupctl coordinator: Unsupported for any other Kafka broker."""
    from groupctl.client.kafka_apis import GroupCoordinator
    from groupctl.protocol.extensions import DESCRIBE_GROUP_KEY

    coordinator = GroupCoordinator(client, group)
    if not coordinator.run(lambda node: client.supports(node, DESCRIBE_GROUP_KEY)):
        raise Unsupported(f"{coordinator.node.address} is not a groupctl coordinator (it does not serve API "
                          f"{DESCRIBE_GROUP_KEY}); use --zk to watch or trigger through ZooKeeper")
    return coordinator


def _extension_call(coordinator: Any, key: int, build: Any, *, wait_s: float,
                    deadline: Optional[float]) -> tuple[Any, str]:
    """(response, address of the node that gave it) of one extension request, sent again to the
    group's new coordinator (`GroupCoordinator.run`, within the client's timeout and
    `deadline`) while the coordinator moves."""
    from groupctl.client.kafka_apis import CoordinatorMoved
    from groupctl.client.kafka import RETRIABLE_COORDINATOR_ERRORS, error_name

    def send(node: Any) -> tuple[Any, str]:
        response = coordinator.client.call(node, key, (0, 0), build, extra_wait_s=wait_s)
        if response.error_code in RETRIABLE_COORDINATOR_ERRORS:
            raise CoordinatorMoved(f"coordinator for group {coordinator.group!r} is not available: "
                                   f"{error_name(response.error_code)}")
        return response, node.address

    return coordinator.run(send, deadline=deadline)


def coordinator_documents(bootstrap: BootstrapLike, group: str, *,
                          deadline: Optional[float] = None) -> Iterator[Optional[StoredDocument]]:
    """Like `groupctl.ops.zk.watch_documents`, long-polling GroupctlDescribeGroup: the current
    document first, then each at a new milestone (None when the group is deleted); returns when
    `deadline` passes.

    Everything, connecting included, ends by `deadline`: a coordinator that never answers is
    `Unreachable` at the deadline, not after the client's own timeout. A long-poll is cut at
    the deadline too, a moment before the coordinator would answer it; that is the end of the
    watch, not a failure.
    """
    with closing(_polled_documents(bootstrap, group, deadline)) as polled:
        yield from milestones(polled)


def _polled_documents(bootstrap: BootstrapLike, group: str, deadline: Optional[float]) -> Iterator[Optional[StoredDocument]]:
    """Every answer of the long-polls `coordinator_documents` makes: the first at once, then each
    waiting for a generation past the last answer's (while a consumer group reconciles, only
    SETTLE_POLL_MS)."""
    from groupctl.client.kafka import KafkaClient, error_name
    from groupctl.protocol.extensions import DESCRIBE_GROUP_KEY

    with KafkaClient(bootstrap, deadline=math.inf if deadline is None else deadline) as client:
        coordinator = _extension_coordinator(client, group)
        first = True  # the first request (after_generation -1) answers at once: the baseline
        after = 0  # without a document: wait for the group's first generation (> 0; generation 0
        # is a memberless group that only commits offsets)
        settling = False  # a consumer group reconciling: poll for it to become Stable
        while True:
            wait_ms = 0 if first else SETTLE_POLL_MS if settling else LONG_POLL_MS
            if deadline is not None and not first:
                remaining_ms = int((deadline - time.monotonic()) * 1000)
                if remaining_ms <= 0:
                    return
                wait_ms = min(wait_ms, remaining_ms)
            asked = -1 if first else after

            def build(cls: type, version: int, asked: int = asked, wait_ms: int = wait_ms) -> Any:
                return cls(group_id=group, after_generation=asked, max_wait_ms=wait_ms)

            try:
                response, address = _extension_call(coordinator, DESCRIBE_GROUP_KEY, build,
                                                    wait_s=wait_ms / 1000, deadline=deadline)
            except Unreachable:
                if not first and deadline is not None and time.monotonic() >= deadline:
                    return  # the last long-poll was cut at the deadline
                raise
            if response.error_code not in (ErrorCode.NONE, ErrorCode.GROUP_ID_NOT_FOUND):
                raise Refused(f"the coordinator could not describe group {group!r}: {error_name(response.error_code)}")
            # GROUP_ID_NOT_FOUND: no document (yet), as for a group whose first members are
            # still joining; it is waited for like a missing znode.
            document = read_group_document(group, response.document, address)
            yield document
            first = False
            after = document.document.generation if document is not None else 0
            settling = document is not None and not settled(document.document)


def _trigger_over_kafka(bootstrap: BootstrapLike, group: str, reason: Optional[str]) -> Optional[str]:
    """The coordinator's note (e.g. that the group is already rebalancing), if any."""
    from groupctl.client.kafka import KafkaClient, error_name
    from groupctl.protocol.extensions import TRIGGER_REBALANCE_KEY

    def build(cls: type, version: int) -> Any:
        return cls(group_id=group, reason=reason)

    with KafkaClient(bootstrap) as client:
        response, _ = _extension_call(_extension_coordinator(client, group), TRIGGER_REBALANCE_KEY, build,
                                      wait_s=0.0, deadline=None)
    if response.error_code == ErrorCode.GROUP_ID_NOT_FOUND:
        raise NotFound(f"group {group!r} does not exist")
    if response.error_code:
        raise Refused(response.error_message
                      or f"the coordinator could not rebalance group {group!r}: {error_name(response.error_code)}")
    return response.error_message


def _check_source(bootstrap: Optional[BootstrapLike], zk: Optional[str]) -> None:
    if not bootstrap and not zk:
        raise BadInput("give --bootstrap (a groupctl coordinator) or --zk (its ZooKeeper)")


def watch(group: str, *, bootstrap: Optional[BootstrapLike] = None, zk: Optional[str] = None,
          zk_auth: Optional[str] = None, count: Optional[int] = None,
          timeout_s: Optional[float] = None, zk_timeout_s: Optional[float] = None) -> Iterator[RebalanceEvent]:
    """Each rebalance of `group` completed from now on. Ends after `count` events (None:
    never); raises Timeout when `timeout_s` runs out first. `zk_auth`: `--zk-auth`, for `zk`;
    `zk_timeout_s`: the bound of each ZooKeeper wait."""
    _check_source(bootstrap, zk)
    if count is not None and count < 1:
        raise BadInput(f"count must be at least 1, not {count}")
    if timeout_s is not None and timeout_s <= 0:
        raise BadInput(f"timeout must be positive, not {timeout_s:g}s")
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    if bootstrap:
        documents = coordinator_documents(bootstrap, group, deadline=deadline)
    else:
        from groupctl.ops.zk import watch_documents  # kazoo only when ZooKeeper is used

        documents = watch_documents(zk, group, deadline=deadline, auth=zk_auth, timeout_s=zk_timeout_s)
    seen = 0
    try:
        for event in events(documents):
            yield event
            seen += 1
            if count is not None and seen >= count:
                return
    finally:
        documents.close()
    wanted = f"{seen} of {count}" if count is not None else str(seen)
    raise Timeout(f"timed out after {timeout_s:g}s watching group {group!r} ({wanted} rebalances seen)")


def trigger(group: str, *, bootstrap: Optional[BootstrapLike] = None, zk: Optional[str] = None,
            zk_auth: Optional[str] = None, reason: Optional[str] = None,
            zk_timeout_s: Optional[float] = None) -> TriggerResult:
    """Make the group's coordinator start the next rebalance. NotFound for an unknown group,
    Refused for one with nothing to rebalance (no members) or when the coordinator declines.
    `zk_auth`: `--zk-auth`, for `zk` (the request znode then carries its digest ACL);
    `zk_timeout_s`: the bound of each ZooKeeper wait."""
    _check_source(bootstrap, zk)
    now_ms = int(time.time() * 1000)
    if bootstrap:
        note = _trigger_over_kafka(bootstrap, group, reason)
        return TriggerResult(group, "bootstrap", reason, now_ms, already_pending=False, message=note)
    from groupctl.ops.zk import request_rebalance

    pending = request_rebalance(zk, group, reason=reason, now_ms=now_ms, auth=zk_auth, timeout_s=zk_timeout_s)
    return TriggerResult(group, "zk", reason, now_ms, already_pending=pending)
