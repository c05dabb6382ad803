"""A small synchronous Kafka protocol client for the operator tools: any Kafka cluster, and
groupctl's coordinator (which also serves `groupctl.protocol.extensions`).

Built for one-shot commands (bench/cli_latency.py measures them): it imports only the modules of
the messages it sends (`MESSAGES`, with `kafka_import`), uses kafka-python's interpreted codec
(compiling one pays off only over many messages), keeps one lazily opened connection per broker
address, negotiates versions once per connection (ApiVersions; then the highest version both
sides serve within the caller's range), and `call_many` pipelines across connections.

Invariants:
- A client's whole life is bounded: by default everything it does ends within `timeout` seconds
  of its creation (`deadline`), however many round trips it needs. A long-lived caller (a watch)
  passes its own `deadline` (`math.inf`: none); each exchange is still bounded by `timeout`
  (plus the server-side wait a long poll asks for).
- The operator's bound wins over the caller's: `Bootstrap.timeout_s` (the CLI's global
  `--timeout MS`) replaces the `timeout` an ops function passes (its default), and so do the
  `request.timeout.ms` / `default.api.timeout.ms` of `--command-config` when `--timeout` is not
  given (`Bootstrap.timeouts`).
- Expected failures are `Unreachable` (`ConnectionFailed` naming the node, once a bootstrap
  server was reached), `Unsupported` (a missing API or version) or `OpsError` (an undecodable
  response). A failed connection is dropped; the next request to that node connects again.
  Following a moved coordinator is `kafka_apis.GroupCoordinator`'s job; `find_coordinator` only
  asks again while the cluster has no coordinator for the group or the bootstrap connection drops.
- ApiVersionsResponse keeps kafka-python's own decode (an error answer is a v0 body whatever the
  version asked); UNSUPPORTED_VERSION is retried once, at the highest version the broker listed.
"""

from __future__ import annotations

import importlib
import io
import socket
import struct
import time
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence, Union

from kafka.errors import for_code
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.data_container import DataContainer

import groupctl
from groupctl.client.security import ClientSecurity
from groupctl.errors import AuthenticationFailed, BadInput, OpsError, Unreachable, Unsupported

DEFAULT_TIMEOUT = 8.0
"""Seconds a whole operation may take (as in `groupctl.client.zookeeper`): an unreachable or
silent cluster fails the command well within the CLI's promise of 10 s, interpreter start-up
included."""
CLIENT_ID = "groupctl"

API_VERSIONS = 18
METADATA = 3
FIND_COORDINATOR = 10
GROUP_KEY = 0
TRANSACTION_KEY = 1
"""FindCoordinator's key types."""
UNSUPPORTED_VERSION = 35

# Codes after which asking again (after finding the coordinator again) can succeed.
COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
RETRIABLE_COORDINATOR_ERRORS = frozenset(
    {COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR}
)
RETRY_BACKOFF_S = 0.05
"""The first pause before asking again; each further pause doubles, up to MAX_RETRY_BACKOFF_S."""
MAX_RETRY_BACKOFF_S = 0.5
MAX_RETRIES = 40
"""A retry loop's count bound, besides its time bound: 40 pauses of at most 0.5 s outlast
any operation's default 8 s budget, so in practice time runs out first."""

_LENGTH = struct.Struct(">i")

