"""groupctl.ops.zk and the ZooKeeper side of groupctl.ops.rebalance against a real ZooKeeper:
stored group documents (written by the coordinator's RecordWriter), the legacy Kafka 0.8
layout, znode inspection, watching generations, and rebalance requests. Locating a group's
coordinator in the cluster layout is tested in test_ops_cluster.py."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from dataclasses import replace

import pytest
from kazoo.client import KazooClient

from groupctl.coordinator.records import GroupMetadataRecord, OffsetCommitRecord
from groupctl.errors import BadInput, NotFound, Refused, Timeout, Unreachable
from groupctl.layout.any_group import AnyGroupDocument
from groupctl.layout.groups import GroupDocument, GroupMember
from groupctl.layout.paths import REBALANCE_REQUESTS, group_path
from groupctl.ops import rebalance
from groupctl.ops.zk import watch_documents, zk_get, zk_ls, zk_show, zk_tree, zk_watch
from groupctl.store.persist import RecordWriter
from groupctl.store.zookeeper import ZooKeeperStore, split_connect
from tests.support.consumer_documents import EVENTS_ID, consumer_document, consumer_member
from tests.support.zookeeper import free_port

pytestmark = pytest.mark.zookeeper

WAIT_S = 20.0  # bound on every wait for ZooKeeper to deliver a change


def group_document(group: str, generation: int, members: int = 1, coordinator: int = 0) -> GroupDocument:
    ids = [f"app-{i}-{generation}" for i in range(members)]
    return GroupDocument(
        group=group, protocol_type="consumer", protocol="range" if ids else None, generation=generation,
        state="Stable" if ids else "Empty", leader=ids[0] if ids else None,
        members=tuple(GroupMember(member_id=m, group_instance_id=None, client_id=m.rsplit("-", 1)[0],
                                  client_host="/127.0.0.1", session_timeout_ms=10000, rebalance_timeout_ms=30000,
                                  subscription=["payments"], assignment={"payments": [i]}, metadata_bytes=b"",
                                  assignment_bytes=b"") for i, m in enumerate(ids)),
        ownership={"payments": {str(i): m for i, m in enumerate(ids)}} if ids else {},
        coordinator=coordinator, updated_at_ms=1_000 + generation,
    )


def persist(connect: str, records: list) -> None:
    """Write records exactly as a coordinator does."""

    async def scenario():
        store = ZooKeeperStore(connect)
        await store.start()
        try:
            writer = RecordWriter(store, node_id=0)
            await writer.start()
            await writer.load()
            await writer.write(records)
        finally:
            await store.close()

    asyncio.run(asyncio.wait_for(scenario(), WAIT_S))


@pytest.fixture
def raw(zookeeper, zk_connect):
    """A plain kazoo client inside the test's chroot, for writing what tools and Kafka 0.8 write."""
    chroot = split_connect(zk_connect)[1]
    client = KazooClient(hosts=zookeeper.connect)
    client.start(timeout=10)
    client.ensure_path(chroot)
    client.chroot = chroot
    yield client
    client.stop()
    client.close()


def set_document(raw, group: str, document: AnyGroupDocument) -> None:
    path = group_path(group)
    if raw.exists(path):
        raw.set(path, document.encode())
    else:
        raw.create(path, document.encode(), makepath=True)


def register(raw, node_id: int, port: int) -> None:
    raw.create(f"/brokers/ids/{node_id}", json.dumps(
        {"host": "127.0.0.1", "port": port, "node_id": node_id, "started_at_ms": 1}).encode(),
        ephemeral=True, makepath=True)


# -- zk show -----------------------------------------------------------------------------------


def test_show_returns_the_stored_document_its_stat_and_committed_offsets(zk_connect):
    document = group_document("orders", generation=7)
    persist(zk_connect, [GroupMetadataRecord("orders", document)])
    persist(zk_connect, [OffsetCommitRecord("orders", "payments", 0, 42, leader_epoch=3, metadata="m",
                                            commit_timestamp_ms=500),
                         OffsetCommitRecord("orders", "payments", 10, 7, commit_timestamp_ms=501),
                         OffsetCommitRecord("orders", "refunds", 2, 1, commit_timestamp_ms=502)])

    shown = zk_show(zk_connect, "orders")

    assert shown.layout == "groupctl"
    assert shown.path == "/groups/orders"
    assert shown.document == document.to_json()
    assert shown.generation == 7
    assert shown.stat.version == 0
    assert shown.stat.mtime_ms > 0
    assert list(shown.offsets) == ["payments", "refunds"]
    assert list(shown.offsets["payments"]) == ["0", "10"]
    assert shown.offsets["payments"]["0"] == {"offset": 42, "leader_epoch": 3, "metadata": "m",
                                              "commit_timestamp_ms": 500}
    assert shown.offsets["refunds"]["2"]["offset"] == 1
    as_json = shown.to_json()
    assert set(as_json) == {"group", "layout", "path", "stat", "document", "offsets"}
    assert as_json["stat"]["version"] == 0


