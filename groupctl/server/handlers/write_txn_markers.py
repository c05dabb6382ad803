"""WriteTxnMarkers (27), v1-2.

Version notes: v1 (kafka-python 3.0.12's floor; Kafka 4 removed v0) is flexible; v2 adds the
marker's TransactionVersion (KIP-890 part 2), which this node does not use: it offers
transaction.version 1 only, so no coordinator sends it a version-2 marker. Kafka's transaction
coordinators send it to the partition leaders when a transaction completes, and admin clients to
abort a hanging transaction (`kafka-transactions.sh abort`, Admin.abortTransaction).

Semantics (Kafka's KafkaApis.handleWriteTxnMarkersRequest): for each marker, each partition gets
a commit or abort marker for the producer (`groupctl.server.markers.write`, the same code the
node's own transaction coordinator runs for the partitions it leads): a data partition in its
log, which must be led by this node, checked against the producer's epoch and the coordinator
epoch; a `__consumer_offsets` partition (a group partition this node leads) completes the
producer's pending offsets (TxnOffsetCommit) in every group placed on it. Errors per partition:
UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER (another node leads it, or its group
partition is loading or moving: retried by the coordinator), INVALID_PRODUCER_EPOCH,
TRANSACTION_COORDINATOR_FENCED, KAFKA_STORAGE_ERROR. Markers are written in request order.

Authorization (`--authorizer`), as Kafka: ClusterAction on the Cluster (a node's inter-node
principal, `--inter-node-config`, or an admin), else every partition answers
CLUSTER_AUTHORIZATION_FAILED.

Deliberate difference from Apache Kafka: an offsets partition has no log here, so its marker is
not checked against the coordinator epoch (the group's pending offsets are checked against the
producer epoch).
"""

from __future__ import annotations

from typing import Any

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.handlers.acl_checks import cluster_allowed
from groupctl.server.markers import Marker, write


@api(key=27, versions=(1, 2))
async def handle_write_txn_markers(ctx: Any, request: Any) -> Any:
    authorized = cluster_allowed(ctx, Operation.CLUSTER_ACTION)
    marker_cls = ctx.response_class.WritableTxnMarkerResult
    topic_cls = marker_cls.WritableTxnMarkerTopicResult
    partition_cls = topic_cls.WritableTxnMarkerPartitionResult
    results = []
    for requested in request.markers:
        wanted = [(topic.name, index) for topic in requested.topics for index in topic.partition_indexes]
        if authorized:
            marker = Marker(requested.producer_id, requested.producer_epoch, requested.transaction_result,
                            requested.coordinator_epoch)
            errors = await write(ctx.node, marker, wanted)
        else:
            errors = dict.fromkeys(wanted, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
        by_topic: dict[str, list[Any]] = {}
        for (name, index), error in errors.items():
            by_topic.setdefault(name, []).append(partition_cls(partition_index=index, error_code=error))
        results.append(marker_cls(producer_id=requested.producer_id, topics=[
            topic_cls(name=name, partitions=partitions) for name, partitions in by_topic.items()]))
    return ctx.respond(markers=results)