MESSAGES = {
    18: ("kafka.protocol.metadata.api_versions", "ApiVersions"),
    3: ("kafka.protocol.metadata.metadata", "Metadata"),
    10: ("kafka.protocol.metadata.find_coordinator", "FindCoordinator"),
    15: ("kafka.protocol.admin.groups", "DescribeGroups"),
    16: ("kafka.protocol.admin.groups", "ListGroups"),
    42: ("kafka.protocol.admin.groups", "DeleteGroups"),
    8: ("kafka.protocol.consumer.group", "OffsetCommit"),
    9: ("kafka.protocol.consumer.group", "OffsetFetch"),
    47: ("kafka.protocol.consumer.group", "OffsetDelete"),
    29: ("kafka.protocol.admin.acl", "DescribeAcls"),
    30: ("kafka.protocol.admin.acl", "CreateAcls"),
    31: ("kafka.protocol.admin.acl", "DeleteAcls"),
    50: ("kafka.protocol.admin.users", "DescribeUserScramCredentials"),
    51: ("kafka.protocol.admin.users", "AlterUserScramCredentials"),
    2: ("kafka.protocol.consumer.offsets", "ListOffsets"),
    17: ("kafka.protocol.sasl", "SaslHandshake"),
    36: ("kafka.protocol.sasl", "SaslAuthenticate"),
    61: ("kafka.protocol.admin.transactions", "DescribeProducers"),
    65: ("kafka.protocol.admin.transactions", "DescribeTransactions"),
    66: ("kafka.protocol.admin.transactions", "ListTransactions"),
    69: ("groupctl.protocol.consumer_group", "ConsumerGroupDescribe"),
    32000: ("groupctl.protocol.extensions", "GroupctlDescribeGroup"),
    32001: ("groupctl.protocol.extensions", "GroupctlTriggerRebalance"),
}
"""API key -> (module, message name) for the APIs the operator tools use."""


@cache
def message_classes(key: int) -> tuple[type, type]:
    """(request class, response class) of API `key`, importing as little as possible."""
    if key in MESSAGES:
        module_name, name = MESSAGES[key]
        module = importlib.import_module(module_name)
        return getattr(module, f"{name}Request"), getattr(module, f"{name}Response")
    from groupctl.protocol import schemas  # every message class: only for other APIs

    return schemas.request_class(key), schemas.response_class(key)


def encode_request(request: Any, version: int) -> bytes:
    """The framed request (size, header, body), byte for byte what `request.encode(header=True,
    framed=True)` gives, produced by kafka-python's interpreted codec.

    Why not `encode`: `ApiMessage.encode`/`decode` generate and compile a Python function per
    (message, version) the first time they meet it, ~0.4-1.5 ms each. That pays off over the
    thousands of messages a coordinator handles, not in a one-shot command: `group describe`
    meets fourteen (~10 ms). The interpreted codec (`DataContainer.encode`/`decode`, the schema
    walk those functions are generated from) takes 10-150 us per small message. A class that
    overrides `encode` keeps its own: the protocol rule it carries wins over speed.
    """
    if type(request).encode is not ApiMessage.encode:
        return bytes(request.encode(version=version, header=True, framed=True))
    flexible = request.flexible_version_q(version)
    header = request.encode_header(flexible=flexible)
    body = DataContainer.encode(request, version=version, compact=flexible, tagged=flexible)
    return _LENGTH.pack(len(header) + len(body)) + header + body


def decode_response(cls: type, frame: bytes, version: int) -> tuple[int, Any]:
    """(correlation id, response) of the unframed response `frame` of message class `cls`: the
    response `cls.decode(frame, version=version, header=True)` gives, through the interpreted
    codec (see `encode_request`), without the header attached.

    A class that overrides `decode` keeps its own: ApiVersionsResponse reads an error answer as
    a v0 body whatever the version asked. Malformed input raises what kafka-python raises
    (IndexError, struct.error, ValueError, ...).
    """
    if cls.decode.__func__ is not ApiMessage.decode.__func__:
        response = cls.decode(frame, version=version, header=True)
        return response.header.correlation_id, response
    data = io.BytesIO(frame)
    header = cls.parse_header(data, version=version)
    flexible = cls.flexible_version_q(version)
    response = super(ApiMessage, cls).decode(data, version=version, compact=flexible, tagged=flexible)
    return header.correlation_id, response


Build = Callable[[type, int], Any]
"""`build(versioned_request_class, version) -> request`: builds the request at the negotiated
version (nested structs are attributes of the class, e.g. `cls.ListOffsetsTopic`)."""


