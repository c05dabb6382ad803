"""A classic group's in-memory data: its members, its generation, its parked requests.

This module holds data and the questions asked of it (who is the leader, has everyone rejoined,
which protocol wins the vote, may this commit or delete offsets); it decides nothing about
rebalancing and never touches timers. Its committed offsets are kept by the offset store
(`groupctl.coordinator.offsets`), which a `ClassicGroup` answers as an `OffsetGroup`.

Invariants:
- `leader` is None exactly when there are no members, otherwise it names a member.
- `static_members` maps each static member's group instance id to its (only) member id.
- A member id is never both a member and a pending member (told MEMBER_ID_REQUIRED, not joined).
- `pending_sync` ⊆ members: members that got this generation's JoinGroup answer but have not
  sent SyncGroup yet.
- A parked request (`awaiting_join` / `awaiting_sync`) is answered exactly once: whoever clears
  the field puts the answer in a `Result` (`answer_join` / `answer_sync`).
- `rebalance_started_at_ms` and `rebalance_cause` are both set exactly while a rebalance is in
  progress (PreparingRebalance, CompletingRebalance).

Deliberate difference from Apache Kafka: protocol votes that tie are won by the protocol voted
for by the earliest member (Kafka's choice among tied protocols is HashMap order).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable, Optional

from groupctl.coordinator.classic import offsets
from groupctl.coordinator.classic.causes import RebalanceCause
from groupctl.coordinator.classic.messages import JoinedMember, JoinGroupResult, SyncGroupResult
from groupctl.coordinator.classic.state import GroupState
from groupctl.coordinator.consumer_protocol import CONSUMER_PROTOCOL_TYPE, parse_subscription
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.results import Result
from groupctl.layout.groups import LastRebalance


@dataclass(frozen=True)
class Parked:
    """A request the core holds back: its reply goes out in a later `Result`."""

    token: Hashable


@dataclass
class Member:
    member_id: str
    group_instance_id: Optional[str]
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: tuple[tuple[str, bytes], ...]  # (name, metadata), the member's preference order
    assignment: bytes = b""
    awaiting_join: Optional[Parked] = None
    awaiting_sync: Optional[Parked] = None
    is_new: bool = False  # joined but has not had a JoinGroup answer yet

    def metadata(self, protocol: Optional[str]) -> bytes:
        """The member's metadata for `protocol` (b"" if it does not support it)."""
        return next((meta for name, meta in self.protocols if name == protocol), b"")

    def protocol_names(self) -> set[str]:
        return {name for name, _ in self.protocols}

    def vote(self, candidates: set[str]) -> str:
        """The member's most preferred protocol among `candidates`."""
        return next(name for name, _ in self.protocols if name in candidates)

    def answer_join(self, out: Result, response: JoinGroupResult) -> bool:
        """Answer the parked JoinGroup, if any; True if there was one."""
        if self.awaiting_join is None:
            return False
        out.reply(self.awaiting_join.token, response)
        self.awaiting_join = None
        return True

    def answer_sync(self, out: Result, response: SyncGroupResult) -> bool:
        """Answer the parked SyncGroup, if any; True if there was one."""
        if self.awaiting_sync is None:
            return False
        out.reply(self.awaiting_sync.token, response)
        self.awaiting_sync = None
        return True


