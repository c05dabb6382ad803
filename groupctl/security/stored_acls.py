"""The stored ACL documents (`groupctl.layout.acls`) in the model's terms: which path holds a
resource pattern's entries, and the entries a document holds. Shared by the node's store
(`groupctl.store.acls`) and `groupctl acl --zk`, so both read and write alike.

Invariants:
- A document that does not decode raises LayoutError (never read as "no ACLs"); an entry whose
  names Kafka would read as UNKNOWN is left out and reported (it could match no request).
- Writing the entries read back gives the same set (`encode_entries` sorts them).
"""

from __future__ import annotations

from typing import Optional

from groupctl.layout.acls import AclDocument, acl_path, name_of, resource_type_path
from groupctl.security.acls import (
    RESOURCE_TYPES,
    STORED_PATTERN_TYPES,
    AccessControlEntry,
    AclError,
    PatternType,
    ResourcePattern,
    ResourceType,
    kafka_name,
)

Entries = frozenset[AccessControlEntry]


def pattern_path(pattern: ResourcePattern) -> str:
    return acl_path(kafka_name(pattern.pattern_type), kafka_name(pattern.resource_type), pattern.name)


def type_paths() -> dict[str, tuple[PatternType, ResourceType]]:
    """The parent path of the documents of each stored (pattern type, resource type)."""
    return {resource_type_path(kafka_name(p), kafka_name(t)): (p, t)
            for p in STORED_PATTERN_TYPES for t in RESOURCE_TYPES}


def pattern_of(parent: str, component: str) -> ResourcePattern:
    """The pattern whose entries the child `component` of the type path `parent` holds."""
    pattern_type, resource_type = type_paths()[parent]
    return ResourcePattern(resource_type, name_of(component), pattern_type)


def decode_entries(path: str, data: Optional[bytes]) -> tuple[Entries, list[str]]:
    """The entries of the document at `path`, and why any stored entry was left out."""
    entries, skipped = set(), []
    for stored in AclDocument.decode(path, data).acls:
        try:
            entries.add(AccessControlEntry.from_stored(stored))
        except AclError as exc:
            skipped.append(f"{path}: skipping an ACL entry: {exc}")
    return frozenset(entries), skipped


def encode_entries(entries: Entries) -> bytes:
    return AclDocument(frozenset(entry.to_stored() for entry in entries)).encode()
