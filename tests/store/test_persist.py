"""Records <-> store documents: layout, round trips, group commit and compare-and-set, on every
store kind."""

from __future__ import annotations

import asyncio
import contextlib
import json

import pytest

from groupctl.coordinator.records import (
    GroupMetadataRecord,
    GroupTombstone,
    OffsetCommitRecord,
    OffsetTombstone,
    TopicRecord,
    TopicTombstone,
)
from groupctl.coordinator.transactions.records import TransactionRecord, TxnState
from groupctl.store.base import BadVersion, NodeExists
from groupctl.layout.groups import GroupDocument, GroupMember
from groupctl.layout.paths import (
    decode_name,
    encode_name,
    group_path,
    offset_topic_path,
    offsets_path,
    topic_path,
    transaction_path,
)
from groupctl.store.batch import empty_group_document
from groupctl.store.loading import load_records
from groupctl.store.persist import RecordWriter
from groupctl.store.registration import register_broker

NODE_ID = 3


def group_document(group: str, generation: int) -> GroupDocument:
    member = GroupMember(member_id="m-1", group_instance_id=None, client_id="app", client_host="/127.0.0.1",
                         session_timeout_ms=10000, rebalance_timeout_ms=30000, subscription=["t"],
                         assignment={"t": [0, 1]}, metadata_bytes=b"meta", assignment_bytes=b"assigned")
    return GroupDocument(group=group, protocol_type="consumer", protocol="range", generation=generation,
                         state="Stable", leader="m-1", members=(member,), ownership={"t": {"0": "m-1", "1": "m-1"}},
                         coordinator=NODE_ID, updated_at_ms=1000 + generation)


def commit(group: str, topic: str, partition: int, offset: int, ts: int = 500) -> OffsetCommitRecord:
    return OffsetCommitRecord(group, topic, partition, offset, leader_epoch=2, metadata="m",
                              commit_timestamp_ms=ts)


class CountingStore:
    """Delegates to a store, counting transactions; `gate` (when set) holds them until opened."""

    def __init__(self, store) -> None:
        self._store = store
        self.transactions: list[list] = []
        self.gate: asyncio.Event | None = None

    def __getattr__(self, name):
        return getattr(self._store, name)

    async def transaction(self, ops):
        self.transactions.append(list(ops))
        if self.gate is not None:
            await self.gate.wait()
        return await self._store.transaction(ops)


@contextlib.asynccontextmanager
async def writer_on(kind):
    store = kind.make()
    await store.start()
    counting = CountingStore(store)
    writer = RecordWriter(counting, NODE_ID)
    try:
        await writer.start()
        await writer.load()
        yield writer, counting
    finally:
        await store.close()


async def stored_json(store, path):
    node = await store.get(path)
    return None if node is None else json.loads(node.data)


def test_names_that_cannot_be_znode_names_are_encoded_reversibly():
    for name in ("orders", "orders-v2.eu_1", "a/b", "50%", "", ".", "..", "ümlaut group"):
        component = encode_name(name)
        assert "/" not in component and component not in ("", ".", "..")
        assert decode_name(component) == name
    assert encode_name("orders-v2.eu_1") == "orders-v2.eu_1"


def test_group_document_is_written_at_its_path_and_updated_by_compare_and_set(store_kind, run):
    async def scenario():
        async with writer_on(store_kind) as (writer, store):
            await writer.write([GroupMetadataRecord("g", group_document("g", 1))])
            await writer.write([GroupMetadataRecord("g", group_document("g", 2))])
            assert await stored_json(store, group_path("g")) == group_document("g", 2).to_json()
            assert (await store.get(group_path("g"))).version == 1

    run(scenario())