def retry_pauses(deadline: float) -> Iterator[float]:
    """The pauses of one retry loop: RETRY_BACKOFF_S doubling up to MAX_RETRY_BACKOFF_S, at most
    MAX_RETRIES of them, ending when the next pause would reach `deadline` (a
    `time.monotonic()` value). A caller sleeps each pause before trying again and gives up
    (re-raising what it last got) when the pauses end."""
    pause = RETRY_BACKOFF_S
    for _ in range(MAX_RETRIES):
        if time.monotonic() + pause >= deadline:
            return
        yield pause
        pause = min(pause * 2, MAX_RETRY_BACKOFF_S)


_RENAMED = {6: "NOT_LEADER_OR_FOLLOWER"}
"""Codes kafka-python still names as Kafka did before (NOT_LEADER_FOR_PARTITION, renamed in 2.7)."""


def error_name(code: int) -> str:
    """Kafka's name for an error code ("NON_EMPTY_GROUP"), or "error <code>" if unknown."""
    if code in _RENAMED:
        return _RENAMED[code]
    error = for_code(code)
    if error.__name__ == "UnrecognizedBrokerError":
        return f"error {code}"
    return error.message


@dataclass(frozen=True)
class Node:
    """A broker (or coordinator) as the cluster advertises it."""

    node_id: int
    host: str
    port: int

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def to_json(self) -> dict:
        return {"node_id": self.node_id, "host": self.host, "port": self.port}


@dataclass(frozen=True)
class Call:
    """One request for `call_many`: sent to `node` (None: any bootstrap server)."""

    node: Optional[Node]
    key: int
    versions: tuple[int, int]
    build: Build
    extra_wait_s: float = 0.0  # server-side waiting the request asks for (long polls)


@dataclass(frozen=True)
class ClusterMetadata:
    brokers: Mapping[int, Node]
    partitions: Mapping[str, Mapping[int, int]]
    """topic -> partition -> leader node id (-1 when the partition has no leader)."""
    missing: frozenset[str]
    """Requested topics the cluster does not have."""
    leader_epochs: Mapping[str, Mapping[int, int]] = field(default_factory=dict)
    """topic -> partition -> its leader's epoch (Metadata v7+; -1 when the cluster reports none)."""

    def leader(self, topic: str, partition: int) -> Optional[Node]:
        leader_id = self.partitions.get(topic, {}).get(partition, -1)
        return self.brokers.get(leader_id)

    def leader_epoch(self, topic: str, partition: int) -> Optional[int]:
        """The partition's current leader epoch, or None when the cluster reports none (a broker
        before Kafka 2.1, or one without leader epochs)."""
        epoch = self.leader_epochs.get(topic, {}).get(partition, -1)
        return epoch if epoch >= 0 else None


@dataclass(frozen=True)
class Bootstrap:
    """How to reach a cluster: its bootstrap servers, the client's TLS/SASL settings, and the
    operator's bound on every wait (`timeout_s`, the CLI's `--timeout`; None: not given)."""

    servers: str
    security: ClientSecurity = ClientSecurity()
    timeout_s: Optional[float] = None

    def __str__(self) -> str:
        return self.servers

    def timeouts(self, default: float) -> tuple[float, float]:
        """(each exchange, the whole client) in seconds: `timeout_s` for both when given; else
        the command config's `request.timeout.ms` (each exchange) and `default.api.timeout.ms`
        (the whole client), either standing for the other when alone; else `default` (what the
        caller passed)."""
        if self.timeout_s is not None:
            return self.timeout_s, self.timeout_s
        request, api = self.security.request_timeout_s, self.security.api_timeout_s
        step = request if request is not None else api if api is not None else default
        return step, api if api is not None else step


BootstrapLike = Union[str, Bootstrap]
"""What ops functions take: "host:port,..." (PLAINTEXT) or a Bootstrap."""


