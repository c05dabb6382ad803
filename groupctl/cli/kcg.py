"""`groupctl kafka-consumer-groups ARGS...`: a kafka-consumer-groups.sh command line, run as the
groupctl command that does the same.

Operators have K-CG lines in their fingers and scripts; `translate` turns one into groupctl's
spelling (`--describe --group g` -> `group describe --group g --offsets`), and the command runs
it in this process with the same global options (`--context`, `-o json`, ...). `--print` shows
the translation instead, which is also how one learns groupctl's own spelling.

Invariants:
- Exactly one action (`--list`, `--describe`, `--delete`, `--reset-offsets`, `--delete-offsets`)
  and K-CG's own combination rules (checked as its ConsumerGroupCommandOptions checks them);
  anything else is BadInput (exit 2) before any contact.
- What K-CG defaults to, the translation says: `--describe` alone shows the offsets table only;
  `--reset-offsets` without `--execute` is a dry run. `--timeout MS` is passed on only when
  given (K-CG's 5000 ms default bounds its describe's wait for a group to stabilize; groupctl's
  own bound on each command's network waits applies otherwise).
- Every option K-CG has is either translated or refused by name; nothing is silently dropped.
"""

from __future__ import annotations

import argparse
import shlex
from typing import Sequence

import click

from groupctl.cli.context import env, guard
from groupctl.cli.errors import BadInput

ACTIONS = ("list", "describe", "delete", "reset_offsets", "delete_offsets")
RESET_TARGETS = ("to_offset", "shift_by", "to_datetime", "by_duration", "to_earliest", "to_latest", "to_current",
                 "from_file")


class _Parser(argparse.ArgumentParser):
    """argparse that raises BadInput instead of printing usage and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise BadInput(f"kafka-consumer-groups: {message}")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="groupctl kafka-consumer-groups", add_help=False, allow_abbrev=False)
    add = parser.add_argument
    add("--bootstrap-server")
    add("--command-config")
    add("--timeout", type=int)
    add("--group", action="append", default=[])
    add("--all-groups", action="store_true")
    add("--topic", action="append", default=[])
    add("--all-topics", action="store_true")
    for action in ACTIONS:
        add(f"--{action.replace('_', '-')}", action="store_true")
    add("--members", action="store_true")
    add("--offsets", action="store_true")
    add("--verbose", action="store_true")
    add("--state", nargs="?", const="")
    add("--type", nargs="?", const="")
    add("--dry-run", action="store_true")
    add("--execute", action="store_true")
    add("--export", action="store_true")
    add("--to-offset", type=int)
    add("--shift-by", type=int)
    add("--to-datetime")
    add("--by-duration")
    add("--from-file")
    for flag in ("--to-earliest", "--to-latest", "--to-current"):
        add(flag, action="store_true")
    return parser


def translate(args: Sequence[str]) -> list[str]:
    """The groupctl command line (global options first) doing what kafka-consumer-groups.sh
    would do with `args`; BadInput for a line K-CG would refuse or groupctl cannot run."""
    options = _parser().parse_args(list(args))
    chosen = [a for a in ACTIONS if getattr(options, a)]
    if len(chosen) != 1:
        raise BadInput("kafka-consumer-groups: give exactly one of --list, --describe, --delete, --reset-offsets, "
                       "--delete-offsets")
    action = chosen[0]
    if not options.bootstrap_server:
        raise BadInput("kafka-consumer-groups: --bootstrap-server is required")
    line = ["--bootstrap", options.bootstrap_server]
    if options.timeout is not None and options.timeout < 1:
        raise BadInput(f"kafka-consumer-groups: --timeout {options.timeout}: a positive number of milliseconds")
    if options.timeout is not None:
        line += ["--timeout", str(options.timeout)]
    if options.command_config:
        line += ["--command-config", options.command_config]
    _refuse_foreign(options, action)
    return line + _ACTION_LINES[action](options)


_ALLOWED = {
    "list": {"state", "type"},
    "describe": {"group", "all_groups", "members", "offsets", "verbose", "state"},
    "delete": {"group", "all_groups"},
    "reset_offsets": {"group", "all_groups", "topic", "all_topics", "dry_run", "execute", "export",
                      *RESET_TARGETS},
    "delete_offsets": {"group", "topic"},
}
_COMMON = {"bootstrap_server", "command_config", "timeout", *ACTIONS}


def _refuse_foreign(options: argparse.Namespace, action: str) -> None:
    """K-CG's availableIf/mutual-exclusion rules: an option that does not go with the action."""
    defaults = vars(_parser().parse_args([]))
    for name, value in vars(options).items():
        if name in _COMMON or name in _ALLOWED[action] or value == defaults[name]:
            continue
        raise BadInput(f"kafka-consumer-groups: --{name.replace('_', '-')} does not go with "
                       f"--{action.replace('_', '-')}")


