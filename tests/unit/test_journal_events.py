"""The classic core's journal events: which operations emit which events, with which fields.

Events ride in each operation's `Result` (the runtime journals them once its records are
persisted); replaying stored records emits none.
"""

from groupctl.coordinator.classic.coordinator import GroupConfig
from groupctl.coordinator.classic.messages import LeavingMember, TriggerRebalance
from groupctl.coordinator.offsets.messages import CompleteTxnPartition, DeleteOffsets, PartitionOffset, TxnCommitOffsets
from groupctl.coordinator.placement import group_partition
from groupctl.coordinator.errors import ErrorCode
from tests.unit.classic_harness import START_MS, Harness, assignment

def events(h: Harness, kind: str | None = None) -> list[dict]:
    return [e for r in h.results for e in r.events if kind is None or e["event"] == kind]


def kinds(h: Harness, since: int = 0) -> list[str]:
    return [e["event"] for e in events(h)[since:]]


def simple_commit(h: Harness, group: str, *offsets: PartitionOffset) -> list[ErrorCode]:
    return h.commit(group, -1, "", *offsets)


# --- membership and rebalances -----------------------------------------------------------------

def test_an_admitted_member_is_member_joined_with_its_identity_and_the_current_generation():
    h = Harness(node_id=3)
    h.join(client_id="app")
    (joined,) = events(h, "member_joined")
    assert joined == {
        "v": 1, "ts": START_MS, "node": 3, "event": "member_joined", "group": "g", "member_id": "app-u1",
        "client_id": "app", "client_host": "/127.0.0.1", "instance_id": None, "generation": 0,
        "replaced_member_id": None,
    }
    assert "seq" not in joined  # the journal writer numbers events


def test_a_member_told_member_id_required_is_admitted_only_when_it_comes_back_with_its_id():
    h = Harness()
    member_id = h.reply(h.join(client_id="app", require_known=True)).member_id
    assert events(h) == []
    h.join(member_id=member_id, client_id="app", require_known=True)
    assert [e["member_id"] for e in events(h, "member_joined")] == [member_id]


def test_a_new_groups_first_rebalance_starts_at_the_first_join_and_completes_with_the_decoded_assignment():
    h = Harness()
    answers = h.joined_members("g", 2)
    h.timer.advance(250)
    leader = next(a for a in answers if a.members)
    plan = [(a.member_id, assignment({"t": [i, i + 2]})) for i, a in enumerate(answers)]
    for a in answers:
        h.sync("g", 1, a.member_id, plan if a is leader else ())
    assert kinds(h) == ["member_joined", "rebalance_started", "member_joined", "rebalance_completed"]
    (started,) = events(h, "rebalance_started")
    assert started == {
        "v": 1, "ts": START_MS, "node": 0, "event": "rebalance_started", "group": "g", "generation": 0,
        "reason": "join", "member_id": answers[0].member_id, "client_id": "c0", "members": 1,
    }
    (completed,) = events(h, "rebalance_completed")
    first, second = (a.member_id for a in answers)
    assert completed == {
        "v": 1, "ts": START_MS + 250, "node": 0, "event": "rebalance_completed", "group": "g", "generation": 1,
        "reason": "join", "started_ts": START_MS, "duration_ms": 250, "state": "Stable", "protocol": "range",
        "leader": leader.member_id, "members": 2, "member_ids": [first, second],
        "assignment": [
            {"member_id": first, "client_id": "c0", "topic": "t", "partition": 0},
            {"member_id": first, "client_id": "c0", "topic": "t", "partition": 2},
            {"member_id": second, "client_id": "c1", "topic": "t", "partition": 1},
            {"member_id": second, "client_id": "c1", "topic": "t", "partition": 3},
        ],
    }


