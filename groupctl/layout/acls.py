"""Kafka's ACLs, where and as Apache Kafka's ZooKeeper authorizer (AclAuthorizer) keeps them:
one document per resource pattern,

    /kafka-acl/<ResourceType>/<name>                      literal patterns (name "*": every resource)
    /kafka-acl-extended/prefixed/<ResourceType>/<name>    prefixed patterns

each `{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read",
"host":"*"}]}`. Written by the node answering CreateAcls/DeleteAcls (and by `groupctl acl --zk`),
read by every node at start and through its watch.

Invariants:
- Resource types, operations and permission types are stored in Kafka's spelling ("Topic",
  "IdempotentWrite", "Allow"); this module keeps them as strings (`groupctl.security.acls`
  gives them meaning).
- A resource name is one path component: encoded as `paths.encode_name` does, except that "*"
  stays "*" as Kafka writes it. (Kafka writes names raw and refuses one with '/'; topic names,
  and group names of the usual characters, are stored exactly where Kafka stores them.)
- A document without ACLs is not kept: the writer deletes it (as Kafka does). Empty data reads
  as no ACLs, as Kafka reads it.
- Entries are written sorted, so a document's bytes depend only on its set of entries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from groupctl.layout.codec import LayoutError, encode, read, text, within
from groupctl.layout.paths import decode_name, encode_name

VERSION = 1
LITERAL_ROOT = "/kafka-acl"
EXTENDED_ROOT = "/kafka-acl-extended"
PATTERN_ROOTS = {"literal": LITERAL_ROOT, "prefixed": f"{EXTENDED_ROOT}/prefixed"}
"""Pattern type -> the root its documents live under."""
WILDCARD = "*"


def resource_type_path(pattern_type: str, resource_type: str) -> str:
    """The parent of every document of one pattern type and resource type: `/kafka-acl/Topic`."""
    return f"{PATTERN_ROOTS[pattern_type]}/{resource_type}"


def name_component(name: str) -> str:
    return WILDCARD if name == WILDCARD else encode_name(name)


def acl_path(pattern_type: str, resource_type: str, name: str) -> str:
    return f"{resource_type_path(pattern_type, resource_type)}/{name_component(name)}"


def name_of(component: str) -> str:
    """The resource name a child of a resource type's path stands for."""
    return decode_name(component)


@dataclass(frozen=True, order=True)
class StoredAcl:
    principal: str
    permission_type: str
    operation: str
    host: str

    def to_json(self) -> dict:
        return {"principal": self.principal, "permissionType": self.permission_type,
                "operation": self.operation, "host": self.host}


@dataclass(frozen=True)
class AclDocument:
    acls: frozenset[StoredAcl]

    def encode(self) -> bytes:
        return encode({"version": VERSION, "acls": [acl.to_json() for acl in sorted(self.acls)]})

    @classmethod
    def decode(cls, path: str, data: Optional[bytes]) -> "AclDocument":
        if not data:
            return cls(frozenset())
        document = read(path, data, VERSION)
        entries = document.get("acls")
        if not isinstance(entries, list):
            raise LayoutError(path, f'"acls" must be a list, not {entries!r}')
        acls = set()
        for index, entry in enumerate(entries):
            with within(path, f"acls[{index}]"):
                if not isinstance(entry, dict):
                    raise LayoutError(path, f"not an object but {entry!r}")
                acls.add(StoredAcl(principal=text(path, entry, "principal"),
                                   permission_type=text(path, entry, "permissionType"),
                                   operation=text(path, entry, "operation"), host=text(path, entry, "host")))
        return cls(frozenset(acls))
