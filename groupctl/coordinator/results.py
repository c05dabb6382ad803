"""What a core operation returns: replies to (possibly parked) requests, records, and events.

A request enters the core with a `token` chosen by the caller (the runtime uses one per
in-flight request). The core answers it in the same `Result` or, for requests it parks
(JoinGroup, SyncGroup), in the `Result` of a later request or timer. The runtime persists
`records` first and only then delivers `replies` (an acknowledged commit is durable).

`events` are the journal entries of what happened (see `groupctl.coordinator.journal`), in the
order it happened; the runtime journals them once `records` are persisted, and never when the
write failed. They are history, not state: nothing is ever rebuilt from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable

from groupctl.coordinator.records import Record


@dataclass(frozen=True)
class Reply:
    token: Hashable
    response: Any


@dataclass
class Result:
    replies: list[Reply] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)

    def reply(self, token: Hashable, response: Any) -> "Result":
        self.replies.append(Reply(token, response))
        return self

    def extend(self, other: "Result") -> "Result":
        self.replies.extend(other.replies)
        self.records.extend(other.records)
        self.events.extend(other.events)
        return self