def test_a_rebalance_restarted_by_another_join_is_one_started_and_one_completed_with_the_first_reason():
    h = Harness()
    a, b = h.stable_group(count=2)
    before = len(events(h))
    h.timer.advance(100)
    c_token = h.join(client_id="c2")  # starts the rebalance
    rejoined = [h.join(member_id=m.member_id, client_id=f"c{i}") for i, m in enumerate((a, b))]
    assert h.reply(c_token).generation_id == 2  # CompletingRebalance, generation 2
    h.timer.advance(300)
    d_token = h.join(client_id="c3")  # restarts the join phase of the same episode
    for i, token in enumerate([*rejoined, c_token]):
        h.join(member_id=h.reply(token).member_id, client_id=f"c{i}")
    assert h.reply(d_token).generation_id == 3  # everyone rejoined: the join phase completed again
    h.timer.advance(50)
    leader = h.reply(d_token).leader
    h.sync("g", 3, leader, [(leader, assignment({"t": [0]}))])
    assert h.state() == "Stable"

    new = events(h)[before:]
    started = [e for e in new if e["event"] == "rebalance_started"]
    completed = [e for e in new if e["event"] == "rebalance_completed"]
    assert len(started) == 1 and len(completed) == 1
    assert (started[0]["reason"], started[0]["client_id"], started[0]["generation"]) == ("join", "c2", 1)
    assert completed[0]["reason"] == "join" and completed[0]["generation"] == 3
    assert (completed[0]["started_ts"], completed[0]["duration_ms"]) == (START_MS + 100, 350)
    assert completed[0]["members"] == 4


def test_leave_group_is_member_left_then_a_rebalance_with_reason_leave():
    h = Harness()
    a, b = h.stable_group(count=2)
    before = len(events(h))
    h.leave("g", LeavingMember(b.member_id))
    left, started = events(h)[before:]
    assert left == {"v": 1, "ts": START_MS, "node": 0, "event": "member_left", "group": "g",
                    "member_id": b.member_id, "client_id": "c1", "generation": 1}
    assert (started["event"], started["reason"], started["member_id"], started["members"]) == (
        "rebalance_started", "leave", b.member_id, 1)


def test_a_session_expiry_is_member_expired_and_a_group_left_empty_completes_with_no_assignment():
    h = Harness()
    (a,) = h.stable_group(count=1)
    before = len(events(h))
    h.advance(10_000)
    expired, started, completed = events(h)[before:]
    assert expired == {"v": 1, "ts": START_MS + 10_000, "node": 0, "event": "member_expired", "group": "g",
                       "member_id": a.member_id, "client_id": "c0", "generation": 1, "reason": "session expiry"}
    assert (started["event"], started["reason"], started["generation"], started["members"]) == (
        "rebalance_started", "session expiry", 1, 0)
    assert completed["event"] == "rebalance_completed"
    assert {k: completed[k] for k in ("generation", "state", "protocol", "leader", "members", "member_ids",
                                      "assignment", "duration_ms")} == {
        "generation": 2, "state": "Empty", "protocol": None, "leader": None, "members": 0, "member_ids": [],
        "assignment": [], "duration_ms": 0}


def test_a_member_that_sends_no_sync_group_in_time_is_member_expired_for_sync_timeout():
    h = Harness()
    answers = h.joined_members("g", 2, rebalance_ms=7_000)
    leader = next(a for a in answers if a.members)
    follower = next(a for a in answers if a is not leader)
    h.sync("g", 1, leader.member_id, [(leader.member_id, assignment({"t": [0]}))])
    before = len(events(h))
    h.advance(7_000)
    expired = events(h)[before]
    assert (expired["event"], expired["member_id"], expired["reason"]) == (
        "member_expired", follower.member_id, "sync timeout")
    assert events(h, "rebalance_started")[-1]["reason"] == "sync timeout"


def test_a_member_that_does_not_rejoin_before_the_join_phase_ends_is_member_expired_for_join_timeout():
    h = Harness()
    a, b = h.stable_group(count=2, rebalance_ms=7_000)
    h.ask("trigger_rebalance", TriggerRebalance("g", client_id="ops"))
    h.join(member_id=a.member_id, client_id="c0", rebalance_ms=7_000)
    before = len(events(h))
    h.advance(7_000)
    assert [(e["event"], e.get("member_id"), e.get("reason")) for e in events(h)[before:]] == [
        ("member_expired", b.member_id, "join timeout")]
    assert events(h, "rebalance_started")[-1]["reason"] == "trigger"
    assert events(h, "rebalance_started")[-1]["client_id"] == "ops"


