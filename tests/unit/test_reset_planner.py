"""The offset-reset planner (groupctl.ops.reset): every target and scope over fetched data,
clamping, and the parsers behind the CLI's options (datetimes, TOPIC:PARTITION=OFFSET, scopes).
CSV plans: tests/unit/test_plan_csv.py; durations: tests/unit/test_durations.py."""

from __future__ import annotations

import os
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groupctl.errors import BadInput
from groupctl.ops.reset import (
    MAX_OFFSET,
    MAX_PARTITION,
    ByDuration,
    FromFile,
    PlanInputs,
    PlanOffsets,
    ResetPlan,
    Scope,
    ShiftBy,
    ToCurrent,
    ToDatetime,
    ToEarliest,
    ToLatest,
    ToOffset,
    TopicScope,
    format_utc,
    lookup_timestamp,
    make_scope,
    parse_datetime,
    parse_offset_assignment,
    parse_offset_assignments,
    parse_topic_scope,
    plan_reset,
    topics_to_fetch,
)

# orders: 3 partitions with ranges [5, 50], [0, 20], [10, 10] (empty); payments: 1 partition.
TOPICS = {"orders": (0, 1, 2), "payments": (0,)}
EARLIEST = {("orders", 0): 5, ("orders", 1): 0, ("orders", 2): 10, ("payments", 0): 100}
LATEST = {("orders", 0): 50, ("orders", 1): 20, ("orders", 2): 10, ("payments", 0): 200}
COMMITTED = {("orders", 0): 30, ("orders", 1): 20}


def inputs(**overrides) -> PlanInputs:
    values = dict(topic_partitions=TOPICS, committed=COMMITTED, earliest=EARLIEST, latest=LATEST)
    values.update(overrides)
    return PlanInputs(**values)


def new_offsets(plan: ResetPlan) -> dict:
    return plan.offsets()


ORDERS = make_scope(["orders"], False)


# -- scopes ----------------------------------------------------------------------------------


def test_topic_scope_covers_every_partition_of_the_topic():
    plan = plan_reset("g", ORDERS, ToEarliest(), inputs())
    assert [(p.topic, p.partition) for p in plan.partitions] == [("orders", 0), ("orders", 1), ("orders", 2)]


def test_topic_partition_scope_covers_only_the_named_partitions():
    plan = plan_reset("g", make_scope(["orders:0,2"], False), ToLatest(), inputs())
    assert new_offsets(plan) == {("orders", 0): 50, ("orders", 2): 10}


def test_all_topics_scope_is_every_committed_partition():
    committed = {("orders", 1): 3, ("payments", 0): 150}
    plan = plan_reset("g", make_scope([], True), ToEarliest(), inputs(committed=committed))
    assert new_offsets(plan) == {("orders", 1): 0, ("payments", 0): 100}


def test_all_topics_skips_committed_partitions_of_topics_that_no_longer_exist():
    committed = {("orders", 1): 3, ("gone", 0): 7}
    plan = plan_reset("g", make_scope([], True), ToEarliest(), inputs(committed=committed))
    assert new_offsets(plan) == {("orders", 1): 0}


def test_repeated_topic_options_merge_their_partitions():
    assert make_scope(["orders:0", "orders:2", "payments"], False) == Scope(
        topics=(TopicScope("orders", (0, 2)), TopicScope("payments")))
    assert make_scope(["orders:0", "orders"], False).topics == (TopicScope("orders"),)


def test_unknown_topic_in_scope_is_bad_input():
    with pytest.raises(BadInput, match="unknown topic 'nope'"):
        plan_reset("g", make_scope(["nope"], False), ToEarliest(), inputs())


def test_unknown_partition_in_scope_is_bad_input_naming_the_existing_range():
    with pytest.raises(BadInput, match=r"unknown partition orders:7 \(topic 'orders' has partitions 0-2\)"):
        plan_reset("g", make_scope(["orders:7"], False), ToEarliest(), inputs())


@pytest.mark.parametrize("topics, all_topics, message", [
    ([], False, "give a scope"),
    (["orders"], True, "not both"),
])
def test_scope_needs_exactly_one_of_topic_or_all_topics(topics, all_topics, message):
    with pytest.raises(BadInput, match=message):
        make_scope(topics, all_topics)


@pytest.mark.parametrize("text, expected", [
    ("orders", TopicScope("orders")),
    ("orders:1", TopicScope("orders", (1,))),
    ("orders:2,0,2", TopicScope("orders", (0, 2))),
    ("my.topic-v2_x:0", TopicScope("my.topic-v2_x", (0,))),
])
def test_topic_scope_parsing(text, expected):
    assert parse_topic_scope(text) == expected


