"""The transaction coordinator core as Kafka's: InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn,
EndTxn, fencing, timeouts, epoch exhaustion, durable records and their replay."""

import pytest

from groupctl.coordinator.errors import ErrorCode
from groupctl.coordinator.transactions import TransactionCoordinator, TxnReply, TxnState
from groupctl.coordinator.transactions.records import MAX_PRODUCER_EPOCH, TransactionRecord
from groupctl.layout.transactions import TransactionDocument
from tests.unit.transaction_harness import FIRST_PRODUCER_ID, OFFSETS_TOPIC, TxnHarness, offsets_partition_for

OUT0 = ("out", 0)
OUT1 = ("out", 1)


@pytest.fixture
def h():
    return TxnHarness()


def record(state=TxnState.EMPTY, producer_id=7, epoch=0, partitions=(), start_ms=-1, tid="tx", previous=-1,
           last_epoch=-1, timeout_ms=60_000):
    return TransactionRecord(tid, producer_id, previous, epoch, last_epoch, timeout_ms, state, frozenset(partitions),
                             start_ms, 0)


def loaded(*records):
    h = TxnHarness()
    h.core.load(records)
    return h


def open_transaction(h, *partitions, tid="tx"):
    producer = h.init(tid)
    assert h.add(producer, *(partitions or [OUT0]), tid=tid).error == ErrorCode.NONE
    return producer


# -- InitProducerId ---------------------------------------------------------------------------------

def test_a_new_transactional_id_gets_a_fresh_producer_id_at_epoch_0_and_a_record(h):
    outcome = h.core.init_producer_id("tx", 60_000, h.now)
    assert outcome.reply == TxnReply(ErrorCode.NONE, FIRST_PRODUCER_ID, 0)
    assert outcome.record.state is TxnState.EMPTY
    assert (outcome.record.producer_id, outcome.record.producer_epoch) == (FIRST_PRODUCER_ID, 0)
    assert h.core.describe("tx").error == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND  # not durable yet
    h.apply(outcome)
    assert h.core.describe("tx").view.producer_epoch == 0


def test_requests_for_an_id_whose_record_is_being_written_answer_concurrent_transactions(h):
    pending = h.core.init_producer_id("tx", 60_000, h.now)
    assert h.core.init_producer_id("tx", 60_000, h.now).reply.error == ErrorCode.CONCURRENT_TRANSACTIONS
    h.apply(pending)
    producer = pending.reply
    adding = h.core.add_partitions("tx", producer.producer_id, 0, [OUT0], h.now)
    for outcome in (h.core.add_partitions("tx", producer.producer_id, 0, [OUT1], h.now),
                    h.core.end_txn("tx", producer.producer_id, 0, True, h.now),
                    h.core.init_producer_id("tx", 60_000, h.now)):
        assert outcome.reply.error == ErrorCode.CONCURRENT_TRANSACTIONS and outcome.record is None
    h.apply(adding)
    assert h.state() == "Ongoing"


def test_an_idempotent_producer_without_transactional_id_gets_a_new_producer_id_and_nothing_is_stored(h):
    assert h.init(None) == TxnReply(ErrorCode.NONE, FIRST_PRODUCER_ID, 0)
    assert h.init(None) == TxnReply(ErrorCode.NONE, FIRST_PRODUCER_ID + 1, 0)
    assert h.persisted == []


def test_an_empty_transactional_id_is_an_invalid_request(h):
    assert h.init("").error == ErrorCode.INVALID_REQUEST
    nobody = TxnReply(ErrorCode.NONE, 1, 0)
    assert h.add(nobody, tid="").error == ErrorCode.INVALID_REQUEST
    assert h.end(nobody, True, tid="").error == ErrorCode.INVALID_REQUEST
    assert h.core.describe("").error == ErrorCode.INVALID_REQUEST
    assert h.core.verify_partitions("", 1, 0, [OUT0]) == {OUT0: ErrorCode.INVALID_REQUEST}


@pytest.mark.parametrize("timeout_ms", [0, -1, 900_001])
def test_a_timeout_not_positive_or_above_the_maximum_is_invalid_transaction_timeout(h, timeout_ms):
    assert h.init("tx", timeout_ms).error == ErrorCode.INVALID_TRANSACTION_TIMEOUT
    assert h.persisted == []


def test_the_maximum_timeout_itself_is_accepted(h):
    assert h.init("tx", 900_000).error == ErrorCode.NONE
    assert h.last().timeout_ms == 900_000


