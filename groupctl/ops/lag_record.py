"""One sampling round of `groupctl lag record`: per (group, topic, partition), the committed
offset, the log-end offset and the group's state, member count and partition owner, as rows of
the lag dataset (docs/lag-and-rebalances.md, "Recording lag"; schema version 1).

Kafka protocol only, so it samples any Kafka cluster. A round: (1) the groups and their
coordinators (all groups: ListGroups on every broker, pipelined; named groups: FindCoordinator,
remembered across rounds until a request to that coordinator fails); (2) DescribeGroups (and
ConsumerGroupDescribe beside it where the coordinator serves it: a KIP-848 consumer group's
state, members and assignments come from it alone, `consumer_group_apis.group_state_calls`) +
OffsetFetch per group, pipelined across coordinators, PIPELINE_GROUPS groups per exchange so no
socket buffer fills with unread answers (a group's `ts` is when its exchange was read); (3) one
Metadata and one batched ListOffsets LATEST per partition leader. A group's partitions are those
with a committed offset plus those in a member's assignment (consumer protocol, either group
type).

Invariants:
- A round runs on a `KafkaClient` of its own whose deadline bounds it; no connection outlives a
  round, so a restarted coordinator is simply connected to again.
- A group's rows appear only if its whole sample succeeded; a group that fails is left out with
  a `Problem` naming it. A group that does not exist yields no rows and no problem.
- A node failing mid-exchange costs only what it serves: the exchange is repeated without it, at
  most once per node. `log_end` is None where the leader is unknown or could not be asked.
- What fails the whole round (no bootstrap server, the Metadata naming the brokers, an
  undecodable answer, a missing API version) raises `OpsError`. Nothing here prints or writes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

from groupctl.client import consumer_group_apis as consumer_apis
from groupctl.client import kafka_apis as apis
from groupctl.errors import NotFound, OpsError, Unreachable
from groupctl.ops.groups import check_group_id
from groupctl.client.kafka_apis import TopicPartition
from groupctl.client.kafka import (DEFAULT_TIMEOUT, BootstrapLike, Call, ConnectionFailed, KafkaClient, Node,
                                   as_bootstrap, parse_bootstrap)

SCHEMA_VERSION = 1
PIPELINE_GROUPS = 64
"""Groups per pipelined DescribeGroups (+ ConsumerGroupDescribe) + OffsetFetch exchange."""


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class LagRow:
    """One row of the lag dataset (schema in docs/lag-and-rebalances.md, "Recording lag")."""

    ts: int
    cluster: str
    group: str
    topic: str
    partition: int
    committed: Optional[int]
    log_end: Optional[int]
    state: Optional[str]
    members: Optional[int]
    owner: Optional[str]

    def to_json(self) -> dict[str, Any]:
        return {"v": SCHEMA_VERSION, "ts": self.ts, "cluster": self.cluster, "group": self.group,
                "topic": self.topic, "partition": self.partition, "committed": self.committed,
                "log_end": self.log_end, "state": self.state, "members": self.members, "owner": self.owner}


@dataclass(frozen=True)
class Problem:
    """Something a round could not sample; `group` is None when it is not one group's (a node
    that could not list its groups, log-end offsets that could not be asked)."""

    group: Optional[str]
    message: str


@dataclass(frozen=True)
class RoundSample:
    rows: tuple[LagRow, ...]
    groups_sampled: int  # groups whose whole sample succeeded (with or without rows)
    problems: tuple[Problem, ...]

    @property
    def skipped_groups(self) -> tuple[str, ...]:
        return tuple(p.group for p in self.problems if p.group is not None)

    @property
    def failed(self) -> bool:
        """Nothing could be sampled: there were problems and no group succeeded."""
        return bool(self.problems) and self.groups_sampled == 0

    def problem_summary(self) -> str:
        """The problems on one line: the first one's message, and how many more there are."""
        if not self.problems:
            return ""
        more = len(self.problems) - 1
        return self.problems[0].message + (f" (and {more} more problem(s))" if more else "")


@dataclass(frozen=True)
class _GroupSnapshot:
    """What DescribeGroups (or ConsumerGroupDescribe) and OffsetFetch told about one group, at `ts`."""

    group: str
    ts: int
    state: str
    members: int
    committed: Mapping[TopicPartition, int]
    owners: Mapping[TopicPartition, str]  # partition -> client id of the member assigned it

    def partitions(self) -> list[TopicPartition]:
        return sorted(set(self.committed) | set(self.owners))


