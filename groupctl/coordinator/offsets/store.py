"""Committed offsets, whatever the type of their group: OffsetCommit, OffsetFetch, OffsetDelete,
and the offsets of deleted topics (Apache Kafka's OffsetMetadataManager).

Invariants:
- Offsets are kept by group id, then (topic, partition) -> the `OffsetCommitRecord` that
  committed them, and only for groups the `group` lookup finds: replaying a commit for a group it
  does not find first creates the group (`create_group`), and a group deleted (GroupTombstone) or
  unloaded loses its offsets with it (`drop_group`, `unload`).
- Hard state changes only through `replay` (OffsetCommitRecord, OffsetTombstone), `drop_group`
  and `unload`. Operations build their records and replay them before returning, so what they
  return is already applied; loading a partition replays the same records.
- The store judges no member: whether a commit or a delete may happen is the group's verdict,
  asked through `OffsetGroup` (a classic group's: `groupctl.coordinator.classic.offsets`).

OffsetCommit:
- a group that does not exist: with generation < 0 a "simple" commit (admin tools, manual
  assignment), accepted, whose first record creates the group (Empty; Kafka's
  getOrMaybeCreateClassicGroup); with generation >= 0 GROUP_ID_NOT_FOUND from OffsetCommit v9
  on, ILLEGAL_GENERATION before (as Kafka answers, for backward compatibility);
- otherwise the group's `validate_commit` verdict (given the request's version), for every
  partition of the request;
- metadata over OFFSET_METADATA_MAX_CHARS characters: OFFSET_METADATA_TOO_LARGE for that partition.
One OffsetCommitRecord and one `offset_commit` journal event per accepted partition; the event
names the request's member id and generation as given (a simple commit's are "" and -1).

OffsetFetch: for a group that does not exist, -1 offsets and error NONE whatever member it names
(Kafka's fetchOffsets swallows GROUP_ID_NOT_FOUND); otherwise the group's `validate_fetch`
verdict on the member id and epoch (a group-wide error, no offsets), then the offsets.
OffsetDelete: GROUP_ID_NOT_FOUND for an unknown group, then the group's `validate_delete`
verdict; per partition GROUP_SUBSCRIBED_TO_TOPIC when the group `is_subscribed_to` the topic;
deleting an uncommitted partition is a no-op success.
Each committed offset deleted (by OffsetDelete or with its topic) is an `offset_delete` event; a
deleted or unloaded group's offsets go without one.

Transactional offsets (KIP-98, KIP-447; Kafka's OffsetMetadataManager pending offsets):
- TxnOffsetCommit holds offsets per (group, producer id) in a `PendingOffsetsRecord` (the whole
  set, merged with what the producer's transaction already holds), invisible to OffsetFetch until
  its transaction's marker commits them (`complete_txn_partition`). Checks as Kafka's validateTransactionalOffsetCommit: an unknown
  group accepts a commit with generation < 0 (creating the group) and answers ILLEGAL_GENERATION
  otherwise; a group judges with `validate_commit(..., transactional=True)` (a classic group
  accepts no generation and no member in any state and does not refuse a rebalancing group; a
  consumer group's STALE_MEMBER_EPOCH becomes ILLEGAL_GENERATION). A producer epoch older than
  the one holding the pending offsets is INVALID_PRODUCER_EPOCH.
- `complete_txn_partition` (the transaction's marker): commit turns each pending offset into an
  OffsetCommitRecord unless a newer committed offset (a later commit timestamp) is already there
  (Kafka keeps the later of the two in log order), and deletes the pending record in the same
  records; abort deletes it. A producer with nothing pending: nothing to do (a retried marker).
  A marker older than the pending epoch: INVALID_PRODUCER_EPOCH, nothing changes.
- Verification (KIP-890 part 1; Kafka's VerificationGuard on the `__consumer_offsets` log): the
  TxnOffsetCommit handler takes a guard per (group, producer id) (`start_txn_verification`)
  before it asks the transaction coordinator, and the commit carries it; a commit that would
  start holding offsets for the producer (none held for it in the group) is refused with
  INVALID_TXN_STATE unless it carries the current guard. Accepting a commit or a marker of the
  group's partition for the producer clears it, so a verification answered before the marker
  cannot hold offsets after it (OffsetFetch would answer UNSTABLE_OFFSET_COMMIT until the
  producer's next transaction's marker, which would then commit them). Guards are fresh integers
  (never reused); at most `MAX_VERIFICATIONS`, the oldest dropped first (its commit is refused,
  which is safe); they go with their group (`drop_group`, `unload`).
- Coordinator epochs (Kafka fences them in the `__consumer_offsets` log's producer state): the
  store remembers, per (offsets partition, producer id), the highest coordinator epoch of a
  marker it accepted, and a marker from a lower one answers TRANSACTION_COORDINATOR_FENCED with
  nothing changed. With transaction.version 1 the producer epoch stays the same from one
  transaction to the next, so without this a zombie coordinator (or a delayed WriteTxnMarkers)
  resending the last transaction's commit would commit the next transaction's offsets even if
  that one aborts. A PendingOffsetsRecord carries the floor known when it was written
  (`coordinator_epoch`), so the node that loads the group after a takeover fences the same
  markers for the offsets it holds. Deliberate difference from Kafka (whose producer state is in
  the log and its snapshots): the floor is only in memory until a TxnOffsetCommit writes it into
  a pending record, so after this node restarts, or another takes the partition over, before the
  producer's next TxnOffsetCommit, a stale marker from a lower coordinator epoch is not fenced
  for the offsets held after that (at most `MAX_MARKER_EPOCHS` producers are remembered, the
  least recent dropped first, with the same gap).
  The marker is that of one offsets partition (Kafka replays a marker on a
  `__consumer_offsets` partition for every group there): the groups to complete are the ones
  holding the producer's pending offsets, so nothing has to remember which groups a transaction
  touched.
- Journal: a `txn_offset_commit` per accepted partition of a TxnOffsetCommit; a `txn_offsets_completed`
  per marker that finds offsets held (not a retried one, nor one with an older epoch), then on
  commit an `offset_commit` naming the producer per offset made visible.
- OffsetFetch with `require_stable`: a partition some producer holds pending offsets for answers
  UNSTABLE_OFFSET_COMMIT (offset -1); without it the committed offset, as ever.
- Deleting a partition's offsets (OffsetDelete, its topic deleted) deletes its pending offsets
  too; deleting or unloading the group drops them all; a group with pending offsets counts as
  having offsets (the Empty-group cleanup keeps it).
"""

