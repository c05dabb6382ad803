"""Peers that refuse this node's transaction markers for want of ClusterAction, told loudly.

With `--authorizer`, a node writes WriteTxnMarkers only for a principal holding ClusterAction on
the Cluster (a `--super-user` has it). A cluster whose inter-node principal lacks it fails at
run time only: every transaction with a partition led by another node stays preparing, its
markers retried and refused. The coordinator therefore logs an error naming the principal and
the fix when a peer starts refusing, and a line when it takes the markers again.

Invariants:
- One error per peer per change: logged when a peer's answer first carries
  CLUSTER_AUTHORIZATION_FAILED, not again until an answer without it came in between.
"""

from __future__ import annotations

import logging
from typing import Mapping

from groupctl.coordinator.errors import ErrorCode

log = logging.getLogger(__name__)


class MarkerRefusals:
    """The peers refusing markers now."""

    def __init__(self) -> None:
        self.refusing: set[int] = set()

    def saw(self, node_id: int, answer: Mapping[object, ErrorCode], principal: str) -> None:
        """Node `node_id` answered a WriteTxnMarkers with `answer` (each partition's error);
        `principal` is who this node is to it (`Peers.principal`)."""
        refused = ErrorCode.CLUSTER_AUTHORIZATION_FAILED in answer.values()
        if refused and node_id not in self.refusing:
            self.refusing.add(node_id)
            log.error("node %d refuses this node's transaction markers (CLUSTER_AUTHORIZATION_FAILED): the "
                      "inter-node principal %s lacks ClusterAction on the Cluster, so transactions with "
                      "partitions led by node %d cannot complete. Make it a super user (--super-user) or "
                      "grant it: groupctl acl add --allow-principal %s --operation ClusterAction --cluster",
                      node_id, principal, node_id, principal)
        elif not refused and node_id in self.refusing:
            self.refusing.discard(node_id)
            log.info("node %d takes this node's transaction markers again", node_id)
