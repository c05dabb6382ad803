"""Committed offsets of a group: show, commit, reset, import, export, delete.

Works against any Kafka cluster through the group's coordinator (OffsetFetch, OffsetCommit,
OffsetDelete) and the partition leaders (ListOffsets); lag comes from `groupctl.ops.lag`.

Invariants:
- Every operation but commit needs a group that exists (`groups.check_group_exists`): an unknown
  group is `NotFound`, never an empty plan, so a mistyped group id never looks like a group with
  nothing to do; `commit_offsets` is how a new group gets its first offsets. (A deliberate
  difference: kafka-consumer-groups.sh resets, and so creates, a group that does not exist yet.)
- Changing offsets (commit, reset, import) requires an inactive group (Empty, Dead, or not yet
  existing), dry runs included; otherwise `Refused` names the state and member count. Both group
  types: a KIP-848 consumer group's state and members come from ConsumerGroupDescribe, pipelined
  beside DescribeGroups (`consumer_group_apis.group_state_calls`), so a live one is refused as
  kafka-consumer-groups.sh 4.x refuses it, on groupctl and on Apache Kafka 4 alike. The commit
  is a simple commit (generation -1, no member id), which the coordinator refuses while the group
  has members, so a consumer joining between the check and the commit is never overwritten.
- Inputs are checked before anything is committed: group ids (`groups.check_group_id`) and
  numbers that must fit the wire (`reset.check_offsets`) before anything is sent, every named
  topic and partition against the cluster (`BadInput`). Plans come from the pure `reset.plan_reset`.
- Deleting offsets: a partition without a committed offset is reported per partition and not sent.
- Resets and imports are dry runs unless `execute=True`; the returned plan says which.
- Every offset written (commit, reset, import, copy) is committed with its partition's current
  leader epoch from Metadata, where the cluster reports one (see `reset`); show and export read
  the leader epoch committed with each offset (OffsetFetch v5+).
- Every operation runs through `kafka_apis.with_coordinator`, so it runs again when the
  coordinator moves. A reset is planned once (`plan_group_reset`) and committed as planned
  (`apply_plan`): a repeated commit sends the same absolute offsets, never a new plan (a second
  `--shift-by -5` would shift twice), and only if the group is still inactive on the coordinator
  the commit goes to.
- The steps that take an open client (`group_offsets`, `committed_offsets`, `plan_group_reset`,
  `apply_plan`, `delete_group_offsets`) are what `offsets_many` (several groups) and
  `offsets_copy` build on; the functions that take a bootstrap open one client per call.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping, Optional, TextIO

from groupctl.client import consumer_group_apis as consumer_apis
from groupctl.client import kafka_apis as apis
from groupctl.errors import BadInput, NotFound, OpsError, Refused
from groupctl.ops.groups import check_group_exists, check_group_id
from groupctl.client.kafka_apis import CommittedOffsets, GroupInfo, TopicPartition
from groupctl.client.kafka import DEFAULT_TIMEOUT, BootstrapLike, KafkaClient, Node, error_name
from groupctl.ops.lag import PartitionOffsets, partition_offsets
from groupctl.ops.plan_csv import CsvPlan, format_csv, parse_csv
from groupctl.ops.reset import (
    FromFile,
    PlanInputs,
    PlannedOffset,
    PlanOffsets,
    ResetPlan,
    Scope,
    Target,
    check_exists,
    check_offsets,
    lookup_timestamp,
    plan_reset,
    resolve_partitions,
    topics_to_fetch,
)

INACTIVE_STATES = frozenset({"Empty", "Dead"})
GROUP_SUBSCRIBED_TO_TOPIC = 86
# A simple commit racing a joining consumer is answered with one of these.
ACTIVE_GROUP_COMMIT_ERRORS = frozenset({22, 25, 27})  # ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS


@dataclass(frozen=True)
class GroupOffsets:
    group: str
    state: str
    offsets: tuple[PartitionOffsets, ...]  # each with the leader epoch committed with its offset

    def to_json(self) -> dict:
        return {"group": self.group, "state": self.state, "offsets": [o.to_json() for o in self.offsets]}


@dataclass(frozen=True)
class GroupCommitted:
    """A group's committed offsets, what `offsets export` writes."""

    group: str
    offsets: Mapping[TopicPartition, int]  # sorted
    leader_epochs: Mapping[TopicPartition, int] = field(default_factory=dict)
    """The leader epoch committed with each offset, where one was (JSON only: the CSV keeps
    kafka-consumer-groups.sh's `topic,partition,offset`)."""

    def rows(self) -> list[tuple[str, int, int]]:
        return [(t, p, o) for (t, p), o in self.offsets.items()]

    def to_csv(self, with_group: bool = False) -> str:
        """3-column CSV lines, or 4-column ones (the group first) `with_group`."""
        return format_csv(self.rows(), self.group if with_group else None)

    def to_json(self) -> dict:
        return {"group": self.group, "offsets": [
            {"topic": t, "partition": p, "offset": o, "leader_epoch": self.leader_epochs.get((t, p))}
            for t, p, o in self.rows()]}


