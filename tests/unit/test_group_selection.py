"""Choosing groups as kafka-consumer-groups.sh does (`--group`, `--all-groups`) beside the
positional GROUP (`groupctl.cli.group_selection`)."""

import pytest

from groupctl.cli.errors import BadInput, ExitStatus
from groupctl.cli.group_selection import GroupChoice, choose_groups


def test_a_positional_group_alone_is_the_single_group_form():
    assert choose_groups("g", [], False) == GroupChoice(("g",), False, many=False)


def test_group_options_are_a_list_even_of_one_and_join_the_positional_without_repeats():
    assert choose_groups(None, ["a"], False) == GroupChoice(("a",), False, many=True)
    assert choose_groups("a", ["b", "a", "c"], False) == GroupChoice(("a", "b", "c"), False, many=True)
    assert choose_groups(["a", "b"], [], False) == GroupChoice(("a", "b"), False, many=False)


def test_all_groups_alone_is_every_group():
    assert choose_groups(None, [], True) == GroupChoice((), True, many=True)


@pytest.mark.parametrize("positional, groups, all_groups", [
    (None, [], False), ("g", [], True), (None, ["g"], True), ([], [], False)])
def test_no_choice_or_both_kinds_is_a_usage_error(positional, groups, all_groups):
    with pytest.raises(BadInput) as raised:
        choose_groups(positional, groups, all_groups)
    assert raised.value.status is ExitStatus.USAGE