def test_offset_commits_share_one_document_per_topic(store_kind, run):
    async def scenario():
        async with writer_on(store_kind) as (writer, store):
            await writer.write([GroupMetadataRecord("g", group_document("g", 1))])
            await writer.write([commit("g", "t", 0, 10), commit("g", "t", 1, 20), commit("g", "u", 0, 5)])
            await writer.write([commit("g", "t", 1, 21, ts=600)])
            assert await store.children(offsets_path("g")) == ["t", "u"]
            assert await stored_json(store, offset_topic_path("g", "t")) == {
                "version": 1,
                "partitions": {
                    "0": {"offset": 10, "leader_epoch": 2, "metadata": "m", "commit_timestamp_ms": 500},
                    "1": {"offset": 21, "leader_epoch": 2, "metadata": "m", "commit_timestamp_ms": 600},
                },
            }

    run(scenario())


def test_an_offset_commit_for_a_memberless_group_creates_an_empty_group_document(store_kind, run):
    async def scenario():
        async with writer_on(store_kind) as (writer, store):
            await writer.write([commit("simple", "t", 0, 7, ts=1234)])
            assert len(store.transactions) == 1
            assert (await store.get(group_path("simple"))).data == (
                b'{"version":1,"type":"classic","group":"simple","protocol_type":"","protocol":null,"generation":0,'
                b'"state":"Empty","leader":null,"members":[],"ownership":{},"coordinator":3,"updated_at_ms":1234}')
            assert await load_records(store) == [
                GroupMetadataRecord("simple", empty_group_document("simple", NODE_ID, 1234)),
                commit("simple", "t", 0, 7, ts=1234),
            ]

    run(scenario())


def test_offset_tombstones_remove_partitions_and_the_last_one_removes_the_topic_node(store_kind, run):
    async def scenario():
        async with writer_on(store_kind) as (writer, store):
            await writer.write([commit("g", "t", 0, 1), commit("g", "t", 1, 2)])
            await writer.write([OffsetTombstone("g", "t", 0)])
            assert list((await stored_json(store, offset_topic_path("g", "t")))["partitions"]) == ["1"]
            await writer.write([OffsetTombstone("g", "t", 1), OffsetTombstone("g", "absent", 0)])
            assert await store.get(offset_topic_path("g", "t")) is None
            assert await store.get(group_path("g")) is not None

    run(scenario())


def test_group_tombstone_deletes_the_group_and_its_offsets_in_one_transaction(store_kind, run):
    async def scenario():
        async with writer_on(store_kind) as (writer, store):
            await writer.write([GroupMetadataRecord("g", group_document("g", 1)),
                                commit("g", "t", 0, 1), commit("g", "u", 0, 1)])
            before = len(store.transactions)
            await writer.write([GroupTombstone("g")])
            assert len(store.transactions) == before + 1
            assert await store.children("/groups") == []
            await writer.write([GroupTombstone("never-existed")])
            assert len(store.transactions) == before + 1

    run(scenario())


def test_topics_are_written_and_tombstoned(store_kind, run):
    async def scenario():
        async with writer_on(store_kind) as (writer, store):
            topic = TopicRecord("t", "id-1", {0: [NODE_ID], 1: [NODE_ID]})
            await writer.write([topic, TopicRecord("gone", "id-2", {0: [NODE_ID]})])
            await writer.write([TopicTombstone("gone")])
            assert await stored_json(store, topic_path("t")) == {"version": 1, "topic_id": "id-1",
                                                                  "partitions": {"0": [NODE_ID], "1": [NODE_ID]}}
            assert await store.children("/brokers/topics") == ["t"]

    run(scenario())


