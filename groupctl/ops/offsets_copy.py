"""`offsets copy`: one group's committed offsets given to another group, on the same cluster or
on another one (partitions matched by topic name and partition number).

Invariants:
- The source group must exist and have committed offsets in the scope (`NotFound`, or
  `BadInput` for a named topic or partition it has no offset for); it may be active: the copy
  only reads it.
- The target group must be inactive (Empty, Dead or new), dry runs included, as for a reset
  (`offsets.check_inactive`, which names its state); it need not exist: the copy creates it,
  as `offsets commit` does. On one cluster the two groups differ (`BadInput`).
- Offsets are copied as they are, never clamped to the target partition's log: on the same
  cluster they are positions in the same logs; on another cluster they are positions in that
  cluster's own logs, right only where the logs match offset for offset (a mirror that keeps
  offsets). A partition the target cluster lacks is reported (`skipped`) and not sent; a copy
  with nothing left to send is `NotFound`. Each is committed with the target partition's
  current leader epoch (from the target cluster's Metadata), not the source's committed one: an
  epoch is only meaningful for the log it was read from.
- The plan is computed once and committed as planned (`offsets.apply_plan`, which checks the
  target group is still inactive on every attempt).
- The source's and the target's connections are separate clients: the target cluster gets only
  the security settings given for it (`to_bootstrap`), never the source's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping, Optional

from groupctl.client import kafka_apis as apis
from groupctl.client.kafka import DEFAULT_TIMEOUT, BootstrapLike, KafkaClient, Node
from groupctl.client.kafka_apis import TopicPartition
from groupctl.errors import BadInput, NotFound
from groupctl.ops.groups import check_group_id
from groupctl.ops.offsets import apply_plan, check_inactive, committed_offsets, group_and_offsets
from groupctl.ops.reset import PlannedOffset, ResetPlan, Scope


@dataclass(frozen=True)
class SkippedPartition:
    topic: str
    partition: int
    reason: str

    def to_json(self) -> dict:
        return {"topic": self.topic, "partition": self.partition, "reason": self.reason}


@dataclass(frozen=True)
class CopyPlan:
    from_group: str
    plan: ResetPlan  # the target group's plan: current offsets and the copied ones; executed once committed
    to_bootstrap: Optional[str]  # the target cluster; None: the source's
    skipped: tuple[SkippedPartition, ...] = ()

    def to_json(self) -> dict:
        return {"from_group": self.from_group, "group": self.plan.group, "to_bootstrap": self.to_bootstrap,
                "executed": self.plan.executed, "partitions": [p.to_json() for p in self.plan.partitions],
                "skipped": [s.to_json() for s in self.skipped]}


def _in_scope(group: str, committed: Mapping[TopicPartition, int], scope: Optional[Scope]) -> dict[TopicPartition, int]:
    """The source offsets `scope` selects (None or all topics: every one)."""
    if scope is None or scope.all_topics:
        return dict(committed)
    chosen: dict[TopicPartition, int] = {}
    for s in scope.topics:
        of_topic = {tp: o for tp, o in committed.items() if tp[0] == s.topic}
        if not of_topic:
            raise BadInput(f"group '{group}' has no committed offsets for topic '{s.topic}'")
        for p in s.partitions if s.partitions is not None else ():
            if (s.topic, p) not in of_topic:
                raise BadInput(f"group '{group}' has no committed offset for {s.topic}:{p}")
        chosen.update({tp: o for tp, o in of_topic.items() if s.partitions is None or tp[1] in s.partitions})
    return chosen


def _plan_copy(client: KafkaClient, from_group: str, to_group: str, offsets: Mapping[TopicPartition, int],
               to_bootstrap: Optional[str]) -> CopyPlan:
    """The copy into `to_group` on `client`'s cluster (not executed): Refused while it has members."""

    def run(coordinator: Node) -> CopyPlan:
        info, current = group_and_offsets(client, coordinator, to_group)
        check_inactive(to_group, info)
        metadata = client.metadata(sorted({t for t, _ in offsets}))
        existing = metadata.partitions
        planned, skipped = [], []
        for (topic, partition), offset in sorted(offsets.items()):
            if topic not in existing:
                skipped.append(SkippedPartition(topic, partition, "the topic does not exist on the target cluster"))
            elif partition not in existing[topic]:
                skipped.append(SkippedPartition(topic, partition,
                                                f"the target topic has {len(existing[topic])} partition(s)"))
            else:
                planned.append(PlannedOffset(topic, partition, current.get((topic, partition)), offset,
                                             leader_epoch=metadata.leader_epoch(topic, partition)))
        return CopyPlan(from_group, ResetPlan(to_group, tuple(planned)), to_bootstrap, tuple(skipped))

    copied = apis.with_coordinator(client, to_group, run)
    if not copied.plan.partitions:
        raise NotFound(f"none of the {len(offsets)} partition(s) of group '{from_group}' to copy exist on the target cluster")
    return copied


def copy_offsets(
    bootstrap: BootstrapLike,
    from_group: str,
    to_group: str,
    scope: Optional[Scope] = None,
    *,
    to_bootstrap: Optional[BootstrapLike] = None,
    execute: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
) -> CopyPlan:
    """Plan (and with `execute`, commit) `from_group`'s committed offsets in `scope` (None:
    all) for `to_group`, on `to_bootstrap`'s cluster (None: the same one). See the module
    docstring for what is refused and skipped."""
    check_group_id(from_group)
    check_group_id(to_group)
    if to_bootstrap is None and from_group == to_group:
        raise BadInput(f"--from-group and --to-group are both '{from_group}': copy to another group "
                       "(or to another cluster with --to-bootstrap)")
    target_name = None if to_bootstrap is None else str(to_bootstrap)
    with KafkaClient(bootstrap, timeout=timeout) as source:
        committed = committed_offsets(source, from_group).offsets
        if not committed:
            raise NotFound(f"group '{from_group}' has no committed offsets to copy")
        offsets = _in_scope(from_group, committed, scope)
        if to_bootstrap is None:
            return _execute(source, _plan_copy(source, from_group, to_group, offsets, None), execute)
    with KafkaClient(to_bootstrap, timeout=timeout) as client:
        return _execute(client, _plan_copy(client, from_group, to_group, offsets, target_name), execute)


def _execute(client: KafkaClient, copied: CopyPlan, execute: bool) -> CopyPlan:
    if not execute:
        return copied
    return replace(copied, plan=apply_plan(client, copied.plan))