def test_no_producer_id_available_is_a_retriable_coordinator_load_in_progress(h):
    h.ids_available = False
    assert h.init("tx").error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    assert h.init(None).error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    h.ids_available = True
    assert h.init("tx") == TxnReply(ErrorCode.NONE, FIRST_PRODUCER_ID, 0)


def test_a_second_producer_bumps_the_epoch_and_the_first_is_fenced(h):
    first = h.init()
    second = h.init(timeout_ms=30_000)
    assert second == TxnReply(ErrorCode.NONE, first.producer_id, 1)
    assert h.last().timeout_ms == 30_000
    assert h.add(first).error == ErrorCode.PRODUCER_FENCED
    assert h.end(first, True).error == ErrorCode.PRODUCER_FENCED
    assert h.add(second).error == ErrorCode.NONE


def test_a_new_producer_aborts_the_open_transaction_under_a_bumped_epoch_and_is_asked_to_retry(h):
    zombie = open_transaction(h, OUT0, OUT1)
    assert h.init() == TxnReply(ErrorCode.CONCURRENT_TRANSACTIONS)
    abort = h.last()
    assert (abort.state, abort.producer_epoch, abort.partitions) == (TxnState.PREPARE_ABORT, 1, {OUT0, OUT1})
    assert [(m.commit, m.producer_epoch, m.partitions) for m in h.markers] == [(False, 1, {OUT0, OUT1})]
    assert h.init() == TxnReply(ErrorCode.CONCURRENT_TRANSACTIONS)  # markers still being written
    h.write_markers()
    assert h.state() == "CompleteAbort"
    assert h.init() == TxnReply(ErrorCode.NONE, zombie.producer_id, 2)
    assert h.end(zombie, True).error == ErrorCode.PRODUCER_FENCED


def test_a_retried_init_while_markers_are_written_answers_concurrent_transactions(h):
    producer = open_transaction(h)
    h.end(producer, True)
    assert h.core.init_producer_id("tx", 60_000, h.now).reply.error == ErrorCode.CONCURRENT_TRANSACTIONS
    h.write_markers()
    assert h.init().producer_epoch == 1


# -- KIP-360: a producer recovering with its producer id and epoch ----------------------------------

def test_a_producer_presenting_its_current_epoch_gets_the_next_one_and_may_retry(h):
    producer = h.init()
    expected = (producer.producer_id, producer.producer_epoch)
    assert h.init(expected=expected) == TxnReply(ErrorCode.NONE, producer.producer_id, 1)
    assert h.last().last_producer_epoch == 0
    assert h.init(expected=expected) == TxnReply(ErrorCode.NONE, producer.producer_id, 1)  # the lost answer


def test_a_producer_presenting_a_stale_epoch_or_another_producer_id_is_fenced(h):
    producer = h.init()
    h.init()
    h.init()
    assert h.init(expected=(producer.producer_id, 0)).error == ErrorCode.PRODUCER_FENCED
    assert h.init(expected=(producer.producer_id + 5, 2)).error == ErrorCode.PRODUCER_FENCED


def test_a_new_producer_without_expected_epoch_clears_the_retry_epoch(h):
    producer = h.init()
    h.init(expected=(producer.producer_id, 0))
    h.init()
    assert h.last().last_producer_epoch == -1
    assert h.init(expected=(producer.producer_id, 0)).error == ErrorCode.PRODUCER_FENCED


def test_an_id_created_by_the_recovering_request_itself_accepts_any_expected_producer(h):
    assert h.init(expected=(42, 3)) == TxnReply(ErrorCode.NONE, FIRST_PRODUCER_ID, 0)


# -- Epoch exhaustion -------------------------------------------------------------------------------

def test_an_exhausted_epoch_takes_a_new_producer_id_at_epoch_0():
    h = loaded(record(producer_id=7, epoch=MAX_PRODUCER_EPOCH - 1))
    assert h.init() == TxnReply(ErrorCode.NONE, FIRST_PRODUCER_ID, 0)
    assert (h.last().previous_producer_id, h.last().last_producer_epoch) == (7, -1)


def test_the_epoch_below_exhaustion_is_still_bumped_normally():
    h = loaded(record(producer_id=7, epoch=MAX_PRODUCER_EPOCH - 2))
    assert h.init() == TxnReply(ErrorCode.NONE, 7, MAX_PRODUCER_EPOCH - 1)


def test_a_retry_across_a_producer_id_rotation_gets_the_new_producer_id_again():
    exhausted = MAX_PRODUCER_EPOCH - 1
    h = loaded(record(producer_id=7, epoch=exhausted))
    assert h.init(expected=(7, exhausted)) == TxnReply(ErrorCode.NONE, FIRST_PRODUCER_ID, 0)
    assert h.last().last_producer_epoch == exhausted
    assert h.init(expected=(7, exhausted)) == TxnReply(ErrorCode.NONE, FIRST_PRODUCER_ID, 0)


