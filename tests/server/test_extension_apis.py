"""groupctl's extension APIs over the wire, with real kafka-python consumers as the members:
GroupctlDescribeGroup (32000) answers the stored document and long-polls for the next
generation; GroupctlTriggerRebalance (32001) and a request znode under
/coordinators/rebalance-requests start a rebalance that writes a higher generation."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic
from kazoo.client import KazooClient

from groupctl.coordinator.errors import ErrorCode
from groupctl.protocol.extensions import GroupctlDescribeGroupRequest, GroupctlTriggerRebalanceRequest
from groupctl.layout.paths import REBALANCE_REQUESTS, encode_name, group_path
from tests.support.consumers import ConsumerProcess
from tests.support.polling import wait_until
from tests.support.wire import connect, decode_response, roundtrip

SESSION_MS = 6000  # kafka-python heartbeats every second: members rejoin about a second after a trigger
LONG_POLL_MS = 20_000


# --- helpers -----------------------------------------------------------------------------------

def call(coordinator, request, timeout_s: float = 5.0):
    """Send `request` (v0) on a connection of its own and decode the answer."""
    with connect(coordinator) as sock:
        sock.settimeout(timeout_s)
        frame = roundtrip(sock, request, 0)
    return decode_response(request, frame, 0)


def describe(coordinator, group: str, after_generation: int = -1, max_wait_ms: int = 0):
    request = GroupctlDescribeGroupRequest[0](group_id=group, after_generation=after_generation,
                                              max_wait_ms=max_wait_ms)
    return call(coordinator, request, timeout_s=max_wait_ms / 1000 + 10)


def trigger(coordinator, group: str, reason: str | None = None):
    return call(coordinator, GroupctlTriggerRebalanceRequest[0](group_id=group, reason=reason))


def document(response) -> dict:
    assert response.error_code == ErrorCode.NONE, response
    return json.loads(response.document)


def create_topic(coordinator, name: str, partitions: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=coordinator.bootstrap)
    try:
        admin.create_topics([NewTopic(name, partitions, 1)])
    finally:
        admin.close()


def stable_with(coordinator, group: str, consumers) -> dict:
    """The stored document once it is Stable with exactly these consumers, each owning what it
    reports (checked every 0.2 s for up to 60 s)."""

    last = {}

    def settled():
        response = describe(coordinator, group)
        if response.error_code != ErrorCode.NONE:
            return None
        doc = json.loads(response.document)
        owned = {m["client_id"]: sorted([t, p] for t, ps in m["assignment"].items() for p in ps)
                 for m in doc["members"]}
        reported = {c.client_id: sorted(list(tp) for tp in c.snapshot()[0]) for c in consumers}
        last.update(state=doc["state"], generation=doc["generation"], owned=owned, reported=reported)
        return doc if doc["state"] == "Stable" and owned == reported and all(reported.values()) else None

    try:
        return wait_until(settled, 60, interval=0.2, message=f"group {group} Stable with its consumers")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last seen: {last}") from None


@pytest.fixture
def consumer_group(request):
    """`start(coordinator, group)`: one kafka-python consumer on a fresh 2-partition topic,
    stopped at the end; returns (consumer, its first Stable document)."""
    started = []

    def start(coordinator, group: str, client_id: str = "app-1"):
        topic = f"{group.replace('/', '.')}-topic"
        create_topic(coordinator, topic, 2)
        consumer = ConsumerProcess("kafka-python", coordinator.bootstrap, group, topic,
                                   client_id=client_id, session_timeout_ms=SESSION_MS, max_seconds=90)
        started.append(consumer)
        return consumer, stable_with(coordinator, group, [consumer])

    yield start
    for consumer in started:
        consumer.stop()


def emptied(coordinator, group: str, consumer) -> dict:
    """Stop the group's only consumer (it leaves) and return the Empty document that follows."""
    consumer.stop()

    def empty():
        response = describe(coordinator, group)
        doc = json.loads(response.document) if response.error_code == ErrorCode.NONE else None
        return doc if doc is not None and doc["state"] == "Empty" else None

    return wait_until(empty, 30, interval=0.2, message=f"group {group} Empty")


