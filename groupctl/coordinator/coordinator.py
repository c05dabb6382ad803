"""Every group this node coordinates, classic and consumer (KIP-848), behind one facade: the
runtime's core.

Invariants:
- A group id names at most one group, of one type; its committed offsets stay whatever the type
  becomes. A consumer-protocol join (epoch 0) turns an Empty classic group into a consumer
  group, and a classic JoinGroup turns an Empty consumer group into a classic group.
- Online migration (`migration`, under `ConsumerGroupConfig.migration_policy`): a
  consumer-protocol join to a live classic group of protocol type "consumer" upgrades it (its
  members stay, on the classic protocol, with their partitions); when the last
  consumer-protocol member of a consumer group leaves and classic-protocol members remain, it
  becomes classic again. Otherwise the heartbeat gets GROUP_ID_NOT_FOUND.
- The classic member APIs on a consumer group with members are answered by its
  classic-protocol members' rules (`consumer.classic_members`).
- Deliberate difference from Apache Kafka: a classic group is upgraded only if the joining
  member fits (Kafka converts a group of exactly the maximum size, then refuses the join and
  undoes the conversion; this core does not undo, so it checks first).
- Committed offsets live in one store for both types (`groupctl.coordinator.offsets`), which asks
  each group for its verdict (a consumer member commits at its member epoch).
- Every group-scoped operation first asks the `Placement` whether this node serves the group, in
  the same synchronous step (see `classic.coordinator`).
- Loading a partition loads its consumer groups first, so their offsets find them.
- Empty groups without committed (or pending transactional) offsets are deleted when the runtime asks
  (`delete_empty_groups`, Kafka's periodic cleanup); committed offsets never expire (a deliberate
  difference: Kafka expires them after `offsets.retention.minutes`).
"""

from __future__ import annotations

import uuid
from typing import Callable, Hashable, Iterable, Mapping, Optional, Union

from groupctl.coordinator.classic.config import GroupConfig
from groupctl.coordinator.classic.coordinator import GroupCoordinator
from groupctl.coordinator.classic.messages import (
    DeletedGroup,
    GroupDescription,
    Heartbeat,
    HeartbeatResult,
    JoinGroup,
    JoinGroupResult,
    LeaveGroup,
    LeaveGroupResult,
    SyncGroup,
    SyncGroupResult,
    TriggerRebalance,
)
from groupctl.coordinator.classic.state import GroupState
from groupctl.coordinator.consumer_protocol import CONSUMER_PROTOCOL_TYPE
from groupctl.coordinator import migration
from groupctl.coordinator.consumer import admin as consumer_admin
from groupctl.coordinator.consumer import classic_members
from groupctl.coordinator.consumer import events as consumer_events
from groupctl.coordinator.consumer import takeover as consumer_takeover
from groupctl.coordinator.consumer import target
from groupctl.coordinator.consumer.config import ConsumerGroupConfig
from groupctl.coordinator.consumer.context import ConsumerCore, cancel_member_timers
from groupctl.coordinator.consumer.describe import describe
from groupctl.coordinator.consumer.group import ConsumerGroup
from groupctl.coordinator.consumer.member import ConsumerMember
from groupctl.coordinator.consumer.heartbeat import Refused, arm_session, check_request, heartbeat
from groupctl.coordinator.consumer.messages import (
    ConsumerHeartbeat,
    ConsumerHeartbeatResult,
    DescribedConsumerGroup,
)
from groupctl.coordinator.consumer.topics import TopicImage
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.offsets.messages import (
    CommitOffsets,
    CompleteTxnPartition,
    DeleteOffsets,
    FetchOffsets,
    StartTxnVerification,
    TxnCommitOffsets,
)
from groupctl.coordinator.placement import Placement
from groupctl.coordinator.records import GroupMetadataRecord, PendingOffsetsRecord, Record
from groupctl.coordinator.results import Result
from groupctl.coordinator.timers import Timer
from groupctl.layout.consumer_groups import ConsumerGroupDocument


