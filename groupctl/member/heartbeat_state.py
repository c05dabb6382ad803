"""Which fields a heartbeat carries: full or partial, as AK's ConsumerHeartbeatRequestManager.HeartbeatState
decides (librdkafka sends the same fields on a full request).

Invariants:
- GroupId, MemberId and MemberEpoch are always sent; InstanceId whenever it is set.
- Every other field is sent when it differs from what the last request carried, and all of them
  while JOINING. `reset()` forgets what was sent, so the next request carries everything: the
  machine calls it on every error response and failed request, on fencing and on a subscription
  change. (As AK, a field counts as sent when the request is built; a lost request resets.)
- A full request names the subscribed topics as a list ([] with a regex only) and the regex as ""
  when there is none (librdkafka: the coordinator needs a non-null Names or Regex on epoch 0), and
  TopicPartitions as the acknowledged assignment ([] when there is none).
- The leave request carries the ids and the leave epoch only (librdkafka: "rest null").
"""

from __future__ import annotations

from typing import Optional

from groupctl.member.messages import HeartbeatRequest, MemberConfig, Subscription
from groupctl.member.reconciler import LocalAssignment

_UNSENT = object()


class HeartbeatState:
    def __init__(self, config: MemberConfig) -> None:
        self._config = config
        self.reset()

    def reset(self) -> None:
        """Forget what was sent: the next request carries every field."""
        self._rebalance_timeout_ms = -1
        self._names: object = _UNSENT
        self._regex: object = _UNSENT
        self._assignor: object = _UNSENT
        self._rack: object = _UNSENT
        self._acknowledged: object = _UNSENT

    def build(self, member_id: str, epoch: int, joining: bool, subscription: Subscription,
              acknowledged: LocalAssignment) -> HeartbeatRequest:
        config = self._config
        rebalance_timeout_ms = -1
        if joining or self._rebalance_timeout_ms != config.rebalance_timeout_ms:
            rebalance_timeout_ms = self._rebalance_timeout_ms = config.rebalance_timeout_ms
        names: Optional[tuple[str, ...]] = None
        if joining or self._names != subscription.topics:
            names = self._names = subscription.topics
        regex: Optional[str] = None
        wanted_regex = subscription.regex or ""
        if joining or self._regex != wanted_regex:
            regex = self._regex = wanted_regex
        assignor: Optional[str] = None
        if config.server_assignor is not None and (joining or self._assignor != config.server_assignor):
            assignor = self._assignor = config.server_assignor
        rack: Optional[str] = None
        if config.rack_id is not None and (joining or self._rack != config.rack_id):
            rack = self._rack = config.rack_id
        owned = None
        if joining or self._acknowledged != acknowledged:
            owned = dict(acknowledged.partitions)
            self._acknowledged = acknowledged
        return HeartbeatRequest(config.group_id, member_id, epoch, instance_id=config.instance_id, rack_id=rack,
                                rebalance_timeout_ms=rebalance_timeout_ms, subscribed_topic_names=names,
                                subscribed_topic_regex=regex, server_assignor=assignor, topic_partitions=owned)

    def leave(self, member_id: str, epoch: int) -> HeartbeatRequest:
        return HeartbeatRequest(self._config.group_id, member_id, epoch, instance_id=self._config.instance_id)