@pytest.mark.parametrize("text", ["orders:", "orders:a", "orders:-1", "orders:1,,2", "bad topic", ":1", "a/b",
                                  "orders:\u00b2"])
def test_malformed_topic_scope_is_bad_input(text):
    with pytest.raises(BadInput):
        parse_topic_scope(text)


def test_a_scope_partition_beyond_int32_is_bad_input():
    assert parse_topic_scope(f"orders:{MAX_PARTITION}") == TopicScope("orders", (MAX_PARTITION,))
    with pytest.raises(BadInput, match=r"^partition 2147483648 in 'orders:2147483648' is too large \(at most 2147483647\)$"):
        parse_topic_scope("orders:2147483648")


def test_topics_to_fetch_follows_the_scope_or_the_file():
    assert topics_to_fetch(make_scope([], True), ToEarliest(), COMMITTED) == ["orders"]
    assert topics_to_fetch(make_scope(["payments", "orders:1"], False), ToEarliest(), {}) == ["orders", "payments"]
    assert topics_to_fetch(None, FromFile({("payments", 0): 1}), COMMITTED) == ["payments"]


def test_topics_to_fetch_for_a_file_includes_the_topics_of_its_scope():
    target = FromFile({("payments", 0): 1})
    assert topics_to_fetch(make_scope(["nosuch", "orders:1"], False), target, COMMITTED) == [
        "nosuch", "orders", "payments"]


@pytest.mark.parametrize("scope, message", [
    (["nosuch"], "unknown topic 'nosuch'"),
    (["orders:7"], r"unknown partition orders:7 \(topic 'orders' has partitions 0-2\)"),
])
def test_a_file_reset_whose_scope_names_an_unknown_topic_or_partition_is_bad_input(scope, message):
    target = FromFile({("orders", 0): 7})
    with pytest.raises(BadInput, match=f"^{message}"):
        plan_reset("g", make_scope(scope, False), target, inputs())


def test_a_scopeless_reset_other_than_from_file_is_bad_input():
    with pytest.raises(BadInput, match="give a scope"):
        plan_reset("g", None, ToEarliest(), inputs())


# -- targets ---------------------------------------------------------------------------------


def test_to_earliest_and_to_latest_use_the_partition_range():
    assert new_offsets(plan_reset("g", ORDERS, ToEarliest(), inputs())) == {
        ("orders", 0): 5, ("orders", 1): 0, ("orders", 2): 10}
    assert new_offsets(plan_reset("g", ORDERS, ToLatest(), inputs())) == {
        ("orders", 0): 50, ("orders", 1): 20, ("orders", 2): 10}


def test_to_offset_is_clamped_into_each_partition_range():
    assert new_offsets(plan_reset("g", ORDERS, ToOffset(15), inputs())) == {
        ("orders", 0): 15, ("orders", 1): 15, ("orders", 2): 10}
    assert new_offsets(plan_reset("g", ORDERS, ToOffset(0), inputs()))[("orders", 0)] == 5
    assert new_offsets(plan_reset("g", ORDERS, ToOffset(10**12), inputs()))[("orders", 0)] == 50


def test_shift_by_moves_from_the_committed_offset_and_is_clamped():
    scope = make_scope(["orders:0,1"], False)
    assert new_offsets(plan_reset("g", scope, ShiftBy(-10), inputs())) == {("orders", 0): 20, ("orders", 1): 10}
    assert new_offsets(plan_reset("g", scope, ShiftBy(+15), inputs())) == {("orders", 0): 45, ("orders", 1): 20}
    assert new_offsets(plan_reset("g", scope, ShiftBy(-1000), inputs())) == {("orders", 0): 5, ("orders", 1): 0}


def test_shift_by_a_partition_without_a_committed_offset_is_bad_input():
    with pytest.raises(BadInput, match="cannot shift orders:2: group 'g' has no committed offset"):
        plan_reset("g", ORDERS, ShiftBy(1), inputs())


def test_time_targets_use_the_offset_found_for_the_time_or_latest_when_there_is_none():
    found = {("orders", 0): 12, ("orders", 1): None, ("orders", 2): None}
    for target in (ToDatetime(1_700_000_000_000), ByDuration(60_000)):
        plan = plan_reset("g", ORDERS, target, inputs(for_timestamp=found))
        assert new_offsets(plan) == {("orders", 0): 12, ("orders", 1): 20, ("orders", 2): 10}


