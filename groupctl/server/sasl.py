"""SASL on the node's SASL_PLAINTEXT and SASL_SSL listeners (KIP-43, KIP-152): one authenticator
per connection, answering SaslHandshake and SaslAuthenticate as Apache Kafka's
`SaslServerAuthenticator` does.

Flow: ApiVersions (optional), SaslHandshake v1 naming a mechanism, then SaslAuthenticate
requests carrying the mechanism's tokens until it completes. PLAIN is one token
(`authzid NUL user NUL password`); SCRAM-SHA-256/512 are RFC 5802's client-first and
client-final (scramp's server does the arithmetic). Both check the user's stored SCRAM
credentials (`/config/users/<user>`), so one `groupctl user add` serves every mechanism: PLAIN
recomputes the stored key from the password with the stored salt and iterations.

PLAIN costs one PBKDF2 derivation per stored credential (1.5-11 ms at 4096-16384 iterations):
it runs in a small thread pool (hashlib releases the GIL), never on the event loop, so logins
cannot stall heartbeats; an unknown user costs the same derivation (timing does not tell which
users exist).

Invariants:
- A connection is authenticated only by a completed mechanism; its principal is then
  `User:<user>`. Until then the connection may send ApiVersions, SaslHandshake and
  SaslAuthenticate only (the connection closes on anything else: `IllegalSaslState`).
- Every failure answers SASL_AUTHENTICATION_FAILED with one message that does not say whether
  the user exists, and the connection closes after that answer.
- Passwords and keys are never logged.

Deliberate differences from Apache Kafka: SaslHandshake v0 (raw SASL tokens without Kafka
framing, before KIP-152) is not served, and re-authentication (KIP-368) is not offered
(`session_lifetime_ms` is 0).
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Awaitable, Callable, Optional

from scramp import ScramException, ScramMechanism

from groupctl.coordinator.errors import ErrorCode
from groupctl.layout.credentials import ScramCredential
from groupctl.security.scram import MAX_ITERATIONS, MIN_ITERATIONS, make_credential, password_matches

Lookup = Callable[[str], Awaitable[dict[str, ScramCredential]]]
"""`await lookup(user)`: the user's stored credentials by mechanism ({} for an unknown user)."""

PLAIN = "PLAIN"
SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
INVALID_PLAIN = "Authentication failed: Invalid username or password"
_PASSWORD_CHECKS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="groupctl-plain")
"""Where PLAIN passwords are derived: two threads, so logins use at most the machine's two cores
and a flood of them queues here instead of on the event loop."""
_DECOY = make_credential("SCRAM-SHA-256", "groupctl decoy: an unknown user costs a real derivation")


class IllegalSaslState(Exception):
    """A request the SASL exchange does not allow at this point; the connection closes."""


@dataclass(frozen=True)
class Step:
    """The answer to one SaslAuthenticate: the server's token, or the failure."""

    auth_bytes: bytes = b""
    error: ErrorCode = ErrorCode.NONE
    message: Optional[str] = None


class SaslAuthenticator:
    """The SASL state of one connection: handshake, then the mechanism's exchange."""

    def __init__(self, enabled: tuple[str, ...], lookup: Lookup) -> None:
        self.enabled = enabled
        self._lookup = lookup
        self.mechanism: Optional[str] = None
        self.user: Optional[str] = None  # set once authentication completes
        self._scram = None  # scramp's server, between client-first and client-final

    @property
    def complete(self) -> bool:
        return self.user is not None

    @property
    def principal(self) -> str:
        return f"User:{self.user}"

    def handshake(self, mechanism: str) -> ErrorCode:
        """SaslHandshake: choose the mechanism (UNSUPPORTED_SASL_MECHANISM if not enabled)."""
        if self.mechanism is not None:
            raise IllegalSaslState("a second SaslHandshake")
        if mechanism not in self.enabled:
            return ErrorCode.UNSUPPORTED_SASL_MECHANISM
        self.mechanism = mechanism
        return ErrorCode.NONE

    async def authenticate(self, token: bytes) -> Step:
        """SaslAuthenticate: one token of the chosen mechanism's exchange."""
        if self.mechanism is None:
            raise IllegalSaslState("SaslAuthenticate before SaslHandshake")
        if self.mechanism == PLAIN:
            return await self._plain(token)
        return await self._scram_step(token)

    async def _plain(self, token: bytes) -> Step:
        parts = token.split(b"\0")
        if len(parts) != 3:
            return _failed("Authentication failed: invalid SASL/PLAIN response: expected 3 tokens")
        authzid, user, password = (_text(part) for part in parts)
        if user is None or password is None or authzid is None:
            return _failed("Authentication failed: invalid SASL/PLAIN response: not UTF-8")
        if not user:
            return _failed("Authentication failed: username not specified")
        if not password:
            return _failed("Authentication failed: password not specified")
        if authzid and authzid != user:
            return _failed("Authentication failed: Client requested an authorization id that is "
                           "different from username")
        credentials = list((await self._lookup(user)).values()) or [_DECOY]
        matches = await asyncio.get_running_loop().run_in_executor(
            _PASSWORD_CHECKS, _any_matches, credentials, password, credentials[0] is _DECOY)
        if not matches:
            return _failed(INVALID_PLAIN)
        self.user = user
        return Step()

    async def _scram_step(self, token: bytes) -> Step:
        message = _text(token)
        if message is None:
            return self._scram_failed()
        try:
            if self._scram is None:
                return await self._scram_first(message)
            server, self._scram = self._scram, None
            server.set_client_final(message)
            final = server.get_server_final()
        except ScramException:
            return self._scram_failed()
        self.user = self._scram_user
        return Step(final.encode())

    async def _scram_first(self, client_first: str) -> Step:
        user = _scram_user(client_first)
        credential = (await self._lookup(user)).get(self.mechanism) if user else None
        if credential is None or not MIN_ITERATIONS <= credential.iterations <= MAX_ITERATIONS:
            return self._scram_failed()
        server = ScramMechanism(self.mechanism).make_server(
            lambda _: (credential.salt, credential.stored_key, credential.server_key, credential.iterations))
        server.set_client_first(client_first)
        self._scram, self._scram_user = server, user
        return Step(server.get_server_first().encode())

    def _scram_failed(self) -> Step:
        return _failed("Authentication failed during authentication due to invalid credentials with "
                       f"SASL mechanism {self.mechanism}")


def _any_matches(credentials: list[ScramCredential], password: str, decoy: bool) -> bool:
    """In the password pool: whether `password` matches one of `credentials` (never the decoy)."""
    matched = any([password_matches(credential, password) for credential in credentials])
    return matched and not decoy


def _failed(message: str) -> Step:
    return Step(error=ErrorCode.SASL_AUTHENTICATION_FAILED, message=message)


def _text(raw: bytes) -> Optional[str]:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _scram_user(client_first: str) -> Optional[str]:
    """The user a SCRAM client-first message names (`n,,n=alice,r=...`; ',' and '=' escaped as
    =2C and =3D), None if the message is malformed or asks for another authorization id (`a=`),
    which Kafka refuses too."""
    fields = client_first.split(",")
    if len(fields) < 4 or not fields[2].startswith("n="):
        return None
    user = fields[2][2:].replace("=2C", ",").replace("=3D", "=")
    authzid = fields[1][2:].replace("=2C", ",").replace("=3D", "=") if fields[1].startswith("a=") else ""
    if authzid and authzid != user:
        return None
    return user or None
