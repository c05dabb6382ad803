"""Committed offsets of a consumer group (KIP-848) fenced as Apache Kafka fences them, with a real
member: unmodified confluent-kafka consumers (librdkafka 2.16, `group.protocol=consumer`) join a
coordinator that keeps its groups in a real ZooKeeper, and raw OffsetCommit / OffsetFetch
requests (kafka-python's classes) name a real member id at a member epoch it has left behind
(STALE_MEMBER_EPOCH), a member id the group does not know (UNKNOWN_MEMBER_ID), or the member at
its current epoch with OffsetCommit v8, kafka-python's newest (UNSUPPORTED_VERSION: KIP-848
members commit with v9+). Nothing refused is stored, and the real members' own commits keep
succeeding throughout."""

from __future__ import annotations

import json

import pytest
from kafka.protocol.consumer.group import OffsetCommitRequest, OffsetFetchRequest
from kazoo.client import KazooClient

from groupctl.coordinator.errors import ErrorCode
from tests.support.consumer_groups import coordinator_with_topic
from tests.support.consumer_groups import produce as produce_values
from tests.support.consumers import ConsumerProcess
from tests.support.polling import wait_until
from tests.support.wire import exchange

pytestmark = pytest.mark.zookeeper
TOPIC, PARTITIONS, GROUP = "events", 4, "fenced"


@pytest.fixture
def node(zk_connect, tmp_path):
    with coordinator_with_topic(zk_connect, tmp_path / "data", TOPIC, PARTITIONS) as running:
        yield running


def produce(bootstrap: str, count: int) -> None:
    produce_values(bootstrap, TOPIC, PARTITIONS, (f"m{i}" for i in range(count)))


class Stored:
    """The group's documents as the coordinator wrote them to ZooKeeper."""

    def __init__(self, zk_connect: str) -> None:
        hosts, _, chroot = zk_connect.partition("/")
        self.chroot = f"/{chroot}"
        self.client = KazooClient(hosts=hosts)
        self.client.start(timeout=10)

    def read(self, path: str) -> dict | None:
        if not self.client.exists(self.chroot + path):
            return None
        return json.loads(self.client.get(self.chroot + path)[0])

    def stable_epochs(self, members: int) -> dict[str, tuple[str, int]] | None:
        """client id -> (member id, member epoch) once the group is Stable with `members` members."""
        document = self.read(f"/groups/{GROUP}")
        if document is None or document["state"] != "Stable" or len(document["members"]) != members:
            return None
        return {m["client_id"]: (m["member_id"], m["member_epoch"]) for m in document["members"]}

    def committed(self) -> list[int]:
        document = self.read(f"/groups/{GROUP}/offsets/{TOPIC}") or {"partitions": {}}
        return [document["partitions"].get(str(p), {}).get("offset", -1) for p in range(PARTITIONS)]

    def close(self) -> None:
        self.client.stop()
        self.client.close()


def commit(node, version: int, member_id: str, epoch: int, offset: int) -> list[int]:
    """A raw OffsetCommit of `offset` for every partition; the partitions' error codes."""
    topic_class = OffsetCommitRequest.OffsetCommitRequestTopic
    partition_class = topic_class.OffsetCommitRequestPartition
    request = OffsetCommitRequest[version](
        group_id=GROUP, generation_id_or_member_epoch=epoch, member_id=member_id, group_instance_id=None,
        topics=[topic_class(name=TOPIC, partitions=[
            partition_class(partition_index=p, committed_offset=offset, committed_leader_epoch=-1,
                            committed_metadata="")
            for p in range(PARTITIONS)])])
    response = exchange(node, request, version)
    return [p.error_code for t in response.topics for p in t.partitions]


def fetch(node, member_id: str | None, epoch: int) -> tuple[int, list[int]]:
    """A raw OffsetFetch v9 of every partition: (the group's error, the offsets)."""
    group_class = OffsetFetchRequest.OffsetFetchRequestGroup
    topic_class = group_class.OffsetFetchRequestTopics
    request = OffsetFetchRequest[9](groups=[group_class(
        group_id=GROUP, member_id=member_id, member_epoch=epoch,
        topics=[topic_class(name=TOPIC, partition_indexes=list(range(PARTITIONS)))])], require_stable=False)
    (group,) = exchange(node, request, 9).groups
    return group.error_code, [p.committed_offset for t in group.topics for p in t.partitions]


def consumer(node, client_id: str) -> ConsumerProcess:
    return ConsumerProcess("confluent", node.bootstrap, GROUP, TOPIC, client_id=client_id,
                           group_protocol="consumer", max_seconds=90)


def test_commits_and_fetches_at_a_stale_epoch_or_from_an_unknown_member_are_fenced_and_real_commits_go_on(
        node, zk_connect):
    stored = Stored(zk_connect)
    stale, unknown, unsupported = (int(ErrorCode.STALE_MEMBER_EPOCH), int(ErrorCode.UNKNOWN_MEMBER_ID),
                                   int(ErrorCode.UNSUPPORTED_VERSION))
    produce(node.bootstrap, 20)
    first = consumer(node, "first")
    second = None
    try:
        (first_id, first_epoch), = wait_until(lambda: stored.stable_epochs(1), 60,
                                              message="one Stable member").values()
        wait_until(lambda: stored.committed() == [5] * PARTITIONS, 60, message="its own commits of all 20 records")

        # The member at its current epoch, as librdkafka commits (v9): accepted.
        assert commit(node, 9, first_id, first_epoch, 5) == [0] * PARTITIONS
        # The same member and epoch with kafka-python's newest OffsetCommit (v8): refused.
        assert commit(node, 8, first_id, first_epoch, 1) == [unsupported] * PARTITIONS

        second = consumer(node, "second")
        epochs = wait_until(lambda: stored.stable_epochs(2), 60, message="two Stable members")
        # Stable in the store first; each member learns its two partitions at its next heartbeat.
        wait_until(lambda: sorted(len(c.snapshot()[0]) for c in (first, second)) == [2, 2], 30,
                   message="each member consuming its two partitions")
        assert epochs["first"][0] == first_id and epochs["first"][1] > first_epoch  # first moved on

        # A real member id at the epoch it has left behind, and an id the group never had.
        assert commit(node, 9, first_id, first_epoch, 1) == [stale] * PARTITIONS
        assert commit(node, 9, "no-such-member", epochs["first"][1], 1) == [unknown] * PARTITIONS
        assert fetch(node, first_id, first_epoch) == (stale, [])
        assert fetch(node, "no-such-member", epochs["first"][1]) == (unknown, [])
        assert fetch(node, *epochs["second"]) == (0, [5] * PARTITIONS)
        assert fetch(node, None, -1) == (0, [5] * PARTITIONS)  # what librdkafka and admin tools send
        assert stored.committed() == [5] * PARTITIONS  # nothing refused was stored

        # The real members consume and commit on at their own epochs.
        produce(node.bootstrap, 20)
        wait_until(lambda: stored.committed() == [10] * PARTITIONS, 60,
                   message="the members' own commits of the next 20 records")
        assert first.proc.poll() is None and second.proc.poll() is None  # a failed commit would have ended them
        assert first.lost == [] and second.lost == []
    finally:
        for member in (first, second):
            if member is not None:
                member.stop()
        stored.close()
