"""CSV offset plans (groupctl.ops.plan_csv): kafka-consumer-groups.sh's 3-column form for one
group and 4-column form for several, detected per file, read strictly and written back exactly."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groupctl.errors import BadInput
from groupctl.ops.plan_csv import format_csv, parse_csv, split_fields
from groupctl.ops.reset import FromFile

# -- the 3-column form (one group) ------------------------------------------------------------


def test_a_3_column_plan_gives_its_offsets_to_any_group_and_remembers_its_source():
    plan = parse_csv("orders,0,5\norders,1,7\n", "plan.csv")
    assert (plan.columns, plan.groups) == (3, ())
    assert plan.offsets_for("a") == plan.offsets_for("b") == {("orders", 0): 5, ("orders", 1): 7}
    assert plan.offsets_for("a").source == "plan.csv" and FromFile(plan.offsets_for("a")).source == "plan.csv"


def test_csv_plans_allow_a_header_blank_lines_comments_and_spaces():
    text = "topic,partition,offset\n\n# exported by hand\n orders , 0 , 5 \norders,1,7\r\n"
    assert parse_csv(text, "plan.csv").offsets_for("g") == {("orders", 0): 5, ("orders", 1): 7}


@pytest.mark.parametrize("text, message", [
    ("orders,0,5\norders,1\n", r"^plan.csv:2: expected topic,partition,offset, got 'orders,1'$"),
    ("orders,0,5\n\norders,1,2,3\n", r"^plan.csv:3: expected topic,partition,offset, got 'orders,1,2,3' "
                                     r"\(line 1 has 3 fields: one form per file\)$"),
    ("orders,zero,5\n", r"plan.csv:1: partition 'zero' is not a non-negative integer"),
    ("orders,0,-5\n", r"plan.csv:1: offset '-5' is not a non-negative integer"),
    ("orders,0,5\nbad topic,0,1\n", r"plan.csv:2: invalid topic name 'bad topic'"),
    ("orders,0,5\norders,1,6\norders,0,7\n", r"plan.csv:3: orders:0 appears twice \(first on line 1\)"),
    ("orders,0,5\ntopic,partition,offset\n", r"plan.csv:2: partition 'partition'"),
    ("orders,0,99999999999999999999999\n", r"plan.csv:1: offset 99999999999999999999999 is too large \(at most 9223372036854775807\)"),
    ("orders,2147483648,5\n", r"plan.csv:1: partition 2147483648 is too large \(at most 2147483647\)"),
    ("orders,\u00b2,5\n", r"plan.csv:1: partition '\u00b2' is not a non-negative integer"),
    ("orders;0;5\n", r"^plan.csv:1: expected topic,partition,offset or group,topic,partition,offset, got 'orders;0;5'$"),
    ("", r"^plan.csv: no offsets"),
    ("topic,partition,offset\n# nothing\n", r"plan.csv: no offsets"),
])
def test_malformed_3_column_plans_are_bad_input_naming_the_line(text, message):
    with pytest.raises(BadInput, match=message):
        parse_csv(text, "plan.csv")


# -- the 4-column form (several groups) -------------------------------------------------------


def test_a_4_column_plan_carries_its_groups_in_file_order():
    plan = parse_csv("billing,orders,0,5\nads,orders,0,9\nbilling,orders,1,7\n", "plan.csv")
    assert (plan.columns, plan.groups) == (4, ("billing", "ads"))
    assert plan.offsets_for("billing") == {("orders", 0): 5, ("orders", 1): 7}
    assert plan.offsets_for("ads") == {("orders", 0): 9}


def test_a_4_column_plan_may_have_its_header_comments_and_quoted_group_ids():
    text = 'group,topic,partition,offset\n# two groups\n"a,b",orders,0,5\n" spaced ",orders,0,6\n"#hash",orders,0,7\n'
    plan = parse_csv(text, "plan.csv")
    assert plan.groups == ("a,b", " spaced ", "#hash")


def test_a_4_column_plan_has_no_offsets_for_a_group_it_does_not_name():
    plan = parse_csv("billing,orders,0,5\n", "plan.csv")
    with pytest.raises(BadInput, match=r"^plan.csv: no offsets for group 'ads' \(the file has 'billing'\)$"):
        plan.offsets_for("ads")


@pytest.mark.parametrize("text, message", [
    ("g,orders,0,5\norders,1,6\n", r"^plan.csv:2: expected group,topic,partition,offset, got 'orders,1,6' "
                                   r"\(line 1 has 4 fields: one form per file\)$"),
    ("g,orders,0,5\ng,orders,x,6\n", r"^plan.csv:2: partition 'x' is not a non-negative integer$"),
    ("g,orders,0,5\ng,orders,1,-6\n", r"^plan.csv:2: offset '-6' is not a non-negative integer$"),
    ("g,orders,0,5\n,orders,1,6\n", r"^plan.csv:2: the group id is empty$"),
    ("g,orders,0,5\ng,bad topic,1,6\n", r"^plan.csv:2: invalid topic name 'bad topic'$"),
    ("g,orders,0,5\nh,orders,0,5\ng,orders,0,6\n", r"^plan.csv:3: orders:0 of group 'g' appears twice \(first on line 1\)$"),
    ('"g,orders,0,5\n', r"^plan.csv:1: a quoted field is not closed$"),
    ('"g"x,orders,0,5\n', r"^plan.csv:1: unexpected text after a quoted field$"),
    ("g,orders,0,5\ng,orders,1,6,7\n", r"^plan.csv:2: expected group,topic,partition,offset, got 'g,orders,1,6,7'$"),
])
def test_malformed_4_column_plans_are_bad_input_naming_the_line(text, message):
    with pytest.raises(BadInput, match=message):
        parse_csv(text, "plan.csv")


def test_quoted_fields_are_kept_exactly_and_unquoted_ones_are_stripped():
    assert split_fields(' a , " b ""c"" " ,d', "x:1") == ["a", ' b "c" ', "d"]
    assert split_fields("a,,b", "x:1") == ["a", "", "b"]


def test_group_ids_are_quoted_only_where_csv_needs_it():
    rows = [("orders", 0, 5)]
    assert format_csv(rows) == "orders,0,5\n"
    assert format_csv(rows, "billing") == "billing,orders,0,5\n"
    assert format_csv(rows, 'a,"b"') == '"a,""b""",orders,0,5\n'
    assert format_csv(rows, "#x") == '"#x",orders,0,5\n'
    assert format_csv(rows, " x") == '" x",orders,0,5\n'