def next_triggered(coordinator, group: str, after_generation: int) -> dict:
    """Long-poll for the first document past `after_generation` that a trigger produced (a
    consumer may rebalance by itself in between: kafka-python's leader sometimes rejoins)."""
    for _ in range(5):
        doc = document(describe(coordinator, group, after_generation, LONG_POLL_MS))
        if doc["generation"] > after_generation and doc["rebalance"]["reason"] == "trigger":
            return doc
        after_generation = doc["generation"]
    raise AssertionError(f"no triggered rebalance of {group} after generation {after_generation}")


def stored_bytes(coordinator, group: str) -> bytes:
    node = coordinator.call(coordinator.node.store.get(group_path(group)))
    return node.data


def zk_client(zk_connect: str) -> KazooClient:
    client = KazooClient(hosts=zk_connect)
    client.start(timeout=10)
    return client


# --- GroupctlDescribeGroup ----------------------------------------------------------------------

def test_describe_answers_the_document_exactly_as_the_embedded_store_holds_it(coordinator, consumer_group):
    consumer, stable = consumer_group(coordinator, "orders")
    response = describe(coordinator, "orders")
    assert response.error_code == ErrorCode.NONE
    assert response.document.encode() == stored_bytes(coordinator, "orders")
    doc = json.loads(response.document)
    assert doc["generation"] == stable["generation"] >= 1
    assert doc["rebalance"]["reason"] in ("join", "leader rejoin")
    assert doc["rebalance"]["completed_at_ms"] >= doc["rebalance"]["started_at_ms"]


@pytest.mark.zookeeper
def test_describe_with_zookeeper_answers_the_znode_byte_for_byte(zk_coordinator, zk_connect, consumer_group):
    consumer_group(zk_coordinator, "payments")
    response = describe(zk_coordinator, "payments")
    client = zk_client(zk_connect)
    try:
        data, _ = client.get(f"/groups/{encode_name('payments')}")
    finally:
        client.stop()
        client.close()
    assert response.error_code == ErrorCode.NONE
    assert response.document.encode() == data


def test_describe_of_an_unknown_group_is_group_id_not_found_with_no_document(coordinator):
    response = describe(coordinator, "nobody")
    assert (response.error_code, response.document) == (ErrorCode.GROUP_ID_NOT_FOUND, None)


def test_a_long_poll_answers_as_soon_as_a_new_generation_is_written(coordinator, consumer_group):
    _, stable = consumer_group(coordinator, "orders")
    generation = stable["generation"]
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(describe, coordinator, "orders", generation, LONG_POLL_MS)
        wait_until(lambda: coordinator.node.documents.waiting("orders"), 10, 0.01, message="the long poll waiting")
        assert not waiting.done()
        started = time.monotonic()
        assert trigger(coordinator, "orders", "long-poll test").error_code == ErrorCode.NONE
        doc = document(waiting.result(timeout=LONG_POLL_MS / 1000 + 10))
        elapsed = time.monotonic() - started
    assert doc["generation"] > generation
    assert elapsed < LONG_POLL_MS / 1000 / 2  # answered by the write, not by the timeout


def test_a_long_poll_without_a_new_generation_times_out_with_the_current_document(coordinator, consumer_group):
    consumer, _ = consumer_group(coordinator, "orders")
    empty = emptied(coordinator, "orders", consumer)  # no member left to start another generation
    started = time.monotonic()
    doc = document(describe(coordinator, "orders", empty["generation"], 400))
    assert time.monotonic() - started >= 0.35
    assert doc == empty


def test_a_long_poll_for_a_group_that_is_deleted_answers_group_id_not_found(coordinator, consumer_group):
    consumer, stable = consumer_group(coordinator, "orders")
    empty = emptied(coordinator, "orders", consumer)
    assert empty["generation"] > stable["generation"]
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(describe, coordinator, "orders", empty["generation"], LONG_POLL_MS)
        wait_until(lambda: coordinator.node.documents.waiting("orders"), 10, 0.01, message="the long poll waiting")
        admin = KafkaAdminClient(bootstrap_servers=coordinator.bootstrap)
        try:
            admin.delete_groups(["orders"])
        finally:
            admin.close()
        response = waiting.result(timeout=LONG_POLL_MS / 1000 + 10)
    assert (response.error_code, response.document) == (ErrorCode.GROUP_ID_NOT_FOUND, None)