def test_fencing_at_the_last_usable_epoch_aborts_under_32767_and_the_retry_rotates():
    h = loaded(record(TxnState.ONGOING, producer_id=7, epoch=MAX_PRODUCER_EPOCH - 1, partitions=[OUT0], start_ms=0))
    assert h.init().error == ErrorCode.CONCURRENT_TRANSACTIONS
    assert h.markers[0].producer_epoch == MAX_PRODUCER_EPOCH
    h.write_markers()
    assert h.init(expected=(7, MAX_PRODUCER_EPOCH - 1)).error == ErrorCode.PRODUCER_FENCED
    assert h.init() == TxnReply(ErrorCode.NONE, FIRST_PRODUCER_ID, 0)


# -- AddPartitionsToTxn, AddOffsetsToTxn ------------------------------------------------------------

def test_adding_partitions_opens_the_transaction_at_that_time(h):
    producer = h.init()
    h.advance(500)
    assert h.add(producer, OUT0).error == ErrorCode.NONE
    assert (h.last().state, h.last().partitions, h.last().start_ms) == (TxnState.ONGOING, {OUT0}, 500)


def test_adding_more_partitions_keeps_the_start_and_grows_the_set(h):
    producer = open_transaction(h, OUT0)
    h.advance(100)
    h.add(producer, OUT1)
    assert (h.last().partitions, h.last().start_ms, h.last().last_update_ms) == ({OUT0, OUT1}, 0, 100)


def test_adding_partitions_already_in_the_transaction_answers_at_once_without_a_record(h):
    producer = open_transaction(h, OUT0, OUT1)
    outcome = h.core.add_partitions("tx", producer.producer_id, producer.producer_epoch, [OUT1], h.now)
    assert outcome.reply == TxnReply(ErrorCode.NONE) and outcome.record is None


def test_adding_partitions_for_an_unknown_id_or_another_producer_id_is_invalid_producer_id_mapping(h):
    producer = h.init()
    assert h.add(producer, tid="unknown").error == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    other = TxnReply(ErrorCode.NONE, producer.producer_id + 1, producer.producer_epoch)
    assert h.add(other).error == ErrorCode.INVALID_PRODUCER_ID_MAPPING


def test_adding_partitions_with_another_epoch_is_producer_fenced(h):
    producer = h.init()
    future = TxnReply(ErrorCode.NONE, producer.producer_id, producer.producer_epoch + 1)
    assert h.add(future).error == ErrorCode.PRODUCER_FENCED


def test_adding_partitions_while_the_transaction_completes_is_concurrent_transactions(h):
    producer = open_transaction(h)
    h.end(producer, True)
    assert h.add(producer, OUT1).error == ErrorCode.CONCURRENT_TRANSACTIONS
    h.write_markers()
    assert h.add(producer, OUT1).error == ErrorCode.NONE
    assert (h.last().partitions, h.last().start_ms) == ({OUT1}, h.now)


def test_add_offsets_adds_the_partition_holding_the_groups_offsets(h):
    producer = h.init()
    assert h.add_offsets(producer, "group-a").error == ErrorCode.NONE
    assert h.last().partitions == {offsets_partition_for("group-a")}
    assert h.add_offsets(producer, "g").error == ErrorCode.NONE
    assert {p for p in h.last().partitions if p[0] == OFFSETS_TOPIC} == {offsets_partition_for("group-a"),
                                                                         offsets_partition_for("g")}


def test_verify_only_reports_which_partitions_are_in_the_transaction_and_changes_nothing(h):
    producer = open_transaction(h, OUT0)
    before = list(h.persisted)
    verdict = h.core.verify_partitions("tx", producer.producer_id, producer.producer_epoch, [OUT0, OUT1])
    assert verdict == {OUT0: ErrorCode.NONE, OUT1: ErrorCode.TRANSACTION_ABORTABLE}
    assert h.core.verify_partitions("tx", producer.producer_id, 9, [OUT0]) == {OUT0: ErrorCode.PRODUCER_FENCED}
    assert h.core.verify_partitions("nope", 1, 0, [OUT0]) == {OUT0: ErrorCode.INVALID_PRODUCER_ID_MAPPING}
    assert h.persisted == before


