"""A rebalance request, `/coordinators/rebalance-requests/<group>`: `{"requested_at_ms",
"reason"}`, created (or rewritten) by `groupctl rebalance trigger --zk` and deleted by the group's
coordinator once it has started the rebalance. Both fields are optional: the request is the
znode's existence."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from groupctl.layout.codec import encode, integer, read, text
from groupctl.layout.paths import rebalance_request_path

VERSION = 1


@dataclass(frozen=True)
class RebalanceRequest:
    requested_at_ms: Optional[int] = None
    reason: Optional[str] = None

    def encode(self) -> bytes:
        return encode({"requested_at_ms": self.requested_at_ms, "reason": self.reason})

    @classmethod
    def decode(cls, group: str, data: Optional[bytes]) -> "RebalanceRequest":
        path = rebalance_request_path(group)
        document = read(path, data, VERSION)
        return cls(requested_at_ms=integer(path, document, "requested_at_ms", default=None),
                   reason=text(path, document, "reason", default=None) or None)
