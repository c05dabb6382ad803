"""TopicWatch reports every topic creation, change and deletion under `/brokers/topics`, on the
embedded stores and on a real ZooKeeper, and skips corrupt documents."""

from __future__ import annotations

import asyncio
import json
import logging

from groupctl.coordinator.records import TopicRecord
from groupctl.layout.paths import TOPICS, encode_name
from groupctl.layout.topics import TopicDocument
from groupctl.server.topic_watch import TopicWatch

EVENT_TIMEOUT_S = 10.0


class Changes:
    """What a TopicWatch reported, read in order with bounded waits."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue = asyncio.Queue()

    def __call__(self, name, record) -> None:
        self.queue.put_nowait((name, record))

    async def next(self):
        return await asyncio.wait_for(self.queue.get(), EVENT_TIMEOUT_S)

    def none_pending(self) -> bool:
        return self.queue.empty()


def document(topic_id: str, partitions: int, nodes=(0,)) -> bytes:
    return json.dumps({"version": 1, "topic_id": topic_id,
                       "partitions": {str(p): list(nodes) for p in range(partitions)}}).encode()


def record(name: str, topic_id: str, partitions: int, nodes=(0,)) -> TopicRecord:
    return TopicRecord(name, topic_id, {p: list(nodes) for p in range(partitions)})


def path(name: str) -> str:
    return f"{TOPICS}/{encode_name(name)}"


async def put(store, name: str, data: bytes) -> None:
    """Create the topic znode, or overwrite it."""
    node = await store.get(path(name))
    if node is None:
        await store.create(path(name), data, make_parents=True)
    else:
        await store.set_if_version(path(name), data, node.version)


async def started(store, changes: Changes) -> TopicWatch:
    watch = TopicWatch(store, changes)
    await watch.start()
    return watch


def test_existing_topics_are_reported_at_start_then_each_creation_change_and_deletion(store_kind, run):
    async def scenario():
        async with store_kind.opened() as store:
            await put(store, "orders", document("id-o", 2))
            changes = Changes()
            watch = await started(store, changes)
            assert await changes.next() == ("orders", record("orders", "id-o", 2))
            await put(store, "pay.ments", document("id-p", 1))
            assert await changes.next() == ("pay.ments", record("pay.ments", "id-p", 1))
            await put(store, "orders", document("id-o", 5))
            assert await changes.next() == ("orders", record("orders", "id-o", 5))
            await store.delete_if_version(path("orders"))
            assert await changes.next() == ("orders", None)
            await watch.close()

    run(scenario())


def test_the_topics_parent_is_created_when_missing(store_kind, run):
    async def scenario():
        async with store_kind.opened() as store:
            changes = Changes()
            watch = await started(store, changes)
            assert await store.get(TOPICS) is not None
            await store.create(path("orders"), document("id-o", 1))
            assert await changes.next() == ("orders", record("orders", "id-o", 1))
            await watch.close()

    run(scenario())


def test_a_recreated_topic_is_reported_with_its_new_id(store_kind, run):
    async def scenario():
        async with store_kind.opened() as store:
            changes = Changes()
            watch = await started(store, changes)
            await put(store, "orders", document("id-1", 1))
            assert await changes.next() == ("orders", record("orders", "id-1", 1))
            await store.delete_if_version(path("orders"))
            await store.create(path("orders"), document("id-2", 3))
            # Quick succession may merge the deletion into the re-creation; the end is the new id.
            seen = [await changes.next()]
            if seen[0] == ("orders", None):
                seen.append(await changes.next())
            assert seen[-1] == ("orders", record("orders", "id-2", 3))
            await watch.close()

    run(scenario())


def test_a_corrupt_document_is_logged_and_skipped_and_a_later_good_one_is_reported(store_kind, run, caplog):
    async def scenario():
        async with store_kind.opened() as store:
            changes = Changes()
            watch = await started(store, changes)
            await put(store, "orders", document("id-o", 2))
            assert await changes.next() == ("orders", record("orders", "id-o", 2))
            await put(store, "orders", b"{not json")
            await put(store, "broken", json.dumps({"version": 1, "partitions": {"0": [0]}}).encode())
            await put(store, "gappy", json.dumps({"version": 1, "topic_id": "id-g",
                                                  "partitions": {"0": [0], "2": [0]}}).encode())
            await put(store, "fine", document("id-f", 1))
            assert await changes.next() == ("fine", record("fine", "id-f", 1))
            await put(store, "orders", document("id-o", 3))
            assert await changes.next() == ("orders", record("orders", "id-o", 3))
            assert changes.none_pending()
            await watch.close()

    with caplog.at_level(logging.WARNING, logger="groupctl.topic_watch"):
        run(scenario())
    skipped = " ".join(r.getMessage() for r in caplog.records)
    assert all(f"{TOPICS}/{name}" in skipped for name in ("orders", "broken", "gappy"))


def test_a_child_that_is_not_a_legal_topic_name_is_skipped(store_kind, run):
    async def scenario():
        async with store_kind.opened() as store:
            changes = Changes()
            watch = await started(store, changes)
            await store.create(f"{TOPICS}/{encode_name('bad name')}", document("id-b", 1))
            await store.create(path("good"), document("id-g", 1))
            assert await changes.next() == ("good", record("good", "id-g", 1))
            assert changes.none_pending()
            await watch.close()

    run(scenario())


def test_a_failing_callback_does_not_end_the_watch(store_kind, run):
    async def scenario():
        async with store_kind.opened() as store:
            changes = Changes()

            def flaky(name, topic):
                changes(name, topic)
                if name == "first":
                    raise RuntimeError("callback bug")

            watch = TopicWatch(store, flaky)
            await watch.start()
            await put(store, "first", document("id-1", 1))
            assert (await changes.next())[0] == "first"
            await put(store, "second", document("id-2", 1))
            assert (await changes.next())[0] == "second"
            await watch.close()

    run(scenario())


def test_nothing_is_reported_after_close(store_kind, run):
    async def scenario():
        async with store_kind.opened() as store:
            closed_changes, marker = Changes(), Changes()
            closed = await started(store, closed_changes)
            await put(store, "orders", document("id-o", 1))
            assert (await closed_changes.next())[0] == "orders"
            await closed.close()
            watching = await started(store, marker)
            assert (await marker.next())[0] == "orders"
            await put(store, "orders", document("id-o", 2))
            assert await marker.next() == ("orders", record("orders", "id-o", 2))
            await put(store, "later", document("id-l", 1))
            assert await marker.next() == ("later", record("later", "id-l", 1))
            await store.delete_if_version(path("orders"))
            assert await marker.next() == ("orders", None)
            assert closed_changes.none_pending()
            await watching.close()

    run(scenario())


def test_changes_written_by_another_node_s_session_are_reported(concurrent_store_kind, run):
    async def scenario():
        async with concurrent_store_kind.opened() as mine, concurrent_store_kind.opened() as theirs:
            changes = Changes()
            watch = await started(mine, changes)
            await put(theirs, "orders", document("id-o", 2, nodes=(1, 2)))
            assert await changes.next() == ("orders", record("orders", "id-o", 2, nodes=(1, 2)))
            await put(theirs, "orders", document("id-o", 4, nodes=(1, 2)))
            assert await changes.next() == ("orders", record("orders", "id-o", 4, nodes=(1, 2)))
            await theirs.delete_if_version(path("orders"))
            assert await changes.next() == ("orders", None)
            await watch.close()

    run(scenario())


def test_a_topic_record_round_trips_through_the_document_the_writer_stores():
    stored = record("orders", "id-o", 3, nodes=(2, 0))
    encoded = TopicDocument(stored.topic_id, stored.replicas).encode()
    assert TopicRecord.of("orders", TopicDocument.decode("orders", encoded)) == stored