# -- EndTxn -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("commit", [True, False], ids=["commit", "abort"])
def test_ending_writes_prepare_then_markers_for_every_partition_then_complete(h, commit):
    producer = open_transaction(h, OUT0, OUT1)
    h.add_offsets(producer, "g")
    partitions = {OUT0, OUT1, offsets_partition_for("g")}
    h.advance(10)
    assert h.end(producer, commit) == TxnReply(ErrorCode.NONE, producer.producer_id, producer.producer_epoch)
    assert h.last().state is (TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT)
    assert h.last().partitions == partitions
    (marker,) = h.markers
    assert (marker.transactional_id, marker.producer_id, marker.producer_epoch, marker.commit, marker.partitions) == (
        "tx", producer.producer_id, producer.producer_epoch, commit, partitions)
    h.advance(10)
    h.write_markers()
    done = h.last()
    assert done.state is (TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT)
    assert (done.partitions, done.producer_epoch, done.last_update_ms) == (frozenset(), producer.producer_epoch, 20)


def test_a_producer_runs_one_transaction_after_another_under_the_same_epoch(h):
    producer = open_transaction(h)
    h.end(producer, True)
    h.write_markers()
    assert h.add(producer, OUT1).error == ErrorCode.NONE
    assert h.end(producer, False).error == ErrorCode.NONE
    h.write_markers()
    assert h.state() == "CompleteAbort"


def _in_state(state):
    """A harness whose id "tx" is in `state`, its producer, and whether markers are in flight."""
    h = TxnHarness()
    if state in ("PrepareCommit", "PrepareAbort"):
        h.core.load([record(TxnState(state), partitions=[OUT0], start_ms=0)])
        return h, TxnReply(ErrorCode.NONE, 7, 0)
    producer = h.init()
    if state != "Empty":
        h.add(producer)
    if state in ("CompleteCommit", "CompleteAbort"):
        h.end(producer, state == "CompleteCommit")
        h.write_markers()
    return h, producer


@pytest.mark.parametrize("state, commit, error", [
    ("Empty", True, ErrorCode.INVALID_TXN_STATE),
    ("Empty", False, ErrorCode.INVALID_TXN_STATE),
    ("Ongoing", True, ErrorCode.NONE),
    ("Ongoing", False, ErrorCode.NONE),
    ("PrepareCommit", True, ErrorCode.CONCURRENT_TRANSACTIONS),
    ("PrepareCommit", False, ErrorCode.INVALID_TXN_STATE),
    ("PrepareAbort", False, ErrorCode.CONCURRENT_TRANSACTIONS),
    ("PrepareAbort", True, ErrorCode.INVALID_TXN_STATE),
    ("CompleteCommit", True, ErrorCode.NONE),
    ("CompleteCommit", False, ErrorCode.INVALID_TXN_STATE),
    ("CompleteAbort", False, ErrorCode.NONE),
    ("CompleteAbort", True, ErrorCode.INVALID_TXN_STATE),
])
def test_end_txn_answers_as_kafkas_state_table(state, commit, error):
    h, producer = _in_state(state)
    before = list(h.persisted)
    outcome = h.core.end_txn("tx", producer.producer_id, producer.producer_epoch, commit, h.now)
    assert outcome.reply.error == error
    if state == "Ongoing":
        assert outcome.record.state is (TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT)
    else:
        assert outcome.record is None and h.persisted == before


def test_a_retried_end_txn_after_completion_answers_none_with_the_producer(h):
    producer = open_transaction(h)
    h.end(producer, True)
    h.write_markers()
    assert h.end(producer, True) == TxnReply(ErrorCode.NONE, producer.producer_id, producer.producer_epoch)


def test_end_txn_while_its_markers_are_written_is_concurrent_and_the_opposite_outcome_invalid_as_kafka(h):
    producer = open_transaction(h)
    h.end(producer, True)
    assert h.end(producer, True).error == ErrorCode.CONCURRENT_TRANSACTIONS
    assert h.end(producer, False).error == ErrorCode.INVALID_TXN_STATE


def test_end_txn_checks_the_producer_id_before_the_epoch(h):
    producer = open_transaction(h)
    assert h.end(TxnReply(ErrorCode.NONE, producer.producer_id + 1, 5), True).error == \
        ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert h.end(TxnReply(ErrorCode.NONE, producer.producer_id, 5), True).error == ErrorCode.PRODUCER_FENCED
    assert h.end(producer, True, tid="unknown").error == ErrorCode.INVALID_PRODUCER_ID_MAPPING


# -- Failed writes ----------------------------------------------------------------------------------

