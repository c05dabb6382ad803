"""The expected failures of operator operations, each with the exit status it maps to.

ops functions raise these (and only these) for failures an operator can cause or fix: a group
that does not exist, an operation the group's state forbids, a cluster that cannot be reached,
input that does not make sense. The message is one line meant for people, naming what was
wrong; the CLI prints it without a traceback and exits with `exit_status`. Anything else
escaping ops is a bug.
"""

from __future__ import annotations


class OpsError(Exception):
    """An expected failure; `str(error)` is the one-line message."""

    exit_status = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(OpsError):
    """The group (or other named thing) does not exist."""


class Refused(OpsError):
    """The cluster or the group's state forbids the operation; nothing was changed."""


class Unreachable(OpsError):
    """The cluster (or ZooKeeper) could not be reached or stopped answering in time."""


class AuthenticationFailed(OpsError):
    """TLS or SASL refused the connection: an untrusted certificate, a hostname mismatch, a wrong
    password, a mechanism the cluster does not enable. Not retried: asking again cannot succeed."""


class NotAuthorized(Refused):
    """The cluster's ACLs do not allow the operation to the principal (the message names the
    resource)."""


class Timeout(OpsError):
    """A wait the operator bounded (`--timeout`) ran out before the awaited event."""


class Unsupported(OpsError):
    """The server does not offer an API (or a version of it) the operation needs."""


class BadInput(OpsError):
    """The operator's input is malformed or names things that do not exist (usage error)."""

    exit_status = 2