from __future__ import annotations

import itertools
from types import MappingProxyType
from typing import Callable, Hashable, Iterable, Mapping, Optional, Protocol, Union

from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.journal import (
    ABORT,
    COMMIT,
    offset_commit,
    offset_delete,
    partition_rows,
    txn_offset_commit,
    txn_offsets_completed,
)
from groupctl.coordinator.offsets.messages import (
    MEMBER_EPOCH_COMMIT_VERSION,
    NO_TXN_GUARD,
    CommitOffsets,
    CommitOffsetsResult,
    CommittedOffset,
    CompleteTxnPartition,
    DeleteOffsets,
    DeleteOffsetsResult,
    FetchOffsets,
    FetchOffsetsResult,
    PartitionError,
    StartTxnVerification,
    TxnCommitOffsets,
)
from groupctl.coordinator.records import (
    OffsetCommitRecord,
    OffsetTombstone,
    PendingOffsetsRecord,
    PendingOffsetsTombstone,
)
from groupctl.coordinator.results import Result

OFFSET_METADATA_MAX_CHARS = 4096
"""offset.metadata.max.bytes: longer commit metadata is refused with OFFSET_METADATA_TOO_LARGE."""

MAX_VERIFICATIONS = 10_000
"""How many (group, producer id) verification guards the store keeps at most."""

MAX_MARKER_EPOCHS = 10_000
"""How many (offsets partition, producer id) coordinator epochs the store remembers at most."""

OffsetRecord = Union[OffsetCommitRecord, OffsetTombstone, PendingOffsetsRecord, PendingOffsetsTombstone]


class OffsetGroup(Protocol):
    """What the store asks a group, of any type (Kafka's `Group.validateOffsetCommit`,
    `validateOffsetFetch`, `validateOffsetDelete` and `isSubscribedToTopic`)."""

    def validate_commit(self, member_id: str, instance_id: Optional[str],
                        generation_or_member_epoch: int, api_version: int, transactional: bool = False) -> ErrorCode:
        """NONE when this committer may commit now with an OffsetCommit of `api_version` (or a
        TxnOffsetCommit, `transactional`), else the error of every partition."""
        ...

    def validate_fetch(self, member_id: Optional[str], member_epoch: int) -> ErrorCode:
        """NONE when OffsetFetch may read this group's offsets for this member (None and an
        epoch below 0: no member named), else the group-wide error."""
        ...

    def validate_delete(self) -> ErrorCode:
        """NONE when OffsetDelete may delete this group's offsets now, else its error."""
        ...

    def is_subscribed_to(self, topic: str) -> bool:
        """Whether the group may be consuming `topic` (OffsetDelete keeps its offsets)."""
        ...