def test_show_finds_groups_whose_names_need_encoding(zk_connect):
    persist(zk_connect, [GroupMetadataRecord("team/orders v2", group_document("team/orders v2", 1))])

    shown = zk_show(zk_connect, "team/orders v2")

    assert shown.path == "/groups/team%2Forders%20v2"
    assert shown.document["group"] == "team/orders v2"


def test_show_reads_the_legacy_kafka_08_layout_when_groupctl_has_no_such_group(raw, zk_connect):
    # As Kafka 0.8's ZookeeperConsumerConnector wrote it.
    consumer = "legacy_host1-1400000000000-8d1a2b3c"
    raw.create(f"/consumers/legacy/ids/{consumer}", json.dumps(
        {"version": 1, "subscription": {"clicks": 1}, "pattern": "static",
         "timestamp": "1400000000000"}).encode(), makepath=True)
    raw.create("/consumers/legacy/owners/clicks/0", f"{consumer}-0".encode(), makepath=True)
    raw.create("/consumers/legacy/owners/clicks/1", f"{consumer}-0".encode(), makepath=True)
    raw.create("/consumers/legacy/offsets/clicks/0", b"1200", makepath=True)
    raw.create("/consumers/legacy/offsets/clicks/1", b"87", makepath=True)

    shown = zk_show(zk_connect, "legacy")

    assert shown.layout == "kafka-0.8"
    assert shown.path == "/consumers/legacy"
    assert shown.document == {
        "group": "legacy",
        "members": [{"consumer_id": consumer, "subscription": {"clicks": 1}, "pattern": "static",
                     "timestamp": "1400000000000"}],
        "ownership": {"clicks": {"0": f"{consumer}-0", "1": f"{consumer}-0"}},
    }
    assert shown.offsets == {"clicks": {"0": {"offset": 1200}, "1": {"offset": 87}}}
    assert shown.generation is None


def test_show_prefers_groupctls_document_over_a_legacy_group_of_the_same_name(raw, zk_connect):
    raw.create("/consumers/orders/offsets/payments/0", b"5", makepath=True)
    persist(zk_connect, [GroupMetadataRecord("orders", group_document("orders", 3))])

    assert zk_show(zk_connect, "orders").layout == "groupctl"


def test_show_of_an_unknown_group_is_not_found(zk_connect):
    with pytest.raises(NotFound, match="group 'nope' does not exist in ZooKeeper") as raised:
        zk_show(zk_connect, "nope")
    assert raised.value.exit_status == 1


LOOKUPS = {
    "zk show": lambda connect: zk_show(connect, "nope"),
    "zk get": lambda connect: zk_get(connect, "/groups/nope"),
    "zk ls": lambda connect: zk_ls(connect, "/groups"),
    "zk tree": lambda connect: zk_tree(connect, "/groups"),
    "rebalance trigger": lambda connect: rebalance.trigger("nope", zk=connect),
}


@pytest.mark.parametrize("lookup", sorted(LOOKUPS))
def test_not_found_on_a_chroot_where_nothing_is_registered_hints_at_the_chroot(zk_connect, lookup):
    chroot = "/" + zk_connect.split("/", 1)[1]  # never created: a mistyped chroot

    with pytest.raises(NotFound) as raised:
        LOOKUPS[lookup](zk_connect)

    message = str(raised.value)
    assert "\n" not in message
    assert message.endswith(f"; nothing is registered in ZooKeeper at {zk_connect} (no node in /brokers/ids, "
                            f"no /coordinators, /groups or /consumers): is the chroot '{chroot}' right?"), message


