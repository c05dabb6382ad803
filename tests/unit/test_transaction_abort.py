"""What `groupctl transactions abort` decides before and after it talks to the cluster: which
usages name a transaction (kafka-transactions.sh abort's two forms), which producer a start
offset names and with which coordinator epoch, and what each answer to the abort marker means to
the operator (a one-line failure of the right kind, naming Kafka's error)."""

from __future__ import annotations

import pytest

from groupctl.client.transaction_apis import ActiveProducer
from groupctl.errors import BadInput, NotAuthorized, NotFound, OpsError, Refused, Unreachable
from groupctl.ops.transactions import (Abort, AbortSpec, check_abort_request, list_transactions, marker_failure,
                                       spec_at_start_offset)


def producer(producer_id: int, start: int, coordinator_epoch: int = 4, epoch: int = 2) -> ActiveProducer:
    return ActiveProducer(producer_id, epoch, last_sequence=0, last_timestamp=1_000,
                          coordinator_epoch=coordinator_epoch, current_txn_start_offset=start)


SPEC = AbortSpec("orders", 3, producer_id=42, producer_epoch=2, coordinator_epoch=4, start_offset=17)


@pytest.mark.parametrize("start_offset, ids", [(17, (None, None, None)), (None, (42, 2, 4)), (None, (42, 2, -1))])
def test_a_start_offset_or_all_three_ids_name_a_transaction(start_offset, ids):
    check_abort_request(3, start_offset, *ids)


@pytest.mark.parametrize("start_offset, ids, says", [
    (None, (None, None, None), "--start-offset, or --producer-id"),
    (17, (42, None, None), "not both (--producer-id given)"),
    (None, (42, 2, None), "missing --coordinator-epoch"),
    (None, (None, 2, 4), "missing --producer-id"),
    (-1, (None, None, None), "--start-offset must be 0 to"),
    (2 ** 63, (None, None, None), "--start-offset must be 0 to 9223372036854775807"),
    (None, (-5, 2, 4), "--producer-id must be 0 to"),
    (None, (10 ** 20, 2, 4), "--producer-id must be 0 to 9223372036854775807"),
    (None, (42, 2, 2 ** 31), "--coordinator-epoch must be -1 to 2147483647"),
    (None, (42, 40_000, 4), "--producer-epoch must be 0 to 32767"),
    (None, (42, 2, -2), "--coordinator-epoch must be -1"),
])
def test_other_usages_are_bad_input(start_offset, ids, says):
    with pytest.raises(BadInput) as raised:
        check_abort_request(3, start_offset, *ids)
    assert says in raised.value.message


@pytest.mark.parametrize("partition", [-1, 2 ** 31])
def test_a_partition_outside_kafkas_int32_is_bad_input(partition):
    with pytest.raises(BadInput, match="--partition must be 0 to 2147483647"):
        check_abort_request(partition, 0, None, None, None)


@pytest.mark.parametrize("filters, says", [
    ({"producer_ids": [10 ** 20]}, "--producer-id must be 0 to 9223372036854775807"),
    ({"duration_ms": 10 ** 20}, "--duration-filter must be 0 to 9223372036854775807"),
    ({"duration_ms": -1}, "--duration-filter must be 0 to"),
])
def test_list_filters_that_cannot_be_encoded_are_bad_input_before_any_contact(filters, says):
    with pytest.raises(BadInput, match=says):
        list_transactions("127.0.0.1:1", **filters)


def test_the_start_offset_names_the_producer_whose_open_transaction_starts_there():
    producers = [producer(7, start=-1), producer(42, start=17), producer(9, start=30)]
    assert spec_at_start_offset("orders", 3, producers, 17) == SPEC


def test_a_producer_that_never_had_a_marker_is_aborted_with_coordinator_epoch_0():
    spec = spec_at_start_offset("orders", 3, [producer(42, start=17, coordinator_epoch=-1)], 17)
    assert spec.coordinator_epoch == 0


def test_no_transaction_starting_at_the_offset_is_not_found_naming_those_open():
    with pytest.raises(NotFound) as raised:
        spec_at_start_offset("orders", 3, [producer(9, start=30), producer(42, start=17), producer(7, start=-1)], 18)
    assert raised.value.message == ("no open transaction starts at offset 18 on orders-3 "
                                    "(those open there start at 17, 30)")
    with pytest.raises(NotFound, match="none is open there"):
        spec_at_start_offset("orders", 3, [producer(7, start=-1)], 18)


@pytest.mark.parametrize("code, kind, says", [
    (31, NotAuthorized, "CLUSTER_AUTHORIZATION_FAILED (WriteTxnMarkers needs ClusterAction on the Cluster)"),
    (47, Refused, "INVALID_PRODUCER_EPOCH"),
    (52, Refused, "TRANSACTION_COORDINATOR_FENCED"),
    (3, NotFound, "UNKNOWN_TOPIC_OR_PARTITION"),
    (6, Unreachable, "no leader took the marker in time"),
    (56, OpsError, "KAFKA_STORAGE_ERROR"),
])
def test_each_refusal_of_the_marker_is_one_line_of_its_kind(code, kind, says):
    failure = marker_failure(code, SPEC)
    assert type(failure) is kind and failure.exit_status == 1
    assert failure.message.startswith("cannot abort the transaction of producer 42 (epoch 2, coordinator epoch 4) "
                                      "on orders-3, open since offset 17: ")
    assert says in failure.message


def test_the_json_says_what_was_aborted_or_would_be():
    assert Abort(SPEC, aborted=False).to_json() == {
        "topic": "orders", "partition": 3, "producer_id": 42, "producer_epoch": 2, "coordinator_epoch": 4,
        "start_offset": 17, "aborted": False}