@dataclass(frozen=True)
class OffsetDeletion:
    topic: str
    partition: int
    error: Optional[OpsError]  # None: deleted

    @property
    def deleted(self) -> bool:
        return self.error is None

    def to_json(self) -> dict:
        return {"topic": self.topic, "partition": self.partition, "deleted": self.deleted,
                "error": None if self.error is None else str(self.error)}


def refusal(group: str, info: GroupInfo) -> Refused:
    return Refused(
        f"group '{group}' is {info.state} with {len(info.members)} member(s); "
        "offsets can only be changed while the group is inactive (Empty)"
    )


def check_inactive(group: str, info: GroupInfo) -> None:
    """Refused unless the group is Empty, Dead or does not exist."""
    if info.exists and (info.state not in INACTIVE_STATES or info.members):
        raise refusal(group, info)


def group_and_offsets(client: KafkaClient, coordinator: Node, group: str) -> tuple[GroupInfo, CommittedOffsets]:
    """The group's state and members (DescribeGroups, and ConsumerGroupDescribe where served: a
    KIP-848 consumer group is described by it alone) and its committed offsets with the leader
    epochs committed with them (OffsetFetch), in one pipelined exchange."""
    calls = consumer_apis.group_state_calls(client, coordinator, [group])
    *described, fetched = client.call_many([*calls, apis.offset_fetch_call(coordinator, group)])
    return consumer_apis.parse_group_states(described)[0], apis.parse_offset_fetch(fetched, group)


def group_offsets(client: KafkaClient, group: str) -> GroupOffsets:
    """`show_offsets` of `group` with an open client."""
    info, committed = apis.with_coordinator(
        client, group, lambda coordinator: group_and_offsets(client, coordinator, group))
    check_group_exists(group, info, committed)
    assigned = [(t, p) for m in info.members for t, ps in m.assignment.items() for p in ps]
    return GroupOffsets(group, info.state, partition_offsets(client, committed, assigned))


def show_offsets(bootstrap: BootstrapLike, group: str, *, timeout: float = DEFAULT_TIMEOUT) -> GroupOffsets:
    """Committed offset, log end and lag per partition (committed or assigned); NotFound for a
    group that neither exists nor has committed offsets."""
    check_group_id(group)
    with KafkaClient(bootstrap, timeout=timeout) as client:
        return group_offsets(client, group)


def committed_offsets(client: KafkaClient, group: str) -> GroupCommitted:
    """The committed offsets of an existing group (NotFound otherwise), with an open client."""
    info, committed = apis.with_coordinator(
        client, group, lambda coordinator: group_and_offsets(client, coordinator, group))
    check_group_exists(group, info, committed)
    return GroupCommitted(group, dict(sorted(committed.items())), committed.leader_epochs)


def export_offsets(bootstrap: BootstrapLike, group: str, *, timeout: float = DEFAULT_TIMEOUT) -> GroupCommitted:
    """The group's committed offsets (sorted); `to_csv()` is the format `read_plan_file`,
    `import_offsets` and kafka-consumer-groups.sh `--from-file` read."""
    check_group_id(group)
    with KafkaClient(bootstrap, timeout=timeout) as client:
        return committed_offsets(client, group)


