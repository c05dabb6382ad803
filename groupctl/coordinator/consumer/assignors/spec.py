"""What a server-side assignor reads and what it returns: frozen values, nothing else.

Modelled on Apache Kafka's assignor API (`GroupSpec`, `MemberSubscription`, `MemberAssignment`,
`SubscribedTopicDescriber` in org.apache.kafka.coordinator.group.api.assignor):

- `MemberSpec`: one member's subscribed topic ids, rack, instance id and its current *target*
  assignment (topic id -> partitions), which the sticky assignors try to keep. A static member
  that replaced a departed one (same instance id) should be given the departed member's target.
- `GroupSpec`: the members by member id, the partition count of each topic id (the topic
  describer), and whether every member has the same subscription (homogeneous).
- `GroupAssignment`: member id -> {topic id -> frozenset of partitions}; every member of the spec
  is a key (a member with nothing gets an empty mapping) and no topic maps to an empty set.

Inputs are not trusted to be fresh: a current assignment may name topics that no longer exist,
partitions beyond a topic's count, topics the member no longer subscribes to, or a partition
held by two members. Assignors drop all of these (`current.kept`). A subscribed topic id that
the describer does not know has nothing to assign and is passed over (Apache Kafka raises
PartitionAssignorException there: its topic ids are resolved from the same metadata image).

Racks: `MemberSpec.rack` and `GroupSpec.partition_racks` are carried for callers and future
assignors; neither assignor reads them, as in Apache Kafka since 3.8 (KAFKA-16694 removed rack
awareness from the server-side assignors).

Values are immutable: member assignments are read-only mappings of frozensets, copied at
construction only when they are not already in that form. Assignors never mutate their input,
and an output member assignment that did not change *is* the input's mapping object (no copy):
that is what makes the incremental case cheap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import AbstractSet, Iterable, Mapping, Optional, Sequence

TopicId = str
MemberId = str
Assignment = Mapping[TopicId, "frozenset[int]"]
"""One member's partitions: topic id -> frozenset of partition numbers (never empty)."""
GroupAssignment = dict[MemberId, Assignment]
"""Member id -> its assignment; every member of the spec is a key."""

EMPTY: Assignment = MappingProxyType({})


def freeze(assignment: Mapping[TopicId, Iterable[int]]) -> Assignment:
    """A read-only copy of `assignment` with frozenset values (empty sets left out); returned
    as is when it is already such a mapping."""
    if type(assignment) is MappingProxyType and all(
            type(s) is frozenset and s for s in assignment.values()):
        return assignment
    frozen = {t: s if type(s) is frozenset else frozenset(s) for t, s in assignment.items()}
    return MappingProxyType({t: s for t, s in frozen.items() if s})


@dataclass(frozen=True, slots=True)
class MemberSpec:
    """One member as an assignor sees it (Apache Kafka's `MemberSubscriptionAndAssignmentImpl`)."""

    subscribed_topics: AbstractSet[TopicId]
    assignment: Assignment = field(default_factory=lambda: EMPTY)  # the member's current target
    rack: Optional[str] = None
    instance_id: Optional[str] = None

    def __post_init__(self) -> None:
        if type(self.subscribed_topics) is not frozenset:
            object.__setattr__(self, "subscribed_topics", frozenset(self.subscribed_topics))
        object.__setattr__(self, "assignment", freeze(self.assignment))


@dataclass(frozen=True, slots=True)
class GroupSpec:
    """A group's members and the topics they can be assigned (Apache Kafka's `GroupSpec` and
    `SubscribedTopicDescriber` in one value).

    `topics` maps every known topic id to its partition count (partitions 0 .. count - 1);
    `homogeneous` is computed from the subscriptions when left None. `partition_racks`, per topic
    id the racks of each partition's replicas, is carried and not read (see the module doc)."""

    members: Mapping[MemberId, MemberSpec]
    topics: Mapping[TopicId, int]
    homogeneous: Optional[bool] = None
    partition_racks: Mapping[TopicId, Sequence[AbstractSet[str]]] = field(default_factory=lambda: EMPTY)

    def __post_init__(self) -> None:
        object.__setattr__(self, "members", MappingProxyType(dict(self.members)))
        object.__setattr__(self, "topics", MappingProxyType(dict(self.topics)))
        if self.homogeneous is None:
            object.__setattr__(self, "homogeneous", subscriptions_are_identical(self.members.values()))

    def subscribed_topics(self) -> frozenset[TopicId]:
        """Every topic id some member subscribes to and the describer knows."""
        subscribed: set[TopicId] = set()
        for member in self.members.values():
            subscribed.update(member.subscribed_topics)
        return frozenset(subscribed.intersection(self.topics))


def subscriptions_are_identical(members: Iterable[MemberSpec]) -> bool:
    """True when every member subscribes to the same topics (Apache Kafka's HOMOGENEOUS)."""
    first: Optional[AbstractSet[TopicId]] = None
    for member in members:
        if first is None:
            first = member.subscribed_topics
        elif member.subscribed_topics is not first and member.subscribed_topics != first:
            return False
    return True
