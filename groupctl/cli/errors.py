"""Exit statuses and the one-line error every expected failure becomes."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    OK = 0
    FAILED = 1  # the operation failed: unreachable, refused, not found
    USAGE = 2  # usage or bad input
    CHECK_FAILED = 3  # analyze lag --fail-on: a group at or above the threshold (the output is complete)


class CliError(Exception):
    """An expected failure: printed as one line (no traceback) and exits with `status`."""

    def __init__(self, message: str, status: ExitStatus = ExitStatus.FAILED) -> None:
        super().__init__(message)
        self.status = status


class BadInput(CliError):
    def __init__(self, message: str) -> None:
        super().__init__(message, ExitStatus.USAGE)
