"""How the tools reach a secured cluster: TLS and SASL settings from Kafka client properties.

`--command-config FILE` takes what kafka-consumer-groups.sh takes: Java client properties
(`security.protocol`, `sasl.mechanism`, `sasl.jaas.config`, `ssl.truststore.*`,
`ssl.keystore.*` in PEM, `ssl.endpoint.identification.algorithm`), and librdkafka's spellings of
the same settings (`sasl.username`, `sasl.password`, `ssl.ca.location`, ...), so one file serves
both kinds of tools. The file may also hold `client.id` and the timeouts kafka-consumer-groups.sh
users put there (`request.timeout.ms`, `default.api.timeout.ms`): they bound the client's waits
when the global `--timeout` is not given (`groupctl.client.kafka.Bootstrap.timeouts`).
`GROUPCTL_KAFKA_<PROPERTY>` environment variables (`SASL_PASSWORD` for `sasl.password`: upper
case, '_' for '.') set properties too and win over the file's.

Invariants:
- Every property is understood or refused: an unknown key, an unsupported value, or a key store
  that is not PEM is one BadInput naming the key (exit 2), never silently ignored.
- Secrets (passwords, keys, JAAS text) are never part of a repr or a message.
"""

from __future__ import annotations

import os
import re
import ssl
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional

from groupctl.errors import BadInput
from groupctl.security.protocols import PROTOCOLS, uses_sasl, uses_tls

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
ENV_PREFIX = "GROUPCTL_KAFKA_"
LOGIN_MODULES = {
    "org.apache.kafka.common.security.plain.PlainLoginModule": ("PLAIN",),
    "org.apache.kafka.common.security.scram.ScramLoginModule": ("SCRAM-SHA-256", "SCRAM-SHA-512"),
}
JAAS = re.compile(r'^\s*(?P<module>[\w.$]+)\s+(?P<flag>required|requisite|sufficient|optional)\s*(?P<options>.*?);?\s*$',
                  re.S)
JAAS_OPTION = re.compile(r'\s*([\w.]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|(\S+))')

# Keys that name the same setting in the Java client and in librdkafka (first: the Java name).
_ALIASES = {
    "sasl.mechanisms": "sasl.mechanism",
    "ssl.ca.location": "ssl.truststore.location",
    "ssl.ca.pem": "ssl.truststore.certificates",
    "ssl.certificate.location": "ssl.keystore.certificate.location",
    "ssl.certificate.pem": "ssl.keystore.certificate.chain",
    "ssl.key.pem": "ssl.keystore.key",
}
_SECRETS = {"sasl.password", "sasl.jaas.config", "ssl.key.password", "ssl.keystore.password", "ssl.keystore.key"}
"""Kept exactly as written (a password may end in a space, as Java properties allow)."""
_KNOWN = {
    "security.protocol", "sasl.mechanism", "sasl.jaas.config", "sasl.username", "sasl.password",
    "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.certificates", "ssl.truststore.password",
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.certificate.location",
    "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.keystore.password", "ssl.key.location",
    "ssl.key.password", "ssl.endpoint.identification.algorithm", "enable.ssl.certificate.verification",
    "client.id", "request.timeout.ms", "default.api.timeout.ms",
}
_TIMEOUTS = ("request.timeout.ms", "default.api.timeout.ms")


