"""The tables of `group describe`, one function per section (state, members, offsets), each
showing one group or several (one table per section, a row per group, member or partition).

Every table starts with kafka-consumer-groups.sh's columns, in its order and spelling (`--describe
--offsets|--members|--state`, and 4.x's `--verbose` tables), and groupctl's own columns follow
them, so that a K-CG user reads the same table and a script cutting K-CG's columns still finds
them where K-CG has them. "-" stands for a value the group does not have (no owner, no epoch):
- offsets: GROUP, TOPIC, PARTITION, CURRENT-OFFSET, LOG-END-OFFSET, LAG, CONSUMER-ID, HOST,
  CLIENT-ID (the partition's owner; "-" for none); with --verbose, K-CG 4.x's LEADER-EPOCH after
  PARTITION (the leader epoch committed with the offset; "-" for none). LAG is groupctl's lag
  rule: `0 (ahead)` for a committed offset past the log end (`render.lag_cell`). When producers'
  open transactions hold offsets for a group (TxnOffsetCommit; groupctl's nodes tell), a second
  table follows: GROUP, TOPIC, PARTITION, PENDING-OFFSET, PRODUCER-ID, PRODUCER-EPOCH.
- members: GROUP, CONSUMER-ID, GROUP-INSTANCE-ID (only when a member has one), HOST, CLIENT-ID,
  #PARTITIONS, then ASSIGNMENT; with --verbose, after #PARTITIONS: CURRENT-EPOCH,
  CURRENT-ASSIGNMENT, TARGET-EPOCH (the group's target assignment epoch), TARGET-ASSIGNMENT, and
  UPGRADED only for a consumer group migrating online (members of both protocols). Assignments
  as Kafka writes them, `t1:0,1;t2:0`. A group without members is a line after the table,
  "Consumer group 'g' has no active members." (K-CG's words).
- configs (groupctl's, with --configs only): GROUP, NAME, VALUE, SOURCE.
- state: GROUP, COORDINATOR (ID), ASSIGNMENT-STRATEGY, STATE, #MEMBERS, then PROTOCOL-TYPE,
  GENERATION, TYPE ("classic" or "consumer"); with --verbose, K-CG 4.x's GROUP, COORDINATOR
  (ID), ASSIGNMENT-STRATEGY, STATE, GROUP-EPOCH, TARGET-ASSIGNMENT-EPOCH, #MEMBERS.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Optional, Sequence

from groupctl.cli import render
from groupctl.cli.context import CliEnv

if TYPE_CHECKING:
    from groupctl.ops.groups import GroupDescription, MemberDescription

Descriptions = Sequence["GroupDescription"]


def state_section(current: CliEnv, groups: Descriptions, verbose: bool) -> None:
    if verbose:
        render.show(current, render.table(
            ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH",
             "#MEMBERS"],
            [(d.group, _coordinator(d), _strategy(d), d.state, d.group_epoch, d.assignment_epoch, len(d.members))
             for d in groups]))
        return
    render.show(current, render.table(
        ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS", "PROTOCOL-TYPE", "GENERATION",
         "TYPE"],
        [(d.group, _coordinator(d), _strategy(d), d.state, len(d.members), d.protocol_type or None, d.generation,
          d.group_type) for d in groups]))


def _coordinator(described: "GroupDescription") -> str:
    coordinator = described.coordinator
    return f"{coordinator.host}:{coordinator.port} ({coordinator.node_id})"


def _strategy(described: "GroupDescription") -> Optional[str]:
    """The assignor of a consumer group, the protocol (range, roundrobin, ...) of a classic one."""
    return described.assignor or described.protocol or None


def members_section(current: CliEnv, groups: Descriptions, verbose: bool) -> None:
    members = [(d, m) for d in groups for m in d.members]
    if members:
        render.show(current, _verbose_members(members) if verbose else _members(members))
    for described in groups:
        if not described.members:
            current.out.print(f"Consumer group '{described.group}' has no active members.", markup=False,
                              highlight=False)


def _members(members: Sequence[tuple["GroupDescription", "MemberDescription"]]):
    with_instances = any(m.group_instance_id for _, m in members)
    columns = ["GROUP", "CONSUMER-ID", *(["GROUP-INSTANCE-ID"] if with_instances else []), "HOST", "CLIENT-ID",
               "#PARTITIONS", "ASSIGNMENT"]
    return render.table(columns, [
        (d.group, m.member_id, *([m.group_instance_id] if with_instances else []), m.client_host, m.client_id,
         _partition_count(m), assignment_cell(m.assignment)) for d, m in members])


def _verbose_members(members: Sequence[tuple["GroupDescription", "MemberDescription"]]):
    with_instances = any(m.group_instance_id for _, m in members)
    migrating = {m.upgraded for _, m in members} >= {True, False}
    columns = ["GROUP", "CONSUMER-ID", *(["GROUP-INSTANCE-ID"] if with_instances else []), "HOST", "CLIENT-ID",
               "#PARTITIONS", "CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT",
               *(["UPGRADED"] if migrating else [])]
    rows = []
    for d, m in members:
        instance = [m.group_instance_id] if with_instances else []
        upgraded = [None if m.upgraded is None else str(m.upgraded).lower()] if migrating else []
        rows.append((d.group, m.member_id, *instance, m.client_host, m.client_id, _partition_count(m),
                     m.member_epoch, assignment_cell(m.assignment), d.assignment_epoch,
                     assignment_cell(m.target_assignment), *upgraded))
    return render.table(columns, rows)


def _partition_count(member: "MemberDescription") -> int:
    return sum(len(ps) for ps in member.assignment.values())


def assignment_cell(assignment: Optional[Mapping[str, tuple[int, ...]]]) -> Optional[str]:
    """`t1:0,1;t2:0` (topics and partitions sorted), as kafka-consumer-groups.sh 4.x prints an
    assignment; None ("-") for none."""
    if not assignment or not any(assignment.values()):
        return None
    return ";".join(f"{t}:{','.join(map(str, sorted(ps)))}" for t, ps in sorted(assignment.items()) if ps)


def offsets_section(current: CliEnv, groups: Descriptions, verbose: bool) -> None:
    """K-CG's offsets table; --verbose adds LEADER-EPOCH (see the module docstring)."""
    rows = []
    for d in groups:
        for o in d.offsets:
            owner = d.owner(o.topic, o.partition)
            epoch = (o.committed_leader_epoch,) if verbose else ()
            rows.append((d.group, o.topic, o.partition, *epoch, o.committed_offset, o.log_end_offset,
                         render.lag_cell(o),
                         *((owner.member_id, owner.client_host, owner.client_id) if owner else (None, None, None))))
    render.show(current, render.table(
        ["GROUP", "TOPIC", "PARTITION", *(["LEADER-EPOCH"] if verbose else []), "CURRENT-OFFSET", "LOG-END-OFFSET",
         "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"],
        rows))
    pending = [(d.group, p.topic, p.partition, p.offset, p.producer_id, p.producer_epoch)
               for d in groups for p in d.pending_offsets]
    if pending:
        current.out.print()
        render.show(current, render.table(["GROUP", "TOPIC", "PARTITION", "PENDING-OFFSET", "PRODUCER-ID",
                                           "PRODUCER-EPOCH"], pending,
                                          title="Pending transactional offsets (until each transaction ends)",
                                          numeric=("PRODUCER-ID",)))


def configs_section(current: CliEnv, groups: Descriptions, verbose: bool) -> None:
    """GROUP, NAME, VALUE, SOURCE: each group's configs (`group config show`'s table); "-" rows
    for a group whose cluster has no group configs (before Kafka 4)."""
    rows = []
    for d in groups:
        rows.extend((d.group, c.name, c.value, c.source) for c in d.configs or ())
        if d.configs is None:
            rows.append((d.group, None, None, None))
    render.show(current, render.table(["GROUP", "NAME", "VALUE", "SOURCE"], rows))


SECTIONS = {"state": state_section, "members": members_section, "offsets": offsets_section,
            "configs": configs_section}
"""`group describe`'s sections, shown in this order."""
DEFAULT_SECTIONS = ("state", "members", "offsets")
"""The sections shown when none is asked for (configs only with --configs)."""
