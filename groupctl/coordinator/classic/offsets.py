"""A classic group's verdicts on OffsetCommit and OffsetDelete: its side of the offset store's
`OffsetGroup` protocol (`ClassicGroup.validate_commit` / `validate_delete` ask these rules).

The offsets themselves, the requests' records and journal events, unknown groups (a simple commit
creates one, Empty) and the metadata limit are the store's (`groupctl.coordinator.offsets`), the
same for every group type.

OffsetCommit (Kafka's ClassicGroup.validateOffsetCommit):
- generation < 0 on an Empty group: a "simple" commit (admin tools, manual assignment), accepted;
- otherwise, with a generation, a member id or an instance id: identity (UNKNOWN_MEMBER_ID /
  FENCED_INSTANCE_ID) then generation (ILLEGAL_GENERATION) must match; in PreparingRebalance the
  generation is still the previous one, so its members may commit;
- no generation, no member id on a group with members: UNKNOWN_MEMBER_ID;
- CompletingRebalance: REBALANCE_IN_PROGRESS.
A transactional commit (TxnOffsetCommit) follows the same rules, except that one naming no
generation and no member is accepted in every state (TxnOffsetCommit v0-2 carry neither) and a
rebalancing group does not refuse it (Kafka's validateOffsetCommit with isTransactional).

OffsetFetch works in every state.
OffsetDelete (Kafka's ClassicGroup.validateOffsetDelete): NON_EMPTY_GROUP for a group with
members that does not use protocol type "consumer"; the store then keeps the offsets of topics
the group `is_subscribed_to` (GROUP_SUBSCRIBED_TO_TOPIC).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from groupctl.coordinator.classic.state import GroupState
from groupctl.coordinator.consumer_protocol import CONSUMER_PROTOCOL_TYPE
from groupctl.coordinator.errors import ErrorCode

if TYPE_CHECKING:
    from groupctl.coordinator.classic.group import ClassicGroup


def commit_error(group: ClassicGroup, member_id: str, instance_id: Optional[str], generation_id: int,
                 transactional: bool = False) -> ErrorCode:
    """The error of every partition of a commit to `group` (NONE: accepted)."""
    if generation_id < 0 and group.state is GroupState.EMPTY:
        return ErrorCode.NONE
    if generation_id >= 0 or member_id or instance_id is not None:
        error = group.validate_member(member_id, instance_id)
        if error is not ErrorCode.NONE:
            return error
        if generation_id != group.generation:
            return ErrorCode.ILLEGAL_GENERATION
    elif group.state is not GroupState.EMPTY and not transactional:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if group.state is GroupState.COMPLETING_REBALANCE and not transactional:
        return ErrorCode.REBALANCE_IN_PROGRESS
    return ErrorCode.NONE


def delete_error(group: ClassicGroup) -> ErrorCode:
    """The group-wide error of an OffsetDelete on `group` (NONE: the partitions are examined)."""
    if group.state is not GroupState.EMPTY and group.protocol_type != CONSUMER_PROTOCOL_TYPE:
        return ErrorCode.NON_EMPTY_GROUP
    return ErrorCode.NONE
