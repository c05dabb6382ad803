"""The topic registry: placement over live nodes, partition additions, one write per name at a
time, and changes observed in the store."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.records import TopicRecord, TopicTombstone
from groupctl.server.topics import MAX_PARTITIONS, TopicError, TopicRegistry
from groupctl.store.base import StoreUnavailable
from groupctl.store.embedded import EmbeddedStore
from groupctl.store.persist import RecordWriter
from tests.support.polling import run_ready_tasks


class GatedWriter:
    """A record writer that yields like a store write, holds writes while `gate` is clear, fails
    the next `failures` writes, and remembers the most writes of one name it ever had in flight.
    Create it inside the event loop that uses it."""

    def __init__(self) -> None:
        self.failures = 0
        self.writes: list[list] = []
        self.gate = asyncio.Event()
        self.gate.set()
        self.in_flight: Counter[str] = Counter()
        self.most_in_flight = 0

    async def write(self, records) -> None:
        names = {r.name for r in records}
        self.in_flight.update(names)
        self.most_in_flight = max(self.most_in_flight, *(self.in_flight[n] for n in names))
        try:
            await asyncio.sleep(0)
            await asyncio.wait_for(self.gate.wait(), 5)
            if self.failures:
                self.failures -= 1
                raise StoreUnavailable("store is down")
            self.writes.append(list(records))
        finally:
            self.in_flight.subtract(names)


def run(scenario):
    return asyncio.run(asyncio.wait_for(scenario(), 10))


def refused(code: ErrorCode, call, *args, **kwargs) -> str:
    with pytest.raises(TopicError) as error:
        call(*args, **kwargs)
    assert error.value.code == code, str(error.value)
    return str(error.value)


def registry(nodes=(0,), writer=None) -> TopicRegistry:
    live = list(nodes)
    return TopicRegistry((writer or GatedWriter()).write, lambda: live)


def leaders(record: TopicRecord) -> list[int]:
    return [record.replicas[p][0] for p in sorted(record.replicas)]


# --- placement at creation -----------------------------------------------------------------------


def test_a_new_topic_s_leaders_go_round_robin_over_the_live_nodes():
    topics = registry(nodes=(5, 1, 3))
    record = topics.plan("orders", 7)
    ring = [1, 3, 5]
    start = ring.index(record.replicas[0][0])
    assert leaders(record) == [ring[(start + p) % 3] for p in range(7)]
    assert Counter(leaders(record)) == {ring[start]: 3, ring[(start + 1) % 3]: 2, ring[(start + 2) % 3]: 2}


def test_a_new_topic_s_replicas_are_consecutive_distinct_live_nodes_leader_first():
    record = registry(nodes=(0, 1, 2)).plan("orders", 4, replication_factor=2)
    for p, nodes in record.replicas.items():
        assert nodes[1] == (nodes[0] + 1) % 3 and len(set(nodes)) == 2


def test_placement_of_a_name_is_reproducible_and_different_names_start_on_different_nodes():
    topics = registry(nodes=range(5))
    assert topics.plan("orders", 3).replicas == topics.plan("orders", 3).replicas
    first_leaders = {topics.plan(f"t{i}", 1).replicas[0][0] for i in range(20)}
    assert len(first_leaders) > 1  # single-partition topics do not all land on one node


# --- plan_partitions: Kafka's CreatePartitions checks ----------------------------------------------


def with_topic(nodes=(0, 1, 2), partitions: int = 2, factor: int = 1, writer=None):
    """A registry holding topic "orders" (created through it) and its record."""
    topics = registry(nodes, writer)
    record = topics.plan("orders", partitions, factor)
    topics.replay(record)
    return topics, record


def test_growing_an_unknown_topic_is_unknown_topic_or_partition():
    refused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, registry().plan_partitions, "nope", 3)


@pytest.mark.parametrize("count", [1, 2])
def test_a_count_not_above_the_current_one_is_invalid_partitions(count):
    topics, _ = with_topic(partitions=2)
    message = refused(ErrorCode.INVALID_PARTITIONS, topics.plan_partitions, "orders", count)
    assert "2 partitions" in message


def test_a_count_above_the_maximum_is_invalid_partitions():
    topics, _ = with_topic()
    refused(ErrorCode.INVALID_PARTITIONS, topics.plan_partitions, "orders", MAX_PARTITIONS + 1)


def test_new_partitions_keep_the_topic_id_and_the_existing_placement():
    topics, record = with_topic(partitions=2)
    grown = topics.plan_partitions("orders", 5)
    assert grown.topic_id == record.topic_id and len(grown.replicas) == 5
    assert {p: grown.replicas[p] for p in (0, 1)} == record.replicas
    assert topics.get("orders") == record  # planning changes nothing


def test_new_partitions_continue_the_round_robin_where_the_existing_ones_left_off():
    topics, record = with_topic(nodes=(0, 1, 2), partitions=2, factor=2)
    assert topics.plan_partitions("orders", 7).replicas == registry(nodes=(0, 1, 2)).plan("orders", 7, 2).replicas


def test_new_partitions_go_only_to_live_nodes_when_the_first_leader_is_gone():
    live = [0, 1, 2]
    topics = TopicRegistry(GatedWriter().write, lambda: live)
    topics.replay(TopicRecord("orders", "id-1", {0: [0], 1: [1], 2: [2]}))
    live.remove(0)
    grown = topics.plan_partitions("orders", 6)
    # Anchored on partition 1's leader (node 1): 1, 2, 1, 2, ... so partition 3 follows 2's node 2.
    assert [grown.replicas[p] for p in (3, 4, 5)] == [[1], [2], [1]]


def test_a_replication_factor_above_the_live_nodes_is_invalid_replication_factor():
    live = [0, 1]
    topics = TopicRegistry(GatedWriter().write, lambda: live)
    topics.replay(TopicRecord("orders", "id-1", {0: [0, 1]}))
    live.remove(1)
    refused(ErrorCode.INVALID_REPLICATION_FACTOR, topics.plan_partitions, "orders", 2)


def test_a_manual_assignment_places_exactly_the_new_partitions():
    topics, record = with_topic(nodes=(0, 1, 2), partitions=2, factor=2)
    grown = topics.plan_partitions("orders", 4, [[2, 0], [1, 2]])
    assert grown.replicas == {**record.replicas, 2: [2, 0], 3: [1, 2]}


@pytest.mark.parametrize("assignments, why", [
    ([[0, 1]], "one assignment for two new partitions"),
    ([[0, 1], [1, 2], [2, 0]], "three assignments for two new partitions"),
    ([[0, 1], [2]], "a different replication factor"),
    ([[0, 1], [1, 2, 0]], "a different replication factor"),
    ([[0, 0], [1, 2]], "a node twice"),
    ([[0, 1], [1, 7]], "a node that is not live"),
    ([[0, 1], []], "no replicas"),
])
def test_a_bad_manual_assignment_is_invalid_replica_assignment(assignments, why):
    topics, _ = with_topic(nodes=(0, 1, 2), partitions=2, factor=2)
    refused(ErrorCode.INVALID_REPLICA_ASSIGNMENT, topics.plan_partitions, "orders", 4, assignments)


# --- add_partitions: writes, and one write per name at a time ------------------------------------


def test_add_partitions_writes_the_grown_record_then_applies_it():
    async def scenario():
        writer = GatedWriter()
        topics, record = with_topic(writer=writer)
        grown = await topics.add_partitions("orders", 4)
        assert writer.writes == [[grown]] and topics.get("orders") == grown
        assert topics.by_id(record.topic_id) == grown
    run(scenario)


def test_validate_only_plans_and_writes_nothing():
    async def scenario():
        writer = GatedWriter()
        topics, record = with_topic(writer=writer)
        planned = await topics.add_partitions("orders", 4, validate_only=True)
        assert len(planned.replicas) == 4
        assert writer.writes == [] and topics.get("orders") == record
    run(scenario)


def test_a_failed_write_leaves_the_topic_as_it_was_and_frees_the_next_addition():
    async def scenario():
        writer = GatedWriter()
        topics, record = with_topic(writer=writer)
        writer.failures = 1
        with pytest.raises(StoreUnavailable):
            await topics.add_partitions("orders", 4)
        assert topics.get("orders") == record
        assert len((await topics.add_partitions("orders", 4)).replicas) == 4
    run(scenario)


def test_concurrent_additions_to_one_topic_write_one_at_a_time_in_arrival_order():
    async def scenario():
        writer = GatedWriter()
        topics, _ = with_topic(writer=writer)
        writer.gate.clear()
        first = asyncio.create_task(topics.add_partitions("orders", 4))
        second = asyncio.create_task(topics.add_partitions("orders", 6))
        same = asyncio.create_task(topics.add_partitions("orders", 4))
        await run_ready_tasks()
        assert len(writer.writes) == 0 and not first.done()
        writer.gate.set()
        outcomes = await asyncio.gather(first, second, same, return_exceptions=True)
        assert [len(o.replicas) for o in outcomes[:2]] == [4, 6]
        assert isinstance(outcomes[2], TopicError) and outcomes[2].code == ErrorCode.INVALID_PARTITIONS
        assert [len(w[0].replicas) for w in writer.writes] == [4, 6] and writer.most_in_flight == 1
        assert len(topics.get("orders").replicas) == 6
    run(scenario)


def test_a_cancelled_waiting_addition_does_not_let_the_next_one_overlap_the_first():
    async def scenario():
        writer = GatedWriter()
        topics, _ = with_topic(writer=writer)
        writer.gate.clear()
        first = asyncio.create_task(topics.add_partitions("orders", 4))
        cancelled = asyncio.create_task(topics.add_partitions("orders", 5))
        last = asyncio.create_task(topics.add_partitions("orders", 6))
        await run_ready_tasks()
        cancelled.cancel()
        await run_ready_tasks()
        assert len(writer.writes) == 0 and writer.in_flight["orders"] == 1
        writer.gate.set()
        await asyncio.gather(first, last)
        assert [len(w[0].replicas) for w in writer.writes] == [4, 6] and writer.most_in_flight == 1
    run(scenario)


def test_a_deletion_waits_for_a_pending_addition_and_later_additions_see_the_topic_going():
    async def scenario():
        writer = GatedWriter()
        topics, _ = with_topic(writer=writer)
        writer.gate.clear()
        growing = asyncio.create_task(topics.add_partitions("orders", 4))
        deleting = asyncio.create_task(topics.delete("orders"))
        await run_ready_tasks()
        refused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, topics.plan_partitions, "orders", 8)
        writer.gate.set()
        grown = await growing
        assert await deleting == grown  # the deletion reports the topic as it was when deleted
        assert writer.writes == [[grown], [TopicTombstone("orders")]] and writer.most_in_flight == 1
        assert topics.get("orders") is None and topics.by_id(grown.topic_id) is None
    run(scenario)


def test_an_addition_queued_before_a_deletion_is_refused_when_its_turn_comes():
    async def scenario():
        writer = GatedWriter()
        topics, _ = with_topic(writer=writer)
        writer.gate.clear()
        first = asyncio.create_task(topics.add_partitions("orders", 4))
        queued = asyncio.create_task(topics.add_partitions("orders", 6))
        deleting = asyncio.create_task(topics.delete("orders"))
        await run_ready_tasks()
        writer.gate.set()
        outcomes = await asyncio.gather(first, queued, deleting, return_exceptions=True)
        assert isinstance(outcomes[1], TopicError) and outcomes[1].code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert writer.writes == [[outcomes[0]], [TopicTombstone("orders")]]
    run(scenario)


def test_a_topic_being_created_cannot_be_grown_yet():
    async def scenario():
        writer = GatedWriter()
        topics = registry(writer=writer)
        writer.gate.clear()
        creating = asyncio.create_task(topics.create(topics.plan("orders", 1)))
        await run_ready_tasks()
        refused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, topics.plan_partitions, "orders", 2)
        writer.gate.set()
        await creating
    run(scenario)


# --- changes observed in the store ------------------------------------------------------------------


def test_an_observed_record_from_another_node_is_applied_and_returns_what_it_replaced():
    topics, record = with_topic(partitions=2)
    grown = TopicRecord("orders", record.topic_id, {**record.replicas, 2: [1]})
    assert topics.observe("orders", grown) == record
    assert topics.get("orders") == grown and topics.by_id(record.topic_id) == grown
    assert topics.observe("payments", TopicRecord("payments", "id-p", {0: [0]})) is None
    assert [t.name for t in topics.all()] == ["orders", "payments"]


def test_an_observed_recreation_under_a_new_id_forgets_the_old_id():
    topics, record = with_topic()
    again = TopicRecord("orders", "id-new", {0: [2]})
    topics.observe("orders", again)
    assert topics.by_id(record.topic_id) is None and topics.by_id("id-new") == again


def test_an_observed_deletion_forgets_the_topic_by_name_and_id():
    topics, record = with_topic()
    assert topics.observe("orders", None) == record
    assert topics.get("orders") is None and topics.by_id(record.topic_id) is None
    assert topics.observe("orders", None) is None  # an echo of the deletion changes nothing


def test_two_names_claiming_one_id_never_leave_by_id_pointing_at_a_forgotten_topic():
    topics = registry()
    topics.observe("a", TopicRecord("a", "same", {0: [0]}))
    topics.observe("b", TopicRecord("b", "same", {0: [0]}))
    topics.observe("b", None)
    assert topics.by_id("same") is None and topics.get("a") is not None
    topics.observe("a", TopicRecord("a", "same", {0: [0]}))
    assert topics.by_id("same").name == "a"


def test_an_observed_record_must_carry_the_name_it_was_observed_under():
    with pytest.raises(ValueError):
        registry().observe("a", TopicRecord("b", "id", {0: [0]}))


# --- leader epochs ------------------------------------------------------------------------------


def test_new_partitions_start_at_leader_epoch_0_and_the_existing_ones_keep_theirs():
    topics = registry(nodes=(0, 1))
    topics.replay(TopicRecord("orders", "id-1", {0: [0], 1: [1]}, leader_epochs={0: 4, 1: 2}))
    grown = topics.plan_partitions("orders", 4)
    assert [grown.leader_epoch(p) for p in range(4)] == [4, 2, 0, 0]


def test_raising_leader_epochs_writes_one_more_for_each_partition_the_node_leads():
    async def scenario():
        writer = GatedWriter()
        topics = registry(nodes=(0, 1), writer=writer)
        topics.replay(TopicRecord("orders", "id-1", {0: [0], 1: [1], 2: [0]}, leader_epochs={0: 4}))
        topics.replay(TopicRecord("other", "id-2", {0: [1]}))
        assert topics.led_by(0) == ["orders"]
        raised = await topics.raise_leader_epochs("orders", 0)
        assert [raised.leader_epoch(p) for p in range(3)] == [5, 0, 1]
        assert writer.writes == [[raised]] and topics.get("orders") == raised
        assert await topics.raise_leader_epochs("other", 0) is None
        assert len(writer.writes) == 1
    run(scenario)


def test_raising_leader_epochs_right_after_loading_reads_nothing_and_a_change_made_since_is_refused():
    async def scenario():
        store = EmbeddedStore(None)
        await store.start()
        other = RecordWriter(store, 1)  # another node of the cluster
        await other.start()
        await other.write([TopicRecord("orders", "id-1", {0: [0], 1: [1]})])
        writer = RecordWriter(store, 0)
        reads = []

        async def reload(name):
            reads.append(name)
            return await writer.reload_topic(name)

        topics = TopicRegistry(writer.write, lambda: [0, 1], reload=reload, cached=writer.cached_topic)
        for record in await writer.load():
            topics.replay(record)
        raised = await topics.raise_leader_epochs("orders", 0)
        assert (raised.leader_epochs, reads) == ({0: 1}, [])
        await other.reload_topic("orders")
        await other.write([TopicRecord("orders", "id-1", {0: [0], 1: [1]}, leader_epochs={0: 1, 1: 1})])
        with pytest.raises(TopicError) as error:
            await topics.raise_leader_epochs("orders", 0)  # planned on what it knows: the write is refused
        assert error.value.code is ErrorCode.NOT_CONTROLLER and topics.get("orders") == raised
        again = await topics.raise_leader_epochs("orders", 0)  # the retry reads the topic
        assert (again.leader_epochs, reads) == ({0: 2, 1: 1}, ["orders"])
        await store.close()

    run(scenario)


def test_raising_leader_epochs_starts_above_a_local_log_epoch_the_stored_one_fell_behind():
    async def scenario():
        writer = GatedWriter()
        topics = registry(nodes=(0,), writer=writer)
        topics.replay(TopicRecord("orders", "id-1", {0: [0], 1: [0]}, leader_epochs={0: 4, 1: 9}))
        raised = await topics.raise_leader_epochs("orders", 0, {("orders", 0): 7, ("orders", 1): 2})
        assert [raised.leader_epoch(p) for p in range(2)] == [8, 10]
    run(scenario)