class LagSampler:
    """Samples `groups` (None: every group of the cluster) of the cluster at `bootstrap`, one
    round per `sample()` call, labelling rows with `cluster`.

    Keeps the coordinator of each named group between rounds (found again after any failure of
    a request to it). `wall_ms` gives the sample times (epoch ms), injectable for tests.
    """

    def __init__(self, bootstrap: BootstrapLike, cluster: str, groups: Optional[Sequence[str]], *,
                 timeout: float = DEFAULT_TIMEOUT, wall_ms: Callable[[], int] = wall_clock_ms) -> None:
        parse_bootstrap(as_bootstrap(bootstrap).servers)  # a malformed address is bad input, not a failed round
        self.bootstrap = bootstrap
        self.cluster = cluster
        self.groups = None if groups is None else tuple(dict.fromkeys(check_group_id(g) for g in groups))
        self.timeout = timeout
        self._wall_ms = wall_ms
        self._coordinators: dict[str, Node] = {}

    def sample(self) -> RoundSample:
        """One round (see the module docstring); `OpsError` when the cluster cannot be reached."""
        with KafkaClient(self.bootstrap, timeout=self.timeout) as client:
            client.connection(None)  # an unreachable cluster fails the round once, not per group
            targets, problems = self._targets(client)
            snapshots, group_problems = self._snapshots(client, targets)
            partitions = sorted({tp for s in snapshots for tp in s.partitions()})
            log_end, log_end_problems = _log_end_offsets(client, partitions)
        rows = tuple(
            LagRow(ts=s.ts, cluster=self.cluster, group=s.group, topic=topic, partition=partition,
                   committed=s.committed.get((topic, partition)), log_end=log_end.get((topic, partition)),
                   state=s.state, members=s.members, owner=s.owners.get((topic, partition)))
            for s in snapshots for topic, partition in s.partitions())
        return RoundSample(rows, len(snapshots), (*problems, *group_problems, *log_end_problems))

    # -- 1. groups and their coordinators -----------------------------------------------------

    def _targets(self, client: KafkaClient) -> tuple[dict[str, Node], list[Problem]]:
        """{group: its coordinator} for this round, and the problems of finding them."""
        if self.groups is None:
            return _list_all_groups(client)
        targets: dict[str, Node] = {}
        problems = []
        for group in self.groups:
            node = self._coordinators.get(group)
            if node is None:
                try:
                    node = self._coordinators[group] = client.find_coordinator(group)
                except OpsError as exc:
                    problems.append(Problem(group, str(exc)))
                    continue
            targets[group] = node
        return targets, problems

    # -- 2. state, members and committed offsets ------------------------------------------------

    def _snapshots(self, client: KafkaClient,
                   targets: Mapping[str, Node]) -> tuple[list[_GroupSnapshot], list[Problem]]:
        groups = sorted(targets)
        snapshots: list[_GroupSnapshot] = []
        problems: list[Problem] = []
        unreachable: dict[Node, ConnectionFailed] = {}  # coordinators not reached to ask ApiVersions
        for first in range(0, len(groups), PIPELINE_GROUPS):
            chunk = groups[first:first + PIPELINE_GROUPS]
            calls: list[Call] = []
            spans: dict[str, slice] = {}  # group -> its calls: state calls, then OffsetFetch
            for g in chunk:
                node = targets[g]
                if node in unreachable:
                    continue
                try:
                    state_calls = consumer_apis.group_state_calls(client, node, [g])
                except ConnectionFailed as exc:
                    unreachable[node] = exc
                    continue
                spans[g] = slice(len(calls), len(calls) + len(state_calls) + 1)
                calls += [*state_calls, apis.offset_fetch_call(node, g)]
            answers = _exchange(client, calls) if calls else []
            ts = self._wall_ms()
            for group in chunk:
                try:
                    if group not in spans:
                        raise unreachable[targets[group]]
                    *described, fetched = answers[spans[group]]
                    snapshot = _snapshot(group, ts, described, fetched)
                except OpsError as exc:
                    problems.append(Problem(group, str(exc)))
                    if isinstance(exc, Unreachable):  # lost, or moved: find it again next round
                        self._coordinators.pop(group, None)
                    continue
                if snapshot is not None:
                    snapshots.append(snapshot)
        return snapshots, problems