def test_everything_written_loads_back_in_replay_order_after_a_restart(persistent_store_kind, run):
    store_kind = persistent_store_kind
    records = [
        TopicRecord("t", "id-1", {0: [NODE_ID], 1: [NODE_ID]}),
        TopicRecord("a/topic", "id-2", {0: [NODE_ID]}),
        GroupMetadataRecord("b/group", group_document("b/group", 4)),
        commit("b/group", "t", 1, 11), commit("b/group", "t", 0, 10), commit("b/group", "a/topic", 0, 3),
        GroupMetadataRecord("a", group_document("a", 1)),
    ]

    async def scenario():
        async with writer_on(store_kind) as (writer, _):
            await writer.write(records)
        async with writer_on(store_kind) as (writer, store):
            expected = [
                TopicRecord("a/topic", "id-2", {0: [NODE_ID]}),
                TopicRecord("t", "id-1", {0: [NODE_ID], 1: [NODE_ID]}),
                GroupMetadataRecord("a", group_document("a", 1)),
                GroupMetadataRecord("b/group", group_document("b/group", 4)),
                commit("b/group", "a/topic", 0, 3), commit("b/group", "t", 0, 10), commit("b/group", "t", 1, 11),
            ]
            assert await load_records(store) == expected
            assert await writer.load() == expected
            # The loaded versions let the next writes go straight through compare-and-set.
            await writer.write([GroupMetadataRecord("a", group_document("a", 2)), commit("b/group", "t", 0, 12)])
            assert (await stored_json(store, group_path("a")))["generation"] == 2

    run(scenario())


def transaction_state(transactional_id: str, state: TxnState, epoch: int = 0, partitions=()) -> TransactionRecord:
    start_ms = -1 if state is TxnState.EMPTY else 2000
    return TransactionRecord(transactional_id, 4000, -1, epoch, -1, 60000, state, frozenset(partitions), start_ms,
                             2000 + epoch)


def test_a_transactional_ids_state_is_written_at_its_path_and_replaced_by_compare_and_set(store_kind, run):
    async def scenario():
        async with writer_on(store_kind) as (writer, store):
            await writer.write([transaction_state("tx/1", TxnState.EMPTY)])
            await writer.write([transaction_state("tx/1", TxnState.ONGOING, partitions=[("t", 1), ("t", 0)])])
            assert await stored_json(store, transaction_path("tx/1")) == {
                "version": 1, "transactional_id": "tx/1", "producer_id": 4000, "previous_producer_id": -1,
                "producer_epoch": 0, "last_producer_epoch": -1, "timeout_ms": 60000, "state": "Ongoing",
                "partitions": {"t": [0, 1]}, "start_ms": 2000, "last_update_ms": 2000}
            assert (await store.get(transaction_path("tx/1"))).version == 1

    run(scenario())


def test_transactional_ids_load_back_after_a_restart_only_those_wanted_and_apart_from_groups(
        persistent_store_kind, run):
    ongoing = transaction_state("a", TxnState.ONGOING, epoch=2, partitions=[("t", 0)])
    preparing = transaction_state("b/2", TxnState.PREPARE_COMMIT, epoch=1, partitions=[("t", 0), ("u", 3)])

    async def scenario():
        async with writer_on(persistent_store_kind) as (writer, _):
            await writer.write([ongoing, preparing, transaction_state("c", TxnState.EMPTY)])
        async with writer_on(persistent_store_kind) as (writer, store):
            assert await writer.load() == []  # the groups' and topics' load does not see them
            assert await writer.load_transactions(lambda tid: tid != "c") == [ongoing, preparing]
            # The loaded version lets the next write go straight through compare-and-set.
            completed = TransactionRecord("b/2", 4000, -1, 1, -1, 60000, TxnState.COMPLETE_COMMIT, frozenset(),
                                          2000, 2500)
            await writer.write([completed])
            assert (await store.get(transaction_path("b/2"))).version == 1
            assert await writer.load_transactions(lambda tid: True) == [ongoing, completed,
                                                                        transaction_state("c", TxnState.EMPTY)]

    run(scenario())


def test_a_forgotten_transactional_id_is_read_again_before_its_next_write(concurrent_store_kind, run):
    async def scenario():
        async with writer_on(concurrent_store_kind) as (first, store):
            async with writer_on(concurrent_store_kind) as (second, _):
                await first.write([transaction_state("tx", TxnState.EMPTY, epoch=0)])
                await second.load_transactions(lambda tid: True)
                await second.write([transaction_state("tx", TxnState.EMPTY, epoch=1)])  # the id moved
                first.forget(lambda tid: tid == "tx")  # its partition came back to `first`
                await first.write([transaction_state("tx", TxnState.EMPTY, epoch=2)])
                assert (await stored_json(store, transaction_path("tx")))["producer_epoch"] == 2

    run(scenario())


