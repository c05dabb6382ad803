"""Kafka's ACLs as values: resource patterns, access control entries, bindings and the filters
DescribeAcls/DeleteAcls match them with (Apache Kafka's `org.apache.kafka.common.acl` and
`.resource` classes), plus the spellings they are stored and typed in.

Used by the node (the ACL APIs, the stored ACLs it loads) and by the tools (`groupctl acl`
parses kafka-acls.sh's spellings into these). The decision itself is `groupctl.security.rules`.

Invariants:
- The enums are kafka-python's (`kafka.protocol.admin.acl`), so wire codes are Kafka's.
- Stored and displayed names are Kafka's `SecurityUtils` spellings: "Topic", "IdempotentWrite",
  "Allow"; pattern types "literal"/"prefixed" as kafka-acls.sh takes them (and as the extended
  store's path spells them). Parsing accepts any case, with or without '_' or '-'.
- A principal is "Type:name" with both parts non-empty ("User:alice", "User:*").
- groupctl stores and enforces ACLs on three resource types: Topic, Group and Cluster (whose one
  name is "kafka-cluster"). Kafka's other types (TransactionalId, DelegationToken, User) name
  things groupctl does not have; creating an ACL on them is refused (`creation_error`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Optional, TypeVar

from kafka.protocol.admin.acl import ACLOperation as Operation
from kafka.protocol.admin.acl import ACLPermissionType as Permission
from kafka.protocol.admin.acl import ACLResourcePatternType as PatternType
from kafka.protocol.admin.acl import ACLResourceType as ResourceType

from groupctl.layout.acls import StoredAcl

CLUSTER_NAME = "kafka-cluster"
"""The name of the one Cluster resource."""
WILDCARD = "*"
"""A literal resource name or a host that matches any."""
WILDCARD_PRINCIPAL = "User:*"

RESOURCE_TYPES = (ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER, ResourceType.TRANSACTIONAL_ID)
"""The resource types groupctl stores ACLs for and enforces."""

SUPPORTED_OPERATIONS = {
    ResourceType.TOPIC: frozenset({Operation.READ, Operation.WRITE, Operation.CREATE, Operation.DESCRIBE,
                                   Operation.DELETE, Operation.ALTER, Operation.DESCRIBE_CONFIGS,
                                   Operation.ALTER_CONFIGS}),
    ResourceType.GROUP: frozenset({Operation.READ, Operation.DESCRIBE, Operation.DELETE, Operation.DESCRIBE_CONFIGS,
                                   Operation.ALTER_CONFIGS}),
    ResourceType.CLUSTER: frozenset({Operation.CREATE, Operation.CLUSTER_ACTION, Operation.DESCRIBE_CONFIGS,
                                     Operation.ALTER_CONFIGS, Operation.IDEMPOTENT_WRITE, Operation.ALTER,
                                     Operation.DESCRIBE}),
    ResourceType.TRANSACTIONAL_ID: frozenset({Operation.DESCRIBE, Operation.WRITE}),
}
"""Kafka's `AclEntry.supportedOperations` (All is accepted on every type besides these):
kafka-acls.sh refuses other operations, and so does `groupctl acl add`."""

STORED_PATTERN_TYPES = (PatternType.LITERAL, PatternType.PREFIXED)

E = TypeVar("E", bound=IntEnum)


class AclError(ValueError):
    """Input that is not an ACL (an unknown operation, a malformed principal, ...); the message
    is one line for people."""


def kafka_name(value: IntEnum) -> str:
    """Kafka's spelling of an enum value: TOPIC -> "Topic", IDEMPOTENT_WRITE -> "IdempotentWrite"
    (`SecurityUtils.toPascalCase`); pattern types in lower case, "literal"."""
    if isinstance(value, PatternType):
        return value.name.lower()
    return "".join(part.capitalize() for part in value.name.split("_"))


def from_code(cls: type[E], code: int) -> E:
    """The value of `cls` a wire code stands for; UNKNOWN for a code kafka-python does not know
    (Kafka reads unknown codes as UNKNOWN too)."""
    try:
        return cls(code)
    except ValueError:
        return cls["UNKNOWN"]


def _squash(text: str) -> str:
    return text.strip().lower().replace("_", "").replace("-", "")


def parse_enum(cls: type[E], text: str, what: str, allowed: tuple[E, ...]) -> E:
    """The value of `cls` that `text` spells (any case, '_' and '-' ignored), one of `allowed`."""
    by_name = {_squash(member.name): member for member in allowed}
    found = by_name.get(_squash(text))
    if found is None:
        choices = ", ".join(kafka_name(member) for member in allowed)
        raise AclError(f"unknown {what} {text!r} (one of: {choices})")
    return found


CONCRETE_OPERATIONS = tuple(op for op in Operation if op not in (Operation.UNKNOWN, Operation.ANY))


def parse_operation(text: str) -> Operation:
    return parse_enum(Operation, text, "operation", CONCRETE_OPERATIONS)


def parse_permission(text: str) -> Permission:
    return parse_enum(Permission, text, "permission type", (Permission.ALLOW, Permission.DENY))


def parse_resource_type(text: str) -> ResourceType:
    return parse_enum(ResourceType, text, "resource type", RESOURCE_TYPES)


def principal_error(principal: Optional[str]) -> Optional[str]:
    """Why `principal` is not "Type:name", or None when it is."""
    kind, sep, name = (principal or "").partition(":")
    if not sep or not kind or not name:
        return f"principal {principal!r} is not in the form Type:name (for example User:alice)"
    return None


@dataclass(frozen=True, order=True)
class ResourcePattern:
    """What an ACL applies to: one resource (literal), every resource whose name starts with
    `name` (prefixed), or every resource of the type (literal "*")."""

    resource_type: ResourceType
    name: str
    pattern_type: PatternType = PatternType.LITERAL

    def to_json(self) -> dict:
        return {"resource_type": kafka_name(self.resource_type), "name": self.name,
                "pattern_type": kafka_name(self.pattern_type)}


@dataclass(frozen=True, order=True)
class AccessControlEntry:
    """Who (`principal`, from `host`) may or may not (`permission`) do `operation`."""

    principal: str
    host: str
    operation: Operation
    permission: Permission

    def to_stored(self) -> StoredAcl:
        return StoredAcl(principal=self.principal, permission_type=kafka_name(self.permission),
                         operation=kafka_name(self.operation), host=self.host)

    @classmethod
    def from_stored(cls, stored: StoredAcl) -> "AccessControlEntry":
        """The entry a stored document holds; AclError for names Kafka's authorizer would read as
        UNKNOWN (such an entry never matches a request there, and is skipped here)."""
        problem = principal_error(stored.principal)
        if problem:
            raise AclError(problem)
        return cls(stored.principal, stored.host, parse_operation(stored.operation),
                   parse_permission(stored.permission_type))


@dataclass(frozen=True, order=True)
class AclBinding:
    pattern: ResourcePattern
    entry: AccessControlEntry

    def summary(self) -> str:
        """One line for people: "Allow User:alice Read from * on Topic orders (literal)"."""
        pattern, entry = self.pattern, self.entry
        return (f"{kafka_name(entry.permission)} {entry.principal} {kafka_name(entry.operation)} from {entry.host} "
                f"on {kafka_name(pattern.resource_type)} {pattern.name} ({kafka_name(pattern.pattern_type)})")

    def to_json(self) -> dict:
        return {**self.pattern.to_json(), "principal": self.entry.principal, "host": self.entry.host,
                "operation": kafka_name(self.entry.operation),
                "permission_type": kafka_name(self.entry.permission)}


def creation_error(binding: AclBinding) -> Optional[str]:
    """Why CreateAcls refuses `binding` (INVALID_REQUEST), or None: Kafka's checks
    (`AclControlManager.validateNewAcl`, the Cluster name, the principal's form) plus groupctl's
    resource types (module docstring)."""
    pattern, entry = binding.pattern, binding.entry
    if pattern.resource_type not in RESOURCE_TYPES:
        return f"resource type {pattern.resource_type.name} is not supported (Topic, Group and Cluster are)"
    if pattern.pattern_type not in STORED_PATTERN_TYPES:
        return f"invalid pattern type {pattern.pattern_type.name}"
    if entry.operation in (Operation.UNKNOWN, Operation.ANY):
        return f"invalid operation {entry.operation.name}"
    if entry.permission not in (Permission.ALLOW, Permission.DENY):
        return f"invalid permission type {entry.permission.name}"
    if not pattern.name:
        return "the resource name must not be empty"
    if pattern.resource_type == ResourceType.CLUSTER and pattern.name != CLUSTER_NAME:
        return f"the only valid name for the Cluster resource is {CLUSTER_NAME}"
    if not entry.host:
        return "the host must not be empty (use * for any host)"
    return principal_error(entry.principal)


@dataclass(frozen=True)
class AclBindingFilter:
    """Which bindings DescribeAcls lists and DeleteAcls removes (Kafka's `AclBindingFilter`).

    None matches any name, principal or host; ANY matches any resource type, operation or
    permission. Pattern type ANY matches bindings of either pattern type whose name is exactly
    `name`; MATCH matches every binding that applies to the resource `name` (literal equal,
    literal "*", or a prefix of it)."""

    resource_type: ResourceType = ResourceType.ANY
    name: Optional[str] = None
    pattern_type: PatternType = PatternType.ANY
    principal: Optional[str] = None
    host: Optional[str] = None
    operation: Operation = Operation.ANY
    permission: Permission = Permission.ANY

    def matches_pattern(self, pattern: ResourcePattern) -> bool:
        """Kafka's `ResourcePatternFilter.matches`."""
        if self.resource_type != ResourceType.ANY and self.resource_type != pattern.resource_type:
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH) and self.pattern_type != pattern.pattern_type:
            return False
        if self.name is None:
            return True
        if self.pattern_type in (PatternType.ANY, pattern.pattern_type):
            return self.name == pattern.name
        if pattern.pattern_type == PatternType.LITERAL:
            return self.name == pattern.name or pattern.name == WILDCARD
        return self.name.startswith(pattern.name)

    def matches_entry(self, entry: AccessControlEntry) -> bool:
        """Kafka's `AccessControlEntryFilter.matches`."""
        return ((self.principal is None or self.principal == entry.principal)
                and (self.host is None or self.host == entry.host)
                and (self.operation == Operation.ANY or self.operation == entry.operation)
                and (self.permission == Permission.ANY or self.permission == entry.permission))

    def matches(self, binding: AclBinding) -> bool:
        return self.matches_pattern(binding.pattern) and self.matches_entry(binding.entry)

    def exact_pattern(self) -> Optional[ResourcePattern]:
        """The one pattern this filter can match when it names one (a concrete resource type and
        pattern type, and a name), else None (Kafka's `matchesAtMostOne`)."""
        if (self.resource_type in (ResourceType.ANY, ResourceType.UNKNOWN) or self.name is None
                or self.pattern_type not in STORED_PATTERN_TYPES):
            return None
        return ResourcePattern(self.resource_type, self.name, self.pattern_type)

    def error(self) -> Optional[str]:
        """Why the filter is refused (INVALID_REQUEST), or None: Kafka refuses UNKNOWN values."""
        for value in (self.resource_type, self.pattern_type, self.operation, self.permission):
            if value.name == "UNKNOWN":
                return f"the filter's {type(value).__name__} is UNKNOWN"
        return None


def group_by_pattern(bindings: list[AclBinding]) -> dict[ResourcePattern, list[AccessControlEntry]]:
    """Bindings by resource pattern, patterns and entries sorted (DescribeAcls answers per resource)."""
    grouped: dict[ResourcePattern, list[AccessControlEntry]] = {}
    for binding in sorted(bindings):
        grouped.setdefault(binding.pattern, []).append(binding.entry)
    return grouped