def test_a_member_removed_because_the_group_is_over_its_max_size_is_member_expired():
    h = Harness(GroupConfig(initial_rebalance_delay_ms=0, max_group_size=2))
    a, b = h.stable_group(count=2)
    h.ask("trigger_rebalance", "g")
    h.join(member_id=a.member_id, client_id="c0")
    h.join(client_id="c2")
    h.join(member_id=b.member_id, client_id="c1")
    (expired,) = events(h, "member_expired")
    assert (expired["member_id"], expired["reason"], expired["generation"]) == (b.member_id, "group max size", 1)


def test_a_static_members_restart_admits_its_new_id_in_place_of_the_old_without_a_rebalance():
    h = Harness()
    (a,) = h.stable_group(count=1, instance="i-1")
    before = len(events(h))
    h.join(client_id="c0", instance="i-1")
    (joined,) = events(h)[before:]
    assert joined["event"] == "member_joined" and joined["instance_id"] == "i-1"
    assert joined["member_id"] != a.member_id and joined["generation"] == 1
    assert joined["replaced_member_id"] == a.member_id


def test_a_group_of_another_protocol_type_completes_with_an_empty_assignment():
    h = Harness()
    h.stable_group(count=1, protocol_type="connect", protocols=(("v1", b"opaque"),))
    (completed,) = events(h, "rebalance_completed")
    assert completed["protocol"] == "v1" and completed["members"] == 1 and completed["assignment"] == []


# --- offsets and deletion ----------------------------------------------------------------------

def test_each_accepted_commit_partition_is_an_offset_commit_with_the_requests_member_and_generation():
    h = Harness()
    a, b = h.stable_group(count=2)
    before = len(events(h))
    errors = h.commit("g", 1, a.member_id, PartitionOffset("t", 0, 10),
                      PartitionOffset("t", 1, 11, metadata="x" * 5000), PartitionOffset("u", 2, 12))
    assert errors == [ErrorCode.NONE, ErrorCode.OFFSET_METADATA_TOO_LARGE, ErrorCode.NONE]
    assert events(h)[before:] == [
        {"v": 1, "ts": START_MS, "node": 0, "event": "offset_commit", "group": "g", "member_id": a.member_id,
         "generation": 1, "topic": topic, "partition": partition, "offset": offset, "producer_id": None,
         "producer_epoch": None}
        for topic, partition, offset in (("t", 0, 10), ("u", 2, 12))]


def test_a_simple_commit_is_an_offset_commit_with_generation_minus_one_and_no_member():
    h = Harness()
    assert simple_commit(h, "admin", PartitionOffset("t", 0, 5)) == [ErrorCode.NONE]
    (commit,) = events(h)
    assert (commit["group"], commit["member_id"], commit["generation"], commit["offset"]) == ("admin", "", -1, 5)


def test_a_txn_offset_commit_is_one_event_per_partition_it_holds_naming_the_producer_and_the_member():
    h = Harness()
    (a,) = h.stable_group(count=1)
    before = len(events(h))
    request = TxnCommitOffsets("g", 7, 2, 1, a.member_id, None, (
        PartitionOffset("t", 0, 10), PartitionOffset("t", 1, 11, metadata="x" * 5000)))
    assert [p.error for p in h.ask("txn_commit_offsets", request).partitions] == [
        ErrorCode.NONE, ErrorCode.OFFSET_METADATA_TOO_LARGE]
    assert events(h)[before:] == [
        {"v": 1, "ts": START_MS, "node": 0, "event": "txn_offset_commit", "group": "g", "member_id": a.member_id,
         "generation": 1, "topic": "t", "partition": 0, "offset": 10, "producer_id": 7, "producer_epoch": 2}]


