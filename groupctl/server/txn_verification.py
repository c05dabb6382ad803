"""Whether a producer's write belongs to its open transaction (KIP-890 part 1; Kafka's
AddPartitionsToTxnManager.verifyTransaction): a partition leader asks before it appends a
transactional batch (Produce), a group coordinator before it holds transactional offsets
(TxnOffsetCommit, for the group's `__consumer_offsets` partition).

The transaction coordinator is the leader of the transactional id's group partition: this
node's core when it coordinates the id now (`TransactionCoordinator.verify_partitions`), else the
node the election names, asked with AddPartitionsToTxn v4+ VerifyOnly (`Peers`). The answers are
the coordinator's as Kafka's manager hands them on: PRODUCER_FENCED becomes
INVALID_PRODUCER_EPOCH, a peer refusing this node's principal (CLUSTER_AUTHORIZATION_FAILED)
INVALID_TXN_STATE, a peer that cannot be asked NETWORK_EXCEPTION, no live coordinator
COORDINATOR_NOT_AVAILABLE, a coordinator node still loading the id its placement error. Each
caller translates them for its API, as Kafka's ReplicaManager and group coordinator do.

Nothing is cached: every call asks the coordinator as it is now. (Produce skips the question
for a producer whose transaction is already open in the partition's log, as Kafka does: only
the transaction's marker ends that, so it cannot go stale.)
"""

from __future__ import annotations

import logging
from typing import Any, Iterable

from groupctl.coordinator.errors import ErrorCode
from groupctl.server.markers import Partition
from groupctl.server.peers import PeerUnavailable

log = logging.getLogger(__name__)

_HANDED_ON = {ErrorCode.PRODUCER_FENCED: ErrorCode.INVALID_PRODUCER_EPOCH,
              ErrorCode.CLUSTER_AUTHORIZATION_FAILED: ErrorCode.INVALID_TXN_STATE}


async def verify(node: Any, transactional_id: str, producer_id: int, producer_epoch: int,
                 partitions: Iterable[Partition]) -> dict[Partition, ErrorCode]:
    """Each partition's verdict: NONE when it is in the producer's open transaction, else why not
    (TRANSACTION_ABORTABLE: not added to it)."""
    wanted = list(dict.fromkeys(partitions))
    transactions = node.transactions
    if transactions.error(transactional_id) is ErrorCode.NONE:
        verdicts = transactions.core.verify_partitions(transactional_id, producer_id, producer_epoch, wanted)
    else:
        coordinator = node.election.leader_of(transactional_id)
        if coordinator is None:
            return dict.fromkeys(wanted, ErrorCode.COORDINATOR_NOT_AVAILABLE)
        if coordinator == node.config.node_id:
            return dict.fromkeys(wanted, transactions.error(transactional_id))
        try:
            verdicts = await node.peers.verify_partitions(coordinator, transactional_id, producer_id,
                                                          producer_epoch, wanted)
        except PeerUnavailable as exc:
            log.warning("cannot verify transactional id %r at its coordinator: %s", transactional_id, exc)
            return dict.fromkeys(wanted, ErrorCode.NETWORK_EXCEPTION)
    return {partition: _HANDED_ON.get(error, error)
            for partition, error in ((p, verdicts.get(p, ErrorCode.UNKNOWN_SERVER_ERROR)) for p in wanted)}
