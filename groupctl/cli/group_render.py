"""The tables of `group describe`, one function per section (state, members, offsets).

Plain sections keep the columns they always had (the state table adds TYPE, "classic" or
"consumer", last); `--verbose` sections are kafka-consumer-groups.sh 4.x's `--describe
--state|--members --verbose` tables, the same for both group types, with "-" where a classic
group has no value (epochs, target assignments):
- state: GROUP, COORDINATOR (ID), ASSIGNMENT-STRATEGY, STATE, GROUP-EPOCH,
  TARGET-ASSIGNMENT-EPOCH, #MEMBERS;
- members: GROUP, CONSUMER-ID, GROUP-INSTANCE-ID (only when a member has one), HOST, CLIENT-ID,
  #PARTITIONS, CURRENT-EPOCH, CURRENT-ASSIGNMENT, TARGET-EPOCH (the group's target assignment
  epoch), TARGET-ASSIGNMENT, and UPGRADED only for a consumer group migrating online (members of
  both protocols); assignments as Kafka writes them, `t1:0,1;t2:0`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Optional

from groupctl.cli import render
from groupctl.cli.context import CliEnv

if TYPE_CHECKING:
    from groupctl.ops.groups import GroupDescription


def state_section(current: CliEnv, described: "GroupDescription", verbose: bool) -> None:
    coordinator = described.coordinator
    if verbose:
        render.show(current, render.table(
            ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH",
             "#MEMBERS"],
            [(described.group, f"{coordinator.host}:{coordinator.port} ({coordinator.node_id})",
              described.assignor or described.protocol or None, described.state, described.group_epoch,
              described.assignment_epoch, len(described.members))]))
        return
    render.show(current, render.table(
        ["GROUP", "STATE", "PROTOCOL-TYPE", "PROTOCOL", "GENERATION", "MEMBERS", "COORDINATOR", "TYPE"],
        [(described.group, described.state, described.protocol_type or None, described.protocol or None,
          described.generation, len(described.members),
          f"{coordinator.node_id} ({coordinator.host}:{coordinator.port})", described.group_type)]))


def members_section(current: CliEnv, described: "GroupDescription", verbose: bool) -> None:
    if not described.members:
        current.out.print(f"{described.group} has no active members.", markup=False, highlight=False)
        return
    if verbose:
        _verbose_members(current, described)
        return
    render.show(current, render.table(
        ["MEMBER-ID", "CLIENT-ID", "HOST", "ASSIGNMENT"],
        [(m.member_id, m.client_id, m.client_host,
          " ".join(f"{t}:{','.join(map(str, ps))}" for t, ps in sorted(m.assignment.items())) or None)
         for m in described.members]))


def _verbose_members(current: CliEnv, described: "GroupDescription") -> None:
    with_instances = any(m.group_instance_id for m in described.members)
    migrating = {m.upgraded for m in described.members} >= {True, False}
    columns = ["GROUP", "CONSUMER-ID", *(["GROUP-INSTANCE-ID"] if with_instances else []), "HOST", "CLIENT-ID",
               "#PARTITIONS", "CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT",
               *(["UPGRADED"] if migrating else [])]
    rows = []
    for m in described.members:
        instance = [m.group_instance_id] if with_instances else []
        upgraded = [None if m.upgraded is None else str(m.upgraded).lower()] if migrating else []
        rows.append((described.group, m.member_id, *instance, m.client_host, m.client_id,
                     sum(len(ps) for ps in m.assignment.values()), m.member_epoch, assignment_cell(m.assignment),
                     described.assignment_epoch, assignment_cell(m.target_assignment), *upgraded))
    render.show(current, render.table(columns, rows))


def assignment_cell(assignment: Optional[Mapping[str, tuple[int, ...]]]) -> Optional[str]:
    """`t1:0,1;t2:0` (topics and partitions sorted), as kafka-consumer-groups.sh 4.x prints an
    assignment; None ("-") for none."""
    if not assignment or not any(assignment.values()):
        return None
    return ";".join(f"{t}:{','.join(map(str, sorted(ps)))}" for t, ps in sorted(assignment.items()) if ps)


def offsets_section(current: CliEnv, described: "GroupDescription", verbose: bool) -> None:
    """The same table with or without --verbose (Kafka's verbose one adds LEADER-EPOCH, which
    groupctl does not fetch)."""
    rows = []
    for o in described.offsets:
        owner = described.owner(o.topic, o.partition)
        rows.append((o.topic, o.partition, o.committed_offset, o.log_end_offset, render.lag_cell(o),
                     owner.member_id if owner else None))
    render.show(current, render.table(
        ["TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID"], rows))


SECTIONS = {"state": state_section, "members": members_section, "offsets": offsets_section}
"""`group describe`'s sections, shown in this order."""
