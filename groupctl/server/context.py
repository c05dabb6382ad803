"""What a handler sees: the request's context and the node's services.

Handlers are thin: decode-level checks, conversion between kafka-python message objects and the
core's dataclasses, and one call into a service. They never touch sockets or the clock directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Hashable, Optional, Protocol

if TYPE_CHECKING:
    from groupctl.coordinator.results import Result


class NodeServices(Protocol):
    """The runtime as handlers use it (implemented by `groupctl.server.runtime.Node`)."""

    config: Any  # groupctl.server.config.NodeConfig
    topics: Any  # groupctl.server.topics.TopicRegistry
    logs: Any  # groupctl.log.LogManager
    store: Any  # groupctl.store.base.MetadataStore (users' credentials: Describe/AlterUserScramCredentials)

    placement: Any  # groupctl.coordinator.placement.Placement: which groups this node serves now
    transactions: Any  # groupctl.server.transactions.Transactions: the transactional ids this node coordinates

    def now_ms(self) -> int: ...

    def live_brokers(self, listener: Optional[str] = None) -> dict[int, tuple[str, int]]:
        """Live node id -> its advertised (host, port) on `listener` (default: the first)."""

    def coordinator_of(self, group_id: str, listener: Optional[str] = None) -> Any:
        """(node id, (host, port) on `listener`) of the live leader of the group's partition, or None."""

    async def call_groups(self, op: Callable[[Any, Hashable, int], "Result"]) -> Any:
        """Run `op(core, token, now_ms)` on the group coordinator core, persist the records of
        its result, deliver its replies, and return the reply addressed to `token` (which may
        arrive in a later result, for parked JoinGroup/SyncGroup)."""

    async def wait_for_document(self, group: str, after_generation: int, timeout_s: float) -> Any:
        """The group's stored document (a `group_documents.StoredDocument`, or None when there is none) once its generation
        passes `after_generation`, else after `timeout_s` the current one."""

    async def trigger_rebalance(self, group: str, reason: Any = None, client_id: Any = None) -> Any:
        """Start the group's next rebalance; a TriggerRebalanceResult."""


@dataclass
class RequestContext:
    node: NodeServices
    api_key: int
    version: int
    correlation_id: int
    client_id: str
    client_host: str  # "/127.0.0.1" as Kafka reports it
    response_class: type  # kafka-python's response class at this version
    principal: str = "User:ANONYMOUS"  # who sent it: the SASL user, the TLS client's subject, or anonymous
    listener: str = "PLAINTEXT"  # the name of the listener the request arrived on
    authorizer: Any = None  # the node's NodeAuthorizer with --authorizer; None: everything is allowed

    def respond(self, **fields: Any) -> Any:
        return self.response_class(**fields)
