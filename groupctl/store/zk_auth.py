"""ZooKeeper credentials as operators give them: `--zk-auth` / `GROUPCTL_ZK_AUTH` for the tools,
the same option of `coordinator run` for a node. The one parser both use.

Spellings (docs/security.md, "ZooKeeper authentication and ACLs"):
- `digest:USER:PASSWORD`; the user has no ':', the password is the rest (it may hold ':'), as
  ZooKeeper's digest provider splits them.
- `@PATH` or `file:PATH`: the first line of that file holds `digest:USER:PASSWORD`, so the
  password need not be on a command line (where `ps` and shell history show it). `~` expands.

Invariants:
- An error message never contains the password: it names what was expected, and the file for
  the file spellings, never the value given.
- `ZkAuth`'s repr leaves the password out, so it cannot reach a log through a repr.
- Pure: no kazoo here (the ACLs made from a `ZkAuth` are `groupctl.store.zookeeper`'s), so that
  validating an option costs the CLI no kazoo import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

SCHEME = "digest"
FORMAT = "digest:USER:PASSWORD, @PATH or file:PATH (a file whose first line is digest:USER:PASSWORD)"
_OTHER_SCHEMES = {"sasl", "ip", "x509", "world", "auth", "super", "kerberos"}  # ZooKeeper's others


class BadZkAuth(ValueError):
    """The credentials given cannot be used; `str()` is one line without the secret."""


@dataclass(frozen=True)
class ZkAuth:
    """A ZooKeeper digest identity: what a session authenticates with (`add_auth`) and whom the
    ACLs of the znodes it creates name."""

    user: str
    password: str = field(repr=False)

    @property
    def scheme(self) -> str:
        return SCHEME

    @property
    def credential(self) -> str:
        """`USER:PASSWORD`, as ZooKeeper's digest scheme takes it (secret: never log it)."""
        return f"{self.user}:{self.password}"


def parse_zk_auth(value: str) -> ZkAuth:
    """`value` as a `ZkAuth`, reading the file of `@PATH` / `file:PATH`; BadZkAuth else."""
    for prefix in ("@", "file:"):
        if value.startswith(prefix):
            return _from_file(Path(value[len(prefix):]).expanduser())
    return _parse(value.strip(), "bad --zk-auth value")


def _from_file(path: Path) -> ZkAuth:
    where = f"--zk-auth file {path}"
    if str(path) == ".":
        raise BadZkAuth(f"bad --zk-auth value: no file named after '@' or 'file:'; expected {FORMAT}")
    try:
        with open(path, encoding="utf-8") as file:
            first = file.readline()
    except OSError as exc:
        raise BadZkAuth(f"{where}: cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise BadZkAuth(f"{where}: its first line is not UTF-8 text") from None
    return _parse(first.strip(), where)


def _parse(text: str, where: str) -> ZkAuth:
    """`digest:USER:PASSWORD` as a ZkAuth; BadZkAuth saying `where` the text came from else."""
    scheme, _, rest = text.partition(":")
    user, colon, password = rest.partition(":")
    if scheme.lower() in _OTHER_SCHEMES:  # named: a scheme is no secret, unlike a mistyped value
        raise BadZkAuth(f"{where}: the {scheme} scheme is not supported, only digest (expected {FORMAT})")
    if scheme != SCHEME or not colon or not user or not password:
        raise BadZkAuth(f"{where}: expected {FORMAT}")
    return ZkAuth(user, password)


def not_permitted(path: str, *, write: bool, auth: Optional[ZkAuth]) -> str:
    """The one line for a NoAuth answer: which path, read or write, and with what credentials."""
    access = "writable" if write else "readable"
    whom = (f"with the ZooKeeper credentials given (--zk-auth, user {auth.user!r})" if auth is not None
            else "without ZooKeeper credentials (give --zk-auth or GROUPCTL_ZK_AUTH)")
    return f"{path} is not {access} {whom}: ZooKeeper answered NoAuth"