EMPTY_GROUP_CLEANUP_INTERVAL_MS = 60_000
"""How often the runtime runs `delete_empty_groups`: a group Empty without committed offsets is
deleted at the second cleanup that finds it so, unchanged, so it lasts one to two intervals.
Kafka's cleanup runs every `offsets.retention.check.interval.ms` (10 minutes) and deletes such a
group at the first: a deliberate difference, within what Kafka promises (deletion at some
cleanup), that keeps a client joining under throwaway ids from holding ten minutes' worth of
groups (a wire fuzzer made about 330 classic groups per 20,000 frames), while a group that has
just emptied stays long enough to be looked at."""


class Coordinator:
    def __init__(self, *, timer: Timer, config: GroupConfig = GroupConfig(),
                 consumer_config: ConsumerGroupConfig = ConsumerGroupConfig(), node_id: int = 0,
                 new_uuid: Callable[[], str] = lambda: str(uuid.uuid4()),
                 placement: Optional[Placement] = None) -> None:
        self.placement = placement if placement is not None else Placement.everything()
        self._new_uuid = new_uuid
        self.consumer = ConsumerCore(timer=timer, config=consumer_config, node_id=node_id, downgrade=self._downgrade)
        self.classic = GroupCoordinator(timer=timer, config=config, node_id=node_id, new_uuid=new_uuid,
                                        placement=self.placement, other_groups=self.consumer.groups.get)
        self._classic_config = config
        self._empty_at_last_cleanup: frozenset[tuple[str, str, int]] = frozenset()

    def _consumer_group(self, group_id: str) -> bool:
        return group_id in self.consumer.groups

    def _live_consumer_group(self, group_id: str) -> bool:
        """A consumer group with members, served here: the classic APIs reach its classic-protocol
        members."""
        group = self.consumer.groups.get(group_id)
        return group is not None and bool(group.members) and not self.placement.error(group_id)

    # --- the classic member APIs -----------------------------------------------------------------

    def join_group(self, token: Hashable, req: JoinGroup, now_ms: int) -> Result:
        if self._live_consumer_group(req.group_id):
            bounds = self._classic_config.min_session_timeout_ms, self._classic_config.max_session_timeout_ms
            if not bounds[0] <= req.session_timeout_ms <= bounds[1]:
                return Result().reply(token, JoinGroupResult(ErrorCode.INVALID_SESSION_TIMEOUT, member_id=req.member_id))
            return classic_members.join(self.consumer, token, req, now_ms, self._new_uuid())
        if self._consumer_group(req.group_id) and not self.placement.error(req.group_id):
            del self.consumer.groups[req.group_id]  # Empty: the id passes to a classic group, offsets and all
        return self.classic.join_group(token, req, now_ms)

    def sync_group(self, token: Hashable, req: SyncGroup, now_ms: int) -> Result:
        if self._live_consumer_group(req.group_id):
            return classic_members.sync(self.consumer, token, req, now_ms)
        if self._consumer_group(req.group_id) and not self.placement.error(req.group_id):
            return Result().reply(token, SyncGroupResult(ErrorCode.UNKNOWN_MEMBER_ID))
        return self.classic.sync_group(token, req, now_ms)

    def heartbeat(self, token: Hashable, req: Heartbeat, now_ms: int) -> Result:
        if self._live_consumer_group(req.group_id):
            return classic_members.heartbeat(self.consumer, token, req, now_ms)
        if self._consumer_group(req.group_id) and not self.placement.error(req.group_id):
            return Result().reply(token, HeartbeatResult(ErrorCode.UNKNOWN_MEMBER_ID))
        return self.classic.heartbeat(token, req, now_ms)

    def leave_group(self, token: Hashable, req: LeaveGroup, now_ms: int) -> Result:
        if self._live_consumer_group(req.group_id):
            return classic_members.leave(self.consumer, token, req, now_ms)
        if self._consumer_group(req.group_id) and not self.placement.error(req.group_id):
            return Result().reply(token, LeaveGroupResult(ErrorCode.UNKNOWN_MEMBER_ID))
        return self.classic.leave_group(token, req, now_ms)

    # --- the consumer group protocol ---------------------------------------------------------------

    def consumer_group_heartbeat(self, token: Hashable, req: ConsumerHeartbeat, now_ms: int) -> Result:
        """Reply: ConsumerHeartbeatResult; records: the group's document when it changed."""
        error = self.placement.error(req.group_id)
        if error:
            return Result().reply(token, ConsumerHeartbeatResult(error))
        state = self.classic.state_of(req.group_id)
        if state is None:
            return heartbeat(self.consumer, token, req, now_ms, self._new_uuid())
        refusal = self._upgrade_refusal(req) if state is not GroupState.EMPTY else None
        if req.member_epoch != 0 or refusal is not None:
            return Result().reply(token, ConsumerHeartbeatResult(
                ErrorCode.GROUP_ID_NOT_FOUND,
                f"Group {req.group_id} is a classic group, not a consumer group{refusal or ''}."))
        try:
            check_request(self.consumer, req)  # a malformed join must not take the id over
        except Refused as refused:
            return Result().reply(token, ConsumerHeartbeatResult(refused.error, str(refused)))
        classic, out = self.classic.give_up(req.group_id)
        if classic.members:
            group = migration.consumer_group_from(classic, self.consumer.topics)
            self._install(group)
            out.events += consumer_events.upgraded(self.consumer, group, now_ms, member_id=req.member_id or None,
                                                   client_id=req.client_id)
        return out.extend(heartbeat(self.consumer, token, req, now_ms, self._new_uuid()))

    def _upgrade_refusal(self, req: ConsumerHeartbeat) -> Optional[str]:
        """Why the live classic group cannot become a consumer group as `req` joins (None: it can)."""
        classic = self.classic.group(req.group_id)
        limit = self.consumer.config.max_size
        if not self.consumer.config.migration_policy.upgrades:
            return " (the migration policy does not allow upgrades)"
        if classic.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return f" of protocol type {classic.protocol_type!r}, which cannot be upgraded"
        if limit is not None and len(classic.members) >= limit and req.instance_id not in classic.static_members:
            return f" with {len(classic.members)} members: a consumer group may have {limit}, the joining one included"
        return None

    def _install(self, group: ConsumerGroup) -> None:
        self.consumer.groups[group.group_id] = group
        for member in group.members.values():
            assert member.classic is not None
            arm_session(self.consumer, group.group_id, member.member_id, member.classic.session_timeout_ms)

    def _downgrade(self, group: ConsumerGroup, leaving: ConsumerMember, now_ms: int) -> Optional[Result]:
        """The consumer core's `downgrade`: the group becomes classic, without `leaving`."""
        staying = [m for m in group.members if m != leaving.member_id]
        if self._classic_config.max_group_size is not None and len(staying) > self._classic_config.max_group_size:
            return None
        del self.consumer.groups[group.group_id]
        for member_id in group.members:
            cancel_member_timers(self.consumer, group.group_id, member_id)
        classic = migration.classic_group_from(group, self.consumer.topics, leaving.member_id)
        migrated = consumer_events.downgraded(self.consumer, group, leaving, now_ms)
        out = self.classic.adopt(classic, now_ms, f"the last consumer-protocol member, {leaving.member_id}, left")
        out.events.insert(0, migrated)
        return out

    def describe_consumer_groups(self, token: Hashable, group_ids: tuple[str, ...], now_ms: int) -> Result:
        """Reply: tuple[DescribedConsumerGroup, ...] (a group this node does not serve: its
        placement error)."""
        served = iter(describe(self.consumer, tuple(g for g in group_ids if not self.placement.error(g))))
        return Result().reply(token, tuple(
            DescribedConsumerGroup(g, self.placement.error(g)) if self.placement.error(g) else next(served)
            for g in group_ids))

    # --- offsets (one store for both types) --------------------------------------------------------

    def commit_offsets(self, token: Hashable, req: CommitOffsets, now_ms: int) -> Result:
        return self.classic.commit_offsets(token, req, now_ms)

    def txn_commit_offsets(self, token: Hashable, req: TxnCommitOffsets, now_ms: int) -> Result:
        """TxnOffsetCommit: the offsets wait for the transaction's marker (`complete_txn_partition`)."""
        return self.classic.txn_commit_offsets(token, req, now_ms)

    def start_txn_verification(self, token: Hashable, req: StartTxnVerification, now_ms: int) -> Result:
        """Before TxnOffsetCommit's verification: the guard its commit is to carry."""
        return self.classic.start_txn_verification(token, req, now_ms)

    def complete_txn_partition(self, token: Hashable, req: CompleteTxnPartition, now_ms: int) -> Result:
        """A transaction's marker for an offsets partition: commit or drop the producer's pending
        offsets in every group placed on it."""
        return self.classic.complete_txn_partition(token, req, now_ms)

    def fetch_offsets(self, token: Hashable, req: FetchOffsets, now_ms: int) -> Result:
        return self.classic.fetch_offsets(token, req, now_ms)

    def pending_offsets(self, group_id: str) -> Mapping[int, PendingOffsetsRecord]:
        """The offsets producers' open transactions hold for the group (TxnOffsetCommit), by
        producer id, read-only: what `group describe` shows until each transaction's marker."""
        return self.classic.pending_offsets(group_id)

    def delete_offsets(self, token: Hashable, req: DeleteOffsets, now_ms: int) -> Result:
        return self.classic.delete_offsets(token, req, now_ms)

    def delete_topic_offsets(self, topics: tuple[str, ...], now_ms: int) -> Result:
        return self.classic.delete_topic_offsets(topics, now_ms)

    # --- admin -------------------------------------------------------------------------------------

    def list_groups(self, token: Hashable, req: tuple[frozenset[str], frozenset[str]], now_ms: int) -> Result:
        """`req` is (states, types) filters, empty = all. Reply: tuple[ListedGroup, ...]."""
        classic = self.classic.list_groups(token, req, now_ms).replies.pop().response
        states, types = ({name.lower() for name in names} for names in req)
        consumer = consumer_admin.listed(self.consumer, frozenset(states), frozenset(types))
        return Result().reply(token, tuple(sorted(classic + consumer, key=lambda g: g.group_id)))

    def describe_groups(self, token: Hashable, req: tuple[str, ...], now_ms: int) -> Result:
        """Reply: tuple[GroupDescription, ...]. As Apache Kafka 4, DescribeGroups describes classic
        groups only: a consumer group is GROUP_ID_NOT_FOUND "not a classic group" (Dead before
        DescribeGroups v6); ConsumerGroupDescribe describes it."""
        classic = iter(self.classic.describe_groups(
            token, tuple(g for g in req if not self._consumer_group(g)), now_ms).replies.pop().response)
        return Result().reply(token, tuple(
            self._described(g) if self._consumer_group(g) else next(classic) for g in req))

    def _described(self, group_id: str) -> GroupDescription:
        error = self.placement.error(group_id)
        return GroupDescription(group_id, error) if error else GroupDescription(
            group_id, ErrorCode.GROUP_ID_NOT_FOUND, error_message=f"Group {group_id} is not a classic group.")

    def delete_groups(self, token: Hashable, req: tuple[str, ...], now_ms: int) -> Result:
        """Reply: tuple[DeletedGroup, ...]; records: a GroupTombstone per deleted group."""
        out = self.classic.delete_groups(token, tuple(g for g in req if not self._consumer_group(g)), now_ms)
        classic = iter(out.replies.pop().response)
        answers: list[DeletedGroup] = []
        for group_id in req:
            if not self._consumer_group(group_id):
                answers.append(next(classic))
            elif self.placement.error(group_id):
                answers.append(DeletedGroup(group_id, self.placement.error(group_id)))
            else:
                answer = consumer_admin.delete(self.consumer, self.consumer.groups[group_id], now_ms, out)
                if answer.error is ErrorCode.NONE:
                    self.classic.drop_offsets(group_id)
                answers.append(answer)
        return out.reply(token, tuple(answers))

    def delete_empty_groups(self, now_ms: int) -> Result:
        """Apache Kafka's group metadata cleanup (`GroupCoordinatorShard.cleanupGroupMetadata`,
        run every EMPTY_GROUP_CLEANUP_INTERVAL_MS by the runtime) without offset expiry: a
        GroupTombstone for every served group that is Empty, has no committed offsets, and was
        so at the previous cleanup with the same generation (classic) or group epoch (consumer):
        Empty all along in between. So the groups that joins and heartbeats under ids nobody uses
        again leave behind (a hostile client's, or a test run's) do not stay forever. No replies."""
        empty = {("classic", g, generation) for g, generation in self.classic.empty_without_offsets().items()}
        empty |= {("consumer", g, group.group_epoch) for g, group in self.consumer.groups.items()
                  if not group.members and not self.classic.has_offsets(g)}
        empty = {entry for entry in empty if not self.placement.error(entry[1])}
        candidates = tuple(sorted(g for _, g, _ in empty & self._empty_at_last_cleanup))
        self._empty_at_last_cleanup = frozenset(empty)
        out = self.delete_groups(None, candidates, now_ms)
        out.replies.clear()
        return out

    def trigger_rebalance(self, token: Hashable, req: Union[str, TriggerRebalance], now_ms: int) -> Result:
        """As `classic.coordinator.GroupCoordinator.trigger_rebalance`; a consumer group's epoch is
        bumped, so its next heartbeat recomputes the whole target assignment."""
        request = req if isinstance(req, TriggerRebalance) else TriggerRebalance(req)
        if self.placement.error(request.group_id) or not self._consumer_group(request.group_id):
            return self.classic.trigger_rebalance(token, req, now_ms)
        out = Result()
        answer = consumer_admin.trigger(self.consumer, self.consumer.groups[request.group_id], now_ms, out)
        return out.reply(token, answer if isinstance(req, TriggerRebalance) else answer.error)

    # --- persistence -------------------------------------------------------------------------------

    def load(self, records: Iterable[Record], now_ms: int, detail: str) -> Result:
        """Take over a partition's groups: consumer groups resume as stored, then the classic
        records (and every offset) replay (see the two `takeover` modules)."""
        classic: list[Record] = []
        out = Result()
        for record in records:
            if isinstance(record, GroupMetadataRecord) and isinstance(record.document, ConsumerGroupDocument):
                consumer_takeover.load(self.consumer, record.document, now_ms, out)
            else:
                classic.append(record)
        return out.extend(self.classic.load(classic, now_ms, detail))

    def unload(self, belongs: Callable[[str], bool]) -> Result:
        consumer_takeover.unload(self.consumer, belongs)
        return self.classic.unload(belongs)

    def use_group_timeouts(self, group_id: str, timeouts: Optional[tuple[int, int]]) -> None:
        """A consumer group's own (session timeout, heartbeat interval) in ms, from its GROUP
        configs (None: the broker's). As in Kafka, a member's next heartbeat gets the new interval
        and restarts its session with the new timeout."""
        if timeouts is None:
            self.consumer.group_timeouts.pop(group_id, None)
        else:
            self.consumer.group_timeouts[group_id] = timeouts

    def use_topics(self, topics: TopicImage) -> None:
        """The topics now: consumer groups subscribed to one that changed get a new epoch at their
        next heartbeat."""
        target.use_topics(self.consumer, topics)

    def topics_changed(self, topics: frozenset[str], now_ms: int, detail: str) -> Result:
        """Rebalance the classic groups subscribed to any of `topics` (see `use_topics` for the
        consumer groups)."""
        return self.classic.topics_changed(topics, now_ms, detail)