def test_lookup_timestamp_is_the_datetime_or_now_minus_the_duration():
    assert lookup_timestamp(ToDatetime(123), now_ms=10_000) == 123
    assert lookup_timestamp(ByDuration(4_000), now_ms=10_000) == 6_000
    assert lookup_timestamp(ToEarliest(), now_ms=10_000) is None


def test_a_time_before_the_epoch_is_looked_up_as_0_never_as_a_special_negative_value():
    just_before = parse_datetime("1969-12-31T23:59:59.999Z")
    assert just_before == -1  # ListOffsets would read -1 as "latest"
    assert lookup_timestamp(ToDatetime(just_before), now_ms=10_000) == 0
    assert lookup_timestamp(ToDatetime(-3), now_ms=10_000) == 0
    assert lookup_timestamp(ByDuration(10_002), now_ms=10_000) == 0


def test_to_current_keeps_committed_offsets_and_moves_uncommitted_partitions_to_latest():
    assert new_offsets(plan_reset("g", ORDERS, ToCurrent(), inputs())) == {
        ("orders", 0): 30, ("orders", 1): 20, ("orders", 2): 10}


def test_from_file_needs_no_scope_and_clamps_the_file_offsets():
    target = FromFile({("orders", 0): 7, ("orders", 1): 99, ("payments", 0): 1})
    assert new_offsets(plan_reset("g", None, target, inputs())) == {
        ("orders", 0): 7, ("orders", 1): 20, ("payments", 0): 100}


def test_offsets_the_operator_supplied_record_the_offset_they_were_clamped_from():
    # orders:0 is [5, 50], orders:1 [0, 20], orders:2 [10, 10]; committed 30 and 20.
    cases = [
        (ToOffset(15), {("orders", 0): None, ("orders", 1): None, ("orders", 2): 15}),
        (ToOffset(3), {("orders", 0): 3, ("orders", 1): None, ("orders", 2): 3}),
        (FromFile({("orders", 0): 99, ("orders", 1): 7}), {("orders", 0): 99, ("orders", 1): None}),
    ]
    for target, clamped_from in cases:
        plan = plan_reset("g", None if isinstance(target, FromFile) else ORDERS, target, inputs())
        assert {(p.topic, p.partition): p.clamped_from for p in plan.partitions} == clamped_from, target
    shifted = plan_reset("g", make_scope(["orders:0,1"], False), ShiftBy(-28), inputs())
    assert [(p.new_offset, p.clamped_from) for p in shifted.partitions] == [(5, 2), (0, -8)]
    assert shifted.partitions[1].to_json() == {"topic": "orders", "partition": 1, "current_offset": 20,
                                               "new_offset": 0, "clamped_from": -8, "leader_epoch": None}


@pytest.mark.parametrize("target", [ToEarliest(), ToLatest(), ToCurrent(), ToDatetime(1_700_000_000_000)])
def test_targets_the_cluster_supplies_are_never_reported_as_clamped(target):
    committed = {("orders", 0): 70, ("orders", 1): 20, ("orders", 2): 10}  # orders:0 past its log end 50
    found = {("orders", 0): 12, ("orders", 1): None, ("orders", 2): None}
    plan = plan_reset("g", ORDERS, target, inputs(committed=committed, for_timestamp=found))
    assert all(p.clamped_from is None for p in plan.partitions)


def test_a_time_target_plan_carries_the_instant_it_resolved_to_in_utc():
    found = {("orders", 0): 12, ("orders", 1): None, ("orders", 2): None}
    instant = parse_datetime("2020-01-01T05:00:00Z")
    plan = plan_reset("g", ORDERS, ToDatetime(instant), inputs(for_timestamp=found, timestamp_ms=instant))
    assert plan.timestamp_ms == instant
    assert plan.to_json()["timestamp"] == "2020-01-01T05:00:00Z"
    assert plan_reset("g", ORDERS, ToEarliest(), inputs()).to_json()["timestamp"] is None


def test_from_file_with_a_topic_scope_plans_only_the_file_partitions_inside_it():
    target = FromFile({("orders", 0): 7, ("orders", 1): 9, ("payments", 0): 150})
    assert new_offsets(plan_reset("g", make_scope(["orders:1"], False), target, inputs())) == {("orders", 1): 9}
    assert len(plan_reset("g", make_scope([], True), target, inputs()).partitions) == 3


def test_from_file_naming_an_unknown_partition_is_bad_input():
    with pytest.raises(BadInput, match="unknown partition orders:9"):
        plan_reset("g", None, FromFile({("orders", 9): 1}), inputs())


