"""SCRAM credentials (RFC 5802, RFC 7677) as Apache Kafka derives and checks them.

The tools derive a credential from a password (`user add`: the salted password travels, never
the password, as kafka-configs.sh sends it); the node derives one from a salted password
(AlterUserScramCredentials) and checks SASL PLAIN passwords against the stored SCRAM
credentials (`password_matches`), so one stored credential serves both mechanisms.

Invariants:
- Passwords are normalized as Kafka's `ScramFormatter.normalize` does: UTF-8 bytes, no SASLprep
  (RFC 5802 asks for SASLprep; Kafka and its clients skip it, so must we, for non-ASCII
  passwords to keep working across clients).
- Iterations lie within Kafka's bounds for both mechanisms, MIN_ITERATIONS..MAX_ITERATIONS
  (`ScramMechanism.minIterations/maxIterations`), for every credential made here.
- Comparisons of derived keys are constant-time (`hmac.compare_digest`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from typing import Optional

from groupctl import defaults
from groupctl.layout import credentials
from groupctl.layout.credentials import ScramCredential

MECHANISMS = credentials.MECHANISMS  # ("SCRAM-SHA-256", "SCRAM-SHA-512")
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384
MECHANISM_TYPES = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
"""The mechanism's type byte in Describe/AlterUserScramCredentials (Kafka's ScramMechanism.type)."""
TYPE_OF_MECHANISM = {name: code for code, name in MECHANISM_TYPES.items()}
_HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
SALT_BYTES = 32


class ScramError(ValueError):
    """An unknown mechanism or an unacceptable iteration count; the message says which."""


def check_credential_request(mechanism: str, iterations: int) -> None:
    """ScramError unless `mechanism` is a SCRAM mechanism and `iterations` within Kafka's bounds."""
    if mechanism not in _HASHES:
        raise ScramError(f"unknown SCRAM mechanism {mechanism!r}: use one of {', '.join(MECHANISMS)}")
    if not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
        raise ScramError(f"{iterations} iterations for {mechanism}: must be within "
                         f"{MIN_ITERATIONS}..{MAX_ITERATIONS}")


def salted_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    """Hi(Normalize(password), salt, i) of RFC 5802: PBKDF2 with the mechanism's HMAC."""
    return hashlib.pbkdf2_hmac(_hash(mechanism), password.encode(), salt, iterations)


def credential_from_salted_password(mechanism: str, salt: bytes, salted: bytes,
                                    iterations: int) -> ScramCredential:
    """What the server stores: StoredKey = H(HMAC(salted, "Client Key")) and
    ServerKey = HMAC(salted, "Server Key") (Kafka's `ScramFormatter.generateCredential`)."""
    name = _hash(mechanism)
    client_key = hmac.digest(salted, b"Client Key", name)
    return ScramCredential(mechanism=mechanism, salt=salt,
                           stored_key=hashlib.new(name, client_key).digest(),
                           server_key=hmac.digest(salted, b"Server Key", name),
                           iterations=iterations)


def make_credential(mechanism: str, password: str, *, iterations: int = defaults.SCRAM_ITERATIONS,
                    salt: Optional[bytes] = None) -> ScramCredential:
    """A new credential for `password`, with a random salt unless one is given (tests)."""
    check_credential_request(mechanism, iterations)
    salt = new_salt() if salt is None else salt
    return credential_from_salted_password(
        mechanism, salt, salted_password(mechanism, password, salt, iterations), iterations)


def new_salt() -> bytes:
    """A random salt (Kafka's clients use 24 to 26 bytes; any length works)."""
    return secrets.token_bytes(SALT_BYTES)


