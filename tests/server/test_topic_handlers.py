"""Topics over the wire: CreateTopics, DeleteTopics and Metadata against an in-process node.

Requests are kafka-python's classes at an explicit version, sent raw over a socket; admin
scenarios (offsets, produced data) use kafka-python's KafkaAdminClient, producer and consumer.
Races are provoked by sending one request on each of several connections before reading any
answer, so the node has all of them in flight at once.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.protocol.admin import CreateTopicsRequest, DeleteTopicsRequest
from kafka.protocol.metadata import MetadataRequest
from kafka.structs import OffsetAndMetadata

from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.records import TopicRecord
from groupctl.server.topics import TopicError, TopicRegistry
from groupctl.store.base import StoreUnavailable
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.wire import connect, decode_response, exchange, read_frame

ZERO_UUID = uuid.UUID(int=0)
RACERS = 8

Topic = CreateTopicsRequest.CreatableTopic
Assignment = Topic.CreatableReplicaAssignment


# --- helpers -------------------------------------------------------------------------------


def creatable(name: str, partitions: int = -1, replication: int = -1, assignments=None):
    return Topic(name=name, num_partitions=partitions, replication_factor=replication,
                 assignments=[Assignment(partition_index=p, broker_ids=nodes) for p, nodes in (assignments or {}).items()],
                 configs=[])


def create_topics(coordinator, *topics, version: int = 7, validate_only: bool = False):
    request = CreateTopicsRequest[version](topics=list(topics), timeout_ms=5000, validate_only=validate_only)
    return exchange(coordinator, request, version).topics


def create_one(coordinator, topic, version: int = 7, validate_only: bool = False):
    (result,) = create_topics(coordinator, topic, version=version, validate_only=validate_only)
    return result


def delete_by_name(coordinator, *names: str, version: int = 5):
    if version >= 6:
        state = DeleteTopicsRequest.DeleteTopicState
        request = DeleteTopicsRequest[version](topics=[state(name=n, topic_id=ZERO_UUID) for n in names],
                                               timeout_ms=5000)
    else:
        request = DeleteTopicsRequest[version](topic_names=list(names), timeout_ms=5000)
    return exchange(coordinator, request, version).responses


def delete_by_id(coordinator, topic_id: uuid.UUID):
    state = DeleteTopicsRequest.DeleteTopicState
    request = DeleteTopicsRequest[6](topics=[state(name=None, topic_id=topic_id)], timeout_ms=5000)
    return exchange(coordinator, request, 6).responses


def metadata_request(version: int, names=None, allow_create: bool = True, ids=None):
    """Metadata for `names` (None: every topic) or, from v12, for topic `ids`."""
    cls = MetadataRequest.MetadataRequestTopic
    if names is None and ids is None:
        topics = None
    else:
        topics = [cls(name=n, topic_id=ZERO_UUID) for n in names or []]
        topics += [cls(name=None, topic_id=i) for i in ids or []]
    return MetadataRequest[version](topics=topics, allow_auto_topic_creation=allow_create,
                                    include_cluster_authorized_operations=False,
                                    include_topic_authorized_operations=False)


def metadata(coordinator, version: int = 12, names=None, allow_create: bool = True, ids=None):
    return exchange(coordinator, metadata_request(version, names, allow_create, ids), version)


def known_topic(coordinator, name: str):
    """The Metadata v12 entry of `name`, asked without auto-creation."""
    (entry,) = metadata(coordinator, 12, [name], allow_create=False).topics
    return entry


def race(coordinator, requests: list, version: int) -> list:
    """Send each request on its own connection, all before reading any answer; decode the
    answers in order."""
    sockets = [connect(coordinator) for _ in requests]
    try:
        for cid, (sock, request) in enumerate(zip(sockets, requests)):
            request.with_header(correlation_id=cid, client_id=f"racer-{cid}")
            sock.sendall(bytes(request.encode(version=version, header=True, framed=True)))
        return [decode_response(request, read_frame(sock), version) for sock, request in zip(sockets, requests)]
    finally:
        for sock in sockets:
            sock.close()


@pytest.fixture
def admin(coordinator):
    client = KafkaAdminClient(bootstrap_servers=coordinator.bootstrap, request_timeout_ms=10000)
    yield client
    client.close()


@pytest.fixture
def quiet_coordinator():
    """A node that never creates topics on Metadata."""
    node = InProcessCoordinator(node_config(auto_create_topics=False)).start()
    yield node
    node.stop()


@pytest.fixture
def four_partition_coordinator():
    """A node whose default partition count is 4."""
    node = InProcessCoordinator(node_config(default_partitions=4)).start()
    yield node
    node.stop()


# --- CreateTopics ----------------------------------------------------------------------------


@pytest.mark.parametrize("version", range(2, 8))
def test_create_topics_creates_the_requested_partitions_at_every_version(coordinator, version):
    result = create_one(coordinator, creatable("orders", 3, 1), version=version)
    assert (result.name, result.error_code) == ("orders", 0)
    if version >= 5:
        assert (result.num_partitions, result.replication_factor) == (3, 1)
    entry = known_topic(coordinator, "orders")
    assert entry.error_code == 0
    assert [(p.partition_index, p.leader_id, p.replica_nodes) for p in entry.partitions] == [
        (0, 0, [0]), (1, 0, [0]), (2, 0, [0])]


@pytest.mark.parametrize("version", [4, 5, 6, 7])
def test_minus_one_partitions_and_replication_take_the_node_defaults(four_partition_coordinator, version):
    result = create_one(four_partition_coordinator, creatable("defaults"), version=version)
    assert result.error_code == 0
    if version >= 5:
        assert (result.num_partitions, result.replication_factor) == (4, 1)
    assert len(known_topic(four_partition_coordinator, "defaults").partitions) == 4


def test_a_manual_assignment_places_each_partition_on_the_listed_nodes(coordinator):
    result = create_one(coordinator, creatable("placed", assignments={0: [0], 1: [0]}))
    assert (result.error_code, result.num_partitions, result.replication_factor) == (0, 2, 1)
    assert [p.replica_nodes for p in known_topic(coordinator, "placed").partitions] == [[0], [0]]


INVALID_ASSIGNMENTS = {
    "a node that does not exist": {0: [7]},
    "a node listed twice": {0: [0, 0]},
    "no replicas": {0: []},
    "partitions not numbered 0..n-1": {0: [0], 2: [0]},
}


@pytest.mark.parametrize("assignments", list(INVALID_ASSIGNMENTS.values()), ids=list(INVALID_ASSIGNMENTS))
def test_an_invalid_manual_assignment_is_refused_and_creates_nothing(coordinator, assignments):
    result = create_one(coordinator, creatable("placed", assignments=assignments))
    assert result.error_code == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    assert result.error_message
    assert known_topic(coordinator, "placed").error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_a_partition_assigned_twice_is_an_invalid_replica_assignment(coordinator):
    topic = creatable("placed")
    topic.assignments = [Assignment(partition_index=0, broker_ids=[0]), Assignment(partition_index=0, broker_ids=[0]),
                         Assignment(partition_index=1, broker_ids=[0])]
    assert create_one(coordinator, topic).error_code == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    assert known_topic(coordinator, "placed").error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_a_manual_assignment_with_a_partition_count_is_an_invalid_request(coordinator):
    result = create_one(coordinator, creatable("placed", 2, assignments={0: [0], 1: [0]}))
    assert result.error_code == ErrorCode.INVALID_REQUEST


def test_a_replication_factor_above_the_live_node_count_is_refused(coordinator):
    result = create_one(coordinator, creatable("replicated", 3, 2))
    assert result.error_code == ErrorCode.INVALID_REPLICATION_FACTOR
    assert known_topic(coordinator, "replicated").error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_zero_partitions_is_refused(coordinator):
    assert create_one(coordinator, creatable("empty", 0, 1)).error_code == ErrorCode.INVALID_PARTITIONS


def test_creating_an_existing_topic_reports_it_exists_and_keeps_the_original(coordinator):
    first = create_one(coordinator, creatable("orders", 2, 1))
    again = create_one(coordinator, creatable("orders", 5, 1))
    assert again.error_code == ErrorCode.TOPIC_ALREADY_EXISTS
    entry = known_topic(coordinator, "orders")
    assert (entry.topic_id, len(entry.partitions)) == (first.topic_id, 2)


def test_a_name_repeated_in_one_request_is_an_invalid_request_for_each_entry_and_not_created(coordinator):
    results = create_topics(coordinator, creatable("twice", 1, 1), creatable("once", 1, 1), creatable("twice", 2, 1))
    assert [(r.name, r.error_code) for r in results] == [
        ("twice", ErrorCode.INVALID_REQUEST), ("once", 0), ("twice", ErrorCode.INVALID_REQUEST)]
    assert known_topic(coordinator, "twice").error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert known_topic(coordinator, "once").error_code == 0


def test_validate_only_answers_as_a_creation_would_and_creates_nothing(coordinator):
    result = create_one(coordinator, creatable("dry", 3, 1), validate_only=True)
    assert (result.error_code, result.num_partitions, result.topic_id) == (0, 3, None)  # the zero id decodes as None
    assert known_topic(coordinator, "dry").error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert coordinator.node.topics.all() == []


def test_validate_only_still_reports_an_existing_topic(coordinator):
    create_one(coordinator, creatable("orders", 1, 1))
    result = create_one(coordinator, creatable("orders", 1, 1), validate_only=True)
    assert result.error_code == ErrorCode.TOPIC_ALREADY_EXISTS


INVALID_NAMES = ["", ".", "..", "has space", "slash/name", "x" * 250, "ümlaut"]


@pytest.mark.parametrize("name", INVALID_NAMES)
def test_an_illegal_topic_name_is_an_invalid_topic_exception(coordinator, name):
    assert create_one(coordinator, creatable(name, 1, 1)).error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert coordinator.node.topics.all() == []


def test_a_249_character_name_of_legal_characters_is_accepted(coordinator):
    assert create_one(coordinator, creatable("a.B_c-9" + "x" * 242, 1, 1)).error_code == 0


def test_the_topic_id_returned_at_v7_is_the_one_metadata_reports(coordinator):
    result = create_one(coordinator, creatable("orders", 2, 1), version=7)
    assert result.topic_id is not None  # kafka-python decodes the zero id as None
    assert known_topic(coordinator, "orders").topic_id == result.topic_id
    assert str(result.topic_id) == coordinator.node.topics.get("orders").topic_id


def test_kafka_python_admin_creates_and_describes_topics(admin):
    admin.create_topics({"payments": {"num_partitions": 3, "replication_factor": 1}})
    (described,) = admin.describe_topics(["payments"])
    assert described["error_code"] == 0
    assert sorted(p["partition_index"] for p in described["partitions"]) == [0, 1, 2]


# --- DeleteTopics ----------------------------------------------------------------------------


@pytest.mark.parametrize("version", range(1, 7))
def test_delete_topics_by_name_removes_the_topic_at_every_version(coordinator, version):
    created = create_one(coordinator, creatable("doomed", 2, 1))
    (result,) = delete_by_name(coordinator, "doomed", version=version)
    assert (result.name, result.error_code) == ("doomed", 0)
    if version >= 6:
        assert result.topic_id == created.topic_id
    assert known_topic(coordinator, "doomed").error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


@pytest.mark.parametrize("version", [1, 5, 6])
def test_deleting_an_unknown_name_is_unknown_topic_or_partition(coordinator, version):
    (result,) = delete_by_name(coordinator, "never-was", version=version)
    assert result.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_delete_topics_v6_deletes_a_topic_named_by_id(coordinator):
    created = create_one(coordinator, creatable("doomed", 1, 1))
    (result,) = delete_by_id(coordinator, created.topic_id)
    assert (result.name, result.topic_id, result.error_code) == ("doomed", created.topic_id, 0)
    assert coordinator.node.topics.get("doomed") is None
    assert coordinator.node.topics.by_id(str(created.topic_id)) is None


def test_delete_topics_v6_with_an_unknown_id_is_unknown_topic_id(coordinator):
    (result,) = delete_by_id(coordinator, uuid.uuid4())
    assert (result.name, result.error_code) == (None, ErrorCode.UNKNOWN_TOPIC_ID)


def test_deleting_a_topic_removes_every_group_s_committed_offsets_for_it(coordinator, admin):
    create_one(coordinator, creatable("doomed", 2, 1))
    create_one(coordinator, creatable("kept", 1, 1))
    offsets = {TopicPartition("doomed", 0): OffsetAndMetadata(5, "", -1),
               TopicPartition("doomed", 1): OffsetAndMetadata(7, "", -1),
               TopicPartition("kept", 0): OffsetAndMetadata(3, "", -1)}
    for group in ("etl", "audit"):
        assert all(error.errno == 0 for error in admin.alter_group_offsets(group, offsets).values())
    before = admin.list_group_offsets(["etl", "audit"])
    assert {tp.topic for tp in before["etl"]} == {"doomed", "kept"}
    admin.delete_topics(["doomed"])
    after = admin.list_group_offsets(["etl", "audit"])
    for group in ("etl", "audit"):
        assert {tp: meta.offset for tp, meta in after[group].items()} == {TopicPartition("kept", 0): 3}


def test_deleting_a_topic_removes_its_log_so_a_recreated_topic_starts_empty(coordinator, admin):
    create_one(coordinator, creatable("reborn", 1, 1))
    producer = KafkaProducer(bootstrap_servers=coordinator.bootstrap)
    try:
        for i in range(5):
            producer.send("reborn", value=f"m{i}".encode(), partition=0).get(timeout=10)
    finally:
        producer.close()
    partition = TopicPartition("reborn", 0)
    assert end_offset(coordinator, partition) == 5
    admin.delete_topics(["reborn"])
    recreated = create_one(coordinator, creatable("reborn", 1, 1))
    assert recreated.error_code == 0
    assert end_offset(coordinator, partition) == 0


def end_offset(coordinator, partition: TopicPartition) -> int:
    consumer = KafkaConsumer(bootstrap_servers=coordinator.bootstrap)
    try:
        return consumer.end_offsets([partition])[partition]
    finally:
        consumer.close()


# --- races -----------------------------------------------------------------------------------


def test_simultaneous_metadata_auto_creates_of_one_name_share_one_topic(coordinator):
    responses = race(coordinator, [metadata_request(12, ["shared"]) for _ in range(RACERS)], 12)
    entries = [r.topics[0] for r in responses]
    assert [e.error_code for e in entries] == [0] * RACERS
    assert len({e.topic_id for e in entries}) == 1
    assert [t.name for t in coordinator.node.topics.all()] == ["shared"]
    assert str(entries[0].topic_id) == coordinator.node.topics.get("shared").topic_id


def test_simultaneous_create_topics_of_one_name_create_it_exactly_once(coordinator):
    requests = [CreateTopicsRequest[7](topics=[creatable("shared", 2, 1)], timeout_ms=5000, validate_only=False)
                for _ in range(RACERS)]
    results = [r.topics[0] for r in race(coordinator, requests, 7)]
    winners = [r for r in results if r.error_code == 0]
    assert len(winners) == 1
    assert sorted(r.error_code for r in results if r.error_code) == [ErrorCode.TOPIC_ALREADY_EXISTS] * (RACERS - 1)
    assert known_topic(coordinator, "shared").topic_id == winners[0].topic_id


def test_metadata_auto_creates_racing_a_create_topics_all_see_the_created_topic(coordinator):
    create = CreateTopicsRequest[7](topics=[creatable("shared", 3, 1)], timeout_ms=5000, validate_only=False)
    requests = [create] + [metadata_request(12, ["shared"]) for _ in range(RACERS - 1)]
    sockets = [connect(coordinator) for _ in requests]
    try:
        versions = [7] + [12] * (RACERS - 1)
        for cid, (sock, request, version) in enumerate(zip(sockets, requests, versions)):
            request.with_header(correlation_id=cid, client_id=f"racer-{cid}")
            sock.sendall(bytes(request.encode(version=version, header=True, framed=True)))
        answers = [decode_response(r, read_frame(s), v) for s, r, v in zip(sockets, requests, versions)]
    finally:
        for sock in sockets:
            sock.close()
    record = coordinator.node.topics.get("shared")
    ids = {str(a.topics[0].topic_id) for a in answers[1:]}
    assert ids == {record.topic_id}
    created = answers[0].topics[0]
    # Either the CreateTopics wrote the topic (3 partitions) or an auto-create beat it to the name.
    if created.error_code == 0:
        assert (str(created.topic_id), len(record.replicas)) == (record.topic_id, 3)
    else:
        assert created.error_code == ErrorCode.TOPIC_ALREADY_EXISTS


@pytest.mark.parametrize("version", [5, 6])
def test_simultaneous_deletes_of_one_topic_delete_it_exactly_once(coordinator, version):
    create_one(coordinator, creatable("doomed", 1, 1))
    if version >= 6:
        state = DeleteTopicsRequest.DeleteTopicState
        requests = [DeleteTopicsRequest[6](topics=[state(name="doomed", topic_id=ZERO_UUID)], timeout_ms=5000)
                    for _ in range(RACERS)]
    else:
        requests = [DeleteTopicsRequest[5](topic_names=["doomed"], timeout_ms=5000) for _ in range(RACERS)]
    codes = sorted(r.responses[0].error_code for r in race(coordinator, requests, version))
    assert codes == [0] + [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION] * (RACERS - 1)
    assert coordinator.node.topics.get("doomed") is None


def test_simultaneous_deletes_by_id_delete_it_once_and_the_rest_get_unknown_topic_id(coordinator):
    created = create_one(coordinator, creatable("doomed", 1, 1))
    state = DeleteTopicsRequest.DeleteTopicState
    requests = [DeleteTopicsRequest[6](topics=[state(name=None, topic_id=created.topic_id)], timeout_ms=5000)
                for _ in range(RACERS)]
    codes = sorted(r.responses[0].error_code for r in race(coordinator, requests, 6))
    assert codes == [0] + [ErrorCode.UNKNOWN_TOPIC_ID] * (RACERS - 1)


# --- the registry's reservations when the store fails ----------------------------------------


class FlakyStore:
    """A record writer that yields like a real store write, waits while `gate` is clear, and
    fails the next `failures` writes. Create it inside the event loop that uses it."""

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.writes: list[list] = []
        self.gate = asyncio.Event()
        self.gate.set()

    async def write(self, records) -> None:
        await asyncio.sleep(0)
        await self.gate.wait()
        if self.failures:
            self.failures -= 1
            raise StoreUnavailable("store is down")
        self.writes.append(list(records))


def registry(store: FlakyStore) -> TopicRegistry:
    return TopicRegistry(store.write, lambda: [0])


def test_a_failed_creation_releases_the_name_so_a_retry_creates_it():
    async def scenario():
        store = FlakyStore(failures=1)
        topics = registry(store)
        with pytest.raises(StoreUnavailable):
            await topics.create(topics.plan("orders", 1))
        assert topics.get("orders") is None
        record = await topics.create(topics.plan("orders", 1))
        assert topics.get("orders") == record and len(store.writes) == 1
    asyncio.run(scenario())


def test_auto_create_waiting_on_a_failed_creation_creates_the_topic_itself():
    async def scenario():
        store = FlakyStore(failures=1)
        store.gate.clear()
        topics = registry(store)
        first = asyncio.create_task(topics.create(topics.plan("orders", 1)))
        waiter = asyncio.create_task(topics.get_or_create("orders", 1))
        await asyncio.sleep(0)  # the first creation holds the name and is writing; the waiter waits
        with pytest.raises(TopicError) as refused:
            topics.plan("orders", 1)
        assert refused.value.code == ErrorCode.TOPIC_ALREADY_EXISTS
        assert not waiter.done()
        store.gate.set()
        with pytest.raises(StoreUnavailable):
            await first
        record = await waiter
        assert isinstance(record, TopicRecord) and topics.get("orders") == record
        assert store.writes == [[record]]
    asyncio.run(scenario())


def test_of_several_auto_creates_waiting_on_a_failed_creation_one_retries_and_the_rest_wait_for_it():
    async def scenario():
        store = FlakyStore(failures=2)
        store.gate.clear()
        topics = registry(store)
        first = asyncio.create_task(topics.create(topics.plan("orders", 1)))
        waiters = [asyncio.create_task(topics.get_or_create("orders", 1)) for _ in range(3)]
        await asyncio.sleep(0)  # the first creation is writing, every waiter is waiting for it
        store.gate.set()
        outcomes = await asyncio.gather(first, *waiters, return_exceptions=True)
        # The first write and the one retry both fail; the others are told to retry later.
        assert [type(o).__name__ for o in outcomes] == ["StoreUnavailable", "StoreUnavailable", "TopicError", "TopicError"]
        assert {o.code for o in outcomes[2:]} == {ErrorCode.LEADER_NOT_AVAILABLE}
        assert topics.get("orders") is None
        assert (await topics.get_or_create("orders", 1)) == topics.get("orders")
    asyncio.run(scenario())


def test_auto_creates_waiting_on_a_successful_creation_return_its_record():
    async def scenario():
        store = FlakyStore()
        store.gate.clear()
        topics = registry(store)
        first = asyncio.create_task(topics.create(topics.plan("orders", 2)))
        waiting = [asyncio.create_task(topics.get_or_create("orders", 5)) for _ in range(RACERS)]
        await asyncio.sleep(0)
        assert not any(w.done() for w in waiting)
        store.gate.set()
        waiters = await asyncio.gather(*waiting)
        record = await first
        assert waiters == [record] * RACERS and len(store.writes) == 1
    asyncio.run(scenario())


def test_a_failed_deletion_keeps_the_topic_and_releases_it_for_another_delete():
    async def scenario():
        store = FlakyStore()
        topics = registry(store)
        record = await topics.create(topics.plan("orders", 1))
        store.failures = 1
        with pytest.raises(StoreUnavailable):
            await topics.delete("orders")
        assert topics.get("orders") == record
        assert await topics.delete("orders") == record
        assert topics.get("orders") is None
    asyncio.run(scenario())


def test_ensure_creates_only_missing_topics():
    async def scenario():
        store = FlakyStore()
        topics = registry(store)
        existing = await topics.create(topics.plan("orders", 1))
        created = await topics.ensure([("orders", 3), ("payments", 2)])
        assert [t.name for t in created] == ["payments"]
        assert topics.get("orders") == existing and len(topics.get("payments").replicas) == 2
    asyncio.run(scenario())


# --- Metadata --------------------------------------------------------------------------------


@pytest.mark.parametrize("version", range(0, 14))
def test_metadata_auto_creates_a_named_topic_with_the_default_partitions(four_partition_coordinator, version):
    response = metadata(four_partition_coordinator, version, ["fresh"])
    (entry,) = response.topics
    assert (entry.name, entry.error_code, len(entry.partitions)) == ("fresh", 0, 4)
    assert four_partition_coordinator.node.topics.get("fresh") is not None


@pytest.mark.parametrize("version", [0, 3, 4, 12, 13])
def test_metadata_does_not_auto_create_when_the_node_disables_it(quiet_coordinator, version):
    (entry,) = metadata(quiet_coordinator, version, ["fresh"]).topics
    assert entry.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION and entry.partitions == []
    assert quiet_coordinator.node.topics.all() == []


@pytest.mark.parametrize("version", [4, 9, 12, 13])
def test_metadata_does_not_auto_create_when_the_request_forbids_it(coordinator, version):
    (entry,) = metadata(coordinator, version, ["fresh"], allow_create=False).topics
    assert entry.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert coordinator.node.topics.all() == []


def test_metadata_answers_an_illegal_name_with_invalid_topic_exception_and_creates_nothing(coordinator):
    (entry,) = metadata(coordinator, 12, ["bad name"]).topics
    assert entry.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert coordinator.node.topics.all() == []


@pytest.mark.parametrize("version", [10, 11, 12, 13])
def test_metadata_reports_real_topic_ids_from_v10(coordinator, version):
    created = create_one(coordinator, creatable("orders", 1, 1))
    (entry,) = metadata(coordinator, version, ["orders"]).topics
    assert entry.topic_id == created.topic_id and entry.topic_id is not None


@pytest.mark.parametrize("version", [12, 13])
def test_metadata_looks_topics_up_by_id(coordinator, version):
    created = create_one(coordinator, creatable("orders", 2, 1))
    missing = uuid.uuid4()
    by_id = metadata(coordinator, version, ids=[created.topic_id, missing]).topics
    assert [(t.name, t.topic_id, t.error_code) for t in by_id] == [
        ("orders", created.topic_id, 0), (None, missing, ErrorCode.UNKNOWN_TOPIC_ID)]
    assert len(by_id[0].partitions) == 2


def test_metadata_v0_with_an_empty_list_means_every_topic(coordinator):
    for name in ("b-topic", "a-topic"):
        create_one(coordinator, creatable(name, 1, 1))
    assert [t.name for t in metadata(coordinator, 0, []).topics] == ["a-topic", "b-topic"]


@pytest.mark.parametrize("version", [1, 4, 12])
def test_metadata_v1_and_later_empty_list_means_no_topic_and_null_means_every_topic(coordinator, version):
    for name in ("b-topic", "a-topic"):
        create_one(coordinator, creatable(name, 1, 1))
    assert metadata(coordinator, version, []).topics == []
    assert [t.name for t in metadata(coordinator, version, None).topics] == ["a-topic", "b-topic"]


def test_a_node_raising_its_leader_epochs_reports_its_partitions_leaderless(coordinator):
    create_one(coordinator, creatable("orders", 2, 1))
    coordinator.node.logs.leading = False
    try:
        (entry,) = metadata(coordinator, 12, ["orders"]).topics
        assert [(p.error_code, p.leader_id) for p in entry.partitions] == [(ErrorCode.LEADER_NOT_AVAILABLE, -1)] * 2
    finally:
        coordinator.node.logs.leading = True


@pytest.mark.parametrize("version", [7, 9, 12, 13])
def test_metadata_reports_a_new_topics_partitions_at_leader_epoch_zero(coordinator, version):
    create_one(coordinator, creatable("orders", 3, 1))
    (entry,) = metadata(coordinator, version, ["orders"]).topics
    assert [p.leader_epoch for p in entry.partitions] == [0, 0, 0]
    assert [p.isr_nodes for p in entry.partitions] == [[0], [0], [0]]
