"""A live node's registration, `/brokers/ids/<node-id>` (ephemeral):
`{"host", "port", "node_id", "started_at_ms"}`, written by the node when it starts and read by
the other nodes (Metadata, FindCoordinator) and by the tools (`coordinator status|find`). The
node id is the path's; `started_at_ms` may be absent in registrations of other brokers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from groupctl.layout.codec import encode, integer, is_number, read, text
from groupctl.layout.paths import broker_path

VERSION = 1


@dataclass(frozen=True)
class BrokerRegistration:
    node_id: int
    host: str
    port: int
    started_at_ms: Optional[int] = None

    def encode(self) -> bytes:
        return encode({"host": self.host, "port": self.port, "node_id": self.node_id,
                       "started_at_ms": self.started_at_ms})

    @classmethod
    def decode(cls, node_id: int, data: Optional[bytes]) -> "BrokerRegistration":
        path = broker_path(node_id)
        document = read(path, data, VERSION)
        return cls(node_id=node_id, host=text(path, document, "host"),
                   port=integer(path, document, "port", minimum=0, maximum=65535),
                   started_at_ms=integer(path, document, "started_at_ms", default=None))


def node_id_of(component: str) -> Optional[int]:
    """The node id a `/brokers/ids` child names; None for a child that is not one."""
    return int(component) if is_number(component) else None


