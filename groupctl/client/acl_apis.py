"""DescribeAcls (29), CreateAcls (30) and DeleteAcls (31), v1-3, for `groupctl acl`: any Kafka
cluster with an authorizer, and groupctl's coordinator started with --authorizer, serve them.

Requests go to any broker (Kafka forwards ACL changes to its controller; groupctl's nodes share
one store). Answers are returned as the broker gave them, errors included: what an error means
to the operator is `groupctl.ops.acls`'s business.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from groupctl.client.kafka import KafkaClient
from groupctl.security.acls import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    Operation,
    PatternType,
    Permission,
    ResourcePattern,
    ResourceType,
    from_code,
)

DESCRIBE_ACLS = 29
CREATE_ACLS = 30
DELETE_ACLS = 31
VERSIONS = (1, 3)


@dataclass(frozen=True)
class Outcome:
    """A broker's answer for one creation, filter or deleted ACL."""

    error_code: int
    error_message: Optional[str]


def _binding(resource_type: int, name: str, pattern_type: int, acl: Any) -> AclBinding:
    return AclBinding(
        ResourcePattern(from_code(ResourceType, resource_type), name, from_code(PatternType, pattern_type)),
        AccessControlEntry(acl.principal, acl.host, from_code(Operation, acl.operation),
                           from_code(Permission, acl.permission_type)))


def _filter_fields(where: AclBindingFilter) -> dict[str, Any]:
    return dict(resource_type_filter=int(where.resource_type), resource_name_filter=where.name,
                pattern_type_filter=int(where.pattern_type), principal_filter=where.principal,
                host_filter=where.host, operation=int(where.operation), permission_type=int(where.permission))


def describe_acls(client: KafkaClient, where: AclBindingFilter) -> tuple[Outcome, list[AclBinding]]:
    response = client.call(None, DESCRIBE_ACLS, VERSIONS, lambda cls, version: cls(**_filter_fields(where)))
    return Outcome(response.error_code, response.error_message), [
        _binding(r.resource_type, r.resource_name, r.pattern_type, acl) for r in response.resources for acl in r.acls]


def create_acls(client: KafkaClient, bindings: Sequence[AclBinding]) -> list[Outcome]:
    """One outcome per binding, in order."""

    def build(cls: type, version: int) -> Any:
        return cls(creations=[cls.AclCreation(
            resource_type=int(b.pattern.resource_type), resource_name=b.pattern.name,
            resource_pattern_type=int(b.pattern.pattern_type), principal=b.entry.principal, host=b.entry.host,
            operation=int(b.entry.operation), permission_type=int(b.entry.permission)) for b in bindings])

    response = client.call(None, CREATE_ACLS, VERSIONS, build)
    return [Outcome(r.error_code, r.error_message) for r in response.results]


def delete_acls(client: KafkaClient, filters: Sequence[AclBindingFilter]
                ) -> list[tuple[Outcome, list[tuple[AclBinding, Outcome]]]]:
    """Per filter, in order: its outcome and the ACLs it deleted, each with its own outcome."""

    def build(cls: type, version: int) -> Any:
        return cls(filters=[cls.DeleteAclsFilter(**_filter_fields(f)) for f in filters])

    response = client.call(None, DELETE_ACLS, VERSIONS, build)
    return [(Outcome(r.error_code, r.error_message),
             [(_binding(m.resource_type, m.resource_name, m.pattern_type, m), Outcome(m.error_code, m.error_message))
              for m in r.matching_acls])
            for r in response.filter_results]