@dataclass(frozen=True)
class ClientSecurity:
    """A client's TLS and SASL settings (the default: PLAINTEXT, nothing to set up)."""

    protocol: str = "PLAINTEXT"
    mechanism: str = "PLAIN"
    username: Optional[str] = None
    password: Optional[str] = field(default=None, repr=False)
    ca_file: Optional[str] = None  # PEM file of trusted CAs (None: the system's)
    ca_pem: Optional[str] = field(default=None, repr=False)  # inline PEM of trusted CAs
    cert_file: Optional[str] = None  # the client certificate (mutual TLS), PEM
    cert_pem: Optional[str] = field(default=None, repr=False)
    key_file: Optional[str] = None  # its private key, PEM (None: in cert_file)
    key_pem: Optional[str] = field(default=None, repr=False)
    key_password: Optional[str] = field(default=None, repr=False)
    check_hostname: bool = True  # ssl.endpoint.identification.algorithm=https (Kafka's default)
    verify: bool = True  # librdkafka's enable.ssl.certificate.verification
    client_id: Optional[str] = None
    request_timeout_s: Optional[float] = None  # request.timeout.ms: each exchange
    api_timeout_s: Optional[float] = None  # default.api.timeout.ms: a whole operation

    @property
    def tls(self) -> bool:
        return uses_tls(self.protocol)

    @property
    def sasl(self) -> bool:
        return uses_sasl(self.protocol)

    def ssl_context(self) -> ssl.SSLContext:
        """The TLS context of every connection (BadInput when the material cannot be loaded)."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies certificates and host names
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            if self.ca_file or self.ca_pem:
                context.load_verify_locations(cafile=self.ca_file, cadata=self.ca_pem)
            else:  # the system's CAs (~20 ms to load: only when no trust store is given)
                context.load_default_certs(ssl.Purpose.SERVER_AUTH)
            if self.cert_file or self.cert_pem:
                _load_client_certificate(context, self)
        except (OSError, ssl.SSLError) as exc:
            raise BadInput(f"cannot load TLS material: {getattr(exc, 'strerror', None) or exc}") from None
        context.check_hostname = self.check_hostname and self.verify
        if not self.verify:
            context.verify_mode = ssl.CERT_NONE
        return context


def _load_client_certificate(context: ssl.SSLContext, security: ClientSecurity) -> None:
    """The client certificate and key, from files or inline PEM (written to a private temporary
    file for the moment `load_cert_chain` reads it: the ssl module loads only files)."""
    if security.cert_file and not security.key_pem:
        context.load_cert_chain(security.cert_file, security.key_file, password=security.key_password)
        return
    with tempfile.TemporaryDirectory(prefix="groupctl-tls-") as directory:
        chain = Path(directory) / "chain.pem"
        fd = os.open(chain, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(security.cert_pem or Path(security.cert_file or "").read_text())
            out.write("\n")
            if security.key_pem:
                out.write(security.key_pem)
            elif security.key_file:
                out.write(Path(security.key_file).read_text())
        context.load_cert_chain(str(chain), password=security.key_password)


def parse_properties(text: str) -> dict[str, str]:
    """Java `.properties` text -> {key: value}: `#`/`!` comments, `=`, `:` or blank separators,
    backslash line continuations and escapes (`\\t`, `\\n`, `\\u` and four hex digits)."""
    properties: dict[str, str] = {}
    logical = ""
    for raw in text.splitlines():
        line = raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        if _continues(line):
            logical += line[:-1]
            continue
        logical += line
        key, value = _split_property(logical)
        properties[key] = value
        logical = ""
    if logical:
        key, value = _split_property(logical)
        properties[key] = value
    return properties


def _continues(line: str) -> bool:
    """Whether `line` ends in an odd number of backslashes (a continuation)."""
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _split_property(line: str) -> tuple[str, str]:
    key_chars = []
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\" and i + 1 < len(line):
            key_chars.append(line[i:i + 2])
            i += 2
            continue
        if c in "=: \t\f":
            break
        key_chars.append(c)
        i += 1
    rest = line[i:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return _unescape("".join(key_chars)), _unescape(rest)


def _unescape(text: str) -> str:
    def replace(match: re.Match) -> str:
        escaped = match.group(1)
        if escaped.startswith("u"):
            return chr(int(escaped[1:], 16))
        return {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(escaped, escaped)

    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", replace, text)


def load_security(config_file: Optional[Path], environ: Mapping[str, str]) -> ClientSecurity:
    """The settings from `config_file` (None: none) overridden by GROUPCTL_KAFKA_* variables."""
    properties: dict[str, str] = {}
    if config_file is not None:
        try:
            properties.update(parse_properties(Path(config_file).read_text()))
        except (OSError, UnicodeDecodeError) as exc:
            raise BadInput(f"--command-config {config_file}: {getattr(exc, 'strerror', None) or exc}") from None
    for name, value in environ.items():
        if name.startswith(ENV_PREFIX) and len(name) > len(ENV_PREFIX):
            properties[name[len(ENV_PREFIX):].lower().replace("_", ".")] = value
    return security_from_properties(properties)


def security_from_properties(properties: Mapping[str, str]) -> ClientSecurity:
    """Java client or librdkafka properties -> ClientSecurity (BadInput names a bad key)."""
    settings: dict[str, str] = {}
    for key, value in properties.items():
        name = _ALIASES.get(key, key)
        if name not in _KNOWN:
            raise BadInput(f"unsupported client property {key!r} (groupctl reads security.protocol, sasl.* "
                           "and ssl.* settings, client.id, request.timeout.ms and default.api.timeout.ms: "
                           "see docs/security.md)")
        settings[name] = value if name in _SECRETS else value.strip()
    protocol = settings.get("security.protocol", "PLAINTEXT").upper()
    if protocol not in PROTOCOLS:
        raise BadInput(f"security.protocol={settings['security.protocol']!r}: expected one of {', '.join(PROTOCOLS)}")
    mechanism = settings.get("sasl.mechanism", "PLAIN").upper()
    if mechanism not in MECHANISMS:
        raise BadInput(f"sasl.mechanism={settings['sasl.mechanism']!r} is not supported "
                       f"(groupctl speaks {', '.join(MECHANISMS)})")
    username, password = settings.get("sasl.username"), settings.get("sasl.password")
    if "sasl.jaas.config" in settings:
        username, password = _jaas_credentials(settings["sasl.jaas.config"], mechanism)
    if protocol.startswith("SASL") and (not username or password is None):
        raise BadInput(f"security.protocol={protocol} needs a user and password (sasl.jaas.config, or "
                       "sasl.username and sasl.password)")
    for store in ("truststore", "keystore"):
        kind = settings.get(f"ssl.{store}.type", "PEM").upper()
        if kind != "PEM":
            raise BadInput(f"ssl.{store}.type={kind}: groupctl reads PEM only; convert the {store} to PEM "
                           f"(e.g. keytool -importkeystore -deststoretype PKCS12, then openssl pkcs12 -nodes)")
    if "ssl.truststore.password" in settings:
        raise BadInput("ssl.truststore.password: a PEM trust store has no password (remove the key)")
    algorithm = settings.get("ssl.endpoint.identification.algorithm", "https").lower()
    if algorithm not in ("https", "", "none"):
        raise BadInput(f"ssl.endpoint.identification.algorithm={algorithm!r}: expected https or empty")
    verification = settings.get("enable.ssl.certificate.verification", "true").lower()
    if verification not in ("true", "false"):
        raise BadInput(f"enable.ssl.certificate.verification={verification!r}: expected true or false")
    keystore = settings.get("ssl.keystore.location")
    request_ms, api_ms = (_milliseconds(settings, key) for key in _TIMEOUTS)
    return ClientSecurity(
        protocol=protocol, mechanism=mechanism, username=username, password=password,
        ca_file=settings.get("ssl.truststore.location"), ca_pem=settings.get("ssl.truststore.certificates"),
        cert_file=settings.get("ssl.keystore.certificate.location") or keystore,
        cert_pem=settings.get("ssl.keystore.certificate.chain"),
        key_file=settings.get("ssl.key.location") or keystore,
        key_pem=settings.get("ssl.keystore.key"),
        key_password=settings.get("ssl.key.password") or settings.get("ssl.keystore.password"),
        check_hostname=algorithm == "https", verify=verification == "true",
        client_id=settings.get("client.id"),
        request_timeout_s=None if request_ms is None else request_ms / 1000,
        api_timeout_s=None if api_ms is None else api_ms / 1000,
    )


def _milliseconds(settings: Mapping[str, str], key: str) -> Optional[int]:
    """`key`'s value as a positive whole number of milliseconds (None when not set)."""
    if key not in settings:
        return None
    value = settings[key]
    if not re.fullmatch(r"[0-9]+", value) or int(value) < 1:
        raise BadInput(f"{key}={value!r}: expected a positive number of milliseconds")
    return int(value)


def _jaas_credentials(text: str, mechanism: str) -> tuple[str, str]:
    """(username, password) of a PlainLoginModule or ScramLoginModule `sasl.jaas.config`."""
    match = JAAS.match(text)
    if not match:
        raise BadInput("sasl.jaas.config is not 'LoginModule required username=\"...\" password=\"...\";'")
    module = match.group("module")
    if module not in LOGIN_MODULES:
        raise BadInput(f"sasl.jaas.config: login module {module} is not supported (PlainLoginModule for PLAIN, "
                       "ScramLoginModule for SCRAM-SHA-256/512)")
    if mechanism not in LOGIN_MODULES[module]:
        raise BadInput(f"sasl.jaas.config: {module.rsplit('.', 1)[1]} does not serve sasl.mechanism={mechanism}")
    options = {key: quoted.replace('\\"', '"').replace("\\\\", "\\") if quoted is not None else bare
               for key, quoted, bare in JAAS_OPTION.findall(match.group("options"))}
    if "username" not in options or "password" not in options:
        raise BadInput("sasl.jaas.config needs username=\"...\" and password=\"...\"")
    return options["username"], options["password"]
