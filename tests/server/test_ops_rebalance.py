"""`groupctl.ops.rebalance` against a running coordinator with a real consumer: a trigger is
observed by a watch, over `--bootstrap` (extension APIs 32000/32001, both store modes) and over
`--zk` alone (the request znode and the group document's DataWatch)."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic
from kazoo.client import KazooClient

from groupctl.ops import rebalance
from groupctl.errors import NotFound, Refused, Timeout, Unreachable
from groupctl.layout.paths import REBALANCE_REQUESTS
from groupctl.ops.zk import zk_show
from groupctl.store.zookeeper import split_connect
from tests.support.consumers import ConsumerProcess
from tests.support.polling import wait_until

WAIT_S = 60.0
TRIGGERS = 20  # at most this many triggers (one a second) while waiting for a watch to see one


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(name, partitions, 1)])
    finally:
        admin.close()


@pytest.fixture
def consumer_of(request):
    """Start a kafka-python consumer in `group` and wait until it owns partitions."""
    started: list[ConsumerProcess] = []

    def start(bootstrap: str, group: str, client_id: str = "app-1") -> ConsumerProcess:
        create_topic(bootstrap, "payments", 2)
        consumer = ConsumerProcess("kafka-python", bootstrap, group, "payments", client_id=client_id,
                                   session_timeout_ms=6000)
        started.append(consumer)
        wait_until(lambda: consumer.snapshot()[0], WAIT_S, message="the consumer's first assignment")
        return consumer

    yield start
    for consumer in started:
        consumer.stop()


def watch_while_triggering(group: str, *, watch_source: dict, trigger_source: dict, reason: str) -> list:
    """Watch for one rebalance in a thread while triggering rebalances until it sees one
    (whenever the watch took its baseline, a later trigger is a new generation)."""
    seen: list = []
    failure: list[BaseException] = []

    def watch() -> None:
        try:
            seen.extend(rebalance.watch(group, count=1, timeout_s=WAIT_S, **watch_source))
        except BaseException as exc:  # handed to the test thread
            failure.append(exc)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    for _ in range(TRIGGERS):
        rebalance.trigger(group, reason=reason, **trigger_source)
        watcher.join(1.0)
        if not watcher.is_alive():
            break
    watcher.join(WAIT_S)
    if failure:
        raise failure[0]
    return seen


def check_triggered_event(event, reason: str) -> None:
    assert event.group == "orders"
    assert event.previous_generation is not None and event.generation > event.previous_generation
    assert event.members == 1
    assert (event.reason, event.detail) == ("trigger", reason)
    assert event.duration_ms is not None and event.duration_ms >= 0


def test_a_trigger_over_bootstrap_is_seen_by_a_watch_over_bootstrap(coordinator, consumer_of):
    consumer_of(coordinator.bootstrap, "orders")

    events = watch_while_triggering("orders", watch_source={"bootstrap": coordinator.bootstrap},
                                    trigger_source={"bootstrap": coordinator.bootstrap}, reason="bootstrap test")

    assert len(events) == 1
    check_triggered_event(events[0], "bootstrap test")


@pytest.mark.zookeeper
def test_with_a_zookeeper_store_bootstrap_and_zk_watches_see_the_same_rebalances(zk_coordinator, zk_connect,
                                                                                  consumer_of):
    consumer_of(zk_coordinator.bootstrap, "orders")

    events = watch_while_triggering("orders", watch_source={"zk": zk_connect},
                                    trigger_source={"bootstrap": zk_coordinator.bootstrap}, reason="via kafka")

    check_triggered_event(events[0], "via kafka")


@pytest.mark.zookeeper
def test_a_trigger_through_zookeeper_alone_makes_the_coordinator_rebalance(zookeeper, zk_coordinator, zk_connect,
                                                                           consumer_of):
    consumer_of(zk_coordinator.bootstrap, "orders")

    events = watch_while_triggering("orders", watch_source={"zk": zk_connect},
                                    trigger_source={"zk": zk_connect}, reason="via zookeeper")

    check_triggered_event(events[0], "via zookeeper")
    hosts, chroot = split_connect(zk_connect)
    client = KazooClient(hosts=hosts)
    client.start(timeout=10)
    try:
        wait_until(lambda: client.exists(f"{chroot}{REBALANCE_REQUESTS}/orders") is None, 20,
                   message="the coordinator to delete the request it acted on")
    finally:
        client.stop()
        client.close()


def test_a_watch_over_bootstrap_times_out_when_nothing_rebalances(coordinator, consumer_of):
    consumer_of(coordinator.bootstrap, "orders")
    started = time.monotonic()

    with pytest.raises(Timeout, match="0 of 1 rebalances") as raised:
        list(rebalance.watch("orders", bootstrap=coordinator.bootstrap, count=1, timeout_s=1.5))

    assert raised.value.exit_status == 1
    assert 1.5 <= time.monotonic() - started < 6.0


def test_a_watch_over_a_bootstrap_that_never_answers_ends_at_its_timeout():
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        address = "127.0.0.1:%d" % silent.getsockname()[1]
        started = time.monotonic()

        with pytest.raises(Unreachable, match=rf"cannot reach bootstrap {address} within 1.5s: timed out"):
            list(rebalance.watch("orders", bootstrap=address, count=1, timeout_s=1.5))

        assert 1.5 <= time.monotonic() - started < 3.5


def test_triggering_an_unknown_group_over_bootstrap_is_not_found(coordinator):
    with pytest.raises(NotFound, match="group 'ghost' does not exist"):
        rebalance.trigger("ghost", bootstrap=coordinator.bootstrap)


def test_a_second_trigger_while_the_first_is_in_progress_says_so(coordinator, consumer_of):
    consumer = consumer_of(coordinator.bootstrap, "orders")

    os.kill(consumer.proc.pid, signal.SIGSTOP)  # no heartbeat, so no rejoin that could end the first rebalance
    try:
        first = rebalance.trigger("orders", bootstrap=coordinator.bootstrap)
        second = rebalance.trigger("orders", bootstrap=coordinator.bootstrap)
    finally:
        os.kill(consumer.proc.pid, signal.SIGCONT)

    assert first.message is None
    assert "already rebalancing" in second.message
    assert second.to_json()["source"] == "bootstrap"


def test_triggering_a_group_whose_members_left_is_refused(coordinator, consumer_of):
    consumer_of(coordinator.bootstrap, "orders").stop()  # leaves the group: Empty

    with pytest.raises(Refused, match="'orders' is Empty: it has no members to rebalance") as raised:
        rebalance.trigger("orders", bootstrap=coordinator.bootstrap)
    assert raised.value.exit_status == 1


@pytest.mark.zookeeper
def test_the_baseline_over_bootstrap_is_the_document_stored_in_zookeeper(zk_coordinator, zk_connect, consumer_of):
    consumer_of(zk_coordinator.bootstrap, "orders")
    stored = wait_until(lambda: _stable(zk_connect), WAIT_S, message="a Stable document")

    documents = rebalance.coordinator_documents(zk_coordinator.bootstrap, "orders",
                                                deadline=time.monotonic() + WAIT_S)
    try:
        assert next(documents).stored == stored
    finally:
        documents.close()


def _stable(zk_connect):
    try:
        shown = zk_show(zk_connect, "orders", timeout_s=5)
    except NotFound:
        return None
    return shown.document if shown.document["state"] == "Stable" else None

