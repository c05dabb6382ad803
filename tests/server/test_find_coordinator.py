"""FindCoordinator over the wire, v0-v6: this node answers for every group, at its advertised
address; empty group ids and non-group key types get the errors Kafka gives."""

from __future__ import annotations

import socket

import pytest
from kafka.protocol.metadata import FindCoordinatorRequest

from groupctl.coordinator.errors import ErrorCode
from tests.support.coordinator import InProcessCoordinator, node_config
from tests.support.wire import exchange

GROUP, TRANSACTION, SHARE = 0, 1, 2


def find(coordinator, version: int, key: str = "orders", key_type: int = GROUP):
    """A v0-3 request for one key."""
    fields = {"key": key} if version == 0 else {"key": key, "key_type": key_type}
    return exchange(coordinator, FindCoordinatorRequest[version](**fields), version)


def find_batch(coordinator, version: int, keys: list[str], key_type: int = GROUP):
    """A v4+ request for several keys; the entries of the answer, in order."""
    request = FindCoordinatorRequest[version](key_type=key_type, coordinator_keys=keys)
    return exchange(coordinator, request, version).coordinators


class Bound:
    """Where a test connects to a node whose advertised address is elsewhere."""

    def __init__(self, port: int) -> None:
        self.port = port


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def advertised_coordinator():
    """A node bound to a free port on 127.0.0.1 that tells clients to reach it at
    coordinator.example:19092 (the node's own `port` property reports the advertised port, so
    the test keeps the bound one)."""
    port = free_port()
    node = InProcessCoordinator(node_config(port=port, node_id=3, advertised_host="coordinator.example",
                                            advertised_port=19092)).start()
    yield Bound(port)
    node.stop()


@pytest.mark.parametrize("version", range(0, 4))
def test_a_group_is_coordinated_by_this_node_at_its_bound_address(coordinator, version):
    response = find(coordinator, version)
    assert (response.error_code, response.node_id, response.host, response.port) == (
        0, 0, "127.0.0.1", coordinator.port)
    if version >= 1:
        assert response.error_message is None


@pytest.mark.parametrize("version", range(0, 4))
def test_the_answer_is_the_advertised_host_and_port(advertised_coordinator, version):
    response = find(advertised_coordinator, version)
    assert (response.error_code, response.node_id, response.host, response.port) == (
        0, 3, "coordinator.example", 19092)


@pytest.mark.parametrize("version", range(4, 7))
def test_batched_keys_get_one_entry_each_at_the_advertised_address(advertised_coordinator, version):
    entries = find_batch(advertised_coordinator, version, ["orders", "payments", "audit"])
    assert [(e.key, e.error_code, e.node_id, e.host, e.port) for e in entries] == [
        (key, 0, 3, "coordinator.example", 19092) for key in ("orders", "payments", "audit")]


@pytest.mark.parametrize("version", range(0, 4))
def test_an_empty_group_id_is_an_invalid_group_id(coordinator, version):
    response = find(coordinator, version, key="")
    assert (response.error_code, response.node_id, response.port) == (ErrorCode.INVALID_GROUP_ID, -1, -1)
    if version >= 1:
        assert response.error_message


@pytest.mark.parametrize("version", range(4, 7))
def test_an_empty_key_in_a_batch_fails_only_its_own_entry(coordinator, version):
    entries = find_batch(coordinator, version, ["orders", "", "payments"])
    assert [(e.key, e.error_code) for e in entries] == [
        ("orders", 0), ("", ErrorCode.INVALID_GROUP_ID), ("payments", 0)]
    assert (entries[1].node_id, entries[1].port) == (-1, -1)
    assert entries[1].error_message and entries[0].error_message is None


@pytest.mark.parametrize("version", range(1, 7))
def test_a_transactional_id_is_coordinated_by_the_leader_of_its_partition(coordinator, version):
    if version >= 4:
        (response,) = find_batch(coordinator, version, ["txn-1"], key_type=TRANSACTION)
    else:
        response = find(coordinator, version, key="txn-1", key_type=TRANSACTION)
    assert (response.error_code, response.node_id) == (ErrorCode.NONE, coordinator.node.config.node_id)


@pytest.mark.parametrize("version", range(4, 7))
def test_share_group_keys_are_not_available_for_every_batched_key(coordinator, version):
    entries = find_batch(coordinator, version, ["a", "b"], key_type=SHARE)
    assert [(e.key, e.error_code, e.node_id) for e in entries] == [
        ("a", ErrorCode.COORDINATOR_NOT_AVAILABLE, -1), ("b", ErrorCode.COORDINATOR_NOT_AVAILABLE, -1)]