@pytest.mark.parametrize("in_use", ["registered node", "group documents", "legacy consumers"])
def test_not_found_on_a_chroot_in_use_does_not_mention_the_chroot(raw, zk_connect, in_use):
    if in_use == "registered node":
        register(raw, 0, 9092)
    elif in_use == "group documents":
        set_document(raw, "other", group_document("other", 1))
    else:
        raw.create("/consumers/old-app/ids", makepath=True)

    with pytest.raises(NotFound) as shown:
        zk_show(zk_connect, "nope")
    with pytest.raises(NotFound) as listed:
        zk_ls(zk_connect, "/nowhere")

    assert (str(shown.value), str(listed.value)) == ("group 'nope' does not exist in ZooKeeper", "no znode at /nowhere")


def test_an_unreachable_zookeeper_fails_within_the_timeout_with_one_line():
    connect = f"127.0.0.1:{free_port()}/app"  # nothing listens there
    started = time.monotonic()

    with pytest.raises(Unreachable) as raised:
        zk_show(connect, "orders", timeout_s=1.0)

    assert time.monotonic() - started < 5.0
    assert str(raised.value) == f"cannot reach ZooKeeper at {connect} within 1s"
    assert raised.value.exit_status == 1


@pytest.mark.parametrize("connect", ["", "127.0.0.1:notaport"])
def test_a_malformed_connect_string_is_bad_input(connect):
    with pytest.raises(BadInput) as raised:
        zk_show(connect, "orders", timeout_s=1.0)
    assert raised.value.exit_status == 2


# -- zk get / ls / tree ------------------------------------------------------------------------


def test_get_returns_data_stat_and_the_parsed_json_document(raw, zk_connect):
    raw.create("/a/doc", b'{"k": 1}', makepath=True)
    raw.set("/a/doc", b'{"k": 2}')

    node = zk_get(zk_connect, "/a/doc")

    assert node.data == b'{"k": 2}'
    assert node.stat.version == 1
    assert node.stat.ephemeral_owner is None
    assert node.to_json() == {"path": "/a/doc", "stat": node.stat.to_json(), "encoding": "utf-8",
                              "data": '{"k": 2}', "document": {"k": 2}}


def test_get_shows_binary_data_as_base64_and_plain_text_without_a_document(raw, zk_connect):
    raw.create("/bin", b"\xff\x00", makepath=True)
    raw.create("/text", b"hello", makepath=True)

    assert zk_get(zk_connect, "/bin").to_json()["encoding"] == "base64"
    assert zk_get(zk_connect, "/bin").to_json()["data"] == "/wA="
    assert zk_get(zk_connect, "/text").to_json()["document"] is None


def test_get_marks_ephemeral_znodes_with_their_owner_session(raw, zk_connect):
    register(raw, 0, 9092)

    assert zk_get(zk_connect, "/brokers/ids/0").stat.ephemeral_owner == raw.client_id[0]


def test_ls_lists_children_sorted(raw, zk_connect):
    for name in ("b", "a", "c"):
        raw.create(f"/dir/{name}", makepath=True)

    assert zk_ls(zk_connect, "/dir/").children == ("a", "b", "c")
    assert zk_ls(zk_connect, "/dir").to_json() == {"path": "/dir", "children": ["a", "b", "c"]}


def test_get_and_ls_of_a_missing_znode_are_not_found(zk_connect):
    with pytest.raises(NotFound, match="no znode at /missing"):
        zk_get(zk_connect, "/missing")
    with pytest.raises(NotFound, match="no znode at /missing"):
        zk_ls(zk_connect, "/missing")


@pytest.mark.parametrize("path", ["relative", "/a//b", "/a/../b"])
def test_malformed_paths_are_bad_input(path):
    with pytest.raises(BadInput) as raised:
        zk_get("127.0.0.1:1", path)  # rejected before connecting
    assert raised.value.exit_status == 2


def build_tree(raw) -> None:
    for path in ("/t/a/x/deep", "/t/a/y", "/t/b"):
        raw.create(path, makepath=True)


def test_tree_walks_depth_first_in_name_order(raw, zk_connect):
    build_tree(raw)

    tree = zk_tree(zk_connect, "/t")

    assert [(e.path, e.depth, e.num_children) for e in tree.entries] == [
        ("/t", 0, 2), ("/t/a", 1, 2), ("/t/a/x", 2, 1), ("/t/a/x/deep", 3, 0), ("/t/a/y", 2, 0), ("/t/b", 1, 0),
    ]
    assert tree.truncated is False


def test_tree_stops_at_the_depth_limit_and_says_so(raw, zk_connect):
    build_tree(raw)

    tree = zk_tree(zk_connect, "/t", max_depth=1)

    assert [e.path for e in tree.entries] == ["/t", "/t/a", "/t/b"]
    assert tree.truncated is True
    assert tree.to_json()["truncated"] is True


