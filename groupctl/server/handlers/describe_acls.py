"""DescribeAcls (API 29), versions 1-3: the ACLs that match a filter.

Version notes: v1 carries the resource pattern type (v0, literal patterns only, is not served:
Apache Kafka 4 dropped it, and kafka-python and librdkafka send v1+); v2 is flexible; v3 allows
the User resource type (7).

Answers, as Kafka's AclApis: SECURITY_DISABLED without `--authorizer`; CLUSTER_AUTHORIZATION_FAILED
without Describe on the Cluster; INVALID_REQUEST for a filter with an UNKNOWN value; otherwise
every matching ACL, one resource entry per resource pattern (patterns and entries sorted, where
Kafka's order is its hash map's).

Deliberate difference from Apache Kafka: a filter on the User resource type, which groupctl keeps
no ACLs for (and kafka-python's enum does not name), is INVALID_REQUEST rather than an empty list.
"""

from __future__ import annotations

from typing import Any

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import (
    AclBindingFilter,
    Operation,
    PatternType,
    Permission,
    ResourceType,
    from_code,
    group_by_pattern,
)
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import cluster_allowed, denial

NO_AUTHORIZER = "No Authorizer is configured on the broker"


def wire_filter(request: Any) -> AclBindingFilter:
    """The filter a DescribeAcls request (or a DeleteAcls filter entry) carries."""
    return AclBindingFilter(
        resource_type=from_code(ResourceType, request.resource_type_filter),
        name=request.resource_name_filter,
        pattern_type=from_code(PatternType, request.pattern_type_filter),
        principal=request.principal_filter,
        host=request.host_filter,
        operation=from_code(Operation, request.operation),
        permission=from_code(Permission, request.permission_type),
    )


@api(key=29, versions=(1, 3))
async def handle_describe_acls(ctx: RequestContext, request: Any) -> Any:
    def refuse(error: ErrorCode, message: str) -> Any:
        return ctx.respond(throttle_time_ms=0, error_code=int(error), error_message=message, resources=[])

    if ctx.authorizer is None:
        return refuse(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
    if not cluster_allowed(ctx, Operation.DESCRIBE):
        return refuse(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, denial(ctx, Operation.DESCRIBE))
    where = wire_filter(request)
    problem = where.error()
    if problem:
        return refuse(ErrorCode.INVALID_REQUEST, problem)
    resource = ctx.response_class.DescribeAclsResource
    described = resource.AclDescription
    return ctx.respond(throttle_time_ms=0, error_code=0, error_message=None, resources=[
        resource(resource_type=int(pattern.resource_type), resource_name=pattern.name,
                 pattern_type=int(pattern.pattern_type),
                 acls=[described(principal=e.principal, host=e.host, operation=int(e.operation),
                                 permission_type=int(e.permission)) for e in entries])
        for pattern, entries in group_by_pattern(ctx.authorizer.describe(where)).items()])