@dataclass
class ClassicGroup:
    group_id: str
    state: GroupState = GroupState.EMPTY
    previous_state: Optional[GroupState] = None
    generation: int = 0
    protocol_type: Optional[str] = None  # kept when the group empties, as Kafka does
    protocol: Optional[str] = None  # the chosen protocol; None when Empty
    leader: Optional[str] = None
    members: dict[str, Member] = field(default_factory=dict)  # in join order
    static_members: dict[str, str] = field(default_factory=dict)  # group instance id -> member id
    pending_join: set[str] = field(default_factory=set)
    pending_sync: set[str] = field(default_factory=set)
    new_member_added: bool = False  # during an initial rebalance: extend the delay
    subscribed_topics: Optional[frozenset[str]] = None  # None: unknown (see is_subscribed_to)
    updated_at_ms: int = 0  # when the group document was last written or loaded
    last_rebalance: Optional[LastRebalance] = None  # the document's "rebalance" block (see causes)
    # The rebalance in progress (soft state): set when the group enters PreparingRebalance from a
    # settled state, cleared when the document that completes it is written.
    rebalance_started_at_ms: Optional[int] = None
    rebalance_cause: Optional[RebalanceCause] = None

    # --- state -------------------------------------------------------------------------------

    def transition_to(self, target: GroupState) -> None:
        self.state.check_transition(target)
        self.previous_state, self.state = self.state, target

    def can_rebalance(self) -> bool:
        return self.state in GroupState.PREPARING_REBALANCE.predecessors

    # --- membership --------------------------------------------------------------------------

    def add(self, member: Member) -> None:
        if member.member_id in self.members or member.member_id in self.pending_join:
            raise ValueError(f"member {member.member_id} is already in group {self.group_id}")
        if not self.members:
            self.protocol_type = member.protocol_type
        self.members[member.member_id] = member
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        if self.leader is None:
            self.leader = member.member_id

    def remove(self, member_id: str) -> Optional[Member]:
        """Forget the member (or pending member); the leader passes to the earliest member left.
        Parked requests of the removed member must have been answered by the caller."""
        member = self.members.pop(member_id, None)
        if member is not None:
            if member.awaiting_join is not None or member.awaiting_sync is not None:
                raise ValueError(f"member {member_id} removed with a parked request unanswered")
            if member.group_instance_id is not None:
                self.static_members.pop(member.group_instance_id, None)
        if self.leader == member_id:
            self.leader = next(iter(self.members), None)
        self.pending_join.discard(member_id)
        self.pending_sync.discard(member_id)
        return member

    def replace_static(self, group_instance_id: str, old_id: str, new_id: str) -> Member:
        """A static member restarted: the same member (assignment, protocols, leadership, place
        in the member order and in the sync phase) under a new member id. The old id's parked requests must have been
        answered by the caller."""
        old = self.members[old_id]
        if old.awaiting_join is not None or old.awaiting_sync is not None:
            raise ValueError(f"static member {old_id} replaced with a parked request unanswered")
        new = Member(
            member_id=new_id, group_instance_id=group_instance_id, client_id=old.client_id,
            client_host=old.client_host, session_timeout_ms=old.session_timeout_ms,
            rebalance_timeout_ms=old.rebalance_timeout_ms, protocol_type=old.protocol_type,
            protocols=old.protocols, assignment=old.assignment,
        )
        self.members = {(new_id if k == old_id else k): (new if k == old_id else m) for k, m in self.members.items()}
        self.static_members[group_instance_id] = new_id
        if self.leader == old_id:
            self.leader = new_id
        if old_id in self.pending_sync:
            self.pending_sync.discard(old_id)
            self.pending_sync.add(new_id)
        return new

    def validate_member(self, member_id: str, group_instance_id: Optional[str]) -> ErrorCode:
        """Kafka's check of a request's identity: the instance id (if any) must map to this
        member id (else FENCED_INSTANCE_ID, or UNKNOWN_MEMBER_ID if the instance is unknown),
        and the member must exist."""
        if group_instance_id is not None:
            known = self.static_members.get(group_instance_id)
            if known is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            if known != member_id:
                return ErrorCode.FENCED_INSTANCE_ID
        if member_id not in self.members:
            return ErrorCode.UNKNOWN_MEMBER_ID
        return ErrorCode.NONE

    def num_awaiting_join(self) -> int:
        return sum(1 for m in self.members.values() if m.awaiting_join is not None)

    def has_all_members_joined(self) -> bool:
        return self.num_awaiting_join() == len(self.members) and not self.pending_join

    def not_yet_rejoined(self) -> list[Member]:
        return [m for m in self.members.values() if m.awaiting_join is None]

    def rebalance_timeout_ms(self) -> int:
        """The join (and sync) phase's deadline: the largest member rebalance timeout."""
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def maybe_elect_new_joined_leader(self) -> bool:
        """Keep the leader if it rejoined, else hand leadership to a member that did; False when
        no member rejoined (or there are none)."""
        if self.leader is None:
            return False
        if self.members[self.leader].awaiting_join is not None:
            return True
        rejoined = next((m.member_id for m in self.members.values() if m.awaiting_join is not None), None)
        if rejoined is None:
            return False
        self.leader = rejoined
        return True

    # --- protocols ---------------------------------------------------------------------------

    def candidate_protocols(self) -> set[str]:
        """Protocols every member supports."""
        names = [m.protocol_names() for m in self.members.values()]
        return set.intersection(*names) if names else set()

    def supports_protocols(self, protocol_type: str, protocol_names: set[str]) -> bool:
        """Could a member with these protocols join? An Empty group takes any non-empty type and
        protocol list; otherwise the type must match and one protocol must be supported by all
        current members."""
        if self.state is GroupState.EMPTY:
            return bool(protocol_type) and bool(protocol_names)
        return self.protocol_type == protocol_type and bool(self.candidate_protocols() & protocol_names)

    def select_protocol(self) -> str:
        """Kafka's vote: each member votes for its most preferred protocol supported by all."""
        if not self.members:
            raise ValueError(f"cannot select a protocol for empty group {self.group_id}")
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for member in self.members.values():
            choice = member.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        return max(votes, key=lambda name: votes[name])  # ties: the earliest voter's choice

    def compute_subscribed_topics(self) -> Optional[frozenset[str]]:
        """The topics the members subscribe to, for protocol type "consumer"; None when unknown
        (another protocol type, no protocol chosen yet, or undecodable metadata)."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return frozenset()
        if self.protocol is None:
            return None
        topics: set[str] = set()
        for member in self.members.values():
            parsed = parse_subscription(member.metadata(self.protocol))
            if parsed is None:
                return None
            topics.update(parsed)
        return frozenset(topics)

    def is_subscribed_to(self, topic: str) -> bool:
        """Kafka's rule: when the subscriptions are unknown, a "consumer" group counts as
        subscribed (so OffsetDelete errs on the safe side)."""
        if self.subscribed_topics is None:
            return self.protocol_type == CONSUMER_PROTOCOL_TYPE
        return topic in self.subscribed_topics

    # --- offsets (with is_subscribed_to: the offset store's OffsetGroup protocol) ------------

    def validate_commit(self, member_id: str, instance_id: Optional[str],
                        generation_or_member_epoch: int, api_version: int, transactional: bool = False) -> ErrorCode:
        """May this committer commit now? (the rules, the same at every version: `classic.offsets`)"""
        return offsets.commit_error(self, member_id, instance_id, generation_or_member_epoch, transactional)

    def validate_fetch(self, member_id: Optional[str], member_epoch: int) -> ErrorCode:
        """OffsetFetch reads a classic group's offsets in every state, whoever asks (the member id
        and epoch of OffsetFetch v9+ are a consumer group's; Kafka's ClassicGroup ignores them)."""
        return ErrorCode.NONE

    def validate_delete(self) -> ErrorCode:
        """May OffsetDelete delete this group's offsets now? (the rules: `classic.offsets`)"""
        return offsets.delete_error(self)

    # --- answers -----------------------------------------------------------------------------

    def join_result(self, member_id: str, *, skip_assignment: bool = False) -> JoinGroupResult:
        """The successful JoinGroup answer for the current generation; only the leader gets the
        members with their metadata for the chosen protocol."""
        members: tuple[JoinedMember, ...] = ()
        if member_id == self.leader:
            members = tuple(
                JoinedMember(m.member_id, m.group_instance_id, m.metadata(self.protocol))
                for m in self.members.values()
            )
        return JoinGroupResult(
            error=ErrorCode.NONE, generation_id=self.generation, protocol_type=self.protocol_type,
            protocol_name=self.protocol, leader=self.leader or "", member_id=member_id,
            members=members, skip_assignment=skip_assignment,
        )