def password_matches(credential: ScramCredential, password: str) -> bool:
    """Whether `password` is the one `credential` was made from (SASL PLAIN against a stored
    SCRAM credential). Costs one key derivation at the credential's iteration count; a stored
    count beyond MAX_ITERATIONS (written by hand) never matches rather than stall the node."""
    if not MIN_ITERATIONS <= credential.iterations <= MAX_ITERATIONS:
        return False
    derived = credential_from_salted_password(
        credential.mechanism, credential.salt,
        salted_password(credential.mechanism, password, credential.salt, credential.iterations),
        credential.iterations)
    stored_ok = hmac.compare_digest(derived.stored_key, credential.stored_key)
    return hmac.compare_digest(derived.server_key, credential.server_key) and stored_ok


def _hash(mechanism: str) -> str:
    try:
        return _HASHES[mechanism]
    except KeyError:
        raise ScramError(f"unknown SCRAM mechanism {mechanism!r}: use one of {', '.join(MECHANISMS)}") from None


class ScramClientExchange:
    """The client side of one SCRAM exchange (RFC 5802), as Kafka's `ScramSaslClient` runs it: the
    username escaped (`=2C`, `=3D`) but neither it nor the password SASLprep-normalised (Kafka
    stores credentials of the password's UTF-8 bytes, so normalising would fail such passwords),
    no channel binding, and a server asking fewer than MIN_ITERATIONS refused (a downgrade).
    Not scramp's client, which normalises both."""

    def __init__(self, mechanism: str, username: str, password: str, nonce: Optional[str] = None) -> None:
        self._hash = _hash(mechanism)
        self.mechanism = mechanism
        self._password = password
        self._nonce = nonce or secrets.token_urlsafe(24)
        self._first_bare = f"n={username.replace('=', '=3D').replace(',', '=2C')},r={self._nonce}"
        self._server_signature: Optional[bytes] = None

    def client_first(self) -> bytes:
        return ("n,," + self._first_bare).encode()

    def client_final(self, server_first: bytes) -> bytes:
        """The proof for the server's first message (ScramError if that message is unacceptable)."""
        text = server_first.decode("utf-8", "replace")
        fields = _attributes(text)
        nonce, salt, iterations = fields.get("r", ""), fields.get("s"), fields.get("i", "")
        if not nonce.startswith(self._nonce) or len(nonce) == len(self._nonce) or salt is None:
            raise ScramError("the server's first SCRAM message is malformed")
        if not iterations.isdigit() or int(iterations) < MIN_ITERATIONS:
            raise ScramError(f"the server asked for {iterations or 'no'} SCRAM iterations, fewer than {MIN_ITERATIONS}")
        try:
            salt_bytes = base64.b64decode(salt, validate=True)
        except (binascii.Error, ValueError):
            raise ScramError("the server's SCRAM salt is not base64") from None
        salted = salted_password(self.mechanism, self._password, salt_bytes, int(iterations))
        without_proof = f"c=biws,r={nonce}"
        auth_message = f"{self._first_bare},{text},{without_proof}".encode()
        client_key = hmac.digest(salted, b"Client Key", self._hash)
        signature = hmac.digest(hashlib.new(self._hash, client_key).digest(), auth_message, self._hash)
        proof = bytes(a ^ b for a, b in zip(client_key, signature))
        self._server_signature = hmac.digest(hmac.digest(salted, b"Server Key", self._hash), auth_message, self._hash)
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def check_server_final(self, server_final: bytes) -> None:
        """ScramError unless the server proved it knows the credential (or it reported an error)."""
        fields = _attributes(server_final.decode("utf-8", "replace"))
        if "e" in fields:
            raise ScramError(f"the server refused: {fields['e']}")
        try:
            signature = base64.b64decode(fields.get("v", ""), validate=True)
        except (binascii.Error, ValueError):
            signature = b""
        if self._server_signature is None or not hmac.compare_digest(signature, self._server_signature):
            raise ScramError("the server's SCRAM signature does not verify (it does not know the credential)")


def _attributes(message: str) -> dict[str, str]:
    """`r=...,s=...,i=...` -> {"r": ..., "s": ..., "i": ...} (first occurrence wins)."""
    found: dict[str, str] = {}
    for part in message.split(","):
        key, sep, value = part.partition("=")
        if sep and len(key) == 1 and key not in found:
            found[key] = value
    return found
