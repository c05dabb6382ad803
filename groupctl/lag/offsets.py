"""The lag of a committed offset, and the one rule for an offset past the log end.

Lag is `log_end - committed`, never negative: a committed offset past the log end (committed
with `offsets commit`, or kept after the topic was recreated) has lag 0 and is flagged as ahead
of the log end, so that describe, `offsets show` and `analyze lag` (over what `lag record`
recorded) agree on it.
Lag is unknown (None) when either side is: nothing committed yet, or the partition's leader could
not be asked.
"""

from __future__ import annotations

from typing import Optional


def consumer_lag(committed: Optional[int], log_end: Optional[int]) -> Optional[int]:
    """Messages between the committed offset and the log end; 0 when the offset is past it."""
    if committed is None or log_end is None:
        return None
    return max(0, log_end - committed)


def ahead_of_log_end(committed: Optional[int], log_end: Optional[int]) -> bool:
    """Whether the committed offset is past the log end (False when either is unknown)."""
    return committed is not None and log_end is not None and committed > log_end