def test_a_commit_marker_is_txn_offsets_completed_then_an_offset_commit_per_offset_made_visible_naming_the_producer():
    h = Harness()
    h.ask("txn_commit_offsets", TxnCommitOffsets("g", 7, 0, -1, "", None, (
        PartitionOffset("t", 0, 10), PartitionOffset("t", 1, 20))))
    h.timer.advance(5)
    h.commit("g", -1, "", PartitionOffset("t", 1, 25))  # later than the held offset: it stays
    h.timer.advance(5)
    before = len(events(h))
    assert h.ask("complete_txn_partition", CompleteTxnPartition(group_partition("g"), 7, 0, True, 0)) is ErrorCode.NONE
    completed, visible = events(h)[before:]
    assert completed == {
        "v": 1, "ts": START_MS + 10, "node": 0, "event": "txn_offsets_completed", "group": "g", "producer_id": 7,
        "producer_epoch": 0, "outcome": "commit",
        "partitions": [{"topic": "t", "partition": 0, "offset": 10}, {"topic": "t", "partition": 1, "offset": 20}]}
    assert visible == {
        "v": 1, "ts": START_MS + 10, "node": 0, "event": "offset_commit", "group": "g", "member_id": "",
        "generation": -1, "topic": "t", "partition": 0, "offset": 10, "producer_id": 7, "producer_epoch": 0}


def test_an_abort_marker_is_txn_offsets_completed_alone_and_a_retried_or_stale_marker_is_no_event():
    h = Harness()
    h.ask("txn_commit_offsets", TxnCommitOffsets("g", 7, 1, -1, "", None, (PartitionOffset("t", 0, 10),)))
    assert h.ask("complete_txn_partition", CompleteTxnPartition(group_partition("g"), 7, 0, False, 0)) is ErrorCode.INVALID_PRODUCER_EPOCH
    before = len(events(h))
    assert h.ask("complete_txn_partition", CompleteTxnPartition(group_partition("g"), 7, 2, False, 0)) is ErrorCode.NONE  # a fenced producer's abort
    (aborted,) = events(h)[before:]
    assert (aborted["event"], aborted["outcome"], aborted["producer_epoch"], aborted["partitions"]) == (
        "txn_offsets_completed", "abort", 2, [{"topic": "t", "partition": 0, "offset": 10}])
    assert h.ask("complete_txn_partition", CompleteTxnPartition(group_partition("g"), 7, 2, True, 0)) is ErrorCode.NONE
    assert len(events(h)) == before + 1


def test_a_refused_commit_is_no_event():
    h = Harness()
    h.stable_group(count=1)
    before = len(events(h))
    assert h.commit("g", 7, "nobody", PartitionOffset("t", 0, 1)) == [ErrorCode.UNKNOWN_MEMBER_ID]
    assert events(h)[before:] == []


def test_offset_delete_and_a_deleted_topic_are_one_offset_delete_per_committed_offset_gone():
    h = Harness()
    simple_commit(h, "s", PartitionOffset("t", 0, 1), PartitionOffset("u", 0, 2))
    simple_commit(h, "r", PartitionOffset("t", 3, 4))
    before = len(events(h))
    h.ask("delete_offsets", DeleteOffsets("s", (("u", 0), ("u", 5))))  # u-5 was never committed
    h.absorb(h.core.delete_topic_offsets(("t",), h.now))
    assert [(e["event"], e["group"], e["topic"], e["partition"]) for e in events(h)[before:]] == [
        ("offset_delete", "s", "u", 0), ("offset_delete", "r", "t", 3), ("offset_delete", "s", "t", 0)]


def test_deleting_a_group_is_group_deleted():
    h = Harness()
    simple_commit(h, "old", PartitionOffset("t", 0, 1))
    before = len(events(h))
    (deleted,) = h.ask("delete_groups", ("old", "missing"))[:1]
    assert deleted.error is ErrorCode.NONE
    assert events(h)[before:] == [{"v": 1, "ts": START_MS, "node": 0, "event": "group_deleted", "group": "old"}]


# --- replay and takeover -------------------------------------------------------------------------

