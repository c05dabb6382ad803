"""DescribeUserScramCredentials (API 50), version 0: which SCRAM credentials users have.

Version notes: v0 is the only version Kafka defines; it is flexible.

Answers, as Kafka's ScramImage does: `users` null or empty describes every user that has a
SCRAM credential, sorted by name; otherwise each distinct name asked gets one result, in the
order first asked: its mechanisms and iteration counts, RESOURCE_NOT_FOUND when it has no
credential (an empty name included), DUPLICATE_RESOURCE when the request names it more than
once. Salts and keys never leave the node.

Deliberate differences from Apache Kafka: Kafka answers in hash order; a user whose stored
document does not decode gets UNKNOWN_SERVER_ERROR naming the problem (Kafka's ZooKeeper mode
does the same); a store that cannot be read is a top-level UNKNOWN_SERVER_ERROR.

Authorization (with `--authorizer`), as Kafka: Describe on the Cluster, else a top-level
CLUSTER_AUTHORIZATION_FAILED with that error for each user asked (Kafka leaves those results'
names empty; groupctl names the users).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from groupctl.coordinator.errors import ErrorCode
from groupctl.layout.codec import LayoutError
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.security.scram import TYPE_OF_MECHANISM
from groupctl.server import user_credentials
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import cluster_allowed, denial
from groupctl.store.base import StoreError



@api(key=50, versions=(0, 0))
async def handle_describe_user_scram_credentials(ctx: RequestContext, request: Any) -> Any:
    entry = ctx.response_class.DescribeUserScramCredentialsResult
    asked = Counter(user.name for user in request.users or ())
    if not cluster_allowed(ctx, Operation.DESCRIBE):  # Authorization: Describe on the Cluster
        code, message = int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED), denial(ctx, Operation.DESCRIBE)
        return ctx.respond(throttle_time_ms=0, error_code=code, error_message=message,
                           results=[_error(entry, user.name, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, message)
                                    for user in request.users or ()])
    try:
        names = list(asked) if asked else await user_credentials.users(ctx.node.store)
        results = [await _describe(ctx.node.store, entry, name, asked) for name in names]
    except StoreError as exc:
        return ctx.respond(throttle_time_ms=0, error_code=int(ErrorCode.UNKNOWN_SERVER_ERROR),
                           error_message=f"cannot read credentials: {exc}", results=[])
    return ctx.respond(throttle_time_ms=0, error_code=0, error_message=None,
                       results=[result for result in results if result is not None])


async def _describe(store: Any, entry: Any, name: str, asked: Counter) -> Any:
    """`name`'s result; None for a user without credentials when describing every user."""
    if asked[name] > 1:
        return _error(entry, name, ErrorCode.DUPLICATE_RESOURCE,
                      f"Cannot describe SCRAM credentials for the same user twice in a single request: {name}")
    try:
        creds = await user_credentials.credentials(store, name)
    except LayoutError as exc:
        return _error(entry, name, ErrorCode.UNKNOWN_SERVER_ERROR, str(exc))
    if creds:
        return entry(user=name, error_code=0, error_message=None, credential_infos=[
            entry.CredentialInfo(mechanism=TYPE_OF_MECHANISM[mechanism], iterations=credential.iterations)
            for mechanism, credential in creds.items()])
    if asked:
        return _error(entry, name, ErrorCode.RESOURCE_NOT_FOUND,
                      f"Attempt to describe a user credential that does not exist: {name}")
    return None


def _error(entry: Any, name: str, code: ErrorCode, message: str) -> Any:
    return entry(user=name, error_code=int(code), error_message=message, credential_infos=[])