# --- GroupctlTriggerRebalance -------------------------------------------------------------------

def test_a_trigger_over_the_wire_makes_the_consumers_rejoin_into_a_higher_generation(coordinator, consumer_group):
    consumer, stable = consumer_group(coordinator, "orders")
    response = trigger(coordinator, "orders", "more partitions")
    assert (response.error_code, response.error_message) == (ErrorCode.NONE, None)
    doc = next_triggered(coordinator, "orders", stable["generation"])
    assert doc["state"] == "Stable"
    block = doc["rebalance"]
    assert (block["reason"], block["detail"], block["client_id"]) == ("trigger", "more partitions", "wire-test")
    assert [m["client_id"] for m in doc["members"]] == [consumer.client_id]


def test_a_trigger_of_an_unknown_group_is_group_id_not_found(coordinator):
    response = trigger(coordinator, "nobody")
    assert response.error_code == ErrorCode.GROUP_ID_NOT_FOUND
    assert "does not exist" in response.error_message


def test_a_trigger_of_an_empty_group_is_refused_and_writes_nothing(coordinator, consumer_group):
    consumer, _ = consumer_group(coordinator, "orders")
    empty = emptied(coordinator, "orders", consumer)
    response = trigger(coordinator, "orders")
    assert response.error_code == ErrorCode.INVALID_REQUEST
    assert response.error_message == "group 'orders' is Empty: it has no members to rebalance"
    assert document(describe(coordinator, "orders")) == empty


# --- rebalance requests in the store ------------------------------------------------------------

@pytest.mark.zookeeper
def test_a_request_znode_triggers_a_rebalance_and_is_deleted(zk_coordinator, zk_connect, consumer_group):
    _, stable = consumer_group(zk_coordinator, "a/b")  # the name is percent-encoded in the path
    path = f"{REBALANCE_REQUESTS}/{encode_name('a/b')}"
    client = zk_client(zk_connect)
    try:
        gone = threading.Event()
        client.create(path, json.dumps({"requested_at_ms": 1, "reason": "from zookeeper"}).encode())
        client.DataWatch(path, lambda data, stat: gone.set() if stat is None else None)
        doc = next_triggered(zk_coordinator, "a/b", stable["generation"])
        assert gone.wait(10), "the coordinator did not delete the request znode"
        assert client.exists(path) is None
    finally:
        client.stop()
        client.close()
    assert doc["rebalance"]["detail"] == "from zookeeper"


def test_a_request_node_in_the_embedded_store_triggers_a_rebalance_too(coordinator, consumer_group):
    _, stable = consumer_group(coordinator, "orders")
    path = f"{REBALANCE_REQUESTS}/orders"
    coordinator.call(coordinator.node.store.create(path, b"not json"))
    doc = next_triggered(coordinator, "orders", stable["generation"])
    assert doc["rebalance"]["detail"] == "an operator asked for a rebalance"
    wait_until(lambda: coordinator.call(coordinator.node.store.get(path)) is None, 10, message="request deleted")


@pytest.mark.zookeeper
def test_a_request_left_while_no_coordinator_ran_is_served_at_start(zk_connect, tmp_path):
    from tests.support.coordinator import InProcessCoordinator, node_config

    hosts, _, chroot = zk_connect.partition("/")
    request = f"/{chroot}{REBALANCE_REQUESTS}/nobody"
    client = zk_client(hosts)  # this test's chroot does not exist yet
    try:
        client.create(request, b"{}", makepath=True)
        node = InProcessCoordinator(node_config(zk=zk_connect, data_dir=tmp_path / "data")).start()
        try:
            wait_until(lambda: client.exists(request) is None, 10,
                       message="the left-over request (for an unknown group) is deleted")
        finally:
            node.stop()
    finally:
        client.stop()
        client.close()