@pytest.mark.parametrize("offsets, message", [
    ({("orders", 9): 1}, r"^plan.csv: unknown partition orders:9 \(topic 'orders' has partitions 0-2\)$"),
    ({("nope", 0): 1}, r"^plan.csv: unknown topic 'nope'$"),
])
def test_unknown_partitions_of_a_plan_file_are_reported_naming_the_file(offsets, message):
    target = FromFile(PlanOffsets(offsets, source="plan.csv"))
    assert target.source == "plan.csv"
    with pytest.raises(BadInput, match=message):
        plan_reset("g", None, target, inputs())


@pytest.mark.parametrize("make, message", [
    (lambda: ToOffset(MAX_OFFSET + 1), "offset 9223372036854775808 is out of range"),
    (lambda: ShiftBy(-MAX_OFFSET - 1), "shift -9223372036854775808 is out of range"),
    (lambda: ShiftBy(MAX_OFFSET + 1), "shift 9223372036854775808 is out of range"),
    (lambda: FromFile({("orders", 0): MAX_OFFSET + 1}), "offset 9223372036854775808 of orders:0 is out of range"),
    (lambda: FromFile({("orders", MAX_PARTITION + 1): 0}), "partition 2147483648 of topic 'orders' is out of range"),
    (lambda: FromFile(PlanOffsets({("orders", -1): 0}, "plan.csv")), "^plan.csv: partition -1 of topic 'orders'"),
])
def test_targets_whose_numbers_do_not_fit_the_wire_are_bad_input(make, message):
    with pytest.raises(BadInput, match=message):
        make()


def test_targets_at_the_wire_limits_are_accepted():
    assert ToOffset(MAX_OFFSET).offset == MAX_OFFSET
    assert ShiftBy(-MAX_OFFSET).delta == -MAX_OFFSET
    assert FromFile({("orders", MAX_PARTITION): MAX_OFFSET}).offsets == {("orders", MAX_PARTITION): MAX_OFFSET}


def test_plans_record_the_committed_offset_they_replace_and_are_not_executed():
    plan = plan_reset("g", make_scope(["orders:0,2"], False), ToLatest(), inputs())
    assert plan.to_json() == {"group": "g", "executed": False, "timestamp_ms": None, "timestamp": None,
                              "partitions": [
        {"topic": "orders", "partition": 0, "current_offset": 30, "new_offset": 50, "clamped_from": None,
         "leader_epoch": None},
        {"topic": "orders", "partition": 2, "current_offset": None, "new_offset": 10, "clamped_from": None,
         "leader_epoch": None},
    ]}


# -- properties ------------------------------------------------------------------------------


@st.composite
def ranged_partition(draw):
    earliest = draw(st.integers(0, 10**9))
    latest = draw(st.integers(earliest, earliest + 10**9))
    committed = draw(st.integers(0, 3 * 10**9))
    return earliest, latest, committed


def single(earliest, latest, committed):
    tp = ("t", 0)
    return PlanInputs({"t": (0,)}, {tp: committed}, {tp: earliest}, {tp: latest})


@given(ranged_partition(), st.integers(-(10**10), 10**10))
def test_shift_by_always_lands_within_earliest_and_latest(partition, delta):
    earliest, latest, committed = partition
    plan = plan_reset("g", make_scope(["t"], False), ShiftBy(delta), single(earliest, latest, committed))
    new = plan.partitions[0].new_offset
    assert earliest <= new <= latest
    if earliest <= committed + delta <= latest:
        assert new == committed + delta


@given(ranged_partition(), st.integers(0, 10**10))
def test_to_offset_and_from_file_always_land_within_earliest_and_latest(partition, offset):
    earliest, latest, committed = partition
    for target in (ToOffset(offset), FromFile({("t", 0): offset})):
        new = plan_reset("g", make_scope(["t"], False), target, single(earliest, latest, committed)).partitions[0].new_offset
        assert new == min(max(offset, earliest), latest)


# -- datetimes -------------------------------------------------------------------


@pytest.mark.parametrize("text, expected_ms", [
    ("1970-01-01T00:00:00Z", 0),
    ("2024-02-29T12:30:15Z", 1709209815000),
    ("2024-02-29T12:30:15.5Z", 1709209815500),
    ("2024-02-29T12:30:15.123Z", 1709209815123),
    ("2024-02-29T12:30:15.123456789Z", 1709209815123),
    ("2024-02-29T14:30:15+02:00", 1709209815000),
    ("2024-02-29T14:30:15+0200", 1709209815000),
    ("2024-02-29T10:30:15-02", 1709209815000),
    ("2024-02-29t12:30:15z", 1709209815000),
])
def test_datetimes_parse_to_epoch_milliseconds(text, expected_ms):
    assert parse_datetime(text) == expected_ms


