"""What a heartbeat error means to the member (AK AbstractHeartbeatRequestManager.onErrorResponse
and ConsumerHeartbeatRequestManager.handleSpecificError; librdkafka agrees).

Invariants:
- Every error code has exactly one `Reaction`; a code this module does not name is FATAL, as in
  AK ("there could be a bug in the code or a new error code").
- Codes are plain ints here: the coordinator's `ErrorCode` does not list every code a real
  coordinator may send (30 GROUP_AUTHORIZATION_FAILED, for one).
"""

from __future__ import annotations

from enum import Enum

from groupctl.coordinator.errors import ErrorCode

GROUP_AUTHORIZATION_FAILED = 30  # not in ErrorCode: groupctl's coordinator never sends it


class Reaction(Enum):
    FENCED = "fenced"  # onLost for everything, rejoin with epoch 0 and the same member id
    RETRY = "retry"  # send again after the backoff
    FIND_COORDINATOR = "find_coordinator"  # find the coordinator again, then send at once
    FATAL = "fatal"  # stop for good, keeping the reason


_REACTIONS: dict[int, Reaction] = {
    ErrorCode.UNKNOWN_MEMBER_ID: Reaction.FENCED,  # 25
    ErrorCode.FENCED_MEMBER_EPOCH: Reaction.FENCED,  # 110
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS: Reaction.RETRY,  # 14
    ErrorCode.COORDINATOR_NOT_AVAILABLE: Reaction.FIND_COORDINATOR,  # 15
    ErrorCode.NOT_COORDINATOR: Reaction.FIND_COORDINATOR,  # 16
    # Named FATAL in AK (the rest are FATAL by default): 30, 42, 81, 112, 35, 111, 82; and 128
    # INVALID_REGULAR_EXPRESSION, 69 GROUP_ID_NOT_FOUND fall to the default, as in librdkafka.
}

FATAL_REASONS: dict[int, str] = {
    GROUP_AUTHORIZATION_FAILED: "not authorized to join the group",
    ErrorCode.INVALID_REQUEST: "the coordinator rejected the heartbeat as invalid",
    ErrorCode.GROUP_MAX_SIZE_REACHED: "the group has reached its maximum size",
    ErrorCode.UNSUPPORTED_ASSIGNOR: "the coordinator does not know the server assignor",
    ErrorCode.UNSUPPORTED_VERSION: ("the cluster does not support the consumer group protocol; "
                                    "use group.protocol=classic"),
    ErrorCode.UNRELEASED_INSTANCE_ID: "the static instance id is still held by another member",
    ErrorCode.FENCED_INSTANCE_ID: "another member joined with this static instance id",
    ErrorCode.INVALID_REGULAR_EXPRESSION: "the subscribed regular expression is invalid",
    ErrorCode.GROUP_ID_NOT_FOUND: "the group does not exist or is not a consumer group",
}


def reaction(code: int) -> Reaction:
    return _REACTIONS.get(int(code), Reaction.FATAL)


def error_name(code: int) -> str:
    if int(code) == GROUP_AUTHORIZATION_FAILED:
        return "GROUP_AUTHORIZATION_FAILED"
    try:
        return ErrorCode(int(code)).name
    except ValueError:
        return f"error {int(code)}"


def fatal_reason(code: int, message: str | None) -> str:
    """The one-line reason a FATAL member keeps: the error's name, what it means, the coordinator's words."""
    reason = f"{error_name(code)}: {FATAL_REASONS.get(int(code), 'an unexpected heartbeat error')}"
    return f"{reason} ({message})" if message else reason