def as_bootstrap(value: BootstrapLike) -> Bootstrap:
    return value if isinstance(value, Bootstrap) else Bootstrap(value)


def parse_bootstrap(bootstrap: str) -> list[tuple[str, int]]:
    """"host:port[,host:port...]" -> addresses; BadInput when malformed."""
    addresses = []
    for item in (part.strip() for part in (bootstrap or "").split(",")):
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        host = host.strip("[]")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise BadInput(f"bootstrap server '{item}' is not HOST:PORT")
        addresses.append((host, int(port)))
    if not addresses:
        raise BadInput("no bootstrap server given (use --bootstrap HOST:PORT or GROUPCTL_BOOTSTRAP)")
    return addresses


class ConnectionFailed(Unreachable):
    """A node could not be reached, or the connection to `node` (None: the bootstrap
    connection) failed mid-exchange: dropped, reset, timed out. The connection is gone; the next
    request to that node connects again. (Not reaching any bootstrap server is plain
    `Unreachable`: there is nothing to try again.)"""

    def __init__(self, message: str, node: Optional[Node]) -> None:
        super().__init__(message)
        self.node = node


class _TransportError(Exception):
    """A socket failed or timed out; becomes `Unreachable` with context at the client's edge."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"{where}: {reason}")
        self.where = where
        self.reason = reason


def _reason(exc: BaseException) -> str:
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return "timed out"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, socket.gaierror):
        return f"cannot resolve host ({exc.strerror or exc})"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc) or type(exc).__name__


class _Connection:
    """One socket to one broker, after the ApiVersions exchange."""

    def __init__(self, sock: socket.socket, where: str, client_id: str) -> None:
        self.sock = sock
        self.where = where
        self.client_id = client_id
        self.api_versions: dict[int, tuple[int, int]] = {}
        self._correlation_id = 0

    def close(self) -> None:
        self.sock.close()

    def version_for(self, key: int, versions: tuple[int, int]) -> int:
        return negotiated_version(self.where, self.api_versions, key, versions)

    def send(self, key: int, version: int, build: Build, deadline: float) -> int:
        request = build(message_classes(key)[0][version], version)
        self._correlation_id += 1
        request.with_header(correlation_id=self._correlation_id, client_id=self.client_id)
        data = encode_request(request, version)
        try:
            self.sock.settimeout(max(deadline - time.monotonic(), 0.001))
            self.sock.sendall(data)
        except OSError as exc:
            raise _TransportError(self.where, _reason(exc)) from None
        return self._correlation_id

    def receive(self, key: int, version: int, correlation_id: int, deadline: float) -> Any:
        frame = self._read_frame(deadline)
        try:
            answered, response = decode_response(message_classes(key)[1][version], frame, version)
        except Exception as exc:  # kafka-python raises bare IndexError/struct.error/ValueError
            raise OpsError(f"undecodable response from {self.where} (API {key} v{version}): {exc}") from None
        if answered != correlation_id:
            raise OpsError(f"{self.where} answered correlation id {answered}, expected {correlation_id}")
        return response

    def _read_frame(self, deadline: float) -> bytes:
        (length,) = _LENGTH.unpack(self._read_exactly(4, deadline))
        if length <= 0:
            raise OpsError(f"{self.where} sent an invalid frame length {length}")
        return self._read_exactly(length, deadline)

    def _read_exactly(self, count: int, deadline: float) -> bytes:
        buffer = bytearray(count)
        view = memoryview(buffer)
        got = 0
        while got < count:
            remaining = deadline - time.monotonic()
            try:
                if remaining <= 0:
                    raise socket.timeout()
                self.sock.settimeout(remaining)
                n = self.sock.recv_into(view[got:])
            except OSError as exc:  # socket.timeout included
                raise _TransportError(self.where, _reason(exc)) from None
            if n == 0:
                raise _TransportError(self.where, "connection closed by the server")
            got += n
        return bytes(buffer)

    def negotiate(self, deadline: float) -> None:
        """ApiVersions: learn what the broker serves (retrying lower on UNSUPPORTED_VERSION)."""
        version: Optional[int] = message_classes(API_VERSIONS)[0].valid_versions[1]
        while version is not None:
            correlation_id = self.send(API_VERSIONS, version, build_api_versions, deadline)
            response = self.receive(API_VERSIONS, version, correlation_id, deadline)
            self.api_versions, version = api_versions_answer(self.where, response, version)


def api_versions_answer(where: str, response: Any, version: int) -> tuple[dict[int, tuple[int, int]], Optional[int]]:
    """(what the broker serves, None) from an ApiVersions answer to `version`; after
    UNSUPPORTED_VERSION at a version above 0, ({}, the version to ask next: the highest it listed,
    below this one); Unsupported otherwise."""
    served = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    if response.error_code == 0:
        return served, None
    if response.error_code == UNSUPPORTED_VERSION and version > 0:
        return {}, min(served.get(API_VERSIONS, (0, 0))[1], version - 1)
    raise Unsupported(f"{where} refused ApiVersions: {error_name(response.error_code)}")


def negotiated_version(where: str, api_versions: Mapping[int, tuple[int, int]], key: int,
                       versions: tuple[int, int]) -> int:
    """The highest version in `versions` the broker at `where` also serves (`api_versions`, from its
    ApiVersions answer); Unsupported otherwise."""
    lo, hi = versions
    served = api_versions.get(key)
    name = message_classes(key)[0].name.removesuffix("Request")
    if served is None:
        raise Unsupported(f"{where} does not support {name} (API {key})")
    version = min(hi, served[1])
    if version < max(lo, served[0]):
        raise Unsupported(f"{where} serves {name} v{served[0]}-v{served[1]}; groupctl needs v{lo}-v{hi}")
    return version


def build_api_versions(cls: type, version: int) -> Any:
    return cls(client_software_name="groupctl", client_software_version=groupctl.__version__)


def _tls_handshake(context: Any, sock: socket.socket, host: str, port: int, deadline: float) -> socket.socket:
    """`sock` wrapped in TLS, the handshake done (AuthenticationFailed names why it failed)."""
    import ssl

    try:
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        return context.wrap_socket(sock, server_hostname=host)
    except ssl.SSLCertVerificationError as exc:
        sock.close()
        raise AuthenticationFailed(f"TLS handshake with {host}:{port} failed: certificate verify failed: "
                                   f"{exc.verify_message or exc.reason}{_hint(exc)}") from None
    except ssl.SSLError as exc:
        sock.close()
        raise AuthenticationFailed(f"TLS handshake with {host}:{port} failed: {exc.reason or exc} "
                                   "(is it a TLS listener?)") from None
    except OSError as exc:
        sock.close()
        raise _TransportError(f"{host}:{port}", f"TLS handshake: {_reason(exc)}") from None


def _hint(exc: Any) -> str:
    if "hostname" in (exc.verify_message or "").lower() or "mismatch" in (exc.verify_message or "").lower():
        return " (the certificate does not name this host; check the bootstrap address)"
    if exc.verify_code in (19, 20, 21):  # self-signed in chain, unknown issuer, unable to verify
        return " (trust its CA with ssl.truststore.location or ssl.ca.location)"
    return ""


def sasl_authenticate(connection: "_Connection", security: ClientSecurity, deadline: float) -> None:
    """SaslHandshake, then SaslAuthenticate until the mechanism completes (KIP-152);
    AuthenticationFailed with the broker's reason otherwise."""
    from groupctl.client.sasl import authenticate

    def call(key: int, versions: tuple[int, int], build: Build) -> Any:
        version = connection.version_for(key, versions)
        correlation_id = connection.send(key, version, build, deadline)
        return connection.receive(key, version, correlation_id, deadline)

    authenticate(call, security, connection.where)


