"""TxnOffsetCommit (API 28), versions 3-5 (kafka-python 3.0.12 and confluent-kafka 2.16 send v3): a transactional producer commits a consumer group's
offsets inside its transaction (`send_offsets_to_transaction`, KIP-98 / KIP-447).

Semantics: the offsets are held pending for (group, producer id), durably, before the answer;
OffsetFetch does not show them (with `require_stable` it answers UNSTABLE_OFFSET_COMMIT for their
partitions) until the transaction's marker reaches the group (`Node.complete_txn_partition`): a
commit makes them the group's committed offsets, an abort drops them. The group's checks are the
core's (`groupctl.coordinator.offsets.store`): the request carries the member's generation (a
KIP-848 member's epoch), member id and group instance id (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
FENCED_INSTANCE_ID; generation -1 with no member, as a producer without a group's metadata
sends, is accepted by any group) and each partition's committed leader epoch. v3+ are flexible;
v4 and v5 (KIP-890) may answer TRANSACTION_ABORTABLE (below).

Checked here first, as Kafka does: an empty group id is INVALID_GROUP_ID for every partition
(after the authorization of the transactional id and the group); a topic this node does not know, or a partition it does not have, is
UNKNOWN_TOPIC_OR_PARTITION. Only the other partitions go to the core.

Authorization (`--authorizer`), as Kafka: Write on the TransactionalId, else every partition
answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED; then Read on the group, else
GROUP_AUTHORIZATION_FAILED; then Read on each topic, else its partitions answer
TOPIC_AUTHORIZATION_FAILED.

Verification, as Kafka's group coordinator does it (KIP-890 part 1): before the group checks the
commit, the transactional id's coordinator, on whichever node, confirms that the group's
offsets partition (`__consumer_offsets` p, which AddOffsetsToTxn adds) is in the producer's open
transaction (`groupctl.server.txn_verification`); otherwise every partition answers the
verdict: INVALID_TXN_STATE (v4+: TRANSACTION_ABORTABLE) when it is not, INVALID_PRODUCER_EPOCH
for a fenced producer, INVALID_PRODUCER_ID_MAPPING for another producer id, and the retriable
CONCURRENT_TRANSACTIONS, COORDINATOR_LOAD_IN_PROGRESS (the coordinator node cannot be reached),
COORDINATOR_NOT_AVAILABLE and NOT_COORDINATOR as Kafka maps them. A group this node does not
serve is not verified: the core answers its placement error. The verification is guarded as
Kafka's (`groupctl.coordinator.offsets.store`): the group's guard for the producer is taken
before the transaction coordinator is asked and the commit carries it, so a transaction marker
that reaches the group meanwhile voids it and the commit answers INVALID_TXN_STATE instead of
holding offsets after the marker.
"""

from __future__ import annotations

from kafka.protocol.producer.transaction import TxnOffsetCommitRequest, TxnOffsetCommitResponse

from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.offsets.messages import (
    NO_TXN_GUARD,
    CommitOffsetsResult,
    PartitionOffset,
    StartTxnVerification,
    TxnCommitOffsets,
)
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import GROUP, TOPIC, TRANSACTIONAL_ID, allowed, allowed_names
from groupctl.server.markers import OFFSETS_TOPIC
from groupctl.server.txn_verification import verify

_TOPIC = TxnOffsetCommitResponse.TxnOffsetCommitResponseTopic
_PARTITION = _TOPIC.TxnOffsetCommitResponsePartition


def _early_errors(ctx: RequestContext, request: TxnOffsetCommitRequest) -> list[list[ErrorCode | None]]:
    """Per topic, each partition's error found before the core (None: goes to the core)."""
    if not allowed(ctx, Operation.WRITE, TRANSACTIONAL_ID, request.transactional_id):
        return [[ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED] * len(t.partitions) for t in request.topics]
    if not allowed(ctx, Operation.READ, GROUP, request.group_id):
        return [[ErrorCode.GROUP_AUTHORIZATION_FAILED] * len(t.partitions) for t in request.topics]
    if not request.group_id:
        return [[ErrorCode.INVALID_GROUP_ID] * len(t.partitions) for t in request.topics]
    readable = allowed_names(ctx, Operation.READ, TOPIC, (t.name for t in request.topics))
    errors = []
    for topic in request.topics:
        record = ctx.node.topics.get(topic.name)
        errors.append([
            ErrorCode.TOPIC_AUTHORIZATION_FAILED if topic.name not in readable
            else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if record is None or p.partition_index not in record.replicas
            else None
            for p in topic.partitions])
    return errors


_ANSWERS = {ErrorCode.NETWORK_EXCEPTION: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS}
"""A verification's answers as TxnOffsetCommit carries them (Kafka's
CoordinatorOperationExceptionHelper)."""
FIRST_ABORTABLE_VERSION = 4


async def _unverified(ctx: RequestContext, request: TxnOffsetCommitRequest) -> ErrorCode:
    """NONE when the group's offsets partition is in the producer's open transaction, else the
    error every partition answers."""
    partition = (OFFSETS_TOPIC, ctx.node.placement.partition_of(request.group_id))
    verdict = (await verify(ctx.node, request.transactional_id, request.producer_id, request.producer_epoch,
                            [partition]))[partition]
    if verdict is ErrorCode.TRANSACTION_ABORTABLE and ctx.version < FIRST_ABORTABLE_VERSION:
        return ErrorCode.INVALID_TXN_STATE
    return _ANSWERS.get(verdict, verdict)


@api(key=28, versions=(3, 5))
async def handle_txn_offset_commit(ctx: RequestContext, request: TxnOffsetCommitRequest) -> TxnOffsetCommitResponse:
    errors = _early_errors(ctx, request)
    valid = tuple(
        PartitionOffset(topic=topic.name, partition=p.partition_index, offset=p.committed_offset,
                        leader_epoch=p.committed_leader_epoch,
                        metadata=p.committed_metadata or "")
        for topic, topic_errors in zip(request.topics, errors)
        for p, error in zip(topic.partitions, topic_errors) if error is None)
    core_errors: dict[tuple[str, int], ErrorCode] = {}
    guard = NO_TXN_GUARD  # not verified: the commit cannot start holding offsets
    refusal = ErrorCode.NONE
    if valid and ctx.node.serves(request.group_id):
        guard = await ctx.node.call_groups(lambda core, token, now: core.start_txn_verification(
            token, StartTxnVerification(request.group_id, request.producer_id), now))
        refusal = await _unverified(ctx, request)
    if refusal is not ErrorCode.NONE:
        core_errors = {(p.topic, p.partition): refusal for p in valid}
    elif valid:
        commit = TxnCommitOffsets(
            group_id=request.group_id, producer_id=request.producer_id, producer_epoch=request.producer_epoch,
            generation_id=request.generation_id, member_id=request.member_id,
            group_instance_id=request.group_instance_id, offsets=valid, verification_guard=guard)
        result: CommitOffsetsResult = await ctx.node.call_groups(
            lambda core, token, now: core.txn_commit_offsets(token, commit, now))
        core_errors = {(p.topic, p.partition): p.error for p in result.partitions}
    topics = [
        _TOPIC(name=topic.name, partitions=[
            _PARTITION(partition_index=p.partition_index,
                       error_code=int(core_errors[(topic.name, p.partition_index)] if error is None else error))
            for p, error in zip(topic.partitions, topic_errors)])
        for topic, topic_errors in zip(request.topics, errors)]
    return ctx.respond(throttle_time_ms=0, topics=topics)