@pytest.fixture(params=["UTC", "America/New_York", "Asia/Kolkata"])
def machine_tz(request):
    """The process's local time zone set to each of three zones (TZ + time.tzset), restored after."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = request.param
    time.tzset()
    try:
        # The zone really applies (a missing tz database would silently leave UTC).
        assert (time.timezone != 0) == (request.param != "UTC"), (request.param, time.timezone)
        yield request.param
    finally:
        if before is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = before
        time.tzset()


def test_a_datetime_without_a_zone_is_utc_under_every_machine_time_zone(machine_tz):
    # kafka-consumer-groups.sh appends "Z" to a zone-less --to-datetime (Kafka's Utils.getDateTime).
    assert parse_datetime("2020-01-01T05:00:00") == 1577854800000
    assert parse_datetime("2024-02-29T12:30:15.123") == 1709209815123


@pytest.mark.parametrize("text", ["2020-01-01T00:00:00-05:00", "2020-01-01T10:30:00+05:30", "2020-01-01T05:00:00Z",
                                  "2020-01-01T10:30:00+0530", "2020-01-01T00:00:00-05"])
def test_an_explicit_zone_is_honoured_under_every_machine_time_zone(machine_tz, text):
    assert parse_datetime(text) == 1577854800000


@pytest.mark.parametrize("ms, text", [
    (0, "1970-01-01T00:00:00Z"),
    (1577854800000, "2020-01-01T05:00:00Z"),
    (1709209815123, "2024-02-29T12:30:15.123Z"),
    (-1, "1969-12-31T23:59:59.999Z"),
])
def test_format_utc_is_iso_8601_with_z_and_reads_back(ms, text):
    assert format_utc(ms) == text
    assert parse_datetime(text) == ms


@pytest.mark.parametrize("text", [
    "", "yesterday", "2024-02-29", "2024-02-29T12:30", "2024-02-30T00:00:00Z", "2024-13-01T00:00:00Z",
    "2024-02-29T24:00:00Z", "2024-02-29T12:30:15+25:00", "2024-02-29T12:30:15+02:75", "2024-02-29 12:30:15Z",
    "2024-02-29T12:30:15.Z", "2024-02-29T12:30:15.1234567890Z", "2024-02-29T12:30:15UTC",
])
def test_unparseable_datetimes_are_bad_input_showing_the_expected_form(text):
    with pytest.raises(BadInput, match=r"cannot parse date-time .*YYYY-MM-DDTHH:mm:SS"):
        parse_datetime(text)


# -- TOPIC:PARTITION=OFFSET -------------------------------------------------------------------


def test_offset_assignments_parse():
    assert parse_offset_assignment("orders:2=15") == (("orders", 2), 15)
    assert parse_offset_assignments(["orders:0=1", "orders:1=2", "orders:0=1"]) == {
        ("orders", 0): 1, ("orders", 1): 2}


@pytest.mark.parametrize("text, message", [
    ("orders=5", "is not TOPIC:PARTITION=OFFSET"),
    ("orders:1", "is not TOPIC:PARTITION=OFFSET"),
    (":1=5", "is not TOPIC:PARTITION=OFFSET"),
    ("orders:x=5", "partition 'x'"),
    ("orders:1=-5", "offset '-5'"),
    ("orders:1=", "offset ''"),
    ("or ders:1=5", "invalid topic name"),
    ("orders:1=\u00b2", "offset '\u00b2' in 'orders:1=\u00b2' is not a non-negative integer"),
    ("orders:0=99999999999999999999999",
     r"^offset 99999999999999999999999 in 'orders:0=99999999999999999999999' is too large \(at most 9223372036854775807\)$"),
    ("orders:0=9223372036854775808", "offset 9223372036854775808 .* is too large"),
    ("orders:2147483648=1", r"^partition 2147483648 in 'orders:2147483648=1' is too large \(at most 2147483647\)$"),
])
def test_malformed_offset_assignments_are_bad_input(text, message):
    with pytest.raises(BadInput, match=message):
        parse_offset_assignment(text)


def test_offset_assignments_at_the_wire_limits_parse():
    assert parse_offset_assignment(f"orders:{MAX_PARTITION}={MAX_OFFSET}") == (("orders", MAX_PARTITION), MAX_OFFSET)


def test_conflicting_or_missing_offset_assignments_are_bad_input():
    with pytest.raises(BadInput, match="orders:0 is given two different offsets"):
        parse_offset_assignments(["orders:0=1", "orders:0=2"])
    with pytest.raises(BadInput, match="at least one"):
        parse_offset_assignments([])