def test_tree_stops_at_the_node_limit_and_says_so(raw, zk_connect):
    build_tree(raw)

    tree = zk_tree(zk_connect, "/t", max_nodes=3)

    assert [e.path for e in tree.entries] == ["/t", "/t/a", "/t/a/x"]
    assert tree.truncated is True


def test_tree_of_the_root_lists_the_layout(raw, zk_connect):
    persist(zk_connect, [GroupMetadataRecord("orders", group_document("orders", 1))])

    paths = [e.path for e in zk_tree(zk_connect, "/").entries]

    assert paths[0] == "/"
    assert {"/brokers", "/groups", "/groups/orders"} <= set(paths)


# -- watching generations ----------------------------------------------------------------------


def test_watch_documents_yields_the_current_document_then_each_new_generation_only(raw, zk_connect):
    set_document(raw, "orders", group_document("orders", 1))
    documents = watch_documents(zk_connect, "orders", deadline=time.monotonic() + WAIT_S)
    try:
        assert next(documents).document.generation == 1
        same_generation = replace(group_document("orders", 1), updated_at_ms=99)
        set_document(raw, "orders", same_generation)  # a rewrite without a rebalance
        set_document(raw, "orders", group_document("orders", 2, members=2))
        assert next(documents).document.generation == 2
        set_document(raw, "orders", group_document("orders", 3))
        assert next(documents).document.generation == 3
    finally:
        documents.close()


def test_watch_documents_waits_for_a_group_that_does_not_exist_yet(raw, zk_connect):
    documents = watch_documents(zk_connect, "later", deadline=time.monotonic() + WAIT_S)
    try:
        assert next(documents) is None
        set_document(raw, "later", group_document("later", 1))
        assert next(documents).document.group == "later"
    finally:
        documents.close()


def test_watch_documents_reports_a_deleted_group_and_its_recreation_with_the_same_generation(raw, zk_connect):
    set_document(raw, "orders", group_document("orders", 1))
    documents = watch_documents(zk_connect, "orders", deadline=time.monotonic() + WAIT_S)
    try:
        assert next(documents).document.generation == 1
        raw.delete(group_path("orders"))
        assert next(documents) is None
        set_document(raw, "orders", group_document("orders", 1, members=2))
        assert len(next(documents).document.members) == 2
    finally:
        documents.close()


def test_watch_documents_follows_a_consumer_groups_new_epoch_and_its_becoming_stable_at_it(raw, zk_connect):
    first = consumer_member("a-1", [0, 1, 2, 3], [0, 1, 2, 3], epoch=1)
    kept, joining = consumer_member("a-1", [0, 1], [0, 1], epoch=2), consumer_member("b-1", [], [2, 3], epoch=2)
    set_document(raw, "readers", consumer_document(1, "Stable", first))
    documents = watch_documents(zk_connect, "readers", deadline=time.monotonic() + WAIT_S)
    try:
        assert next(documents).document.group_epoch == 1
        revoking = consumer_member("a-1", [0, 1], [0, 1], epoch=2, revoking=[2, 3])
        set_document(raw, "readers", consumer_document(2, "Reconciling", revoking, joining))
        moved = next(documents).document
        assert (moved.group_epoch, moved.state) == (2, "Reconciling")
        set_document(raw, "readers", consumer_document(2, "Reconciling", kept, joining))  # a step: not reported
        took_over = consumer_member("b-1", [2, 3], [2, 3], epoch=2)
        set_document(raw, "readers", consumer_document(2, "Stable", kept, took_over))
        stable = next(documents)
        assert (stable.document.group_epoch, stable.document.state) == (2, "Stable")
        assert stable.stored["members"][1]["assigned"] == {EVENTS_ID: [2, 3]}
    finally:
        documents.close()


def test_watch_documents_ends_when_the_deadline_passes(zk_connect):
    documents = watch_documents(zk_connect, "quiet", deadline=time.monotonic() + 1.0)  # connecting included

    assert list(documents) == [None]


class GenerationWriter:
    """Writes generation after generation of a group's document from a thread until stopped
    (at most `limit` writes), so that a watcher started at any moment sees new generations."""

    def __init__(self, raw, group: str, first: int, limit: int = 200, interval_s: float = 0.05) -> None:
        self.raw, self.group, self.next, self.limit, self.interval_s = raw, group, first, limit, interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        for _ in range(self.limit):
            if self._stop.wait(self.interval_s):
                return
            set_document(self.raw, self.group, group_document(self.group, self.next, members=1 + self.next % 2))
            self.next += 1

    def __enter__(self) -> "GenerationWriter":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(WAIT_S)