def _list_all_groups(client: KafkaClient) -> tuple[dict[str, Node], list[Problem]]:
    """{group: the node listing it} from ListGroups on every broker; a node that cannot answer
    (unreachable, still loading its groups) is a problem, its groups are unknown this round."""
    brokers = sorted(client.metadata([]).brokers.values(), key=lambda n: n.node_id)
    answers = _exchange(client, [apis.list_groups_call(node, ()) for node in brokers])
    targets: dict[str, Node] = {}
    problems = []
    for node, answer in zip(brokers, answers):
        try:
            if isinstance(answer, OpsError):
                raise answer
            listed = apis.parse_list_groups(answer, node)
        except OpsError as exc:
            problems.append(Problem(None, f"cannot list the groups of node {node.node_id}: {exc}"))
            continue
        for listing in listed:
            targets.setdefault(listing.group, node)
    return targets, problems


def _snapshot(group: str, ts: int, described: Sequence[Any], fetched: Any) -> Optional[_GroupSnapshot]:
    """The group's snapshot from its answers: those to its `group_state_calls`, then its
    OffsetFetch (an `OpsError` in place of an answer whose node failed); None for a group that
    does not exist; `OpsError` when any answer is an error."""
    for answer in (*described, fetched):
        if isinstance(answer, OpsError):
            raise answer
    [info] = consumer_apis.parse_group_states(described)
    try:
        committed = apis.parse_offset_fetch(fetched, group)
    except NotFound:
        committed = {}
    if not info.exists and not committed:
        return None
    owners: dict[TopicPartition, str] = {}
    for member in info.members:
        for topic, partitions in member.assignment.items():
            for partition in partitions:
                owners.setdefault((topic, partition), member.client_id)
    return _GroupSnapshot(group, ts, info.state, len(info.members), committed, owners)


# -- 3. log-end offsets -------------------------------------------------------------------------


def _log_end_offsets(client: KafkaClient, partitions: Sequence[TopicPartition]
                     ) -> tuple[dict[TopicPartition, Optional[int]], list[Problem]]:
    """The log-end offset of each partition (None: unknown), and the problems of asking."""
    if not partitions:
        return {}, []
    try:
        metadata = client.metadata(sorted({t for t, _ in partitions}))
    except OpsError as exc:
        return {}, [Problem(None, f"log-end offsets unknown: {exc}")]
    problems = []
    askable = list(partitions)
    for _ in range(len(metadata.brokers) + 1):  # each retry gives up on one more leader
        try:
            [log_end] = apis.list_offsets(client, metadata, askable, [apis.LATEST])
            return log_end, problems
        except ConnectionFailed as exc:
            lost = {tp for tp in askable if exc.node is not None and metadata.leader(*tp) == exc.node}
            if not lost:
                return {}, [*problems, Problem(None, f"log-end offsets unknown: {exc}")]
            problems.append(Problem(None, f"log-end offsets of {len(lost)} partition(s) unknown: {exc}"))
            askable = [tp for tp in askable if tp not in lost]
            client.close()  # the other leaders' connections may hold unread answers
        except OpsError as exc:
            return {}, [*problems, Problem(None, f"log-end offsets unknown: {exc}")]
    return {}, problems


# -- pipelining with failing nodes --------------------------------------------------------------


def _exchange(client: KafkaClient, calls: Sequence[Call]) -> list[Any]:
    """The answers to `calls`, pipelined, in order; where a node failed mid-exchange, the
    `ConnectionFailed` naming it stands in for the answer of each call to that node, and the
    other calls are sent again (once per failed node at most). Other failures are raised."""
    answers: list[Any] = [None] * len(calls)
    pending = list(range(len(calls)))
    for _ in range(len({c.node for c in calls}) + 1):  # each retry drops one node
        if not pending:
            break
        try:
            responses = client.call_many([calls[i] for i in pending])
        except ConnectionFailed as exc:
            lost = [i for i in pending if exc.node is not None and calls[i].node == exc.node]
            if not lost:
                raise
            for i in lost:
                answers[i] = exc
            pending = [i for i in pending if answers[i] is None]
            client.close()  # the other connections may hold unread answers of this exchange
            continue
        for i, response in zip(pending, responses):
            answers[i] = response
        break
    return answers
