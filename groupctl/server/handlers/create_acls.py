"""CreateAcls (API 30), versions 1-3: add ACLs.

Version notes: v1 carries the resource pattern type (v0 is not served, as for DescribeAcls);
v2 is flexible; v3 allows the User resource type (refused here, see below).

Answers, as Kafka's AclApis: every creation SECURITY_DISABLED without `--authorizer`, or
CLUSTER_AUTHORIZATION_FAILED without Alter on the Cluster. Otherwise one result per creation, in
order: INVALID_REQUEST (with the reason) for one that is not a valid ACL
(`security.acls.creation_error`), UNKNOWN_SERVER_ERROR when the store did not take its
resource's write, else NONE. The creations of one resource pattern are one compare-and-set write
(`NodeAuthorizer.create`); adding an ACL that exists changes nothing and succeeds.

Deliberate differences from Apache Kafka: ACLs on the DelegationToken and User resource types are
refused (INVALID_REQUEST): groupctl has none of those resources. Principals
must be "Type:name" with both parts non-empty (Kafka only needs the colon).
"""

from __future__ import annotations

from typing import Any

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import (
    AccessControlEntry,
    AclBinding,
    Operation,
    PatternType,
    Permission,
    ResourcePattern,
    ResourceType,
    creation_error,
    from_code,
)
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import cluster_allowed, denial

NO_AUTHORIZER = "No Authorizer is configured."


def _binding(creation: Any) -> AclBinding:
    return AclBinding(
        ResourcePattern(from_code(ResourceType, creation.resource_type), creation.resource_name,
                        from_code(PatternType, creation.resource_pattern_type)),
        AccessControlEntry(creation.principal, creation.host, from_code(Operation, creation.operation),
                           from_code(Permission, creation.permission_type)))


@api(key=30, versions=(1, 3))
async def handle_create_acls(ctx: RequestContext, request: Any) -> Any:
    result = ctx.response_class.AclCreationResult

    def respond(outcomes: list[tuple[ErrorCode, Any]]) -> Any:
        return ctx.respond(throttle_time_ms=0, results=[result(error_code=int(code), error_message=message)
                                                        for code, message in outcomes])

    count = len(request.creations)
    if ctx.authorizer is None:
        return respond([(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)] * count)
    if not cluster_allowed(ctx, Operation.ALTER):
        return respond([(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, denial(ctx, Operation.ALTER))] * count)
    bindings = [_binding(creation) for creation in request.creations]
    outcomes: list[tuple[ErrorCode, Any]] = []
    valid = []
    for binding in bindings:
        problem = creation_error(binding)
        outcomes.append((ErrorCode.INVALID_REQUEST, problem) if problem else (ErrorCode.NONE, None))
        if not problem:
            valid.append(binding)
    written = iter(await ctx.authorizer.create(valid))
    for index, (code, _) in enumerate(outcomes):
        if code == ErrorCode.NONE:
            failure = next(written)
            if failure is not None:
                outcomes[index] = (ErrorCode.UNKNOWN_SERVER_ERROR, failure)
    return respond(outcomes)