def test_a_failed_write_leaves_the_id_as_it_was_and_the_request_may_be_retried(h):
    producer = h.init()
    assert h.init(write_fails=True) is None
    assert h.core.describe("tx").view.producer_epoch == 0
    assert h.add(producer, write_fails=True) is None
    assert h.state() == "Empty"
    assert h.add(producer).error == ErrorCode.NONE
    assert h.end(producer, True, write_fails=True) is None
    assert h.state() == "Ongoing" and h.markers == []
    assert h.end(producer, True).error == ErrorCode.NONE


def test_a_failed_fence_write_is_retried_with_the_same_bumped_epoch(h):
    open_transaction(h)
    assert h.init(write_fails=True) is None
    assert h.state() == "Ongoing" and h.core.describe("tx").view.producer_epoch == 0
    assert h.init().error == ErrorCode.CONCURRENT_TRANSACTIONS
    assert (h.last().state, h.last().producer_epoch) == (TxnState.PREPARE_ABORT, 1)


def test_a_failed_complete_write_is_retried_once_the_markers_are_reported_again(h):
    producer = open_transaction(h)
    h.end(producer, True)
    (marker,) = h.markers
    h.apply(h.core.markers_written(marker, h.now), write_fails=True)
    assert h.state() == "PrepareCommit"
    assert h.end(producer, True).error == ErrorCode.CONCURRENT_TRANSACTIONS
    h.apply(h.core.markers_written(marker, h.now))
    assert h.state() == "CompleteCommit"


# -- Timeouts ---------------------------------------------------------------------------------------

def test_a_transaction_open_longer_than_its_timeout_is_aborted_and_its_producer_fenced(h):
    producer = h.init(timeout_ms=1_000)
    h.advance(200)
    h.add(producer, OUT0)
    assert h.core.next_timeout_ms() == 1_201
    h.advance(1_000)
    assert h.expire() == []  # start + timeout is not yet past
    h.advance(1)
    (abort,) = h.expire()
    assert (abort.state, abort.producer_epoch, abort.last_producer_epoch) == (TxnState.PREPARE_ABORT, 1, -1)
    assert [(m.commit, m.producer_epoch) for m in h.write_markers()] == [(False, 1)]
    assert h.state() == "CompleteAbort"
    assert h.end(producer, True).error == ErrorCode.PRODUCER_FENCED
    assert h.add(producer).error == ErrorCode.PRODUCER_FENCED
    assert h.init(timeout_ms=1_000) == TxnReply(ErrorCode.NONE, producer.producer_id, 2)


def test_only_open_transactions_without_a_pending_transition_time_out(h):
    h.init("idle", 1_000)
    committing = open_transaction(h, tid="committing")
    h.end(committing, True, tid="committing")
    h.init("busy", 1_000)
    busy = h.core.describe("busy").view
    pending_add = h.core.add_partitions("busy", busy.producer_id, busy.producer_epoch, [OUT0], h.now)
    h.advance(3_600_000)
    assert h.expire() == []
    assert h.core.next_timeout_ms() is None
    h.apply(pending_add)
    assert [r.transactional_id for r in h.expire()] == ["busy"]


def test_a_commit_racing_with_the_timeout_abort_is_fenced(h):
    producer = h.init(timeout_ms=1_000)
    h.add(producer)
    h.advance(2_000)
    (abort,) = h.core.expire(h.now)
    # The fence is not durable yet, but the fenced producer is told at once, as Kafka does.
    assert h.end(producer, True).error == ErrorCode.PRODUCER_FENCED
    h.apply(abort)
    assert h.end(producer, True).error == ErrorCode.PRODUCER_FENCED


# -- The transition table ---------------------------------------------------------------------------

KAFKA_TRANSITIONS = {
    ("Empty", "Empty"), ("CompleteCommit", "Empty"), ("CompleteAbort", "Empty"),
    ("Empty", "Ongoing"), ("Ongoing", "Ongoing"), ("CompleteCommit", "Ongoing"), ("CompleteAbort", "Ongoing"),
    ("Ongoing", "PrepareCommit"), ("Ongoing", "PrepareAbort"), ("PrepareEpochFence", "PrepareAbort"),
    ("PrepareCommit", "CompleteCommit"), ("PrepareAbort", "CompleteAbort"),
    ("Empty", "Dead"), ("CompleteCommit", "Dead"), ("CompleteAbort", "Dead"),
    ("Ongoing", "PrepareEpochFence"),
}


@pytest.mark.parametrize("before", list(TxnState), ids=lambda s: s.value)
@pytest.mark.parametrize("after", list(TxnState), ids=lambda s: s.value)
def test_the_state_machine_allows_exactly_kafkas_transitions(before, after):
    assert after.may_follow(before) == ((before.value, after.value) in KAFKA_TRANSITIONS)