class KafkaClient:
    """Connections to one cluster; use as a context manager (closes every socket).

    `deadline` (a `time.monotonic()` value) bounds everything the client does; the default is
    `timeout` seconds from now, `math.inf` lifts the bound (each exchange is still bounded by
    `timeout`). An operator's bound carried by the Bootstrap (`Bootstrap.timeouts`) replaces
    `timeout`.
    """

    def __init__(self, bootstrap: BootstrapLike, *, timeout: float = DEFAULT_TIMEOUT, client_id: str = CLIENT_ID,
                 deadline: Optional[float] = None) -> None:
        target = as_bootstrap(bootstrap)
        self.bootstrap = target.servers
        self.security = target.security
        self.timeout, whole = target.timeouts(timeout)
        self.client_id = self.security.client_id or client_id
        self.deadline = time.monotonic() + whole if deadline is None else deadline
        self._addresses = parse_bootstrap(target.servers)
        self._tls = self.security.ssl_context() if self.security.tls else None
        self._connections: dict[tuple[str, int], _Connection] = {}
        self._bootstrap: Optional[_Connection] = None

    def __enter__(self) -> "KafkaClient":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def close(self) -> None:
        for connection in set(self._connections.values()):
            connection.close()
        self._connections.clear()
        self._bootstrap = None

    def _within(self, seconds: float) -> float:
        """The deadline of a step allowed `seconds`, cut to the client's own deadline."""
        return min(time.monotonic() + seconds, self.deadline)

    def _budget(self, started: float) -> str:
        """How long a step that started at `started` was allowed, for messages ("8", "2.5")."""
        return f"{min(self.timeout, self.deadline - started):.2g}"

    # -- connections ------------------------------------------------------------------------

    def _open(self, host: str, port: int, deadline: float) -> _Connection:
        """Connect and negotiate; _TransportError when either fails."""
        try:
            sock = socket.create_connection((host, port), timeout=max(deadline - time.monotonic(), 0.001))
        except OSError as exc:
            raise _TransportError(f"{host}:{port}", _reason(exc)) from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self._tls is not None:
            sock = _tls_handshake(self._tls, sock, host, port, deadline)
        connection = _Connection(sock, f"{host}:{port}", self.client_id)
        try:
            connection.negotiate(deadline)
            if self.security.sasl:
                sasl_authenticate(connection, self.security, deadline)
        except (OpsError, _TransportError):
            connection.close()
            raise
        self._connections[(host, port)] = connection
        peer = sock.getpeername()[:2]
        self._connections.setdefault((peer[0], peer[1]), connection)
        return connection

    def _bootstrap_connection(self) -> _Connection:
        if self._bootstrap is not None:
            return self._bootstrap
        started = time.monotonic()
        deadline = self._within(self.timeout)
        reason = "no address"
        for host, port in self._addresses:
            if time.monotonic() >= deadline:
                reason = "timed out"
                break
            try:
                self._bootstrap = self._open(host, port, deadline)
                return self._bootstrap
            except _TransportError as exc:
                reason = exc.reason
        raise Unreachable(f"cannot reach bootstrap {self.bootstrap} within {self._budget(started)}s: {reason}")

    def connection(self, node: Optional[Node] = None) -> "_Connection":
        """The (possibly new) connection to `node`, or to a bootstrap server for None."""
        if node is None:
            return self._bootstrap_connection()
        if not self._connections:
            self._bootstrap_connection()
        existing = self._connections.get((node.host, node.port))
        if existing is not None:
            return existing
        started = time.monotonic()
        try:
            return self._open(node.host, node.port, self._within(self.timeout))
        except _TransportError as exc:
            raise ConnectionFailed(
                f"cannot reach node {node.node_id} ({node.address}) within {self._budget(started)}s: {exc.reason}",
                node,
            ) from None

    def supports(self, node: Optional[Node], key: int) -> bool:
        return key in self.connection(node).api_versions

    # -- requests ---------------------------------------------------------------------------

    def call(self, node: Optional[Node], key: int, versions: tuple[int, int], build: Build,
             *, extra_wait_s: float = 0.0) -> Any:
        """Send one request and return its decoded response (`response.version` is the version)."""
        return self.call_many([Call(node, key, versions, build, extra_wait_s)])[0]

    def call_many(self, calls: Sequence[Call]) -> list[Any]:
        """Pipeline `calls`: write them all, then read the responses (in `calls` order).
        ConnectionFailed names the node of the call whose exchange failed."""
        sent = []
        deadline = self._within(self.timeout + max((c.extra_wait_s for c in calls), default=0.0))
        failed: Optional[Node] = None
        try:
            for call in calls:
                failed = call.node
                connection = self.connection(call.node)
                version = connection.version_for(call.key, call.versions)
                cid = connection.send(call.key, version, call.build, deadline)
                sent.append((call, connection, version, cid))
            responses = []
            for call, connection, version, cid in sent:
                failed = call.node
                responses.append(connection.receive(call.key, version, cid, deadline))
            return responses
        except _TransportError as exc:
            self._forget(exc.where)
            raise ConnectionFailed(f"lost connection to {exc.where}: {exc.reason}", failed) from None

    def _forget(self, where: str) -> None:
        """Drop a failed connection (its stream position is unknown after a failure)."""
        for address, connection in list(self._connections.items()):
            if connection.where == where:
                connection.close()
                del self._connections[address]
                if connection is self._bootstrap:
                    self._bootstrap = None

    # -- cluster lookups --------------------------------------------------------------------

    def metadata(self, topics: Optional[Sequence[str]] = None) -> ClusterMetadata:
        """Brokers and partition leaders, for `topics` (None: every topic). Never creates topics."""

        def build(cls: type, version: int) -> Any:
            wanted = None if topics is None else [cls.MetadataRequestTopic(name=t) for t in topics]
            return cls(topics=wanted, allow_auto_topic_creation=False)

        response = self.call(None, METADATA, (1, 12), build)
        brokers = {b.node_id: Node(b.node_id, b.host, b.port) for b in response.brokers}
        partitions: dict[str, dict[int, int]] = {}
        epochs: dict[str, dict[int, int]] = {}
        missing = set()
        for topic in response.topics:
            if topic.error_code == 3:  # UNKNOWN_TOPIC_OR_PARTITION
                missing.add(topic.name)
                continue
            partitions[topic.name] = {p.partition_index: p.leader_id for p in topic.partitions}
            epochs[topic.name] = {p.partition_index: p.leader_epoch if response.version >= 7 else -1
                                  for p in topic.partitions}
        return ClusterMetadata(brokers, partitions, frozenset(missing), epochs)

    def find_coordinator(self, group: str, key_type: int = GROUP_KEY) -> Node:
        """The group's coordinator (with TRANSACTION_KEY: the transactional id's), asking again
        (within the timeout) while the cluster has none for it yet or the bootstrap connection
        drops."""

        def build(cls: type, version: int) -> Any:
            return cls(key=group, key_type=key_type)

        pauses = retry_pauses(self._within(self.timeout))
        while True:
            try:
                response = self.call(None, FIND_COORDINATOR, (0, 3), build)
            except ConnectionFailed as exc:
                # The bootstrap server went away mid-request: the next call connects again,
                # to whichever bootstrap server answers.
                failure: OpsError = exc
            else:
                if response.error_code == 0:
                    return Node(response.node_id, response.host, response.port)
                what = "group" if key_type == GROUP_KEY else "transactional id"
                failure = Unreachable(f"no coordinator for {what} '{group}': {error_name(response.error_code)}")
                if response.error_code not in RETRIABLE_COORDINATOR_ERRORS:
                    raise failure
            pause = next(pauses, None)
            if pause is None:
                raise failure
            time.sleep(pause)