def _groups(options: argparse.Namespace, action: str) -> list[str]:
    if options.all_groups and options.group:
        raise BadInput(f"kafka-consumer-groups: --{action} takes --group or --all-groups, not both")
    if options.all_groups:
        return ["--all-groups"]
    if not options.group:
        raise BadInput(f"kafka-consumer-groups: --{action} takes one of these options: --group, --all-groups")
    return [arg for group in options.group for arg in ("--group", group)]


def _list(options: argparse.Namespace) -> list[str]:
    line = ["group", "list"]
    for flag, value in (("--state", options.state), ("--type", options.type)):
        if value:  # K-CG's bare --state/--type shows the column, which groupctl always shows
            line += [flag, value]
    return line


def _describe(options: argparse.Namespace) -> list[str]:
    sections = [flag for flag, given in (("--members", options.members), ("--offsets", options.offsets),
                                         ("--state", options.state is not None)) if given]
    if len(sections) > 1:
        raise BadInput("kafka-consumer-groups: --describe takes at most one of these options: --members, --offsets, "
                       "--state")
    if options.state:
        raise BadInput("kafka-consumer-groups: --describe does not take a value for --state")
    return ["group", "describe", *_groups(options, "describe"), *(sections or ["--offsets"]),
            *(["--verbose"] if options.verbose else [])]


def _delete(options: argparse.Namespace) -> list[str]:
    selection = _groups(options, "delete")
    # K-CG deletes every group it can without asking; groupctl asks for --force on --all-groups.
    return ["group", "delete", *selection, *(["--force"] if options.all_groups else [])]


def _reset(options: argparse.Namespace) -> list[str]:
    if options.dry_run and options.execute:
        raise BadInput("kafka-consumer-groups: --reset-offsets only accepts one of --execute and --dry-run")
    targets = [t for t in RESET_TARGETS if getattr(options, t) not in (None, False)]
    if len(targets) != 1:
        raise BadInput("kafka-consumer-groups: --reset-offsets takes exactly one of --to-offset, --shift-by, "
                       "--to-datetime, --by-duration, --to-earliest, --to-latest, --to-current, --from-file")
    if not (options.topic or options.all_topics or options.from_file):
        raise BadInput("kafka-consumer-groups: --reset-offsets takes --topic or --all-topics (or --from-file)")
    line = ["offsets", "reset", *_groups(options, "reset-offsets")]
    line += [arg for topic in options.topic for arg in ("--topic", topic)]
    line += ["--all-topics"] if options.all_topics else []
    target = targets[0]
    value = getattr(options, target)
    line += [f"--{target.replace('_', '-')}"] + ([] if value is True else [str(value)])
    line += ["--execute"] if options.execute else ["--dry-run"]
    return line + (["--export"] if options.export else [])


def _delete_offsets(options: argparse.Namespace) -> list[str]:
    if len(options.group) != 1 or not options.topic:
        raise BadInput("kafka-consumer-groups: --delete-offsets takes one --group and --topic")
    return ["offsets", "delete", options.group[0], *[arg for topic in options.topic for arg in ("--topic", topic)]]


_ACTION_LINES = {"list": _list, "describe": _describe, "delete": _delete, "reset_offsets": _reset,
                 "delete_offsets": _delete_offsets}


def quoted(line: Sequence[str]) -> str:
    """`line` as a shell would need it typed, after `groupctl` (for `--print`)."""
    return " ".join(["groupctl", *(shlex.quote(arg) for arg in line)])


def _settings(line: Sequence[str]) -> tuple[dict, list[str]]:
    """`translate`'s line as (the global settings it gives, the command and its arguments)."""
    settings: dict = {}
    rest = list(line)
    while rest and rest[0] in _GLOBALS:
        settings[_GLOBALS[rest[0]]] = rest[1]
        rest = rest[2:]
    if "timeout_ms" in settings:
        settings["timeout_ms"] = int(settings["timeout_ms"])
    return settings, rest


_GLOBALS = {"--bootstrap": "bootstrap", "--timeout": "timeout_ms", "--command-config": "command_config"}


@guard
def run_kcg(ctx: click.Context, args: Sequence[str], *, print_only: bool) -> None:
    """Translate `args` and run the command in this process, under the same root context (so
    --context, -o and the consoles given before `kafka-consumer-groups` apply), or print it."""
    line = translate(args)
    current = env(ctx)
    if print_only:
        current.out.print(quoted(line), markup=False, highlight=False, soft_wrap=True)
        return
    settings, command = _settings(line)
    current.give(**settings)
    root = ctx.find_root()
    group = root.command.get_command(root, command[0])
    with group.make_context(command[0], command[1:], parent=root) as sub_ctx:
        group.invoke(sub_ctx)
