"""Why a rebalance started, and the record of a completed one in the group document.

A rebalance, as groupctl records it, is the whole episode from the group's first
PreparingRebalance after a settled state (Stable, Empty, or a freshly created group) to the next
group document it writes (Stable, or Empty when nobody is left). Joins, leaves, expiries and
triggers during the episode do not start a new one, even when they restart the join phase from
CompletingRebalance: the episode keeps the cause that started it, and its duration is what the
members experienced. When it completes, the document gets

    "rebalance": {"started_at_ms", "completed_at_ms", "reason", "member_id", "client_id", "detail"}

`reason` is one of the `Reason` values; `member_id` / `client_id` name the member (or, for a
trigger, the requesting client) that caused it, null when there is none; `detail` is one
sentence for people. A document written without a rebalance (a static member's restart in a
Stable group) carries the previous block unchanged; documents written before this block existed
have none, and replay accepts them.

Deliberate difference from Apache Kafka: Kafka only logs a free-text reason when a group starts
rebalancing; groupctl stores a structured cause so tools can report rebalance history.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Optional

from groupctl.layout.groups import LastRebalance


class Reason(str, Enum):
    JOIN = "join"  # a new member joined (or a pending member came back with its id)
    LEADER_REJOIN = "leader rejoin"  # the leader rejoined a Stable group (e.g. its metadata view changed)
    METADATA_CHANGE = "metadata change"  # a member rejoined with different protocols / subscription
    STATIC_MEMBER_REJOIN = "static member rejoin"  # a static member restarted and its protocols changed
    LEAVE = "leave"  # LeaveGroup
    SESSION_EXPIRY = "session expiry"  # no heartbeat within the session timeout
    SYNC_TIMEOUT = "sync timeout"  # members did not send SyncGroup within the rebalance timeout
    GROUP_MAX_SIZE = "group max size"  # a member was removed because the group is over its size limit
    TRIGGER = "trigger"  # an operator asked for it (`groupctl rebalance trigger`)
    TOPIC_CHANGE = "topic change"  # a subscribed topic gained partitions
    COORDINATOR_LOAD = "coordinator load"  # this node took the group over (failover or restart)
    MIGRATION = "migration"  # a consumer group became classic again: its last consumer-protocol member left


@dataclass(frozen=True)
class RebalanceCause:
    reason: Reason
    member_id: Optional[str] = None
    client_id: Optional[str] = None
    detail: Optional[str] = None

    def completed(self, started_at_ms: int, completed_at_ms: int) -> LastRebalance:
        """The document's "rebalance" block for an episode this cause started."""
        return LastRebalance(started_at_ms=started_at_ms, completed_at_ms=completed_at_ms,
                             reason=self.reason.value, member_id=self.member_id, client_id=self.client_id,
                             detail=self.detail)


def caused_by(reason: Reason, what: str, *members: Any) -> RebalanceCause:
    """A cause naming the members (anything with `member_id` and `client_id`) that `what`
    describes, e.g. `caused_by(Reason.LEAVE, "left", a, b)`: the first one goes in the
    fields, all of them in the detail ("members a (client x), b (client y) left")."""
    first = members[0]
    named = ", ".join(f"{m.member_id} (client {m.client_id})" for m in members)
    noun = "member" if len(members) == 1 else "members"
    return RebalanceCause(reason, first.member_id, first.client_id, f"{noun} {named} {what}")
