"""DeleteAcls (API 31), versions 1-3: remove the ACLs that match filters.

Version notes: v1 carries the pattern type filter (v0 is not served, as for DescribeAcls); v2 is
flexible; v3 allows the User resource type (a filter on it is INVALID_REQUEST, as for
DescribeAcls: groupctl keeps no ACLs on users).

Answers, as Kafka's AclApis: every filter SECURITY_DISABLED without `--authorizer`, or
CLUSTER_AUTHORIZATION_FAILED without Alter on the Cluster. Otherwise one result per filter, in
order: INVALID_REQUEST for a filter with an UNKNOWN value, else NONE with the ACLs it removed
(an ACL several filters match is listed under the first, as Kafka's ZooKeeper authorizer does),
each NONE or UNKNOWN_SERVER_ERROR when the store did not take its resource's write. A filter
that matches nothing succeeds with no ACLs.
"""

from __future__ import annotations

from typing import Any

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import cluster_allowed, denial
from groupctl.server.handlers.describe_acls import wire_filter

NO_AUTHORIZER = "No Authorizer is configured."


@api(key=31, versions=(1, 3))
async def handle_delete_acls(ctx: RequestContext, request: Any) -> Any:
    result = ctx.response_class.DeleteAclsFilterResult
    matching = result.DeleteAclsMatchingAcl

    def refuse_all(error: ErrorCode, message: str) -> Any:
        return ctx.respond(throttle_time_ms=0, filter_results=[
            result(error_code=int(error), error_message=message, matching_acls=[]) for _ in request.filters])

    if ctx.authorizer is None:
        return refuse_all(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
    if not cluster_allowed(ctx, Operation.ALTER):
        return refuse_all(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, denial(ctx, Operation.ALTER))
    filters = [wire_filter(f) for f in request.filters]
    problems = [f.error() for f in filters]
    removed = iter(await ctx.authorizer.delete([f for f, problem in zip(filters, problems) if not problem]))
    results = []
    for problem in problems:
        if problem:
            results.append(result(error_code=int(ErrorCode.INVALID_REQUEST), error_message=problem, matching_acls=[]))
            continue
        results.append(result(error_code=0, error_message=None, matching_acls=[
            matching(error_code=int(ErrorCode.UNKNOWN_SERVER_ERROR if failure else ErrorCode.NONE),
                     error_message=failure, resource_type=int(b.pattern.resource_type),
                     resource_name=b.pattern.name, pattern_type=int(b.pattern.pattern_type),
                     principal=b.entry.principal, host=b.entry.host, operation=int(b.entry.operation),
                     permission_type=int(b.entry.permission))
            for b, failure in next(removed)]))
    return ctx.respond(throttle_time_ms=0, filter_results=results)
