"""A driver for the classic group core in unit tests: a ManualTimer, request builders, and a
ledger of every reply (each token may be answered once) and record the core produced."""

from __future__ import annotations

import itertools
from typing import Any, Hashable, Iterable, Optional

from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

from groupctl.coordinator.classic.coordinator import GroupConfig, GroupCoordinator
from groupctl.coordinator.classic.messages import (
    Heartbeat,
    JoinGroup,
    JoinGroupResult,
    LeaveGroup,
    LeavingMember,
    SyncGroup,
)
from groupctl.coordinator.offsets.messages import CommitOffsets, PartitionOffset
from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.records import GroupMetadataRecord
from groupctl.coordinator.results import Result
from groupctl.coordinator.timers import ManualTimer
from groupctl.layout.groups import GroupDocument

FAST = GroupConfig(initial_rebalance_delay_ms=0)
START_MS = 1_000_000


def subscription(*topics: str, version: int = 1) -> bytes:
    return bytes(ConsumerProtocolSubscription(
        version=version, topics=list(topics), user_data=b"", owned_partitions=[],
    ).encode(version=version))


def assignment(parts: dict[str, list[int]], version: int = 1) -> bytes:
    entries = [ConsumerProtocolAssignment.TopicPartition(topic=t, partitions=ps) for t, ps in parts.items()]
    return bytes(ConsumerProtocolAssignment(
        version=version, assigned_partitions=entries, user_data=b"",
    ).encode(version=version))


def document_record(group: str, document: dict) -> GroupMetadataRecord:
    """The record of a group document given as its JSON (as the store reads it back)."""
    return GroupMetadataRecord(group, GroupDocument.from_json(group, document))


class DoubleReply(AssertionError):
    pass


class Harness:
    def __init__(self, config: GroupConfig = FAST, now_ms: int = START_MS, node_id: int = 0) -> None:
        self.timer = ManualTimer(now_ms)
        uuids = itertools.count(1)
        self.core = GroupCoordinator(timer=self.timer, config=config, node_id=node_id,
                                     new_uuid=lambda: f"u{next(uuids)}")
        self.replies: dict[Hashable, Any] = {}
        self.records: list[Any] = []
        self.results: list[Result] = []
        self._tokens = itertools.count(1)

    @property
    def now(self) -> int:
        return self.timer.now_ms

    # --- plumbing ----------------------------------------------------------------------------

    def absorb(self, result: Result) -> Result:
        self.results.append(result)
        for reply in result.replies:
            if reply.token in self.replies:
                raise DoubleReply(f"token {reply.token} answered twice: {self.replies[reply.token]} and {reply.response}")
            self.replies[reply.token] = reply.response
        for record in result.records:
            if isinstance(record, GroupMetadataRecord):
                record.document  # built now, as the store builds it when it writes the result
        self.records.extend(result.records)
        return result

    def call(self, operation: str, request: Any) -> Hashable:
        token = ("t", next(self._tokens))
        self.absorb(getattr(self.core, operation)(token, request, self.now))
        return token

    def ask(self, operation: str, request: Any) -> Any:
        """Call and return the immediate reply (fails if the request was parked)."""
        return self.reply(self.call(operation, request))

    def reply(self, token: Hashable) -> Any:
        assert token in self.replies, f"{token} not answered"
        return self.replies[token]

    def answered(self, token: Hashable) -> bool:
        return token in self.replies

    def advance(self, ms: int) -> list[Result]:
        return [self.absorb(result) for result in self.timer.advance(ms)]

    def documents(self, group: str = "g") -> list[dict]:
        """The group's documents recorded so far, as their JSON."""
        return [r.document.to_json() for r in self.records if isinstance(r, GroupMetadataRecord) and r.group == group]

    # --- requests ----------------------------------------------------------------------------

    def join(
        self, group: str = "g", member_id: str = "", *, client_id: str = "c", instance: Optional[str] = None,
        session_ms: int = 10_000, rebalance_ms: int = 30_000, protocol_type: str = "consumer",
        protocols: Optional[Iterable[tuple[str, bytes]]] = None, require_known: bool = False,
    ) -> Hashable:
        if protocols is None:
            protocols = (("range", subscription("t")),)
        return self.call("join_group", JoinGroup(
            group_id=group, member_id=member_id, group_instance_id=instance, session_timeout_ms=session_ms,
            rebalance_timeout_ms=rebalance_ms, protocol_type=protocol_type, protocols=tuple(protocols),
            client_id=client_id, client_host="/127.0.0.1", require_known_member_id=require_known,
        ))

    def sync(
        self, group: str, generation: int, member_id: str, assignments: Iterable[tuple[str, bytes]] = (), *,
        instance: Optional[str] = None, protocol_type: Optional[str] = None, protocol_name: Optional[str] = None,
    ) -> Hashable:
        return self.call("sync_group", SyncGroup(
            group_id=group, generation_id=generation, member_id=member_id, group_instance_id=instance,
            protocol_type=protocol_type, protocol_name=protocol_name, assignments=tuple(assignments),
        ))

    def heartbeat(self, group: str, generation: int, member_id: str, instance: Optional[str] = None) -> ErrorCode:
        return self.ask("heartbeat", Heartbeat(group, generation, member_id, instance)).error

    def leave(self, group: str, *members: LeavingMember) -> Any:
        return self.ask("leave_group", LeaveGroup(group, tuple(members)))

    def commit(self, group: str, generation: int, member_id: str, *offsets: PartitionOffset,
               instance: Optional[str] = None, version: int = 8) -> list[ErrorCode]:
        """The partitions' errors of an OffsetCommit at `version` (kafka-python's by default)."""
        request = CommitOffsets(group, generation, member_id, instance, tuple(offsets), version)
        result = self.ask("commit_offsets", request)
        return [p.error for p in result.partitions]

    def state(self, group: str = "g") -> str:
        (description,) = self.ask("describe_groups", (group,))
        return description.state

    def describe(self, group: str = "g") -> Any:
        (description,) = self.ask("describe_groups", (group,))
        return description

    # --- scenarios ---------------------------------------------------------------------------

    def joined_members(self, group: str, count: int, **join_args: Any) -> list[JoinGroupResult]:
        """`count` new members join and the join phase completes: their JoinGroup answers."""
        tokens = [self.join(group, client_id=f"c{i}", **join_args) for i in range(count)]
        self.advance(0)
        return [self.reply(t) for t in tokens]

    def stable_group(self, group: str = "g", count: int = 2, **join_args: Any) -> list[JoinGroupResult]:
        """`count` members join and sync; the leader gives member i partition i of topic "t"."""
        answers = self.joined_members(group, count, **join_args)
        leader = next(a for a in answers if a.members)
        plan = [(a.member_id, assignment({"t": [i]})) for i, a in enumerate(answers)]
        tokens = [self.sync(group, a.generation_id, a.member_id, plan if a is leader else ())
                  for a in answers if a is not leader]
        tokens.append(self.sync(group, leader.generation_id, leader.member_id, plan))
        assert all(self.reply(t).error is ErrorCode.NONE for t in tokens)
        assert self.state(group) == "Stable"
        return answers
