"""Reconciliation, pure: what to revoke and what to add to move what the application holds to the
part of the target assignment whose topic names are known (AK AbstractMembershipManager.maybeReconcile).

Invariants:
- Revoke first, then assign: `Plan.revoke` = owned - resolved target, `Plan.add` = resolved - owned;
  the machine asks for the REVOKE callback (if anything is revoked) and only after it succeeds for
  the ASSIGN callback (always, even when nothing is added, as AK runs onPartitionsAssigned).
- Topic ids without a known name wait in the target (`Plan.unresolved`) and are neither assigned
  nor revoked until Metadata names them; the member may acknowledge the resolved part meanwhile.
- A `LocalAssignment` is an assignment with a local epoch, bumped each time a *different* target
  arrives, so "the target is reconciled" and "the acknowledgement changed" compare epochs too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

from groupctl.member.messages import Partitions, difference, partitions

NONE_EPOCH = -1


@dataclass(frozen=True)
class LocalAssignment:
    local_epoch: int
    partitions: Partitions = field(default_factory=dict)

    @property
    def is_none(self) -> bool:
        return self.local_epoch == NONE_EPOCH

    def updated_with(self, new: Partitions) -> Optional["LocalAssignment"]:
        """The next target when `new` differs from this one (None: nothing new to reconcile)."""
        new = partitions(new)
        if not self.is_none and new == self.partitions:
            return None
        return LocalAssignment(self.local_epoch + 1, new)


NONE = LocalAssignment(NONE_EPOCH)


@dataclass(frozen=True)
class Plan:
    target_epoch: int  # the local epoch of the target this plan reconciles to
    resolved: Partitions  # the part of the target whose names are known: what the member will own
    unresolved: frozenset[str]  # topic ids of the target with no known name yet
    revoke: Partitions
    add: Partitions


def plan(owned: Partitions, target: LocalAssignment, names: Mapping[str, str]) -> Plan:
    resolved = partitions({t: ps for t, ps in target.partitions.items() if t in names})
    unresolved = frozenset(t for t in target.partitions if t not in names)
    return Plan(target.local_epoch, resolved, unresolved, difference(owned, resolved), difference(resolved, owned))
