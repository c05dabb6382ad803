"""DescribeUserScramCredentials (50) and AlterUserScramCredentials (51), v0, for `groupctl user`:
any Kafka cluster since 2.7 and groupctl's coordinator serve them.

Mechanisms travel as Kafka's type bytes (1 SCRAM-SHA-256, 2 SCRAM-SHA-512); names are the
caller's business (`groupctl.security.scram.MECHANISM_TYPES`). An upsertion carries a salt and a
salted password, never a password. Both requests go to any broker (Kafka forwards alterations to
its controller). Per-user errors are returned, not raised; a top-level describe error raises
`OpsError` naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from groupctl.client.kafka import KafkaClient, error_name
from groupctl.errors import OpsError

DESCRIBE_USER_SCRAM_CREDENTIALS = 50
ALTER_USER_SCRAM_CREDENTIALS = 51


@dataclass(frozen=True)
class DescribedUser:
    user: str
    error_code: int
    error_message: Optional[str]
    credentials: tuple[tuple[int, int], ...]  # (mechanism type, iterations)


@dataclass(frozen=True)
class Upsertion:
    user: str
    mechanism: int
    iterations: int
    salt: bytes
    salted_password: bytes

    def __repr__(self) -> str:  # the salted password is as good as the password to a SCRAM server
        return f"Upsertion(user={self.user!r}, mechanism={self.mechanism}, iterations={self.iterations})"


@dataclass(frozen=True)
class AlterResult:
    user: str
    error_code: int
    error_message: Optional[str]


def describe_user_scram_credentials(client: KafkaClient, users: Optional[Sequence[str]]) -> list[DescribedUser]:
    """The users' credentials (None: every user that has one), as the broker answers."""

    def build(cls: type, version: int) -> Any:
        return cls(users=None if users is None else [cls.UserName(name=user) for user in users])

    response = client.call(None, DESCRIBE_USER_SCRAM_CREDENTIALS, (0, 0), build)
    if response.error_code:
        raise OpsError(f"DescribeUserScramCredentials failed: {error_name(response.error_code)}"
                       + (f" ({response.error_message})" if response.error_message else ""))
    return [DescribedUser(r.user, r.error_code, r.error_message,
                          tuple((c.mechanism, c.iterations) for c in r.credential_infos or ()))
            for r in response.results]


def alter_user_scram_credentials(client: KafkaClient, *, deletions: Sequence[tuple[str, int]] = (),
                                 upsertions: Sequence[Upsertion] = ()) -> list[AlterResult]:
    """Delete (user, mechanism type) credentials and upsert others; one result per user."""

    def build(cls: type, version: int) -> Any:
        return cls(
            deletions=[cls.ScramCredentialDeletion(name=user, mechanism=mechanism) for user, mechanism in deletions],
            upsertions=[cls.ScramCredentialUpsertion(name=u.user, mechanism=u.mechanism, iterations=u.iterations,
                                                     salt=u.salt, salted_password=u.salted_password)
                        for u in upsertions])

    response = client.call(None, ALTER_USER_SCRAM_CREDENTIALS, (0, 0), build)
    return [AlterResult(r.user, r.error_code, r.error_message) for r in response.results]
