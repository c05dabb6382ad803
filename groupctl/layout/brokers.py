"""A live node's registration, `/brokers/ids/<node-id>` (ephemeral):
`{"host", "port", "node_id", "started_at_ms", "endpoints"}`, written by the node when it starts
and read by the other nodes (Metadata, FindCoordinator) and by the tools (`coordinator
status|find`). The node id is the path's; `started_at_ms` may be absent in registrations of other
brokers.

`endpoints` lists the advertised address of every listener as Kafka's registrations do
(`["PLAINTEXT://host:9092", "SASL_SSL://host:9093"]`); `host`/`port` are the first listener's.
A registration without `endpoints` (written before listeners existed) has one PLAINTEXT listener
at `host`/`port`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from groupctl.layout.codec import LayoutError, encode, integer, is_number, read, strings, text
from groupctl.layout.paths import broker_path

VERSION = 1


@dataclass(frozen=True)
class BrokerRegistration:
    node_id: int
    host: str
    port: int
    started_at_ms: Optional[int] = None
    endpoints: tuple[tuple[str, str, int], ...] = ()
    """(listener name, advertised host, port) per listener; empty: PLAINTEXT at host:port."""

    def address(self, listener: str) -> Optional[tuple[str, int]]:
        """Where clients of `listener` reach this node; None when it has no such listener."""
        for name, host, port in self.endpoints or (("PLAINTEXT", self.host, self.port),):
            if name == listener:
                return host, port
        return None

    def encode(self) -> bytes:
        document = {"host": self.host, "port": self.port, "node_id": self.node_id,
                    "started_at_ms": self.started_at_ms}
        if self.endpoints:
            document["endpoints"] = [f"{name}://{host}:{port}" for name, host, port in self.endpoints]
        return encode(document)

    @classmethod
    def decode(cls, node_id: int, data: Optional[bytes]) -> "BrokerRegistration":
        path = broker_path(node_id)
        document = read(path, data, VERSION)
        endpoints = strings(path, document, "endpoints") if "endpoints" in document else []
        return cls(node_id=node_id, host=text(path, document, "host"),
                   port=integer(path, document, "port", minimum=0, maximum=65535),
                   started_at_ms=integer(path, document, "started_at_ms", default=None),
                   endpoints=tuple(_endpoint(path, item) for item in endpoints))


def _endpoint(path: str, item: str) -> tuple[str, str, int]:
    """"SASL_SSL://host:9093" -> ("SASL_SSL", "host", 9093)."""
    name, sep, address = item.partition("://")
    host, colon, port = address.rpartition(":")
    if not sep or not name or not colon or not is_number(port) or int(port) > 65535:
        raise LayoutError(path, f'endpoint {item!r} is not LISTENER://HOST:PORT')
    return name, host.strip("[]"), int(port)


def node_id_of(component: str) -> Optional[int]:
    """The node id a `/brokers/ids` child names; None for a child that is not one."""
    return int(component) if is_number(component) else None