def test_state_ids_are_those_of_kafkas_transaction_log():
    assert [(s.value, s.id) for s in TxnState] == [
        ("Empty", 0), ("Ongoing", 1), ("PrepareCommit", 2), ("PrepareAbort", 3), ("CompleteCommit", 4),
        ("CompleteAbort", 5), ("Dead", 6), ("PrepareEpochFence", 7)]


def test_preparing_a_forbidden_transition_is_a_coordinator_bug():
    from groupctl.coordinator.transactions.metadata import TransactionMetadata, TransitionError
    txn = TransactionMetadata(record(TxnState.EMPTY))
    with pytest.raises(TransitionError):
        txn.prepare(record(TxnState.PREPARE_COMMIT))
    txn.prepare(record(TxnState.ONGOING, partitions=[OUT0], start_ms=0))
    with pytest.raises(TransitionError):  # one pending transition at a time
        txn.prepare(record(TxnState.ONGOING, partitions=[OUT1], start_ms=0))


@pytest.mark.parametrize("current, bad", [
    (record(TxnState.ONGOING, partitions=[OUT0, OUT1], start_ms=0),
     record(TxnState.ONGOING, partitions=[OUT0], start_ms=0)),                       # partitions shrink
    (record(TxnState.ONGOING, partitions=[OUT0], start_ms=0),
     record(TxnState.ONGOING, epoch=1, partitions=[OUT0], start_ms=0)),              # epoch moves
    (record(TxnState.ONGOING, partitions=[OUT0], start_ms=0),
     record(TxnState.PREPARE_COMMIT, partitions=[OUT0, OUT1], start_ms=0)),          # partitions change
    (record(TxnState.EMPTY, epoch=3), record(TxnState.EMPTY, epoch=5)),              # epoch jumps
    (record(TxnState.EMPTY, epoch=3), record(TxnState.EMPTY, producer_id=8, epoch=4)),  # new id not at 0
], ids=["shrink", "epoch-moves", "prepare-other-partitions", "epoch-jumps", "new-id-not-at-0"])
def test_completing_a_transition_that_breaks_an_invariant_is_a_coordinator_bug(current, bad):
    from groupctl.coordinator.transactions.metadata import TransactionMetadata, TransitionError
    txn = TransactionMetadata(current)
    txn.prepare(bad)
    with pytest.raises(TransitionError):
        txn.complete(bad)
    assert txn.record == current


# -- Load and replay --------------------------------------------------------------------------------

def _run_history(h):
    a = open_transaction(h, OUT0, tid="a")
    h.end(a, True, tid="a")
    h.write_markers()
    b = open_transaction(h, OUT1, tid="b")
    h.add_offsets(b, "g", tid="b")
    c = h.init("c")
    h.init("c")
    h.advance(50)
    return a, b, c


def test_replaying_the_persisted_records_rebuilds_every_transaction(h):
    _run_history(h)
    restarted = TxnHarness()
    restarted.core.load(h.persisted)
    restarted.now = h.now
    assert restarted.core.list_transactions(h.now) == h.core.list_transactions(h.now)
    for tid in ("a", "b", "c"):
        assert restarted.core.describe(tid) == h.core.describe(tid)


def test_after_a_restart_the_producers_carry_on_and_zombies_stay_fenced(h):
    a, b, c = _run_history(h)
    restarted = TxnHarness()
    restarted.core.load(h.persisted)
    assert restarted.end(b, True, tid="b").error == ErrorCode.NONE
    assert restarted.add(c, tid="c").error == ErrorCode.PRODUCER_FENCED
    assert restarted.init("c", expected=(c.producer_id, 1)).producer_epoch == 2


def test_markers_written_for_an_earlier_transaction_do_not_complete_the_next_one(h):
    producer = open_transaction(h)
    h.end(producer, True)
    (first,) = h.markers
    h.write_markers()  # the first transaction completes
    h.add(producer, OUT1)
    h.end(producer, True)  # the second prepares; its marker on out-1 is not written yet
    assert not h.core.completing(first)
    assert h.core.markers_written(first, h.now).record is None
    assert h.state() == "PrepareCommit"
    h.write_markers()
    assert h.state() == "CompleteCommit"


