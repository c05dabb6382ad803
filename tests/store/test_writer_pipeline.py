"""RecordWriter under load: transactions in flight side by side, and offsets documents encoded
incrementally (what the ZooKeeper commit path relies on for throughput)."""

from __future__ import annotations

import asyncio

from hypothesis import given
from hypothesis import strategies as st

from groupctl.coordinator.records import GroupMetadataRecord, OffsetCommitRecord
from groupctl.store.base import BadVersion
from groupctl.layout.codec import encode as encode_document
from groupctl.layout.paths import group_path
from groupctl.layout.offsets import OffsetsDocument
from groupctl.store.loading import load_records
from groupctl.store.persist import MAX_COALESCED_RECORDS
from tests.store.test_persist import commit, group_document, writer_on


async def until(condition) -> None:
    """Yield to the loop until `condition()` holds (bounded by the scenario timeout)."""
    while not condition():
        await asyncio.sleep(0)


def commits_of(group: str, count: int) -> list[OffsetCommitRecord]:
    return [commit(group, "t", p, p) for p in range(count)]


def test_with_a_transaction_in_flight_small_calls_wait_and_coalesce(store_kind, run):
    async def scenario():
        async with writer_on(store_kind) as (writer, store):
            store.gate = asyncio.Event()
            first = asyncio.create_task(writer.write([commit("g", "t", 0, 0)]))
            await until(lambda: store.transactions)
            # Other groups: free scopes, but together far from a full transaction.
            later = [asyncio.create_task(writer.write([commit(f"h{i}", "t", 0, i)])) for i in range(10)]
            for _ in range(5):
                await asyncio.sleep(0)
            assert len(store.transactions) == 1
            store.gate.set()
            await asyncio.gather(first, *later)
            assert len(store.transactions) == 2

    run(scenario())


def test_a_full_transaction_of_other_scopes_goes_in_flight_beside_the_first(store_kind, run):
    async def scenario():
        async with writer_on(store_kind) as (writer, store):
            store.gate = asyncio.Event()
            first = asyncio.create_task(writer.write([commit("g", "t", 0, 0)]))
            await until(lambda: store.transactions)
            same_scope = asyncio.create_task(writer.write(commits_of("g", MAX_COALESCED_RECORDS)))
            other = [asyncio.create_task(writer.write(commits_of(f"h{i}", MAX_COALESCED_RECORDS // 2)))
                     for i in range(2)]
            await until(lambda: len(store.transactions) == 2)
            # The second transaction is the two other groups; group g's calls wait for its own.
            assert {op.path.split("/")[2] for op in store.transactions[1]} == {"h0", "h1"}
            for _ in range(5):
                await asyncio.sleep(0)
            assert len(store.transactions) == 2
            store.gate.set()
            await asyncio.gather(first, same_scope, *other)
            assert len(store.transactions) == 3
            offsets = {(r.group, r.partition): r.offset for r in await load_records(store)
                       if isinstance(r, OffsetCommitRecord)}
            assert offsets[("g", 0)] == 0 and offsets[("g", MAX_COALESCED_RECORDS - 1)] == MAX_COALESCED_RECORDS - 1
            assert offsets[("h1", MAX_COALESCED_RECORDS // 2 - 1)] == MAX_COALESCED_RECORDS // 2 - 1

    run(scenario())


def test_a_failing_transaction_in_flight_does_not_fail_one_on_other_scopes(store_kind, run):
    async def scenario():
        async with writer_on(store_kind) as (writer, store):
            await writer.write([GroupMetadataRecord("g", group_document("g", 1))])
            await store.set_if_version(group_path("g"), group_document("g", 9).encode(), 0)
            store.gate = asyncio.Event()
            doomed = asyncio.create_task(writer.write([GroupMetadataRecord("g", group_document("g", 2))]))
            await until(lambda: len(store.transactions) == 2)
            other = asyncio.create_task(writer.write(commits_of("h", MAX_COALESCED_RECORDS)))
            await until(lambda: len(store.transactions) == 3)
            store.gate.set()
            results = await asyncio.gather(doomed, other, return_exceptions=True)
            assert [type(r) for r in results] == [BadVersion, type(None)]
            # The failed scope was re-read: a retry goes through at the foreign version.
            await writer.write([GroupMetadataRecord("g", group_document("g", 10))])

    run(scenario())


ENTRY_KEYS = ("offset", "leader_epoch", "metadata", "commit_timestamp_ms")  # as the writer orders them
entries = st.fixed_dictionaries({
    "offset": st.integers(-1, 2**63 - 1),
    "leader_epoch": st.integers(-1, 2**31 - 1),
    "metadata": st.text(),
    "commit_timestamp_ms": st.integers(0, 2**63 - 1),
})


@given(loaded=st.dictionaries(st.integers(0, 50).map(str), entries, max_size=5),
       commits=st.lists(st.tuples(st.integers(0, 50), entries), max_size=5),
       dropped=st.lists(st.integers(0, 50).map(str), max_size=3))
def test_an_offsets_document_encodes_exactly_as_json_after_any_commits_and_removals(loaded, commits, dropped):
    document = OffsetsDocument.decode("/p", encode_document({"version": 1, "partitions": loaded}))
    expected = dict(loaded)
    for partition, entry in commits:
        document = document.with_commit(partition, **entry)
        expected[str(partition)] = {key: entry[key] for key in ENTRY_KEYS}
    for partition in dropped:
        document = document.without(partition)
        expected.pop(partition, None)
    assert document.encode() == encode_document({"version": 1, "partitions": expected})
    assert document.partitions == expected
