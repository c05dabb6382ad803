"""Kafka's `security.protocol` values (a listener's name, a client's setting) and what each
puts on the wire: TLS under SSL and SASL_SSL, SASL authentication under SASL_PLAINTEXT and
SASL_SSL. One definition for the node's listeners and the CLI's client."""

from __future__ import annotations

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
TLS_PROTOCOLS = ("SSL", "SASL_SSL")
SASL_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")


def uses_tls(protocol: str) -> bool:
    return protocol in TLS_PROTOCOLS


def uses_sasl(protocol: str) -> bool:
    return protocol in SASL_PROTOCOLS
