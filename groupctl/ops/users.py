"""Users' SCRAM credentials (`groupctl user`): through any Kafka cluster or groupctl node
(Describe/AlterUserScramCredentials), or directly in ZooKeeper at `/config/users/<user>` (so that
the first user, a super user, can exist before any node starts).

Invariants:
- A password is only ever an argument of `add_user`, which salts it here: with --bootstrap the
  salt and salted password travel (as kafka-configs.sh sends them), with --zk only the derived
  StoredKey and ServerKey are written. No result, message or repr holds the password or a key.
- --bootstrap wins when both sources are given, as for `rebalance trigger`.
- Waits are bounded by the operator's `--timeout`: over Kafka the Bootstrap carries it, in
  ZooKeeper `timeout_s` (None: the session's default).
- With --zk each change is one compare-and-set write (`layout.credentials.altered`, the rule the
  node applies too), computed again from what another writer stored when it loses a race.
- Through a node, each request names a user once: Kafka refuses a user named twice in one
  AlterUserScramCredentials (DUPLICATE_RESOURCE), so removing every mechanism is one request per
  mechanism, and `list` asks for each name once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from groupctl import defaults
from groupctl.client.kafka import BootstrapLike, KafkaClient, error_name
from groupctl.client.scram_apis import (
    Upsertion,
    alter_user_scram_credentials,
    describe_user_scram_credentials,
)
from groupctl.client.zookeeper import ZkSession
from groupctl.errors import BadInput, NotFound, OpsError, Refused
from groupctl.layout.codec import LayoutError
from groupctl.layout.credentials import (
    MissingCredential,
    ScramCredential,
    altered,
    decode_credentials,
)
from groupctl.layout.paths import USERS, decode_name, user_path
from groupctl.security import scram

RESOURCE_NOT_FOUND = 91
MAX_ATTEMPTS = 16
"""Compare-and-set attempts of one --zk change before giving up."""


@dataclass(frozen=True)
class CredentialInfo:
    mechanism: str
    iterations: int

    def to_json(self) -> dict[str, Any]:
        return {"mechanism": self.mechanism, "iterations": self.iterations}


@dataclass(frozen=True)
class UserCredentials:
    """A user and its SCRAM credentials (`user list`)."""

    user: str
    credentials: tuple[CredentialInfo, ...]

    def to_json(self) -> dict[str, Any]:
        return {"user": self.user, "credentials": [c.to_json() for c in self.credentials]}


@dataclass(frozen=True)
class UserChange:
    """What `user add` set or `user remove` removed, and through which source."""

    user: str
    source: str  # "bootstrap" | "zk"
    added: Optional[CredentialInfo] = None
    removed: tuple[str, ...] = ()  # mechanisms

    def to_json(self) -> dict[str, Any]:
        return {"user": self.user, "source": self.source,
                "added": self.added.to_json() if self.added else None, "removed": list(self.removed)}


def list_users(users: Sequence[str] = (), *, bootstrap: Optional[BootstrapLike] = None, zk: Optional[str] = None,
               zk_auth: Optional[str] = None, timeout_s: Optional[float] = None) -> list[UserCredentials]:
    """The named users' credentials, in the order named (NotFound for one without any), or
    every user that has a credential, sorted, when none is named."""
    _check_source(bootstrap, zk)
    names = list(dict.fromkeys(users))
    if any(not name for name in names):
        raise BadInput("a user name must not be empty")
    if bootstrap:
        return _list_over_kafka(bootstrap, names)
    return _list_in_zk(zk, zk_auth, names, timeout_s)


def add_user(user: str, password: str, *, mechanism: str = scram.MECHANISMS[0],
             iterations: int = defaults.SCRAM_ITERATIONS, bootstrap: Optional[BootstrapLike] = None,
             zk: Optional[str] = None, zk_auth: Optional[str] = None, timeout_s: Optional[float] = None) -> UserChange:
    """Set `user`'s credential for `mechanism` from `password` (a new user, or a new password)."""
    _check_source(bootstrap, zk)
    _check_user(user)
    try:
        scram.check_credential_request(mechanism, iterations)
    except scram.ScramError as exc:
        raise BadInput(str(exc)) from None
    if not password:
        raise BadInput("the password must not be empty")
    info = CredentialInfo(mechanism, iterations)
    if bootstrap:
        salt = scram.new_salt()
        upsertion = Upsertion(user, scram.TYPE_OF_MECHANISM[mechanism], iterations, salt,
                              scram.salted_password(mechanism, password, salt, iterations))
        with KafkaClient(bootstrap) as client:
            _check_altered(user, alter_user_scram_credentials(client, upsertions=[upsertion]))
        return UserChange(user, "bootstrap", added=info)
    credential = scram.make_credential(mechanism, password, iterations=iterations)
    _alter_in_zk(zk, zk_auth, user, delete=(), upsert={mechanism: credential}, timeout_s=timeout_s)
    return UserChange(user, "zk", added=info)