def test_a_completion_from_before_the_id_was_loaded_again_is_refused_and_told_to_stop(h):
    producer = open_transaction(h, OUT0, OUT1)
    h.end(producer, True)
    (stale,) = h.markers
    h.core.unload(lambda tid: True)  # the partition is lost...
    assert not h.core.completing(stale)
    assert h.core.markers_written(stale, h.now).record is None  # no KeyError once the id is gone
    (current,) = h.core.load(h.persisted)  # ...and gained again: a new completion
    assert current == stale and not h.core.completing(stale) and h.core.completing(current)
    assert h.core.markers_written(stale, h.now).record is None
    h.apply(h.core.markers_written(current, h.now))
    assert h.state() == "CompleteCommit"
    assert not h.core.completing(current)


def test_a_transaction_preparing_at_restart_writes_its_markers_again_and_completes(h):
    producer = open_transaction(h, OUT0, OUT1)
    h.end(producer, False)
    restarted = TxnHarness()
    (marker,) = restarted.core.load(h.persisted)
    assert (marker.commit, marker.partitions, marker.producer_epoch) == (False, {OUT0, OUT1}, 0)
    assert restarted.end(producer, False).error == ErrorCode.CONCURRENT_TRANSACTIONS  # completing
    assert restarted.core.resume() == []
    restarted.apply(restarted.core.markers_written(marker, restarted.now))
    assert restarted.state() == "CompleteAbort"


def test_a_transaction_open_at_restart_still_times_out_from_its_original_start(h):
    producer = h.init(timeout_ms=1_000)
    h.add(producer)
    restarted = TxnHarness()
    restarted.core.load(h.persisted)
    assert restarted.core.next_timeout_ms() == 1_001
    restarted.now = 1_001
    assert [r.producer_epoch for r in restarted.expire()] == [1]


def test_load_keeps_the_last_record_of_each_id():
    h = loaded(record(epoch=0), record(epoch=1), record(TxnState.ONGOING, epoch=1, partitions=[OUT0], start_ms=5))
    view = h.core.describe("tx").view
    assert (view.state, view.producer_epoch, view.start_ms) == ("Ongoing", 1, 5)


def test_a_load_adds_the_ids_it_names_and_an_unload_drops_the_ids_it_accepts(h):
    h.init("old")
    h.core.load([record(tid="new")])
    assert h.core.describe("old").error == ErrorCode.NONE and h.core.describe("new").error == ErrorCode.NONE
    h.core.unload(lambda tid: tid == "old")
    assert h.core.describe("old").error == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
    assert h.core.describe("new").error == ErrorCode.NONE


def test_a_load_resumes_only_the_completions_of_the_ids_it_loads(h):
    h.core.load([record(TxnState.PREPARE_COMMIT, tid="a", partitions=[OUT0], start_ms=0)])
    (marker,) = h.core.load([record(TxnState.PREPARE_ABORT, tid="b", partitions=[OUT0], start_ms=0)])
    assert (marker.transactional_id, marker.commit) == ("b", False)


# -- DescribeTransactions, ListTransactions ---------------------------------------------------------

def test_describe_shows_the_transaction_as_describe_transactions_does(h):
    producer = h.init(timeout_ms=5_000)
    h.advance(7)
    h.add(producer, OUT0, OUT1)
    view = h.core.describe("tx").view
    assert (view.transactional_id, view.producer_id, view.producer_epoch, view.state, view.timeout_ms,
            view.start_ms, view.partitions) == ("tx", producer.producer_id, 0, "Ongoing", 5_000, 7, {OUT0, OUT1})
    assert h.core.describe("unknown").error == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND


def test_list_filters_by_producer_id_state_and_duration(h):
    a = open_transaction(h, tid="a")
    h.advance(1_000)
    open_transaction(h, tid="b")
    h.init("c")
    h.advance(10)
    listed = h.core.list_transactions(h.now)
    assert [(v.transactional_id, v.state) for v in listed.transactions] == [("a", "Ongoing"), ("b", "Ongoing"),
                                                                           ("c", "Empty")]
    assert [v.transactional_id for v in h.core.list_transactions(h.now, producer_ids=[a.producer_id]).transactions] \
        == ["a"]
    by_state = h.core.list_transactions(h.now, states=["Empty", "Bogus"])
    assert [v.transactional_id for v in by_state.transactions] == ["c"]
    assert by_state.unknown_state_filters == ("Bogus",)
    long_running = h.core.list_transactions(h.now, states=["Ongoing"], min_duration_ms=500)
    assert [v.transactional_id for v in long_running.transactions] == ["a"]


def test_an_id_whose_first_record_was_never_written_is_not_listed(h):
    h.init(write_fails=True)
    assert h.core.list_transactions(h.now).transactions == ()


