"""This node's connections to the other nodes of its cluster (Kafka's inter-broker channel): the
transaction coordinator's WriteTxnMarkers to partition leaders, a partition leader's
AddPartitionsToTxn verification at a transaction coordinator.

A peer is reached on the listener `--inter-node-listener` names (Kafka's
inter.broker.listener.name; default: the node's first listener), at the address the peer's
registration (`/brokers/ids/<id>`) advertises on it, with that listener's security protocol and
the TLS and SASL settings of `--inter-node-config` (Kafka client properties, read as the CLI
reads `--command-config`): the principal must hold ClusterAction on the Cluster when the peers
run an authorizer (a super user does).

Invariants:
- At most one connection per peer and purpose (MARKERS: WriteTxnMarkers; VERIFICATION: the
  AddPartitionsToTxn verifications of Produce and TxnOffsetCommit), as Kafka keeps its
  TransactionMarkerChannelManager apart from its AddPartitionsToTxnManager: a peer answers a
  connection's requests one at a time, so a slow marker write does not hold up transactional
  produces, and a connection closed for a late answer fails only its own purpose's calls. A
  connection is opened on first use and reused while it is open and the peer still registers
  the same address; one that fails is closed and forgotten, and the next call opens a new one.
  Nothing else about a peer is kept.
- A call returns the peer's response or raises PeerUnavailable (the peer is not registered on
  the listener, cannot be reached or authenticated, or dropped the request). Each step is
  bounded by REQUEST_TIMEOUT_S: connecting, ApiVersions, each SASL exchange, the request; so a
  call on an open connection ends within one timeout, one that opens it within a few.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import ssl
from typing import Any, Iterable, Optional

from groupctl.client.aio import AsyncConnection
from groupctl.client.kafka import Node as Address
from groupctl.client.security import ClientSecurity, load_security
from groupctl.coordinator.errors import ErrorCode
from groupctl.errors import OpsError
from groupctl.server.markers import Marker, Partition

log = logging.getLogger(__name__)

REQUEST_TIMEOUT_S = 30.0  # Kafka's request.timeout.ms for the inter-broker channel
WRITE_TXN_MARKERS = 27
ADD_PARTITIONS_TO_TXN = 24
MARKERS = "markers"
VERIFICATION = "verification"


class PeerUnavailable(Exception):
    """A peer could not be asked: its error says why."""


class Peers:
    """`node` is the running `Node`; its config names the listener and the client settings."""

    def __init__(self, node: Any) -> None:
        self._node = node
        config = node.config
        listeners = {listener.name: listener for listener in config.all_listeners()}
        self.listener = config.inter_node_listener or config.all_listeners()[0].name
        if self.listener not in listeners:
            raise ValueError(f"--inter-node-listener {self.listener}: not one of the node's listeners "
                             f"({', '.join(listeners)})")
        settings = load_security(config.inter_node_config, os.environ) if config.inter_node_config else ClientSecurity()
        # The listener decides the protocol, as Kafka's inter-broker listener does; the file gives credentials.
        self._security = dataclasses.replace(settings, protocol=listeners[self.listener].protocol)
        self._tls: Optional[ssl.SSLContext] = self._security.ssl_context() if self._security.tls else None
        self._connections: dict[tuple[str, int], AsyncConnection] = {}
        self._opening: dict[tuple[str, int], asyncio.Task] = {}

    @property
    def principal(self) -> Optional[str]:
        """Who this node is to its peers' authorizers: the SASL user, else User:ANONYMOUS, or
        None when it is the subject of its TLS client certificate (as the peer maps it)."""
        if self._security.sasl:
            return f"User:{self._security.username}"
        if self._security.tls and (self._security.cert_file or self._security.cert_pem):
            return None
        return "User:ANONYMOUS"

    async def call(self, node_id: int, purpose: str, key: int, versions: tuple[int, int], build: Any) -> Any:
        """Send one request to node `node_id` (`build(versioned_class, version)`) on the
        connection for `purpose` (MARKERS, VERIFICATION) and return its response."""
        slot = (purpose, node_id)
        connection = await self._connection(slot)
        try:
            return await connection.call(key, versions, build)
        except OpsError as exc:  # ConnectionFailed, Unsupported: the connection is of no more use
            connection.close()
            if self._connections.get(slot) is connection:
                del self._connections[slot]
            raise PeerUnavailable(f"node {node_id}: {exc}") from None

    async def _connection(self, slot: tuple[str, int]) -> AsyncConnection:
        node_id = slot[1]
        address = self._node.live_brokers(self.listener).get(node_id)
        if address is None:
            raise PeerUnavailable(f"node {node_id} is not registered with a {self.listener} listener")
        held = self._connections.get(slot)
        if held is not None and not held.closed and held.where == f"{address[0]}:{address[1]}":
            return held
        if held is not None:
            held.close()
            del self._connections[slot]
        opening = self._opening.get(slot)
        if opening is None:
            opening = asyncio.get_running_loop().create_task(self._open(slot, address))
            self._opening[slot] = opening
            opening.add_done_callback(lambda _: self._opening.pop(slot, None))
        return await asyncio.shield(opening)

    async def _open(self, slot: tuple[str, int], address: tuple[str, int]) -> AsyncConnection:
        node_id = slot[1]
        try:
            connection = await AsyncConnection.open(
                Address(node_id, *address), client_id=f"groupctl-node-{self._node.config.node_id}",
                request_timeout=REQUEST_TIMEOUT_S, security=self._security, tls=self._tls)
        except OpsError as exc:  # ConnectionFailed, AuthenticationFailed, Unsupported
            raise PeerUnavailable(f"node {node_id}: {exc}") from None
        self._connections[slot] = connection
        return connection

    # -- the requests ---------------------------------------------------------------------------

    async def write_txn_markers(self, node_id: int, marker: Marker, partitions: Iterable[Partition]
                                ) -> dict[Partition, ErrorCode]:
        """WriteTxnMarkers of `marker` for `partitions` at node `node_id`: each partition's error."""
        by_topic: dict[str, list[int]] = {}
        for topic, index in sorted(partitions):
            by_topic.setdefault(topic, []).append(index)

        def build(request_class: Any, version: int) -> Any:
            entry = request_class.WritableTxnMarker
            return request_class(markers=[entry(
                producer_id=marker.producer_id, producer_epoch=marker.producer_epoch,
                transaction_result=marker.commit, coordinator_epoch=marker.coordinator_epoch,
                topics=[entry.WritableTxnMarkerTopic(name=name, partition_indexes=indexes)
                        for name, indexes in by_topic.items()])])

        response = await self.call(node_id, MARKERS, WRITE_TXN_MARKERS, (1, 2), build)
        return {(topic.name, p.partition_index): ErrorCode(p.error_code)
                for result in response.markers for topic in result.topics for p in topic.partitions}

    async def verify_partitions(self, node_id: int, transactional_id: str, producer_id: int, producer_epoch: int,
                                partitions: Iterable[Partition]) -> dict[Partition, ErrorCode]:
        """AddPartitionsToTxn v4+ with VerifyOnly at node `node_id` (KIP-890 part 1): whether each
        partition is in the producer's transaction there; a request-level error (CLUSTER_AUTHORIZATION_FAILED)
        is every partition's."""
        by_topic: dict[str, list[int]] = {}
        for topic, index in sorted(partitions):
            by_topic.setdefault(topic, []).append(index)

        def build(request_class: Any, version: int) -> Any:
            entry = request_class.AddPartitionsToTxnTransaction
            return request_class(transactions=[entry(
                transactional_id=transactional_id, producer_id=producer_id, producer_epoch=producer_epoch,
                verify_only=True, topics=[entry.AddPartitionsToTxnTopic(name=name, partitions=indexes)
                                          for name, indexes in by_topic.items()])])

        response = await self.call(node_id, VERIFICATION, ADD_PARTITIONS_TO_TXN, (4, 5), build)
        if response.error_code:
            return {(topic, index): ErrorCode(response.error_code) for topic, indexes in by_topic.items()
                    for index in indexes}
        return {(topic.name, p.partition_index): ErrorCode(p.partition_error_code)
                for result in response.results_by_transaction for topic in result.topic_results
                for p in topic.results_by_partition}

    def close(self) -> None:
        for task in list(self._opening.values()):
            task.cancel()
        for connection in self._connections.values():
            connection.close()
        self._connections.clear()
