"""Rebalance the groups whose subscribed topics changed (a topic gained partitions).

When the cluster learns that topics changed (the topic watch sees a new `/brokers/topics/<topic>`
document), every Stable or CompletingRebalance group subscribed to any of them starts a rebalance
with reason "topic change", so its leader assigns the new partitions. Nobody asked for it, so the
`Result` carries no reply, only the records of any group that completes a join phase at once.

Which groups: `ClassicGroup.is_subscribed_to`, so a "consumer" group whose subscriptions cannot be
decoded counts as subscribed (a needless rebalance is safe, a missed one is not). PreparingRebalance
groups will see the new metadata when their leader assigns; Empty groups have nobody to assign to;
a CompletingRebalance group restarts its join phase, as its leader may be assigning from the old
partition count.

Deliberate difference from Apache Kafka, whose classic coordinator leaves this to the clients (the
leader notices the new partition count in its metadata and rejoins): here the leader assigns again
at once, not at its next metadata refresh (kafka-python: every 5 minutes). A leader that fetches
metadata before assigning (librdkafka) hands the new partitions out in this rebalance;
kafka-python 3.0.12's assigns from its cached metadata, then refreshes it and rejoins at once
("leader rejoin"), which hands them out one rebalance later.
"""

from __future__ import annotations

from groupctl.coordinator.classic import rebalance
from groupctl.coordinator.classic.causes import Reason, RebalanceCause
from groupctl.coordinator.classic.context import Core
from groupctl.coordinator.classic.state import GroupState
from groupctl.coordinator.results import Result

_REBALANCEABLE = (GroupState.STABLE, GroupState.COMPLETING_REBALANCE)


def topics_changed(core: Core, topics: frozenset[str], now_ms: int, detail: str) -> Result:
    """Start a rebalance (reason "topic change", `detail` for people) in every Stable or
    CompletingRebalance group subscribed to any of `topics`. No reply; groups are visited in
    group-id order so the records come out in a stable order."""
    out = Result()
    cause = RebalanceCause(Reason.TOPIC_CHANGE, detail=detail)
    for group_id in sorted(core.groups):
        group = core.groups[group_id]
        if group.state in _REBALANCEABLE and any(group.is_subscribed_to(topic) for topic in sorted(topics)):
            rebalance.prepare_rebalance(core, group, now_ms, out, cause)
    return out
