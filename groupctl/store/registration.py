"""This node's registration, `/brokers/ids/<node-id>` (`groupctl.layout.brokers`).

Invariants: the znode is ephemeral, so it lives exactly as long as the node's store session (a
ZooKeeper session, or the open embedded store); it is created, never overwritten, so a second
live process with the same node id is refused (NodeExists).
"""

from __future__ import annotations

from groupctl.layout.brokers import BrokerRegistration
from groupctl.layout.paths import broker_path
from groupctl.store.base import MetadataStore


async def register_broker(store: MetadataStore, node_id: int, endpoints: tuple[tuple[str, str, int], ...],
                          now_ms: int) -> None:
    """Create this node's ephemeral `/brokers/ids/<id>` with the advertised address of each listener
    (the first one's also as `host`/`port`). NodeExists when a live session (another process, or
    this node's previous session not yet expired) still holds it."""
    _, host, port = endpoints[0]
    registration = BrokerRegistration(node_id=node_id, host=host, port=port, started_at_ms=now_ms,
                                      endpoints=endpoints)
    await store.create(broker_path(node_id), registration.encode(), ephemeral=True, make_parents=True)
