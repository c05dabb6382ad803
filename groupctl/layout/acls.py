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
- A resource name is one path component, written as Kafka writes it (raw) except for what a
  znode name cannot hold raw or would make ambiguous: '/', '%', control characters, the
  characters ZooKeeper refuses in a path, and the names "." and "..", which are percent-encoded
  (Kafka refuses such names). So every name Kafka can store, but one with '%', is at the path
  Kafka uses, and a document Kafka wrote is read under its name. Components are decoded with
  `paths.decode_name` (percent-decoding): a name Kafka wrote with '%' and two hex digits in it
  reads back decoded.
- A document without ACLs is not kept: the writer deletes it (as Kafka does). Empty data reads
  as no ACLs, as Kafka reads it.
- Entries are written sorted, so a document's bytes depend only on its set of entries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional
from urllib.parse import quote

from groupctl.layout.codec import LayoutError, encode, read, text, within
from groupctl.layout.paths import decode_name

VERSION = 1
LITERAL_ROOT = "/kafka-acl"
EXTENDED_ROOT = "/kafka-acl-extended"
PATTERN_ROOTS = {"literal": LITERAL_ROOT, "prefixed": f"{EXTENDED_ROOT}/prefixed"}
"""Pattern type -> the root its documents live under."""
WILDCARD = "*"
_NOT_RAW = re.compile("[%/\x00-\x1f\x7f-\x9f\ud800-\uf8ff\ufff0-\uffff]")
"""What a component cannot hold raw: '/', '%' (the escape), and what ZooKeeper refuses in a path."""
_NOT_RAW_NAMES = {"": "%", ".": "%2E", "..": "%2E%2E"}


def resource_type_path(pattern_type: str, resource_type: str) -> str:
    """The parent of every document of one pattern type and resource type: `/kafka-acl/Topic`."""
    return f"{PATTERN_ROOTS[pattern_type]}/{resource_type}"


def name_component(name: str) -> str:
    """`name` as a znode name component (Kafka's spelling where it has one)."""
    return _NOT_RAW_NAMES.get(name) or _NOT_RAW.sub(lambda found: quote(found.group(), safe=""), name)


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
