"""Durations (groupctl.ops.durations): the units operators type (30m, 1h, 2d, 1h30m, 500ms) and
ISO-8601 as kafka-consumer-groups.sh's --by-duration takes it (PT1H, PnDTnHnMnS)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groupctl.errors import BadInput
from groupctl.ops.durations import parse_duration_ms


@pytest.mark.parametrize("text, expected_ms", [
    ("500ms", 500), ("90s", 90_000), ("30m", 1_800_000), ("1h", 3_600_000), ("2d", 172_800_000),
    ("1h30m", 5_400_000), ("1d12h", 129_600_000), ("1.5h", 5_400_000), ("0.5s", 500), ("0s", 0), (" 1h ", 3_600_000),
])
def test_durations_in_units_parse_to_milliseconds(text, expected_ms):
    assert parse_duration_ms(text) == expected_ms


@pytest.mark.parametrize("text, expected_ms", [
    ("PT30M", 1_800_000),
    ("PT1H", 3_600_000),
    ("P1D", 86_400_000),
    ("P1DT2H3M4S", 93_784_000),
    ("PT0.5S", 500),
    ("PT1,25S", 1_250),
    ("pt10s", 10_000),
    ("PT0S", 0),
    ("P2DT0H", 172_800_000),
])
def test_iso_8601_durations_parse_to_milliseconds(text, expected_ms):
    assert parse_duration_ms(text) == expected_ms


@pytest.mark.parametrize("text", ["", "P", "PT", "P1DT", "30M", "1H", "PT-5M", "-1h", "P1W", "P1Y", "P1M", "PT1H2",
                                  "PT1.S", "P1H", "5min", "1h 30m", "h", "1.h", "10", "\u0661s", "PT\u0661H"])
def test_anything_else_is_bad_input_showing_the_accepted_forms(text):
    with pytest.raises(BadInput, match=r"^cannot parse duration '.*': expected e\.g\. 30m, 1h, 2d, .*PnDTnHnMnS"):
        parse_duration_ms(text)


def test_the_error_names_the_option_when_given():
    with pytest.raises(BadInput, match=r"^--by-duration 'soon' is not a duration: expected"):
        parse_duration_ms("soon", "--by-duration")


def test_a_bare_number_is_seconds_only_where_the_caller_allows_it():
    assert parse_duration_ms("10", bare_seconds=True) == 10_000
    assert parse_duration_ms("0.25", bare_seconds=True) == 250
    with pytest.raises(BadInput, match="a bare number is seconds"):
        parse_duration_ms("ten", "--interval", bare_seconds=True)


@given(st.integers(0, 10**6), st.integers(0, 23), st.integers(0, 59), st.integers(0, 59))
def test_the_unit_and_iso_spellings_of_one_duration_agree(days, hours, minutes, seconds):
    units = parse_duration_ms(f"{days}d{hours}h{minutes}m{seconds}s")
    assert units == parse_duration_ms(f"P{days}DT{hours}H{minutes}M{seconds}S") == (
        ((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000
