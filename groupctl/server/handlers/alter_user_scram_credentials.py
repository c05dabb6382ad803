"""AlterUserScramCredentials (API 51), version 0: delete and upsert users' SCRAM credentials.

Version notes: v0 is the only version Kafka defines; it is flexible.

Semantics, as Kafka's ScramControlManager (KRaft) answers: one result per user. Deletions are
checked first, then upsertions, in request order:
- an empty user name is UNACCEPTABLE_CREDENTIAL, a mechanism type other than 1 (SCRAM-SHA-256)
  or 2 (SCRAM-SHA-512) UNSUPPORTED_SASL_MECHANISM, an upsertion with fewer than 4096 or more
  than 16384 iterations UNACCEPTABLE_CREDENTIAL ("Too few/many iterations");
- a user named a second time (by a deletion or an upsertion, whatever the mechanism) is
  DUPLICATE_RESOURCE and nothing of it is applied; a user whose first entry was refused keeps
  that error;
- deleting a credential the user does not have is RESOURCE_NOT_FOUND.
The client sends a salt and the salted password (never the password); the node stores the
StoredKey and ServerKey derived from it (`security.scram.credential_from_salted_password`),
in Kafka's ZooKeeper format at `/config/users/<user>` (`layout.credentials`), one
compare-and-set write per user (`server.user_credentials`).

Deliberate differences from Apache Kafka: results come in the order users first appear
(Kafka: hash order); each user's change is its own write, not one atomic batch across users;
a user whose stored document does not decode, or whose write fails, gets UNKNOWN_SERVER_ERROR
naming the problem.

Authorization (with `--authorizer`), as Kafka: Alter on the Cluster, else every user named gets
CLUSTER_AUTHORIZATION_FAILED (sorted by name, as Kafka's error response lists them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from groupctl.coordinator.errors import ErrorCode
from groupctl.layout.codec import LayoutError
from groupctl.layout.credentials import MissingCredential, ScramCredential
from groupctl.protocol.registry import api
from groupctl.security.acls import Operation
from groupctl.security.scram import (
    MAX_ITERATIONS,
    MECHANISM_TYPES,
    MIN_ITERATIONS,
    credential_from_salted_password,
)
from groupctl.server import user_credentials
from groupctl.server.context import RequestContext
from groupctl.server.handlers.acl_checks import cluster_allowed, denial
from groupctl.store.base import StoreError


TWICE = "A user credential cannot be altered twice in the same request"


@dataclass
class _Change:
    delete: list[str] = field(default_factory=list)
    upsert: dict[str, ScramCredential] = field(default_factory=dict)


@api(key=51, versions=(0, 0))
async def handle_alter_user_scram_credentials(ctx: RequestContext, request: Any) -> Any:
    entry = ctx.response_class.AlterUserScramCredentialsResult
    if not cluster_allowed(ctx, Operation.ALTER):  # Authorization: Alter on the Cluster
        named = sorted({item.name for item in [*request.deletions, *request.upsertions]})
        return ctx.respond(throttle_time_ms=0, results=[
            entry(user=user, error_code=int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
                  error_message=denial(ctx, Operation.ALTER)) for user in named])
    order, changes, errors = _plan(request)
    for user, change in changes.items():
        outcome = await _apply(ctx.node.store, user, change)
        if outcome is not None:
            errors[user] = outcome
    return ctx.respond(throttle_time_ms=0, results=[
        entry(user=user, error_code=int(errors[user][0]), error_message=errors[user][1])
        if user in errors else entry(user=user, error_code=0, error_message=None)
        for user in order])


def _plan(request: Any) -> tuple[list[str], dict[str, _Change], dict[str, tuple[ErrorCode, str]]]:
    """(users in the order they first appear, the change of each acceptable user, the error of
    each other user), checking deletions then upsertions as Kafka's ScramControlManager does."""
    order: list[str] = []
    changes: dict[str, _Change] = {}
    errors: dict[str, tuple[ErrorCode, str]] = {}
    for item, upsertion in [(d, None) for d in request.deletions] + [(u, u) for u in request.upsertions]:
        user = item.name
        if user in errors:
            continue
        if user in changes:
            del changes[user]
            errors[user] = (ErrorCode.DUPLICATE_RESOURCE, TWICE)
            continue
        order.append(user)
        problem = _problem(item, upsertion)
        if problem is not None:
            errors[user] = problem
            continue
        mechanism = MECHANISM_TYPES[item.mechanism]
        changes[user] = _Change(delete=[mechanism]) if upsertion is None else _Change(upsert={
            mechanism: credential_from_salted_password(mechanism, upsertion.salt, upsertion.salted_password,
                                                       upsertion.iterations)})
    return order, changes, errors


def _problem(item: Any, upsertion: Any) -> Optional[tuple[ErrorCode, str]]:
    """Why a deletion or upsertion is refused before anything is read, as Kafka words it."""
    if not item.name:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    if item.mechanism not in MECHANISM_TYPES:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    if upsertion is not None and upsertion.iterations < MIN_ITERATIONS:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"
    if upsertion is not None and upsertion.iterations > MAX_ITERATIONS:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"
    return None


async def _apply(store: Any, user: str, change: _Change) -> Optional[tuple[ErrorCode, str]]:
    """Write one user's change; the error to answer, or None once it is stored."""
    try:
        await user_credentials.alter(store, user, delete=change.delete, upsert=change.upsert)
    except MissingCredential:
        return ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"
    except (LayoutError, StoreError) as exc:
        return ErrorCode.UNKNOWN_SERVER_ERROR, f"cannot alter the credentials of {user!r}: {exc}"
    return None
