"""A consumer-group core on a manual clock, and members that behave like a Kafka 4 client: they
join, acknowledge what they were told, and revoke before they heartbeat again."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from groupctl.coordinator.consumer.config import ConsumerGroupConfig
from groupctl.coordinator.consumer.context import ConsumerCore
from groupctl.coordinator.consumer.heartbeat import heartbeat
from groupctl.coordinator.consumer.messages import ConsumerHeartbeat, ConsumerHeartbeatResult
from groupctl.coordinator.consumer.partitions import assignment
from groupctl.coordinator.consumer.topics import TopicImage, TopicInfo
from groupctl.coordinator.results import Result
from groupctl.coordinator.timers import ManualTimer

ORDERS = TopicInfo("orders", "orders-id", 6)
AUDIT = TopicInfo("audit", "audit-id", 2)


class Harness:
    def __init__(self, topics=(ORDERS, AUDIT), **config) -> None:
        self.timer = ManualTimer()
        self.core = ConsumerCore(timer=self.timer, config=ConsumerGroupConfig(**config), node_id=0,
                                 topics=TopicImage.of(topics))
        self.results: list[Result] = []

    @property
    def now(self) -> int:
        return self.timer.now_ms

    def send(self, request: ConsumerHeartbeat, new_member_id: str = "made-by-server") -> ConsumerHeartbeatResult:
        result = heartbeat(self.core, "token", request, self.now, new_member_id)
        self.results.append(result)
        (reply,) = result.replies
        return reply.response

    def advance(self, ms: int) -> None:
        self.results.extend(self.timer.advance(ms))

    def group(self, group_id: str = "g"):
        return self.core.groups[group_id]


def join(member_id: str, *, group: str = "g", topics=("orders",), instance_id: Optional[str] = None,
         assignor: Optional[str] = None, regex: Optional[str] = None) -> ConsumerHeartbeat:
    """The full heartbeat a client joins with (librdkafka's: "" regex when it has none)."""
    return ConsumerHeartbeat(group, member_id, 0, instance_id=instance_id, rebalance_timeout_ms=300_000,
                             subscribed_topic_names=tuple(topics), subscribed_topic_regex=regex or "",
                             server_assignor=assignor, owned=assignment({}))


@dataclass
class Client:
    """A member as a client sees itself: its epoch and what it owns."""

    harness: Harness
    member_id: str
    group: str = "g"
    topics: tuple[str, ...] = ("orders",)
    instance_id: Optional[str] = None
    epoch: int = 0
    owned: dict = field(default_factory=dict)
    told: dict = field(default_factory=dict)  # the last assignment the coordinator sent
    last: Optional[ConsumerHeartbeatResult] = None

    def join(self) -> ConsumerHeartbeatResult:
        return self._apply(self.harness.send(join(self.member_id, group=self.group, topics=self.topics,
                                                  instance_id=self.instance_id)))

    def beat(self) -> ConsumerHeartbeatResult:
        """A heartbeat acknowledging what it owns (a client sends TopicPartitions after a change;
        sending it every time is allowed and simpler)."""
        return self._apply(self.harness.send(ConsumerHeartbeat(
            self.group, self.member_id, self.epoch, instance_id=self.instance_id, owned=assignment(self.owned))))

    def leave(self, epoch: int = -1) -> ConsumerHeartbeatResult:
        return self.harness.send(ConsumerHeartbeat(self.group, self.member_id, epoch, instance_id=self.instance_id))

    def _apply(self, answer: ConsumerHeartbeatResult) -> ConsumerHeartbeatResult:
        self.last = answer
        if answer.error == 0:
            self.epoch = answer.member_epoch
            if answer.assignment is not None:  # revoke what is gone, take what is new
                self.told = {t: set(ps) for t, ps in answer.assignment.items()}
                self.owned = dict(self.told)
        return answer

    def catch_up(self) -> None:
        """A slow member finally applies what it was told."""
        self.owned = dict(self.told)