def test_zk_watch_yields_count_new_generations_then_ends(raw, zk_connect):
    set_document(raw, "orders", group_document("orders", 1))

    with GenerationWriter(raw, "orders", first=2):
        seen = [d.document.generation for d in zk_watch(zk_connect, "orders", count=3, timeout_s=WAIT_S)]

    assert len(seen) == 3
    assert seen == sorted(set(seen)) and seen[0] >= 2


def test_zk_watch_raises_timeout_when_time_runs_out_first(raw, zk_connect):
    set_document(raw, "orders", group_document("orders", 1))
    started = time.monotonic()

    with pytest.raises(Timeout, match=r"timed out after 0.5s watching group 'orders' \(0 of 2") as raised:
        list(zk_watch(zk_connect, "orders", count=2, timeout_s=0.5))

    assert raised.value.exit_status == 1
    assert time.monotonic() - started < 5.0


@pytest.mark.parametrize("kwargs", [{"count": 0}, {"timeout_s": 0}])
def test_zk_watch_rejects_a_count_or_timeout_that_cannot_be_met(kwargs):
    with pytest.raises(BadInput):
        next(zk_watch("127.0.0.1:1", "orders", **kwargs))


# -- rebalance over ZooKeeper ------------------------------------------------------------------


def test_trigger_with_zk_creates_a_request_the_coordinator_watches(raw, zk_connect):
    set_document(raw, "orders", group_document("orders", 1))

    result = rebalance.trigger("orders", zk=zk_connect, reason="operator asked")

    data, _ = raw.get(f"{REBALANCE_REQUESTS}/orders")
    assert json.loads(data) == {"requested_at_ms": result.requested_at_ms, "reason": "operator asked"}
    assert abs(result.requested_at_ms - time.time() * 1000) < 60_000
    assert (result.source, result.already_pending) == ("zk", False)


def test_a_second_trigger_before_the_coordinator_acts_replaces_the_pending_request(raw, zk_connect):
    set_document(raw, "a/b", group_document("a/b", 1))
    rebalance.trigger("a/b", zk=zk_connect, reason="first")

    again = rebalance.trigger("a/b", zk=zk_connect, reason="second")

    assert again.already_pending is True
    assert json.loads(raw.get(f"{REBALANCE_REQUESTS}/a%2Fb")[0])["reason"] == "second"


def test_trigger_of_an_unknown_group_is_not_found_and_writes_nothing(raw, zk_connect):
    with pytest.raises(NotFound, match="group 'ghost' does not exist"):
        rebalance.trigger("ghost", zk=zk_connect)
    assert raw.exists(f"{REBALANCE_REQUESTS}/ghost") is None


def test_trigger_of_a_group_without_members_is_refused(raw, zk_connect):
    set_document(raw, "idle", group_document("idle", 4, members=0))

    with pytest.raises(Refused, match="'idle' is Empty"):
        rebalance.trigger("idle", zk=zk_connect)
    assert raw.exists(f"{REBALANCE_REQUESTS}/idle") is None


def test_rebalance_watch_with_zk_diffs_consecutive_documents(raw, zk_connect):
    set_document(raw, "orders", group_document("orders", 1))

    with GenerationWriter(raw, "orders", first=2):
        seen = list(rebalance.watch("orders", zk=zk_connect, count=2, timeout_s=WAIT_S))

    assert len(seen) == 2
    first, second = seen
    assert first.previous_generation is not None and first.generation > first.previous_generation
    assert second.previous_generation == first.generation
    assert first.group == "orders"
    # every generation renames its members, so each event sees them all leave and join
    assert first.members_joined and first.members_left
    assert first.members == len(first.members_joined)


def test_rebalance_watch_with_zk_times_out_with_exit_status_1(raw, zk_connect):
    set_document(raw, "orders", group_document("orders", 1))

    with pytest.raises(Timeout, match="0 of 1 rebalances") as raised:
        list(rebalance.watch("orders", zk=zk_connect, count=1, timeout_s=0.5))
    assert raised.value.exit_status == 1


def test_rebalance_needs_a_source():
    with pytest.raises(BadInput):
        rebalance.trigger("orders")
    with pytest.raises(BadInput):
        next(rebalance.watch("orders"))
