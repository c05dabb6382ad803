"""The authorization checks handlers make, as Apache Kafka's request handlers (KafkaApis' AuthHelper)
make them: `allowed` for one resource, `allowed_names` to filter many, `denial` for the
message a refused cluster operation carries.

Without `--authorizer` the request's `authorizer` is None and every check is one attribute test
that answers "allowed" (the heartbeat path pays nothing else: bench figures in docs/security.md).
"""

from __future__ import annotations

from typing import Any, Iterable

from groupctl.security.acls import CLUSTER_NAME, Operation, ResourceType, kafka_name

CLUSTER = ResourceType.CLUSTER
GROUP = ResourceType.GROUP
TOPIC = ResourceType.TOPIC
TRANSACTIONAL_ID = ResourceType.TRANSACTIONAL_ID


def allowed(ctx: Any, operation: Operation, resource_type: ResourceType, name: str) -> bool:
    authorizer = ctx.authorizer
    return authorizer is None or authorizer.authorize(ctx.principal, ctx.client_host, operation, resource_type, name)


def cluster_allowed(ctx: Any, operation: Operation) -> bool:
    return allowed(ctx, operation, CLUSTER, CLUSTER_NAME)


def allowed_names(ctx: Any, operation: Operation, resource_type: ResourceType, names: Iterable[str]) -> set[str]:
    """The names among `names` the request's principal may do `operation` on (Kafka's
    `filterByAuthorized`: each distinct name is decided once)."""
    names = set(names)
    authorizer = ctx.authorizer
    if authorizer is None:
        return names
    return {n for n in names if authorizer.authorize(ctx.principal, ctx.client_host, operation, resource_type, n)}


def allowed_on_any(ctx: Any, operation: Operation, resource_type: ResourceType) -> bool:
    """Whether the principal may do `operation` on some resource of the type (Kafka's
    `authorizeByResourceType`)."""
    authorizer = ctx.authorizer
    return authorizer is None or authorizer.authorize_any(ctx.principal, ctx.client_host, operation, resource_type)


def denial(ctx: Any, operation: Operation, resource: str = "the cluster") -> str:
    """"User:bob is not allowed Alter on the cluster": what a refused request's error message says."""
    return f"{ctx.principal} is not allowed {kafka_name(operation)} on {resource}"
