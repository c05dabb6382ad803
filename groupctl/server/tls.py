"""TLS on the node's SSL and SASL_SSL listeners: the server context and the client's principal.

Kafka's defaults where they bear on clients: TLS 1.2 or newer; `--ssl-client-auth` is Kafka's
`ssl.client.auth` (required: a client without a certificate signed by `--ssl-cafile` fails the
handshake; requested: one is asked for and checked if sent; none: never asked), and as in Kafka
(KIP-684) it applies to SSL listeners only: SASL_SSL clients authenticate with SASL and are
never asked for a certificate. The principal of
an SSL connection with a client certificate is `User:<subject>`, the subject as an RFC 2253
distinguished name (`CN=alice,OU=ops,O=example`), which is what Kafka's default
`ssl.principal.mapping.rules` produce; without one it is `User:ANONYMOUS`.
"""

from __future__ import annotations

import ssl
from typing import Any, Optional

from groupctl.server.config import NodeConfig

CLIENT_AUTH = {"required": ssl.CERT_REQUIRED, "requested": ssl.CERT_OPTIONAL, "none": ssl.CERT_NONE}

_RDN_KEYS = {
    "commonName": "CN", "organizationalUnitName": "OU", "organizationName": "O", "localityName": "L",
    "stateOrProvinceName": "ST", "countryName": "C", "streetAddress": "STREET", "domainComponent": "DC",
    "userId": "UID", "emailAddress": "EMAILADDRESS",
}


class TlsConfigError(ValueError):
    """The node's TLS material cannot be used; the message names the file and the reason."""


def server_context(config: NodeConfig, *, client_auth: bool) -> ssl.SSLContext:
    """The context of TLS listeners, from `--ssl-certfile/--ssl-keyfile/--ssl-cafile`; with
    `client_auth` (SSL listeners) it asks for client certificates as `--ssl-client-auth` says."""
    if config.ssl_certfile is None:
        raise TlsConfigError("an SSL or SASL_SSL listener needs --ssl-certfile (and --ssl-keyfile "
                             "unless the key is in the same file)")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(str(config.ssl_certfile), str(config.ssl_keyfile) if config.ssl_keyfile else None)
    except (OSError, ssl.SSLError) as exc:
        raise TlsConfigError(f"cannot load the certificate {config.ssl_certfile}"
                             f"{f' with key {config.ssl_keyfile}' if config.ssl_keyfile else ''}: "
                             f"{getattr(exc, 'strerror', None) or exc}") from None
    context.verify_mode = CLIENT_AUTH[config.ssl_client_auth] if client_auth else ssl.CERT_NONE
    if context.verify_mode != ssl.CERT_NONE:
        if config.ssl_cafile is None:
            raise TlsConfigError(f"--ssl-client-auth {config.ssl_client_auth} needs --ssl-cafile "
                                 "(the CAs client certificates must chain to)")
        try:
            context.load_verify_locations(cafile=str(config.ssl_cafile))
        except (OSError, ssl.SSLError) as exc:
            raise TlsConfigError(f"cannot load the CA file {config.ssl_cafile}: "
                                 f"{getattr(exc, 'strerror', None) or exc}") from None
    return context


def certificate_principal(ssl_object: Optional[Any]) -> Optional[str]:
    """`User:<RFC 2253 subject>` of the client's verified certificate, None without one."""
    certificate = ssl_object.getpeercert() if ssl_object is not None else None
    if not certificate or "subject" not in certificate:
        return None
    # The subject's RDNs come in ASN.1 order; RFC 2253 writes the most specific one first.
    parts = []
    for rdn in reversed(certificate["subject"]):
        parts.append("+".join(f"{_RDN_KEYS.get(key, key)}={_escape(value)}" for key, value in rdn))
    return "User:" + ",".join(parts)


def _escape(value: str) -> str:
    """An attribute value as RFC 2253 writes it."""
    escaped = "".join(f"\\{c}" if c in ',+"\\<>;=' else c for c in value)
    if escaped.startswith((" ", "#")):
        escaped = "\\" + escaped
    if escaped.endswith(" ") and not escaped.endswith("\\ "):
        escaped = escaped[:-1] + "\\ "
    return escaped