def test_loading_stored_records_journals_only_the_takeover_rebalance():
    first = Harness()
    a, b = first.stable_group(count=2)
    first.commit("g", 1, a.member_id, PartitionOffset("t", 0, 10))
    simple_commit(first, "idle", PartitionOffset("t", 1, 3))

    second = Harness(node_id=1, now_ms=START_MS + 5_000)
    for record in first.records:
        second.core.replay(record, second.now)  # a restart's replay: no Result, so no events at all
    assert second.results == []

    takeover = Harness(node_id=2, now_ms=START_MS + 9_000)
    takeover.absorb(takeover.core.load(first.records, takeover.now, "node 2 took over group partition 0"))
    assert events(takeover) == [{
        "v": 1, "ts": START_MS + 9_000, "node": 2, "event": "rebalance_started", "group": "g", "generation": 1,
        "reason": "coordinator load", "member_id": None, "client_id": None, "members": 2,
    }]



def test_every_builder_writes_exactly_the_fields_the_layout_declares_for_its_event():
    from groupctl.coordinator import journal
    from groupctl.layout.journal import ASSIGNMENT_ROW, COMMON, EVENTS, FIELDS, PARTITION_ROW

    row = dict.fromkeys(name for name, _ in ASSIGNMENT_ROW)
    built = [
        journal.rebalance_started(0, 1, "g", generation=1, reason="join", member_id=None, client_id=None, members=0),
        journal.rebalance_completed(0, 2, "g", generation=2, reason="join", started_ts=1, state="Stable",
                                    protocol="range", leader="m", member_ids=["m"], assignment=[row]),
        journal.member_joined(0, 1, "g", member_id="m", client_id="c", client_host="/h", instance_id=None,
                              generation=1),
        journal.member_left(0, 1, "g", member_id="m", client_id="c", generation=1),
        journal.member_expired(0, 1, "g", member_id="m", client_id="c", generation=1, reason=journal.EXPIRED_JOIN),
        journal.offset_commit(0, 1, "g", member_id="m", generation=1, topic="t", partition=0, offset=5),
        journal.offset_delete(0, 1, "g", topic="t", partition=0),
        journal.group_deleted(0, 1, "g"),
        journal.group_epoch_bumped(0, 1, "g", generation=2, reason=journal.JOIN, member_id="m", client_id="c",
                                   members=1),
        journal.target_assignment_computed(0, 1, "g", generation=2, protocol="uniform", members=1, moved=1,
                                           member_ids=["m"], assignment=[row]),
        journal.member_reconciled(0, 1, "g", member_id="m", client_id="c", instance_id=None, generation=2,
                                  member_epoch=2, state="unrevoked_partitions", assignment=[row], revoking=[row]),
        journal.group_stable(0, 1, "g", generation=2, members=1),
        journal.group_migrated(0, 1, "g", group_type=journal.CONSUMER, generation=3, member_id="m", client_id="c",
                               members=2),
        journal.txn_offset_commit(0, 1, "g", member_id="m", generation=2, producer_id=7, producer_epoch=0, topic="t",
                                  partition=0, offset=5),
        journal.txn_offsets_completed(0, 1, "g", producer_id=7, producer_epoch=0, outcome=journal.COMMIT,
                                      partitions=journal.partition_rows([("t", 0, 5)])),
        journal.transaction_completed(0, 3, transactional_id="tx", producer_id=7, producer_epoch=0,
                                      outcome=journal.ABORT, reason=journal.TIMEOUT,
                                      partitions=journal.partition_rows([("t", 0, None)]), started_ts=1),
    ]
    assert sorted(event["event"] for event in built) == sorted(EVENTS)
    declared = {name for name, _ in FIELDS}
    kinds = dict(FIELDS)
    for event in built:
        assert set(event) == (set(COMMON) - {"seq"}) | set(EVENTS[event["event"]]), event["event"]
        assert set(event) <= declared
        for name, value in event.items():  # every list of rows holds the rows its kind declares
            if kinds[name] == "assignment[]":
                assert all(set(entry) == set(row) for entry in value), (event["event"], name)
            if kinds[name] == "partition[]":
                assert all(set(entry) == {n for n, _ in PARTITION_ROW} for entry in value), (event["event"], name)
    assert set(built[1]["assignment"][0]) == set(row)
