"""A user's SCRAM credentials, `/config/users/<user>`, in Apache Kafka's ZooKeeper format (its
`ConfigEntityZNode` holding what `ScramCredentialUtils.credentialToString` writes):

    {"version":1,"config":{"SCRAM-SHA-256":"salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=4096"}}

Written by `groupctl user add|remove` (directly with `--zk`, or by a node answering
AlterUserScramCredentials) and read by the node to authenticate SASL SCRAM and PLAIN clients.

Invariants:
- A credential's value has exactly the four keys salt, stored_key, server_key and iterations
  (standard base64 with padding; iterations a positive decimal), as Kafka requires; the salted
  password and the password itself are never stored.
- Config entries that are not SCRAM credentials (Kafka keeps user quotas in the same document)
  are carried through a rewrite untouched (`other_config`, `encode_credentials(other_config=)`).
- A document left with no entry at all is not kept: `altered` answers None and writers delete
  the node. Empty data reads as no config, as Kafka reads a node without data.
- Errors never quote a credential's value (salts and keys stay out of logs and messages).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Collection, Mapping, Optional

from groupctl.layout.codec import LayoutError, is_number
from groupctl.layout.configs import decode_config, encode_config
from groupctl.layout.paths import user_path

MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
"""The config keys that hold SCRAM credentials."""
_FIELDS = ("salt", "stored_key", "server_key", "iterations")


@dataclass(frozen=True)
class ScramCredential:
    """What the server keeps of a password (RFC 5802): StoredKey = H(ClientKey) and ServerKey,
    both derived from the password salted with `salt` over `iterations` rounds."""

    mechanism: str
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def __repr__(self) -> str:  # keys stay out of logs and tracebacks
        return f"ScramCredential(mechanism={self.mechanism!r}, iterations={self.iterations})"

    def to_text(self) -> str:
        """Kafka's `ScramCredentialUtils.credentialToString`."""
        return (f"salt={_b64(self.salt)},stored_key={_b64(self.stored_key)},"
                f"server_key={_b64(self.server_key)},iterations={self.iterations}")

    @classmethod
    def from_text(cls, path: str, mechanism: str, value: object) -> "ScramCredential":
        """Kafka's `ScramCredentialUtils.credentialFromString`, as strict."""
        if not isinstance(value, str):
            raise LayoutError(path, f'"{mechanism}" must be a string, not {type(value).__name__}')
        fields: dict[str, str] = {}
        for token in value.split(","):
            key, sep, item = token.partition("=")
            if not key or not sep:
                raise LayoutError(path, f'"{mechanism}" is not "salt=..,stored_key=..,server_key=..,iterations=.."')
            fields[key] = item
        if sorted(fields) != sorted(_FIELDS):
            raise LayoutError(path, f'"{mechanism}" must have exactly the keys {", ".join(_FIELDS)}, '
                                    f'not {", ".join(fields)}')
        iterations = fields["iterations"]
        if not is_number(iterations) or int(iterations) < 1:
            raise LayoutError(path, f'"{mechanism}" iterations must be a positive integer, not {iterations!r}')
        try:
            salt, stored_key, server_key = (base64.b64decode(fields[k], validate=True)
                                            for k in ("salt", "stored_key", "server_key"))
        except (binascii.Error, ValueError):
            raise LayoutError(path, f'"{mechanism}" holds a key that is not base64') from None
        return cls(mechanism, salt, stored_key, server_key, int(iterations))


def encode_credentials(creds: Mapping[str, ScramCredential], *,
                       other_config: Mapping[str, str] = {}) -> bytes:
    """The document holding `creds` (mechanism -> credential) and the non-credential entries
    `other_config` read from the document it replaces."""
    if any(mechanism not in MECHANISMS or creds[mechanism].mechanism != mechanism for mechanism in creds):
        raise ValueError(f"credentials must be filed under their own mechanism, one of {MECHANISMS}")
    config = {key: value for key, value in sorted(other_config.items()) if key not in MECHANISMS}
    config.update((mechanism, creds[mechanism].to_text()) for mechanism in MECHANISMS if mechanism in creds)
    return encode_config(config)


def decode_credentials(name: str, data: Optional[bytes]) -> dict[str, ScramCredential]:
    """The user's SCRAM credentials, mechanism -> credential (empty when there are none)."""
    path = user_path(name)
    config = decode_config(path, data)
    return {m: ScramCredential.from_text(path, m, config[m]) for m in MECHANISMS if m in config}


def other_config(name: str, data: Optional[bytes]) -> dict[str, str]:
    """The entries of the user's document that are not SCRAM credentials (quotas, say)."""
    return {k: v for k, v in decode_config(user_path(name), data).items() if k not in MECHANISMS}


class MissingCredential(LookupError):
    """An alteration deletes a credential the user does not have; `mechanism` names it."""

    def __init__(self, name: str, mechanism: str) -> None:
        super().__init__(f"user {name!r} has no {mechanism} credential")
        self.mechanism = mechanism


def altered(name: str, data: Optional[bytes], *, delete: Collection[str] = (),
            upsert: Mapping[str, ScramCredential] = {}) -> Optional[bytes]:
    """The user's document (`data`, None when there is none) after deleting the credentials of
    the mechanisms `delete` and setting those of `upsert`; None when nothing is left, so that the
    node is deleted rather than kept empty. MissingCredential, changing nothing, when `delete`
    names a credential the user does not have. The one rule every writer applies (the node's
    AlterUserScramCredentials and `user add|remove --zk`), each with compare-and-set."""
    creds = decode_credentials(name, data)
    for mechanism in delete:
        if mechanism not in creds:
            raise MissingCredential(name, mechanism)
        del creds[mechanism]
    creds.update(upsert)
    other = other_config(name, data)
    return encode_credentials(creds, other_config=other) if creds or other else None


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()