@pytest.mark.parametrize("group", ["a\nb", "a\rb", "a\x0cb", "a\u2028b"])
def test_a_group_id_with_a_line_break_cannot_be_written(group):
    with pytest.raises(BadInput, match="line break"):
        format_csv([("orders", 0, 5)], group)


# -- round trips ------------------------------------------------------------------------------

TOPICS = st.from_regex(r"[A-Za-z0-9._-]{1,20}", fullmatch=True).filter(lambda t: t not in (".", ".."))
OFFSETS = st.dictionaries(st.tuples(TOPICS, st.integers(0, 2**31 - 1)), st.integers(0, 2**63 - 1), min_size=1, max_size=8)
GROUP_IDS = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20).filter(
    lambda g: len(g.splitlines()) == 1 and g.splitlines()[0] == g)  # no line break: see the test above


@given(OFFSETS)
def test_a_3_column_plan_reads_back_what_was_written(offsets):
    text = format_csv((t, p, o) for (t, p), o in sorted(offsets.items()))
    assert parse_csv(text).offsets_for("any") == offsets


@given(st.dictionaries(GROUP_IDS, OFFSETS, min_size=1, max_size=5))
def test_a_4_column_plan_reads_back_every_group_as_written(by_group):
    text = "".join(format_csv(((t, p, o) for (t, p), o in sorted(offsets.items())), group)
                   for group, offsets in by_group.items())
    plan = parse_csv(text)
    assert plan.groups == tuple(by_group)
    assert {g: dict(plan.offsets_for(g)) for g in plan.groups} == by_group


def test_a_plan_file_saved_with_a_byte_order_mark_reads_as_without_one(tmp_path):
    from groupctl.ops.offsets import read_plan_file

    plan = tmp_path / "plan.csv"
    plan.write_text("orders,0,5\n", encoding="utf-8-sig")  # as spreadsheets save CSV
    assert read_plan_file(plan).offsets_for("g") == read_plan_file(_written(tmp_path, "orders,0,5\n")).offsets_for("g")


def _written(tmp_path, text: str):
    path = tmp_path / "plain.csv"
    path.write_text(text)
    return path