class UnknownOffset(LookupError):
    """A tombstone for an offset that is not committed: the records do not follow each other."""


class OffsetStore:
    def __init__(self, node_id: int, *, group: Callable[[str], Optional[OffsetGroup]],
                 create_group: Callable[[str], OffsetGroup]) -> None:
        """`group` finds a live group by id (None: no such group); `create_group` creates the
        "simple" group of a commit to a group that does not exist."""
        self.node_id = node_id
        self._group = group
        self._create_group = create_group
        self._offsets: dict[str, dict[tuple[str, int], OffsetCommitRecord]] = {}
        self._pending: dict[str, dict[int, PendingOffsetsRecord]] = {}  # group -> producer id -> offsets
        # (offsets partition, producer id) -> highest coordinator epoch of an accepted marker, least recent first
        self._marker_epochs: dict[tuple[int, int], int] = {}
        self._verifications: dict[tuple[str, int], int] = {}  # (group, producer id) -> guard, oldest first
        self._guards = itertools.count(NO_TXN_GUARD + 1)

    def committed(self, group_id: str) -> Mapping[tuple[str, int], OffsetCommitRecord]:
        """The group's committed offsets (read-only; empty for an unknown group)."""
        return MappingProxyType(self._offsets.get(group_id, {}))

    def pending(self, group_id: str) -> Mapping[int, PendingOffsetsRecord]:
        """The group's pending transactional offsets by producer id (read-only)."""
        return MappingProxyType(self._pending.get(group_id, {}))

    def _unstable(self, group_id: str) -> set[tuple[str, int]]:
        return {(o.topic, o.partition) for r in self._pending.get(group_id, {}).values() for o in r.offsets}

    # --- operations --------------------------------------------------------------------------

    def commit(self, token: Hashable, req: CommitOffsets, now_ms: int) -> Result:
        """Reply: CommitOffsetsResult; records: one OffsetCommitRecord per accepted partition."""
        out = Result()
        group = self._group(req.group_id)
        if group is None:
            error = _unknown_group_commit_error(req)
        else:
            error = group.validate_commit(req.member_id, req.group_instance_id, req.generation_id,
                                          req.api_version)
        answers = []
        for p in req.offsets:
            partition_error = error
            if error is ErrorCode.NONE and len(p.metadata or "") > OFFSET_METADATA_MAX_CHARS:
                partition_error = ErrorCode.OFFSET_METADATA_TOO_LARGE
            if partition_error is ErrorCode.NONE:
                out.records.append(OffsetCommitRecord(
                    group=req.group_id, topic=p.topic, partition=p.partition, offset=p.offset,
                    leader_epoch=p.leader_epoch, metadata=p.metadata or "", commit_timestamp_ms=now_ms,
                ))
                out.events.append(offset_commit(
                    self.node_id, now_ms, req.group_id, member_id=req.member_id, generation=req.generation_id,
                    topic=p.topic, partition=p.partition, offset=p.offset))
            answers.append(PartitionError(p.topic, p.partition, partition_error))
        self._replay_all(out.records)
        return out.reply(token, CommitOffsetsResult(tuple(answers)))

    def fetch(self, token: Hashable, req: FetchOffsets, now_ms: int) -> Result:
        """Reply: FetchOffsetsResult (every committed partition, in order, when none are named)."""
        group = self._group(req.group_id)
        if group is not None:
            error = group.validate_fetch(req.member_id, req.member_epoch)
            if error is not ErrorCode.NONE:
                return Result().reply(token, FetchOffsetsResult(error))
        offsets = self._offsets.get(req.group_id, {})
        if req.partitions is None:
            answers = tuple(_committed(offsets[key]) for key in sorted(offsets))
        else:
            answers = tuple(
                _committed(offsets[(topic, partition)]) if (topic, partition) in offsets
                else CommittedOffset(topic, partition, -1)
                for topic, partition in req.partitions
            )
        unstable = self._unstable(req.group_id) if req.require_stable else set()
        if unstable:
            answers = tuple(
                CommittedOffset(a.topic, a.partition, -1, error=ErrorCode.UNSTABLE_OFFSET_COMMIT)
                if (a.topic, a.partition) in unstable else a
                for a in answers)
        return Result().reply(token, FetchOffsetsResult(ErrorCode.NONE, answers))

    def start_txn_verification(self, token: Hashable, req: StartTxnVerification) -> Result:
        """Reply: the guard the producer's TxnOffsetCommit to the group is to carry once its
        transaction is verified: NO_TXN_GUARD while the group holds offsets of the producer,
        else its current guard (a new one if it has none)."""
        key = (req.group_id, req.producer_id)
        if req.producer_id in self._pending.get(req.group_id, {}):
            return Result().reply(token, NO_TXN_GUARD)
        guard = self._verifications.get(key)
        if guard is None:
            guard = self._verifications[key] = next(self._guards)
            while len(self._verifications) > MAX_VERIFICATIONS:
                del self._verifications[next(iter(self._verifications))]
        return Result().reply(token, guard)

    def txn_commit(self, token: Hashable, req: TxnCommitOffsets, partition: int, now_ms: int) -> Result:
        """Reply: CommitOffsetsResult; records: the producer's PendingOffsetsRecord when any
        partition was accepted (carrying the coordinator epoch floor of the group's offsets
        `partition` for the producer)."""
        out = Result()
        group = self._group(req.group_id)
        held = self._pending.get(req.group_id, {}).get(req.producer_id)
        if group is None:
            error = ErrorCode.NONE if req.generation_id < 0 else ErrorCode.ILLEGAL_GENERATION
        else:
            error = group.validate_commit(req.member_id, req.group_instance_id, req.generation_id,
                                          MEMBER_EPOCH_COMMIT_VERSION, transactional=True)
            if error is ErrorCode.STALE_MEMBER_EPOCH:
                error = ErrorCode.ILLEGAL_GENERATION
        if error is ErrorCode.NONE and held is not None and req.producer_epoch < held.producer_epoch:
            error = ErrorCode.INVALID_PRODUCER_EPOCH
        if error is ErrorCode.NONE and held is None and not self._guarded(req):
            error = ErrorCode.INVALID_TXN_STATE
        pending = {(o.topic, o.partition): o for o in held.offsets} if held is not None else {}
        answers = []
        accepted = False
        for p in req.offsets:
            partition_error = error
            if error is ErrorCode.NONE and len(p.metadata or "") > OFFSET_METADATA_MAX_CHARS:
                partition_error = ErrorCode.OFFSET_METADATA_TOO_LARGE
            if partition_error is ErrorCode.NONE:
                accepted = True
                pending[(p.topic, p.partition)] = OffsetCommitRecord(
                    group=req.group_id, topic=p.topic, partition=p.partition, offset=p.offset,
                    leader_epoch=p.leader_epoch, metadata=p.metadata or "", commit_timestamp_ms=now_ms)
                out.events.append(txn_offset_commit(
                    self.node_id, now_ms, req.group_id, member_id=req.member_id, generation=req.generation_id,
                    producer_id=req.producer_id, producer_epoch=req.producer_epoch, topic=p.topic,
                    partition=p.partition, offset=p.offset))
            answers.append(PartitionError(p.topic, p.partition, partition_error))
        if accepted:
            self._verifications.pop((req.group_id, req.producer_id), None)
            floor = max(self._marker_epochs.get((partition, req.producer_id), -1),
                        -1 if held is None else held.coordinator_epoch)
            out.records.append(PendingOffsetsRecord(req.group_id, req.producer_id, req.producer_epoch,
                                                    tuple(pending[key] for key in sorted(pending)), floor))
        self._replay_all(out.records)
        return out.reply(token, CommitOffsetsResult(tuple(answers)))

    def _guarded(self, req: TxnCommitOffsets) -> bool:
        """Whether a commit starting to hold the producer's offsets carries its current guard."""
        guard = req.verification_guard
        return guard is None or (guard != NO_TXN_GUARD
                                 and self._verifications.get((req.group_id, req.producer_id)) == guard)

    def complete_txn_partition(self, token: Hashable, req: CompleteTxnPartition, placed: Callable[[str], bool],
                               now_ms: int) -> Result:
        """The marker of an offsets partition: every group `placed` on it that holds pending
        offsets of the producer is completed, in one result (on commit the OffsetCommitRecords made
        visible, then the PendingOffsetsTombstone; on abort the tombstone alone). Reply: NONE,
        TRANSACTION_COORDINATOR_FENCED when the marker's coordinator epoch is below one this
        partition accepted for the producer (nothing changes), or INVALID_PRODUCER_EPOCH when
        some group holds them under a newer epoch (that group is left as it is, the others are
        completed)."""
        out = Result()
        groups = sorted(g for g, held in self._pending.items() if req.producer_id in held and placed(g))
        key = (req.partition, req.producer_id)
        floor = max([self._marker_epochs.get(key, -1)]
                    + [self._pending[g][req.producer_id].coordinator_epoch for g in groups])
        if req.coordinator_epoch < floor:
            return out.reply(token, ErrorCode.TRANSACTION_COORDINATOR_FENCED)
        self._marker_epochs.pop(key, None)
        self._marker_epochs[key] = req.coordinator_epoch
        while len(self._marker_epochs) > MAX_MARKER_EPOCHS:
            del self._marker_epochs[next(iter(self._marker_epochs))]
        for voided in [k for k in self._verifications if k[1] == req.producer_id and placed(k[0])]:
            del self._verifications[voided]
        error = ErrorCode.NONE
        for group_id in groups:
            refused = self._complete(out, group_id, req.producer_id, req.producer_epoch, req.commit, now_ms)
            error = refused if refused is not ErrorCode.NONE else error
        self._replay_all(out.records)
        return out.reply(token, error)

    def _complete(self, out: Result, group_id: str, producer_id: int, producer_epoch: int, commit: bool,
                  now_ms: int) -> ErrorCode:
        """Add to `out` the records (and events) completing the group's pending offsets of the
        producer; not replayed yet."""
        held = self._pending.get(group_id, {}).get(producer_id)
        if held is None:
            return ErrorCode.NONE
        if producer_epoch < held.producer_epoch:
            return ErrorCode.INVALID_PRODUCER_EPOCH
        out.events.append(txn_offsets_completed(
            self.node_id, now_ms, group_id, producer_id=producer_id, producer_epoch=producer_epoch,
            outcome=COMMIT if commit else ABORT,
            partitions=partition_rows((o.topic, o.partition, o.offset) for o in held.offsets)))
        if commit:
            committed = self._offsets.get(group_id, {})
            for record in held.offsets:
                current = committed.get((record.topic, record.partition))
                if current is None or current.commit_timestamp_ms <= record.commit_timestamp_ms:
                    out.records.append(record)
                    out.events.append(offset_commit(
                        self.node_id, now_ms, group_id, member_id="", generation=-1,
                        topic=record.topic, partition=record.partition, offset=record.offset,
                        producer_id=producer_id, producer_epoch=producer_epoch))
        out.records.append(PendingOffsetsTombstone(group_id, producer_id))
        return ErrorCode.NONE

    def _without_pending(self, group_ids: Iterable[str], doomed: Callable[[str, int], bool]) -> list[OffsetRecord]:
        """The records that remove the partitions `doomed(topic, partition)` from every pending
        transaction of `group_ids` (a rewritten PendingOffsetsRecord, or its tombstone)."""
        records: list[OffsetRecord] = []
        for group_id in group_ids:
            for producer_id, held in sorted(self._pending.get(group_id, {}).items()):
                kept = tuple(o for o in held.offsets if not doomed(o.topic, o.partition))
                if len(kept) == len(held.offsets):
                    continue
                records.append(PendingOffsetsRecord(group_id, producer_id, held.producer_epoch, kept,
                                                    held.coordinator_epoch) if kept
                               else PendingOffsetsTombstone(group_id, producer_id))
        return records

    def delete(self, token: Hashable, req: DeleteOffsets, now_ms: int) -> Result:
        """Reply: DeleteOffsetsResult; records: an OffsetTombstone per deleted committed offset."""
        out = Result()
        group = self._group(req.group_id)
        if group is None:
            return out.reply(token, DeleteOffsetsResult(ErrorCode.GROUP_ID_NOT_FOUND))
        error = group.validate_delete()
        if error is not ErrorCode.NONE:
            return out.reply(token, DeleteOffsetsResult(error))
        committed = self._offsets.get(req.group_id, {})
        answers = []
        for topic, partition in req.partitions:
            if group.is_subscribed_to(topic):
                answers.append(PartitionError(topic, partition, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC))
                continue
            tombstone = OffsetTombstone(req.group_id, topic, partition)
            if (topic, partition) in committed and tombstone not in out.records:
                out.records.append(tombstone)
                out.events.append(offset_delete(self.node_id, now_ms, req.group_id, topic=topic,
                                                partition=partition))
            answers.append(PartitionError(topic, partition, ErrorCode.NONE))
        deleted = {(a.topic, a.partition) for a in answers if a.error is ErrorCode.NONE}
        out.records.extend(self._without_pending((req.group_id,), lambda t, p: (t, p) in deleted))
        self._replay_all(out.records)
        return out.reply(token, DeleteOffsetsResult(ErrorCode.NONE, tuple(answers)))

    def delete_topics(self, topics: Iterable[str], now_ms: int) -> Result:
        """The topics were deleted: every group's committed offsets for them go (no reply;
        tombstones in group, topic, partition order)."""
        out = Result()
        doomed = set(topics)
        records = [
            OffsetTombstone(group_id, topic, partition)
            for group_id in sorted(self._offsets)
            for topic, partition in sorted(self._offsets[group_id])
            if topic in doomed
        ]
        for record in records:
            self.replay(record)
            out.events.append(offset_delete(self.node_id, now_ms, record.group, topic=record.topic,
                                            partition=record.partition))
        out.records.extend(records)
        pending = self._without_pending(sorted(self._pending), lambda topic, _: topic in doomed)
        self._replay_all(pending)
        out.records.extend(pending)
        return out

    # --- hard state --------------------------------------------------------------------------

    def replay(self, record: OffsetRecord) -> None:
        """Apply one offset record (an operation's own, or one loaded from the store; a pending
        tombstone of nothing pending is a no-op). Raises
        `UnknownOffset` for a tombstone of an offset that is not committed."""
        if isinstance(record, PendingOffsetsRecord):
            if self._group(record.group) is None:
                self._create_group(record.group)
            self._pending.setdefault(record.group, {})[record.producer_id] = record
            return
        if isinstance(record, PendingOffsetsTombstone):
            held = self._pending.get(record.group, {})
            held.pop(record.producer_id, None)
            if not held:
                self._pending.pop(record.group, None)
            return
        key = (record.topic, record.partition)
        if isinstance(record, OffsetCommitRecord):
            if self._group(record.group) is None:
                self._create_group(record.group)
            self._offsets.setdefault(record.group, {})[key] = record
            return
        committed = self._offsets.get(record.group)
        if committed is None or committed.pop(key, None) is None:
            raise UnknownOffset(f"offset tombstone for {record.group} {record.topic}-{record.partition}, "
                                "which has no committed offset")
        if not committed:
            del self._offsets[record.group]

    def drop_group(self, group_id: str) -> None:
        """The group was deleted: its offsets, pending ones too, go with it (its GroupTombstone
        says so)."""
        self._offsets.pop(group_id, None)
        self._pending.pop(group_id, None)
        self._drop_verifications(lambda g: g == group_id)

    def unload(self, belongs: Callable[[str], bool]) -> None:
        """Forget the offsets of every group for which `belongs(group_id)` holds (this node gave
        their partition up; the store keeps them for the next coordinator)."""
        for group_id in [g for g in self._offsets if belongs(g)]:
            del self._offsets[group_id]
        for group_id in [g for g in self._pending if belongs(g)]:
            del self._pending[group_id]
        self._drop_verifications(belongs)

    def _drop_verifications(self, belongs: Callable[[str], bool]) -> None:
        for key in [k for k in self._verifications if belongs(k[0])]:
            del self._verifications[key]

    def _replay_all(self, records: Iterable[OffsetRecord]) -> None:
        for record in records:
            self.replay(record)


def _unknown_group_commit_error(req: CommitOffsets) -> ErrorCode:
    """A commit to a group that does not exist: a simple commit (generation < 0) is accepted;
    with a generation, v9+ says the group is not found, older versions ILLEGAL_GENERATION."""
    if req.generation_id < 0:
        return ErrorCode.NONE
    if req.api_version >= MEMBER_EPOCH_COMMIT_VERSION:
        return ErrorCode.GROUP_ID_NOT_FOUND
    return ErrorCode.ILLEGAL_GENERATION


def _committed(record: OffsetCommitRecord) -> CommittedOffset:
    return CommittedOffset(record.topic, record.partition, record.offset, record.leader_epoch, record.metadata)
