"""A consumer group (KIP-848) as the coordinator holds it: its epochs, members, target assignment
and who owns which partition at which epoch.

Invariants:
- `assignment_epoch` <= `group_epoch`; the target assignment is the one computed at
  `assignment_epoch` (a group epoch above it means a new target is due: ASSIGNING).
- Every partition a member has assigned or pending revocation has exactly one owner, recorded in
  the partition epochs at that member's epoch (`owner_epoch`); a free partition is -1.
- `put_member` and `remove_member` are the only ways members change, so the partition epochs,
  the static-member index and the subscription counts follow every change.
"""

from __future__ import annotations

from collections import Counter
from enum import Enum
from typing import Iterable, Optional

from groupctl.coordinator.consumer.member import ConsumerMember
from groupctl.coordinator.consumer.partitions import EMPTY, Assignment
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.offsets.messages import MEMBER_EPOCH_COMMIT_VERSION


class ConsumerGroupState(Enum):
    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


class OwnershipConflict(Exception):
    """A member was given a partition another member owns: a bug, never a client's doing."""


class ConsumerGroup:
    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.assignor: Optional[str] = None  # the assignor of the current target assignment
        self.members: dict[str, ConsumerMember] = {}
        self.target: dict[str, Assignment] = {}  # member id -> its target assignment
        self.subscribed: dict[str, int] = {}  # topic id -> partitions, of the topics subscribed at group_epoch
        self.subscribed_names: frozenset[str] = frozenset()  # the names of those topics
        self.topics_version = -1  # the core's topics `subscribed` was computed from (-1: not since loaded)
        self.topic_names: dict[str, str] = {}  # topic id -> name, as the last document named them
        self.pending: set[str] = set()  # member ids handed out with MEMBER_ID_REQUIRED (classic protocol)
        self.member_documents: dict[str, tuple] = {}  # build_document's cache: member id -> (member, target, entry)
        self.changed_at_ms = 0  # when the newest change worth persisting happened (the document's updated_at_ms)
        self._static: dict[str, str] = {}  # instance id -> member id
        self._owners: dict[tuple[str, int], tuple[str, int]] = {}  # (topic id, partition) -> (member id, epoch)
        self._names: Counter[str] = Counter()  # subscribed topic name -> members subscribing
        self._regexes: Counter[str] = Counter()  # subscribed regex -> members subscribing

    @property
    def state(self) -> ConsumerGroupState:
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if any(not m.reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    def owner_epoch(self, topic_id: str, partition: int) -> int:
        owner = self._owners.get((topic_id, partition))
        return owner[1] if owner is not None else -1

    def owner(self, topic_id: str, partition: int) -> Optional[str]:
        owner = self._owners.get((topic_id, partition))
        return owner[0] if owner is not None else None

    def static_member(self, instance_id: str) -> Optional[ConsumerMember]:
        member_id = self._static.get(instance_id)
        return self.members.get(member_id) if member_id is not None else None

    def target_of(self, member_id: str) -> Assignment:
        return self.target.get(member_id, EMPTY)

    def subscriptions(self, without: Iterable[ConsumerMember] = (),
                      adding: Optional[ConsumerMember] = None) -> tuple[frozenset[str], frozenset[str]]:
        """(topic names, regexes) the members subscribe to, or would once the members `without`
        are gone and `adding` is in (cost: the number of distinct subscriptions, not members)."""
        names, regexes = Counter(self._names), Counter(self._regexes)
        for member in without:
            names.subtract(member.subscribed_topic_names)
            if member.subscribed_topic_regex:
                regexes[member.subscribed_topic_regex] -= 1
        if adding is not None:
            names.update(adding.subscribed_topic_names)
            if adding.subscribed_topic_regex:
                regexes[adding.subscribed_topic_regex] += 1
        return (frozenset(n for n, k in names.items() if k > 0), frozenset(r for r, k in regexes.items() if k > 0))

    # -- the offset store's questions (`groupctl.coordinator.offsets.OffsetGroup`) ----------------

    def validate_commit(self, member_id: str, instance_id: Optional[str],
                        generation_or_member_epoch: int, api_version: int, transactional: bool = False) -> ErrorCode:
        """Apache Kafka's ConsumerGroup.validateOffsetCommit: an epoch below 0 (an admin or a
        manual-assignment commit) only while the group has no members; else the member must be
        known (UNKNOWN_MEMBER_ID), a consumer-protocol member must use OffsetCommit v9+
        (UNSUPPORTED_VERSION; not asked of a `transactional` commit), and it must commit at its current epoch (`_offset_epoch_error`)."""
        if generation_or_member_epoch < 0 and not self.members:
            return ErrorCode.NONE
        member = self.members.get(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if member.classic is None and api_version < MEMBER_EPOCH_COMMIT_VERSION and not transactional:
            return ErrorCode.UNSUPPORTED_VERSION
        return self._offset_epoch_error(member, generation_or_member_epoch)

    def validate_fetch(self, member_id: Optional[str], member_epoch: int) -> ErrorCode:
        """Apache Kafka's ConsumerGroup.validateOffsetFetch: a fetch naming no member (no id, an
        epoch below 0: admin tools, older versions, librdkafka) is always answered; else the
        member must be known (UNKNOWN_MEMBER_ID) and at its current epoch (`_offset_epoch_error`).
        Deliberate difference: an empty member id counts as none (Kafka looks up a member "")."""
        if not member_id and member_epoch < 0:
            return ErrorCode.NONE
        member = self.members.get(member_id) if member_id is not None else None
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        return self._offset_epoch_error(member, member_epoch)

    @staticmethod
    def _offset_epoch_error(member: ConsumerMember, epoch: int) -> ErrorCode:
        """A known member's offset request at `epoch`: NONE at its current epoch, else
        STALE_MEMBER_EPOCH (the client heartbeats and retries), or ILLEGAL_GENERATION for a
        classic-protocol member (online migration), which knows its epoch as a generation."""
        if epoch == member.member_epoch:
            return ErrorCode.NONE
        return ErrorCode.ILLEGAL_GENERATION if member.classic is not None else ErrorCode.STALE_MEMBER_EPOCH

    def validate_delete(self) -> ErrorCode:
        return ErrorCode.NONE  # only the offsets of topics nobody subscribes to go (`is_subscribed_to`)

    def is_subscribed_to(self, topic: str) -> bool:
        return topic in self.subscribed_names

    # -- members ----------------------------------------------------------------------------

    def put_member(self, member: ConsumerMember) -> None:
        """Add or replace the member with its id (its ownership moves with it)."""
        previous = self.members.get(member.member_id)
        if previous is not None:
            self._forget(previous)
        try:
            self._remember(member)
        except OwnershipConflict:
            if previous is not None:
                self._remember(previous)
            raise
        self.members[member.member_id] = member

    def remove_member(self, member_id: str) -> ConsumerMember:
        member = self.members.pop(member_id)
        self._forget(member)
        self.target.pop(member_id, None)
        return member

    def _remember(self, member: ConsumerMember) -> None:
        owned = [(topic_id, partition) for assignment in (member.assigned, member.pending_revocation)
                 for topic_id, partitions in assignment.items() for partition in partitions]
        taken = [key for key in owned if key in self._owners]
        if taken:  # checked before anything changes
            raise OwnershipConflict(f"{taken[0][0]}-{taken[0][1]} is owned by {self._owners[taken[0]][0]}, "
                                    f"not free for {member.member_id}")
        for key in owned:
            self._owners[key] = (member.member_id, member.member_epoch)
        if member.instance_id is not None:
            self._static[member.instance_id] = member.member_id
        self._names.update(member.subscribed_topic_names)
        if member.subscribed_topic_regex:
            self._regexes[member.subscribed_topic_regex] += 1

    def _forget(self, member: ConsumerMember) -> None:
        for assignment in (member.assigned, member.pending_revocation):
            for topic_id, partitions in assignment.items():
                for partition in partitions:
                    del self._owners[(topic_id, partition)]
        if member.instance_id is not None and self._static.get(member.instance_id) == member.member_id:
            del self._static[member.instance_id]
        self._names.subtract(member.subscribed_topic_names)
        self._names += Counter()  # drop the names nobody subscribes to any more
        if member.subscribed_topic_regex:
            self._regexes[member.subscribed_topic_regex] -= 1
            self._regexes += Counter()