def read_plan_file(path: str | Path, stdin: Optional[TextIO] = None) -> CsvPlan:
    """A CSV plan file in either form (`plan_csv`) whose `source` is the file's name, or `stdin`
    (source "<stdin>") when `path` is "-"; BadInput for a missing, unreadable or malformed file."""
    if str(path) == "-" and stdin is not None:
        try:
            return parse_csv(stdin.read().removeprefix("\ufeff"), source="<stdin>")
        except UnicodeDecodeError as exc:
            raise BadInput(f"cannot read the plan from stdin: {exc}") from None
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # a spreadsheet's byte order mark is no topic
    except FileNotFoundError:
        raise BadInput(f"plan file '{path}' does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise BadInput(f"cannot read plan file '{path}': {reason}") from None
    return parse_csv(text, source=str(path))


def _commit(client: KafkaClient, coordinator: Node, group: str, offsets: Mapping[TopicPartition, int],
            leader_epochs: Mapping[TopicPartition, int]) -> None:
    errors = {tp: code for tp, code in apis.commit_offsets(client, coordinator, group, offsets, leader_epochs).items()
              if code}
    if not errors:
        return
    if any(code in apis.RETRIABLE_COORDINATOR_ERRORS for code in errors.values()):
        raise apis.CoordinatorMoved(f"coordinator for group '{group}' moved during the commit")
    if any(code in ACTIVE_GROUP_COMMIT_ERRORS for code in errors.values()):
        info = consumer_apis.describe_group_states(client, coordinator, [group])[0]
        raise refusal(group, info)
    (topic, partition), code = sorted(errors.items())[0]
    more = f" (and {len(errors) - 1} more partition(s))" if len(errors) > 1 else ""
    raise OpsError(f"committing {topic}:{partition} for group '{group}' failed: {error_name(code)}{more}")


def commit_offsets(
    bootstrap: BootstrapLike, group: str, offsets: Mapping[TopicPartition, int], *, timeout: float = DEFAULT_TIMEOUT
) -> ResetPlan:
    """Commit exactly `offsets` (no clamping) for an inactive group; the executed plan."""
    check_group_id(group)
    if not offsets:
        raise BadInput("give at least one TOPIC:PARTITION=OFFSET")
    source = offsets.source if isinstance(offsets, PlanOffsets) else None
    check_offsets(offsets, source)
    with KafkaClient(bootstrap, timeout=timeout) as client:
        before: list[Mapping[TopicPartition, int]] = []  # the offsets seen before the first commit

        def run(coordinator: Node) -> ResetPlan:
            info, committed = group_and_offsets(client, coordinator, group)
            metadata = client.metadata(sorted({t for t, _ in offsets}))
            for tp in sorted(offsets):
                check_exists(tp, metadata.partitions, source)
            check_inactive(group, info)
            if not before:
                before.append(committed)
            plan = ResetPlan(group, tuple(PlannedOffset(t, p, before[0].get((t, p)), o,
                                                        leader_epoch=metadata.leader_epoch(t, p))
                                          for (t, p), o in sorted(offsets.items())))
            _commit(client, coordinator, group, plan.offsets(), plan.leader_epochs())
            return replace(plan, executed=True)

        return apis.with_coordinator(client, group, run)


def plan_group_reset(client: KafkaClient, group: str, scope: Optional[Scope], target: Target, now_ms: int) -> ResetPlan:
    """The reset plan of `group` (not executed), with an open client: Refused while the group
    has members, NotFound when it does not exist, BadInput for what the cluster does not have."""

    def run(coordinator: Node) -> ResetPlan:
        info, committed = group_and_offsets(client, coordinator, group)
        check_inactive(group, info)
        check_group_exists(group, info, committed)
        metadata = client.metadata(topics_to_fetch(scope, target, committed))
        partitions = resolve_partitions(scope, target, metadata.partitions, committed)
        timestamp = lookup_timestamp(target, now_ms)
        wanted = [apis.EARLIEST, apis.LATEST] + ([timestamp] if timestamp is not None else [])
        found = apis.list_offsets(client, metadata, partitions, wanted)
        unknown = [tp for tp in partitions if found[0][tp] is None or found[1][tp] is None]
        if unknown:
            topic, partition = unknown[0]
            raise OpsError(f"cannot read the offset range of {topic}:{partition} (no leader or a partition error)")
        return plan_reset(group, scope, target, PlanInputs(
            topic_partitions=metadata.partitions,
            committed=committed,
            earliest={tp: o for tp, o in found[0].items() if o is not None},
            latest={tp: o for tp, o in found[1].items() if o is not None},
            for_timestamp=found[2] if timestamp is not None else {},
            timestamp_ms=timestamp,
            leader_epochs={(t, p): e for t, p in partitions if (e := metadata.leader_epoch(t, p)) is not None},
        ))

    return apis.with_coordinator(client, group, run)


def apply_plan(client: KafkaClient, plan: ResetPlan) -> ResetPlan:
    """Commit `plan`'s offsets as planned (the executed plan), with an open client: on every
    attempt (the coordinator may move) the group must still be inactive, and the same offsets
    are sent, never a new plan."""

    def run(coordinator: Node) -> ResetPlan:
        info = consumer_apis.describe_group_states(client, coordinator, [plan.group])[0]
        check_inactive(plan.group, info)
        _commit(client, coordinator, plan.group, plan.offsets(), plan.leader_epochs())
        return replace(plan, executed=True)

    return apis.with_coordinator(client, plan.group, run)


def reset_offsets(
    bootstrap: BootstrapLike,
    group: str,
    scope: Optional[Scope],
    target: Target,
    *,
    execute: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    now_ms: Optional[int] = None,
) -> ResetPlan:
    """Plan (and with `execute`, commit) a reset of `group` to `target` over `scope`.

    `scope` may be None only for a FromFile target. `now_ms` (default: the clock) anchors
    by-duration targets. NotFound for a group that does not exist (see the module docstring).
    """
    check_group_id(group)
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    with KafkaClient(bootstrap, timeout=timeout) as client:
        plan = plan_group_reset(client, group, scope, target, now_ms)
        if not execute or not plan.partitions:
            return plan
        return apply_plan(client, plan)


def import_offsets(
    bootstrap: BootstrapLike,
    group: str,
    offsets: Mapping[TopicPartition, int],
    *,
    execute: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
) -> ResetPlan:
    """Reset an existing group to the offsets of a CSV plan (see `read_plan_file`: errors then
    name the file), clamped to each partition's range; a dry run unless `execute`."""
    source = offsets.source if isinstance(offsets, PlanOffsets) else None
    return reset_offsets(bootstrap, group, None, FromFile(PlanOffsets(offsets, source)),
                         execute=execute, timeout=timeout)


def _deletion_scope(group: str, scope: Scope, committed: Mapping[TopicPartition, int],
                    topic_partitions: Mapping[str, Mapping[int, int]], *, only_committed: bool = False) -> list[TopicPartition]:
    """The partitions `scope` names. A named partition must exist in the cluster, unless its
    topic is gone and the group still has offsets for it (cleaning up after a deleted topic).
    A named topic without committed offsets is BadInput, or contributes nothing `only_committed`."""
    if scope.all_topics:
        return sorted(committed)
    partitions: set[TopicPartition] = set()
    for s in scope.topics:
        if s.partitions is not None:
            gone_with_offsets = s.topic not in topic_partitions and any(t == s.topic for t, _ in committed)
            for p in s.partitions:
                if not gone_with_offsets:
                    check_exists((s.topic, p), topic_partitions)
                if (s.topic, p) in committed or not only_committed:
                    partitions.add((s.topic, p))
            continue
        of_topic = {tp for tp in committed if tp[0] == s.topic}
        if not of_topic and not only_committed:
            raise BadInput(f"group '{group}' has no committed offsets for topic '{s.topic}'")
        partitions.update(of_topic)
    return sorted(partitions)


def delete_group_offsets(client: KafkaClient, group: str, scope: Scope, *,
                         only_committed: bool = False) -> tuple[OffsetDeletion, ...]:
    """`delete_offsets` with an open client; `only_committed` leaves out, without an error, what
    the group has no committed offset for (`--all-groups`: most groups have none for a topic)."""

    def run(coordinator: Node) -> tuple[OffsetDeletion, ...]:
        info, committed = group_and_offsets(client, coordinator, group)
        check_group_exists(group, info, committed)
        named = sorted({s.topic for s in scope.topics if s.partitions is not None})
        topic_partitions = client.metadata(named).partitions if named else {}
        partitions = _deletion_scope(group, scope, committed, topic_partitions, only_committed=only_committed)
        with_offsets = [tp for tp in partitions if tp in committed]
        codes = apis.delete_offsets(client, coordinator, group, with_offsets) if with_offsets else {}
        results = []
        for topic, partition in partitions:
            code = codes.get((topic, partition), 0)
            error: Optional[OpsError] = None
            if (topic, partition) not in committed:
                error = NotFound("no committed offset")
            elif code == GROUP_SUBSCRIBED_TO_TOPIC:
                error = Refused(f"group '{group}' is subscribed to topic '{topic}'; stop its consumers first")
            elif code:
                error = OpsError(f"deleting the offset of {topic}:{partition} failed: {error_name(code)}")
            results.append(OffsetDeletion(topic, partition, error))
        return tuple(results)

    return apis.with_coordinator(client, group, run)


def delete_offsets(
    bootstrap: BootstrapLike, group: str, scope: Scope, *, timeout: float = DEFAULT_TIMEOUT
) -> tuple[OffsetDeletion, ...]:
    """Delete the committed offsets in `scope` (topics need not exist any more: cleaning up
    after a deleted topic is the common case), one result per partition. The coordinator refuses
    partitions of topics the group is subscribed to; those come back with a `Refused` error. A
    named partition without a committed offset comes back with a `NotFound` error; one that
    does not exist is BadInput (see `_deletion_scope`)."""
    check_group_id(group)
    with KafkaClient(bootstrap, timeout=timeout) as client:
        return delete_group_offsets(client, group, scope)
