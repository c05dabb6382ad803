"""Peers that refuse this node's transaction markers for want of ClusterAction, told loudly.

With `--authorizer`, a node writes WriteTxnMarkers only for a principal holding ClusterAction on
the Cluster (a `--super-user` has it). A cluster whose inter-node principal lacks it fails at
run time only: every transaction with a partition led by another node stays preparing, its
markers retried and refused. The coordinator therefore logs an error naming the principal and
the fix when a peer starts refusing, and a line when it takes the markers again; and at start,
`warn_without_cluster_action` tells from the ACLs the node loaded (the cluster's, all nodes read
the same store) when the principal holds ClusterAction from no host in general.

Invariants:
- One error per peer per change: logged when a peer's answer first carries
  CLUSTER_AUTHORIZATION_FAILED, not again until an answer without it came in between.
- The start warning is given only when it is certain from the ACLs: the principal is known
  (not a TLS certificate's subject) and no super user, no ACL for host `*` (nor
  allow.everyone.if.no.acl.found) grants it; ACLs naming one host are not guessed at.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping, Optional

from groupctl.coordinator.errors import ErrorCode
from groupctl.security.acls import CLUSTER_NAME, Operation, ResourceType

log = logging.getLogger(__name__)


class MarkerRefusals:
    """The peers refusing markers now."""

    def __init__(self) -> None:
        self.refusing: set[int] = set()

    def saw(self, node_id: int, answer: Mapping[object, ErrorCode], principal: Optional[str]) -> None:
        """Node `node_id` answered a WriteTxnMarkers with `answer` (each partition's error);
        `principal` is who this node is to it (`Peers.principal`; None: its TLS certificate's)."""
        refused = ErrorCode.CLUSTER_AUTHORIZATION_FAILED in answer.values()
        if refused and node_id not in self.refusing:
            self.refusing.add(node_id)
            log.error("node %d refuses this node's transaction markers (CLUSTER_AUTHORIZATION_FAILED): the "
                      "inter-node principal %s lacks ClusterAction on the Cluster, so transactions with "
                      "partitions led by node %d cannot complete. Make it a super user (--super-user) or "
                      "grant it: groupctl acl add --allow-principal %s --operation ClusterAction --cluster",
                      node_id, named(principal), node_id, principal or "<its principal>")
        elif not refused and node_id in self.refusing:
            self.refusing.discard(node_id)
            log.info("node %d takes this node's transaction markers again", node_id)


def named(principal: Optional[str]) -> str:
    return principal or "(the subject of the TLS client certificate of --inter-node-config)"


def warn_without_cluster_action(authorizer: Any, principal: Optional[str]) -> bool:
    """At start, with the ACLs loaded: warn (and return True) when `principal` certainly holds
    no ClusterAction on the Cluster from any host in general."""
    if principal is None:
        return False
    # "" is no particular host: only the ACLs for host "*" apply to it.
    if authorizer.authorize(principal, "", Operation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME):
        return False
    log.warning("the inter-node principal %s holds no ClusterAction on the Cluster (not a super user, no ACL "
                "for host *): unless an ACL grants it for this node's address, other nodes refuse this node's "
                "transaction markers and transactions across nodes never complete. Make it a super user "
                "(--super-user) or grant it: groupctl acl add --allow-principal %s --operation ClusterAction "
                "--cluster", principal, principal)
    return True