def remove_user(user: str, *, mechanism: Optional[str] = None, bootstrap: Optional[BootstrapLike] = None,
                zk: Optional[str] = None, zk_auth: Optional[str] = None, timeout_s: Optional[float] = None) -> UserChange:
    """Remove `user`'s credential for `mechanism`, or every credential it has (None).
    NotFound when it has none (for that mechanism)."""
    _check_source(bootstrap, zk)
    _check_user(user)
    if mechanism is not None and mechanism not in scram.MECHANISMS:
        raise BadInput(f"unknown SCRAM mechanism {mechanism!r}: use one of {', '.join(scram.MECHANISMS)}")
    if bootstrap:
        with KafkaClient(bootstrap) as client:
            if mechanism is None:
                [described] = _described(describe_user_scram_credentials(client, [user]))
                mechanisms = tuple(c.mechanism for c in described.credentials if c.mechanism in scram.MECHANISMS)
            else:
                mechanisms = (mechanism,)
            for each in mechanisms:
                deletion = (user, scram.TYPE_OF_MECHANISM[each])
                _check_altered(user, alter_user_scram_credentials(client, deletions=[deletion]))
        return UserChange(user, "bootstrap", removed=mechanisms)
    removed = _alter_in_zk(zk, zk_auth, user, delete=None if mechanism is None else (mechanism,), upsert={},
                           timeout_s=timeout_s)
    return UserChange(user, "zk", removed=removed)


# -- through a Kafka cluster ------------------------------------------------------------------


def _list_over_kafka(bootstrap: BootstrapLike, names: list[str]) -> list[UserCredentials]:
    with KafkaClient(bootstrap) as client:
        described = describe_user_scram_credentials(client, names or None)
    return _described(described)


def _described(described: Sequence[Any]) -> list[UserCredentials]:
    """Describe results as UserCredentials; NotFound / OpsError for a user's error."""
    found = []
    for d in described:
        if d.error_code == RESOURCE_NOT_FOUND:
            raise NotFound(f"user {d.user!r} has no SCRAM credentials")
        if d.error_code:
            raise OpsError(f"cannot describe user {d.user!r}: {_error(d.error_code, d.error_message)}")
        found.append(UserCredentials(d.user, tuple(
            CredentialInfo(scram.MECHANISM_TYPES.get(mechanism, f"mechanism type {mechanism}"), iterations)
            for mechanism, iterations in sorted(d.credentials))))
    return found


def _check_altered(user: str, results: Sequence[Any]) -> None:
    for result in results:
        if result.error_code == RESOURCE_NOT_FOUND:
            raise NotFound(f"user {result.user!r}: {_error(result.error_code, result.error_message)}")
        if result.error_code:
            raise Refused(f"cannot alter user {result.user!r}: {_error(result.error_code, result.error_message)}")
    if not any(result.user == user for result in results):
        raise OpsError(f"the cluster answered nothing about user {user!r}")


def _error(code: int, message: Optional[str]) -> str:
    return f"{error_name(code)} ({message})" if message else error_name(code)


# -- directly in ZooKeeper --------------------------------------------------------------------


def _list_in_zk(connect: str, auth: Optional[str], names: list[str], timeout_s: Optional[float]) -> list[UserCredentials]:
    every = not names
    with ZkSession(connect, auth=auth, timeout_s=timeout_s) as session:
        if every:
            names = sorted(decode_name(child) for child in session.children(USERS) or ())
        nodes = session.get_many([user_path(name) for name in names])
    found = []
    for name, node in zip(names, nodes):
        creds = _decode(name, node.data if node is not None else None)
        if creds:
            found.append(UserCredentials(name, tuple(CredentialInfo(m, c.iterations) for m, c in creds.items())))
        elif not every:
            raise NotFound(f"user {name!r} has no SCRAM credentials")
    return found


def _alter_in_zk(connect: str, auth: Optional[str], user: str, *, delete: Optional[Sequence[str]],
                 upsert: dict[str, ScramCredential], timeout_s: Optional[float]) -> tuple[str, ...]:
    """Apply one change with compare-and-set; the mechanisms deleted. `delete` None: all."""
    path = user_path(user)
    with ZkSession(connect, auth=auth, timeout_s=timeout_s) as session:
        for _ in range(MAX_ATTEMPTS):
            node = session.get(path)
            current = node.data if node is not None else None
            mechanisms = tuple(_decode(user, current)) if delete is None else tuple(delete)
            if delete is None and not mechanisms:
                raise NotFound(f"user {user!r} has no SCRAM credentials")
            try:
                data = altered(user, current, delete=mechanisms, upsert=upsert)
            except MissingCredential as exc:
                raise NotFound(str(exc)) from None
            except LayoutError as exc:
                raise OpsError(str(exc)) from None
            if node is None:
                written = session.create(path, data)
            elif data is None:
                written = session.delete_if_version(path, node.stat.version)
            else:
                written = session.set_if_version(path, data, node.stat.version)
            if written:
                return mechanisms
    raise Refused(f"{path} was changed by other writers {MAX_ATTEMPTS} times in a row; try again")


def _decode(user: str, data: Optional[bytes]) -> dict[str, ScramCredential]:
    try:
        return decode_credentials(user, data)
    except LayoutError as exc:
        raise OpsError(str(exc)) from None


def _check_source(bootstrap: Optional[BootstrapLike], zk: Optional[str]) -> None:
    if not bootstrap and not zk:
        raise BadInput("this command needs --bootstrap HOST:PORT or --zk HOST:PORT[/chroot]")


def _check_user(user: str) -> None:
    if not user:
        raise BadInput("a user name must not be empty")
