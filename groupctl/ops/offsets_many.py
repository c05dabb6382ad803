"""The offsets operations on several groups at once (kafka-consumer-groups.sh's `--group G...`
and `--all-groups`, KIP-379): show, export, delete, and reset planned and applied together.

Invariants:
- Every group id is checked (`groups.check_group_id`) before anything is sent.
- Show goes through `groups.describe_groups` (batched, one client); export, delete and reset run
  each group with a client of its own, so each gets the whole timeout however many groups
  there are, and through `kafka_apis.with_coordinator` as one group does (`groupctl.ops.offsets`).
- Show, export and delete go on past a group that fails on its own account (it does not exist,
  it is refused, the scope does not fit it: `GROUP_FAILURES`) and report it in its
  `GroupOutcome`; any other failure (unreachable cluster, ...) ends the call.
- A reset of several groups goes group by group, as kafka-consumer-groups.sh's does: every group
  is planned first (each plan computed once, `offsets.plan_group_reset`); a group refused (it
  has members) or missing is reported and left out, and the others' plans are shown and, with
  `execute`, applied group after group, each as planned (`offsets.apply_plan`). A group that
  fails while applying does not stop the others; the result says which groups were applied,
  refused and failed. A BadInput while planning (an unknown topic, a shift without a committed
  offset) ends the call before anything is applied.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Generic, Mapping, Optional, Sequence, TypeVar

from groupctl.client.kafka import DEFAULT_TIMEOUT, BootstrapLike, KafkaClient
from groupctl.errors import BadInput, NotFound, OpsError, Refused
from groupctl.ops.groups import check_group_id, describe_groups
from groupctl.ops.offsets import (
    GroupCommitted,
    GroupOffsets,
    OffsetDeletion,
    apply_plan,
    committed_offsets,
    delete_group_offsets,
    plan_group_reset,
)
from groupctl.ops.reset import ResetPlan, Scope, Target

T = TypeVar("T")

GROUP_FAILURES = (NotFound, Refused, BadInput)
"""Failures that concern one group (the cluster answered): the others go on."""


@dataclass(frozen=True)
class GroupOutcome(Generic[T]):
    """One group's part of a many-group operation: its result, or the failure of that group."""

    group: str
    result: Optional[T] = None
    error: Optional[OpsError] = None


def _check_ids(groups: Sequence[str]) -> None:
    for group in groups:
        check_group_id(group)


def for_each_group(bootstrap: BootstrapLike, groups: Sequence[str], operation: Callable[[KafkaClient, str], T], *,
                   timeout: float = DEFAULT_TIMEOUT) -> tuple[GroupOutcome[T], ...]:
    """`operation(client, group)` for every group, in order, each with a client of its own."""
    _check_ids(groups)
    outcomes: list[GroupOutcome[T]] = []
    for group in groups:
        try:
            with KafkaClient(bootstrap, timeout=timeout) as client:
                outcomes.append(GroupOutcome(group, operation(client, group)))
        except GROUP_FAILURES as exc:
            outcomes.append(GroupOutcome(group, error=exc))
    return tuple(outcomes)


def show_offsets_of(bootstrap: BootstrapLike, groups: Sequence[str], *,
                    timeout: float = DEFAULT_TIMEOUT) -> tuple[GroupOutcome[GroupOffsets], ...]:
    """`offsets.show_offsets` of each group (repeats dropped), in the batched exchanges of
    `groups.describe_groups` — one client and a few round trips for them all instead of a client
    per group (bench/many_groups.py) — with the same rows (committed or assigned partitions)."""
    answer = describe_groups(bootstrap, groups, include_offsets=True, timeout=timeout)
    shown = {d.group: GroupOffsets(d.group, d.state, d.offsets) for d in answer.described}
    return tuple(GroupOutcome(g, shown.get(g), answer.failed.get(g)) for g in dict.fromkeys(groups))


def committed_offsets_of(bootstrap: BootstrapLike, groups: Sequence[str], *,
                         timeout: float = DEFAULT_TIMEOUT) -> tuple[GroupOutcome[GroupCommitted], ...]:
    """The committed offsets of each group (what `offsets export` writes)."""
    return for_each_group(bootstrap, groups, committed_offsets, timeout=timeout)


def delete_offsets_of(bootstrap: BootstrapLike, groups: Sequence[str], scope: Scope, *, only_committed: bool = False,
                      timeout: float = DEFAULT_TIMEOUT) -> tuple[GroupOutcome[tuple[OffsetDeletion, ...]], ...]:
    """`offsets.delete_offsets` of each group; `only_committed` (for every group of a cluster)
    leaves out what a group has no committed offsets for instead of reporting it."""
    return for_each_group(
        bootstrap, groups, lambda client, group: delete_group_offsets(client, group, scope, only_committed=only_committed),
        timeout=timeout)


@dataclass(frozen=True)
class GroupsReset:
    """A reset of several groups: `plans` holds the plan of every group not refused, in order
    (`executed` where it was applied), `refused` the groups refused or missing while planning
    (left alone), `failed` the groups whose commit failed."""

    plans: tuple[ResetPlan, ...]
    refused: tuple[GroupOutcome[ResetPlan], ...] = ()
    failed: tuple[GroupOutcome[ResetPlan], ...] = ()

    @property
    def applied(self) -> tuple[str, ...]:
        return tuple(p.group for p in self.plans if p.executed)


def reset_groups(
    bootstrap: BootstrapLike,
    targets: Mapping[str, Target],
    scope: Optional[Scope],
    *,
    execute: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    now_ms: Optional[int] = None,
) -> GroupsReset:
    """Plan every group's reset (`targets`: group -> its target, in order; `scope` as for
    `offsets.reset_offsets`), then, with `execute`, apply the plans of the groups not refused or
    missing. A BadInput while planning (an unknown topic, a shift without a committed offset)
    ends the call before anything is applied."""
    _check_ids(list(targets))
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    plans: list[ResetPlan] = []
    refused: list[GroupOutcome[ResetPlan]] = []
    for group, target in targets.items():
        try:
            with KafkaClient(bootstrap, timeout=timeout) as client:
                plans.append(plan_group_reset(client, group, scope, target, now_ms))
        except (NotFound, Refused) as exc:
            refused.append(GroupOutcome(group, error=exc))
    if not execute:
        return GroupsReset(tuple(plans), tuple(refused))
    done: list[ResetPlan] = []
    failed: list[GroupOutcome[ResetPlan]] = []
    for plan in plans:
        if not plan.partitions:
            done.append(plan)
            continue
        try:
            with KafkaClient(bootstrap, timeout=timeout) as client:
                done.append(apply_plan(client, plan))
        except OpsError as exc:
            done.append(plan)
            failed.append(GroupOutcome(plan.group, plan, exc))
    return GroupsReset(tuple(done), tuple(refused), tuple(failed))
