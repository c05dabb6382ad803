"""The offset APIs' requests and responses, independent of the group type.

OffsetCommit, OffsetFetch and OffsetDelete mean the same for every group type (Kafka's one
OffsetCommit request carries a classic group's generation or a consumer group's member epoch in
the same field), so their values live here, beside the store that answers them.
`groupctl.coordinator.classic.messages` re-exports them under the same names. Error fields hold
`ErrorCode` values.

The one wire version the core sees is OffsetCommit's (`CommitOffsets.api_version`): from
`MEMBER_EPOCH_COMMIT_VERSION` on, a commit to a group that does not exist is GROUP_ID_NOT_FOUND
rather than ILLEGAL_GENERATION, and below it a KIP-848 member may not commit at all (Apache
Kafka's OffsetMetadataManager and ConsumerGroup.validateOffsetCommit decide on it the same way).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from groupctl.coordinator.errors import ErrorCode

MEMBER_EPOCH_COMMIT_VERSION = 9
"""OffsetCommit v9: the first version a consumer-protocol (KIP-848) member may commit with, and
the first that answers a commit to a group that does not exist with GROUP_ID_NOT_FOUND."""


@dataclass(frozen=True)
class PartitionOffset:
    topic: str
    partition: int
    offset: int
    leader_epoch: int = -1
    metadata: str = ""


@dataclass(frozen=True)
class CommitOffsets:
    group_id: str
    generation_id: int  # -1 with member_id "": a simple (admin/manual-assignment) commit
    member_id: str
    group_instance_id: Optional[str]
    offsets: tuple[PartitionOffset, ...]
    api_version: int  # the OffsetCommit request's version (see MEMBER_EPOCH_COMMIT_VERSION)


@dataclass(frozen=True)
class TxnCommitOffsets:
    """TxnOffsetCommit: offsets held for the producer's open transaction until its marker."""

    group_id: str
    producer_id: int
    producer_epoch: int
    generation_id: int  # a classic group's generation or a consumer member's epoch; -1: none
    member_id: str
    group_instance_id: Optional[str]
    offsets: tuple[PartitionOffset, ...]
    # the guard `StartTxnVerification` gave before the transaction coordinator was asked (None: not checked)
    verification_guard: Optional[int] = None


NO_TXN_GUARD = 0
"""The guard of a producer whose offsets the group held already when its verification started
(Kafka's VerificationGuard.SENTINEL): it lets the commit in only while they are still held."""


@dataclass(frozen=True)
class StartTxnVerification:
    """Before a TxnOffsetCommit's transaction is verified: the guard its commit is to carry
    (Kafka's maybeStartTransactionVerification on the group's `__consumer_offsets` partition)."""

    group_id: str
    producer_id: int


@dataclass(frozen=True)
class CompleteTxnPartition:
    """A transaction's marker for offsets partition `partition` (Kafka's WriteTxnMarkers to a
    `__consumer_offsets` partition): every group placed on it that holds pending offsets of the
    producer is completed: a commit makes its pending offsets the group's committed offsets, an
    abort drops them."""

    partition: int
    producer_id: int
    producer_epoch: int
    commit: bool
    coordinator_epoch: int  # the transaction coordinator's epoch that wrote the marker


@dataclass(frozen=True)
class PartitionError:
    topic: str
    partition: int
    error: ErrorCode


@dataclass(frozen=True)
class CommitOffsetsResult:
    partitions: tuple[PartitionError, ...]  # every requested partition, same error when group-wide


@dataclass(frozen=True)
class FetchOffsets:
    group_id: str
    partitions: Optional[tuple[tuple[str, int], ...]]  # None: every committed partition
    require_stable: bool = False
    # OffsetFetch v9+ (KIP-848): the fetching member, checked by a consumer group. None and an
    # epoch below 0 (what older versions, admin tools and librdkafka send): no member to check.
    member_id: Optional[str] = None
    member_epoch: int = -1


@dataclass(frozen=True)
class CommittedOffset:
    topic: str
    partition: int
    offset: int  # -1 when nothing is committed
    leader_epoch: int = -1
    metadata: str = ""
    error: ErrorCode = ErrorCode.NONE


@dataclass(frozen=True)
class FetchOffsetsResult:
    error: ErrorCode
    offsets: tuple[CommittedOffset, ...] = ()


@dataclass(frozen=True)
class DeleteOffsets:
    group_id: str
    partitions: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class DeleteOffsetsResult:
    error: ErrorCode
    partitions: tuple[PartitionError, ...] = ()
