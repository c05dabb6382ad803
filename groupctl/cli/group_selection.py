"""Which groups a command acts on: kafka-consumer-groups.sh's `--group G` (repeatable) and
`--all-groups` (KIP-379), beside groupctl's positional GROUP.

Invariants:
- Exactly one way of choosing is given: a positional GROUP and/or `--group`s, or `--all-groups`
  alone; anything else is BadInput (exit 2) before the cluster is contacted.
- `many` is true when `--group` or `--all-groups` was used: the command then answers with a
  GROUP column and, with `--output json`, an array of the objects it prints for one group, even
  for one `--group` (a script's output shape never depends on how many groups matched). The
  positional form alone keeps its single object.
- Named groups keep their order, without repeats; `--all-groups` is resolved by the command
  (`ops.groups.all_group_ids`) when it runs, sorted by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence

import typer

from groupctl.cli.errors import BadInput

GROUP_HELP = "A group (repeatable), as kafka-consumer-groups.sh takes it; answers as a list."
ALL_GROUPS_HELP = "Every group of the cluster (kafka-consumer-groups.sh --all-groups); answers as a list."


def group_option() -> List[str]:
    return typer.Option([], "--group", help=GROUP_HELP)


def all_groups_option() -> bool:
    return typer.Option(False, "--all-groups", help=ALL_GROUPS_HELP)


@dataclass(frozen=True)
class GroupChoice:
    named: tuple[str, ...]  # empty with every_group
    every_group: bool
    many: bool

    @property
    def several(self) -> bool:
        """More than one group named, or --all-groups: where kafka-consumer-groups.sh's CSV
        (`--export`) gains its group column (one `--group G` keeps topic,partition,offset)."""
        return self.every_group or len(self.named) > 1


def choose_groups(positional: Optional[Sequence[str] | str], groups: Sequence[str], all_groups: bool) -> GroupChoice:
    """The choice a command was given (`positional`: its GROUP argument(s), None or empty when
    not given); BadInput when it is none or ambiguous."""
    given = [positional] if isinstance(positional, str) else list(positional or ())
    named = tuple(dict.fromkeys([*given, *groups]))
    if all_groups and named:
        raise BadInput("give GROUP or --group GROUP (repeatable), or --all-groups, not both")
    if not all_groups and not named:
        raise BadInput("give GROUP, --group GROUP (repeatable) or --all-groups")
    return GroupChoice(named, all_groups, many=all_groups or bool(groups))