def test_the_records_of_one_call_are_one_transaction(store_kind, run):
    async def scenario():
        async with writer_on(store_kind) as (writer, store):
            await writer.write([GroupMetadataRecord("g", group_document("g", 1)),
                                commit("g", "t", 0, 1), commit("h", "t", 0, 1), TopicRecord("t", "i", {0: [0]})])
            assert len(store.transactions) == 1

    run(scenario())


def test_calls_arriving_during_a_transaction_are_coalesced_into_the_next_one(store_kind, run):
    async def scenario():
        async with writer_on(store_kind) as (writer, store):
            store.gate = asyncio.Event()
            first = asyncio.create_task(writer.write([commit("g", "t", 0, 0)]))
            while not store.transactions:  # bounded by the scenario timeout
                await asyncio.sleep(0)
            later = [asyncio.create_task(writer.write([commit("g", "t", p, p)])) for p in range(1, 21)]
            await asyncio.sleep(0)
            store.gate.set()
            await asyncio.gather(first, *later)
            assert len(store.transactions) == 2
            loaded = [r for r in await load_records(store) if isinstance(r, OffsetCommitRecord)]
            assert [r.offset for r in loaded] == list(range(21))

    run(scenario())


def test_a_failed_coalesced_transaction_fails_every_caller_and_a_retry_succeeds(store_kind, run):
    async def scenario():
        async with writer_on(store_kind) as (writer, store):
            await writer.write([GroupMetadataRecord("g", group_document("g", 1))])
            # Another coordinator takes the group over and writes behind this writer's back.
            await store.set_if_version(group_path("g"), group_document("g", 9).encode(), 0)
            callers = [asyncio.create_task(writer.write([GroupMetadataRecord("g", group_document("g", 2))])),
                       asyncio.create_task(writer.write([commit("g", "t", 0, 1)]))]
            results = await asyncio.gather(*callers, return_exceptions=True)
            assert [type(r) for r in results] == [BadVersion, BadVersion]
            assert await store.get(offset_topic_path("g", "t")) is None
            await writer.write([commit("g", "t", 0, 1)])
            assert (await stored_json(store, group_path("g")))["generation"] == 9
            assert await store.get(offset_topic_path("g", "t")) is not None

    run(scenario())


def test_two_writers_on_one_group_conflict_by_version(concurrent_store_kind, run):
    store_kind = concurrent_store_kind

    async def scenario():
        async with writer_on(store_kind) as (first, _):
            async with writer_on(store_kind) as (second, _):
                await first.write([GroupMetadataRecord("g", group_document("g", 1))])
                await second.load()
                await second.write([GroupMetadataRecord("g", group_document("g", 2))])
                with pytest.raises(BadVersion):
                    await first.write([GroupMetadataRecord("g", group_document("g", 3))])

    run(scenario())


def test_register_broker_creates_an_ephemeral_node_with_the_address(store_kind, run):
    async def scenario():
        async with writer_on(store_kind) as (_, store):
            await register_broker(store, NODE_ID, (("PLAINTEXT", "127.0.0.1", 9092),), 777)
            assert await stored_json(store, "/brokers/ids/3") == {
                "host": "127.0.0.1", "port": 9092, "node_id": NODE_ID, "started_at_ms": 777,
                "endpoints": ["PLAINTEXT://127.0.0.1:9092"]}
            with pytest.raises(NodeExists):
                await register_broker(store, NODE_ID, (("PLAINTEXT", "127.0.0.1", 9093),), 778)
        if store_kind.persistent:
            async with writer_on(store_kind) as (_, store):
                assert await store.get("/brokers/ids/3") is None

    run(scenario())

