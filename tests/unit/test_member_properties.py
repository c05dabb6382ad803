"""Random input sequences against the member machine: every move is legal and chained, the
application's partitions change only when a callback completes, a member in the group always has a
heartbeat due within an interval (or a backoff), and UNSUBSCRIBED and FATAL members are quiet."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupctl.coordinator.errors import ErrorCode
from groupctl.member import HeartbeatResponse, MemberState as S, partitions
from groupctl.member.states import is_legal
from tests.unit.member_harness import T1, T2, T3, member

GROUP_STATES = {S.JOINING, S.RECONCILING, S.ACKNOWLEDGING, S.STABLE, S.PREPARE_LEAVING}
QUIET = {S.UNSUBSCRIBED, S.FATAL}

some_assignments = st.dictionaries(st.sampled_from([T1, T2, T3]), st.frozensets(st.integers(0, 3), max_size=3),
                                   max_size=3).map(partitions)
# Targets repeat often (so members settle), and sometimes are anything.
assignments = st.one_of(st.sampled_from([partitions({T1: [0, 1]}), partitions({T1: [1], T2: [0]}), {}]),
                        some_assignments)
# Mostly what keeps a member going (answers, callbacks, time), sometimes what disturbs it.
errors = st.sampled_from([ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_MEMBER_EPOCH,
                          ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE,
                          ErrorCode.NOT_COORDINATOR] * 3 + [ErrorCode.GROUP_MAX_SIZE_REACHED])
answer = st.tuples(st.just("ok"), st.integers(1, 5), st.one_of(assignments, assignments, st.none()),
                   st.sampled_from([0, 1_000, 3_000]))
callback = st.tuples(st.just("callback"), st.sampled_from([True] * 5 + [False]))
ops = st.one_of(
    answer, answer, answer, callback, callback, callback,
    st.tuples(st.just("advance"), st.sampled_from([1, 1_000, 3_000, 5_000] * 3 + [400_000])),
    st.tuples(st.just("poll")), st.tuples(st.just("poll")),
    st.tuples(st.just("subscribe"), st.sampled_from([("t1",), ("t1", "t2"), ()]), st.sampled_from([None, "^t.*"])),
    st.tuples(st.just("unsubscribe")),
    st.tuples(st.just("error"), errors),
    st.tuples(st.just("failed"), st.sampled_from([True] * 5 + [False])),
    st.tuples(st.just("found")),
    st.tuples(st.just("names")),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ops, min_size=10, max_size=80))
def test_random_inputs_keep_the_member_machines_invariants(script):
    m = member(max_poll_interval_ms=300_000, retry_backoff_max_ms=1_000)
    now = 0
    m.subscribe(now, ["t1", "t2"])
    for op in script:
        before, owned = m.state, dict(m.owned)
        kind = op[0]
        if kind == "subscribe":
            out = m.subscribe(now, op[1], op[2])
        elif kind == "unsubscribe":
            out = m.unsubscribe(now)
        elif kind == "poll":
            out = m.poll(now)
        elif kind == "advance":
            now += op[1]
            out = m.tick(now)
        elif (kind in ("ok", "error", "failed") and not m.in_flight) or (kind == "callback"
                                                                         and not m.pending_callbacks):
            now += 1_000
            out = m.tick(now)
        elif kind == "ok":
            out = m.heartbeat_response(now, HeartbeatResponse(ErrorCode.NONE, member_id="m-1", member_epoch=op[1],
                                                              heartbeat_interval_ms=op[3], assignment=op[2]))
        elif kind == "error":
            out = m.heartbeat_response(now, HeartbeatResponse(op[1], member_epoch=-1))
        elif kind == "failed":
            out = m.heartbeat_failed(now, retriable=op[1])
        elif kind == "callback":
            pending = m.pending_callbacks
            if not pending:
                continue
            out = m.callback_done(now, min(c.id for c in pending), ok=op[1])
        elif kind == "found":
            out = m.coordinator_found(now)
        else:
            out = m.topic_names_learned(now, {T3: "t3"})

        # Exactly one state, reached by a chain of legal moves.
        assert out.state is m.state
        chain = [before] + [after for _, after in out.transitions]
        assert [b for b, _ in out.transitions] == chain[:-1]
        assert chain[-1] is out.state
        assert all(is_legal(b, a) for b, a in out.transitions)
        # The application's partitions change only when a callback completes.
        if kind != "callback":
            assert m.owned == owned
        # In the group with nothing in flight: a heartbeat is due within an interval or a backoff.
        blocking = any(not r.leaving for r in m._in_flight)
        if m.state in GROUP_STATES and not blocking and not out.find_coordinator:
            assert out.next_heartbeat_ms is not None
            assert out.next_heartbeat_ms <= now + max(m.heartbeat_interval_ms, 1_000)
            assert out.wake_at_ms is not None and out.wake_at_ms <= out.next_heartbeat_ms
        # Quiet states stay quiet.
        if before in QUIET and m.state in QUIET:
            assert out.heartbeat is None and out.callbacks == ()
            assert out.next_heartbeat_ms is None and out.wake_at_ms is None
        if m.state is S.FATAL:
            assert out.fatal is not None
        # Settled: a STABLE member with no callback running owns what it acknowledged.
        if m.state is S.STABLE and not m.pending_callbacks:
            assert m.owned == dict(m.acknowledged.partitions)