def test_the_core_takes_its_producer_ids_only_from_the_allocator():
    handed = iter([77, 78])
    core = TransactionCoordinator(allocate_producer_id=lambda: next(handed),
                                  offsets_partition_for=offsets_partition_for)
    assert core.init_producer_id("tx", 1_000, 0).reply.producer_id == 77
    assert core.init_producer_id(None, 1_000, 0).reply.producer_id == 78


@pytest.mark.parametrize("state", list(TxnState))
def test_a_record_in_any_state_is_stored_as_a_document_that_reads_back_the_same_record(state):
    stored = record(state, producer_id=4001, epoch=3, partitions=[("t", 1), ("t", 0), ("u", 2)], start_ms=10,
                    previous=4000, last_epoch=2)
    data = stored.to_document().encode()
    assert TransactionRecord.from_document(TransactionDocument.decode("tx", data)) == stored


def test_a_transactional_batch_is_verified_only_for_a_partition_of_the_producers_open_transaction(h):
    producer = open_transaction(h, OUT0)

    def verdict(partition, producer_id=producer.producer_id, epoch=producer.producer_epoch, transactional_id="tx"):
        return h.core.verify_partitions(transactional_id, producer_id, epoch, [partition])[partition]

    assert verdict(OUT0) == ErrorCode.NONE
    assert verdict(OUT1) == ErrorCode.TRANSACTION_ABORTABLE
    assert verdict(OUT0, epoch=producer.producer_epoch + 1) == ErrorCode.PRODUCER_FENCED
    assert verdict(OUT0, producer_id=producer.producer_id + 1, epoch=0) == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert verdict(OUT0, transactional_id="other", epoch=0) == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    h.end(producer, True)
    assert verdict(OUT0) == ErrorCode.CONCURRENT_TRANSACTIONS  # its markers are being written
    h.write_markers()
    assert verdict(OUT0) == ErrorCode.TRANSACTION_ABORTABLE


# -- Journal ----------------------------------------------------------------------------------------

def test_a_committed_transaction_is_one_transaction_completed_once_its_completion_is_persisted():
    h = TxnHarness(node_id=4)
    producer = h.init()
    h.advance(100)
    h.add(producer, OUT1, OUT0)
    h.add_offsets(producer, "g")
    h.advance(250)
    h.end(producer, True)
    assert h.journal == []
    h.write_markers()
    assert h.journal == [{
        "v": 1, "ts": 350, "node": 4, "event": "transaction_completed", "group": "", "transactional_id": "tx",
        "producer_id": producer.producer_id, "producer_epoch": 0, "outcome": "commit", "reason": "end txn",
        "partitions": [{"topic": OFFSETS_TOPIC, "partition": offsets_partition_for("g")[1], "offset": None},
                       {"topic": "out", "partition": 0, "offset": None},
                       {"topic": "out", "partition": 1, "offset": None}],
        "started_ts": 100, "duration_ms": 250}]


def test_a_failed_completion_write_is_not_journaled_and_its_retry_is_journaled_once(h):
    producer = open_transaction(h)
    h.end(producer, False)
    (marker,) = h.markers
    h.apply(h.core.markers_written(marker, h.now), write_fails=True)
    assert h.journal == []
    h.apply(h.core.markers_written(marker, h.now))
    assert [(e["outcome"], e["reason"]) for e in h.journal] == [("abort", "end txn")]


def test_a_timed_out_transaction_completes_as_an_abort_by_timeout_under_the_fencing_epoch(h):
    producer = h.init(timeout_ms=1_000)
    h.add(producer)
    h.now = 1_001
    h.expire()
    h.write_markers()
    (event,) = h.journal
    assert (event["outcome"], event["reason"], event["producer_epoch"], event["duration_ms"]) == (
        "abort", "timeout", 1, 1_001)


def test_a_transaction_fenced_by_a_new_producer_completes_as_an_abort_by_new_producer(h):
    open_transaction(h)
    assert h.init().error == ErrorCode.CONCURRENT_TRANSACTIONS
    h.write_markers()
    assert [(e["outcome"], e["reason"], e["producer_epoch"]) for e in h.journal] == [("abort", "new producer", 1)]


def test_a_transaction_loaded_preparing_completes_with_no_reason(h):
    producer = open_transaction(h)
    h.end(producer, True)
    restarted = TxnHarness()
    (marker,) = restarted.core.load(h.persisted)
    restarted.apply(restarted.core.markers_written(marker, restarted.now))
    assert [(e["outcome"], e["reason"]) for e in restarted.journal] == [("commit", None)]
