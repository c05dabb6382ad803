"""AddPartitionsToTxn v4-5, the form Kafka's brokers send each other (KIP-890), on a running node:
a batch of transactions, each verified (VerifyOnly: which partitions are in the producer's open
transaction, nothing changes) or added; ClusterAction on the Cluster is required."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from kafka.protocol.producer import AddPartitionsToTxnRequest

from groupctl.coordinator.errors import ErrorCode
from tests.server.test_transaction_handlers import TOPIC, add_partitions, init, stored
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.wire import exchange


@pytest.fixture
def node(coordinator):
    coordinator.call(coordinator.node.topics.get_or_create(TOPIC, 2))
    return coordinator


def between_nodes(node, *transactions, version: int = 4):
    """`transactions`: (transactional id, producer, verify_only, partitions). Returns the
    top-level error and, per transactional id, each partition's error."""
    entry = AddPartitionsToTxnRequest.AddPartitionsToTxnTransaction
    request = AddPartitionsToTxnRequest(version=version, transactions=[entry(
        transactional_id=transactional_id, producer_id=producer.producer_id, producer_epoch=producer.producer_epoch,
        verify_only=verify_only, topics=[entry.AddPartitionsToTxnTopic(name=TOPIC, partitions=list(partitions))])
        for transactional_id, producer, verify_only, partitions in transactions])
    response = exchange(node, request, version)
    return response.error_code, {
        result.transactional_id: {(t.name, p.partition_index): p.partition_error_code
                                  for t in result.topic_results for p in t.results_by_partition}
        for result in response.results_by_transaction}


@pytest.mark.parametrize("version", [4, 5])
def test_verify_only_tells_which_partitions_are_in_each_producers_transaction_and_changes_nothing(node, version):
    first, second = init(node, "verify-a"), init(node, "verify-b")
    add_partitions(node, "verify-a", first, [(TOPIC, 0)])
    error, results = between_nodes(node, ("verify-a", first, True, [0, 1]), ("verify-b", second, True, [0]),
                                   version=version)
    assert error == ErrorCode.NONE
    assert results == {"verify-a": {(TOPIC, 0): ErrorCode.NONE, (TOPIC, 1): ErrorCode.TRANSACTION_ABORTABLE},
                       "verify-b": {(TOPIC, 0): ErrorCode.TRANSACTION_ABORTABLE}}
    assert stored(node, "verify-a")["partitions"] == {TOPIC: [0]}
    assert stored(node, "verify-b")["state"] == "Empty"


def test_a_broker_may_add_partitions_too_and_a_fenced_producer_is_told_so(node):
    producer = init(node, "added-by-broker")
    assert between_nodes(node, ("added-by-broker", producer, False, [1]))[1] == {
        "added-by-broker": {(TOPIC, 1): ErrorCode.NONE}}
    assert stored(node, "added-by-broker")["partitions"] == {TOPIC: [1]}
    stale = SimpleNamespace(producer_id=producer.producer_id, producer_epoch=producer.producer_epoch - 1)
    assert between_nodes(node, ("added-by-broker", stale, True, [1]))[1] == {
        "added-by-broker": {(TOPIC, 1): ErrorCode.PRODUCER_FENCED}}


@pytest.mark.parametrize("super_user, expected", [
    ((), ErrorCode.CLUSTER_AUTHORIZATION_FAILED), (("User:ANONYMOUS",), ErrorCode.NONE)])
def test_only_a_principal_with_cluster_action_may_send_the_brokers_form(super_user, expected):
    node = InProcessCoordinator(node_config(authorizer=True, super_users=super_user, topics=((TOPIC, 2),))).start()
    try:
        producer = SimpleNamespace(producer_id=1, producer_epoch=0)
        error, _ = between_nodes(node, ("anyone", producer, True, [0]))
        assert error == expected
    finally:
        node.stop()
