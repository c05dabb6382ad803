"""The `groupctl` Typer application: global options and command groups.

Usage errors found while parsing (an unknown option, `--to-offset abc`) are reported like every
other expected failure: one line on stderr, `groupctl: error: ...`, exit status 2.

Startup cost matters (`groupctl --help` is run interactively and by completion scripts;
bench/cli_latency.py measures it): this module and the command modules import neither kafka,
kazoo nor pyspark at import time; each command imports what it needs when it runs. A command
group's module is imported, and its click commands built, only when the group is looked up
(`LazyCommandGroups`): `groupctl group describe` does not build `offsets`, `zk`, ...; `--help`
and completion, which list every group, load them all.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
import sys
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any, Optional

import click
import typer
from typer.core import TyperGroup

from groupctl.cli.context import (
    COMMAND_CONFIG_HELP,
    CONTEXT_HELP,
    OUTPUT_HELP,
    TIMEOUT_HELP,
    ZK_AUTH_HELP,
    Milliseconds,
    OutputFormat,
    env,
    with_global_options,
)


COMMAND_GROUPS = {
    "coordinator": "groupctl.cli.coordinator",
    "group": "groupctl.cli.group",
    "offsets": "groupctl.cli.offsets",
    "zk": "groupctl.cli.zk",
    "rebalance": "groupctl.cli.rebalance",
    "lag": "groupctl.cli.lag",
    "analyze": "groupctl.cli.analyze",
    "members": "groupctl.cli.members",
    "user": "groupctl.cli.user",
    "acl": "groupctl.cli.acl",
    "transactions": "groupctl.cli.transactions",
    "config": "groupctl.cli.config",
}
"""Command group name -> the module whose Typer `app` implements it, in help order."""


class LazyCommandGroups(MutableMapping[str, click.Command]):
    """The root command's `commands` mapping: name -> click command, building a group from its
    module (`COMMAND_GROUPS`) on first lookup.

    Names (iteration, `in`, `keys()`) never load anything; any lookup (`[name]`, `get`,
    `items()`, `values()`) loads what it returns. click and Typer reach subcommands only through
    this mapping, so resolving `group describe` loads `group` alone, while help, completion and
    anything walking `items()` see the whole tree.
    """

    def __init__(self, modules: dict[str, str]) -> None:
        self._entries: dict[str, str | click.Command] = dict(modules)  # str: module not loaded yet

    def __getitem__(self, name: str) -> click.Command:
        entry = self._entries[name]
        if isinstance(entry, str):
            entry = self._entries[name] = _load_group(name, entry)
        return entry

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._entries[name] = command

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


def _load_group(name: str, module: str) -> click.Command:
    """The click group for `module`'s Typer app, as `app.add_typer(module.app, name=name)` builds it."""
    command = typer.main.get_group(_command_group_app(module))
    command.name = name
    return command


@functools.cache
def _command_group_app(module: str) -> typer.Typer:
    """`module`'s Typer app, its commands accepting the global options (once per process: the
    click tree is rebuilt for every `get_command(app)`, the app is not)."""
    sub_app = importlib.import_module(module).app
    _accept_global_options_after_commands(sub_app)
    return sub_app


COMMAND_ALIASES = {"kafka-consumer-groups.sh": "kafka-consumer-groups"}
"""Names a command also answers to, not listed in help: a K-CG line pasted with its script name."""


class OneLineUsageErrors(TyperGroup):
    """The root command: parsing errors become one line instead of a usage box; command groups
    load on first use (`LazyCommandGroups`)."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> Optional[click.Command]:
        return super().get_command(ctx, COMMAND_ALIASES.get(cmd_name, cmd_name))

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        commands = LazyCommandGroups(COMMAND_GROUPS)
        commands.update(self.commands)  # any command registered on `app` itself
        self.commands = commands

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        from groupctl.cli import help_layout

        help_layout.install()  # before parsing, which prints help
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            status = super().main(*args, standalone_mode=False, **kwargs)
        except click.exceptions.NoArgsIsHelpError as exc:
            exc.show()  # a command group given no command: its help
            sys.exit(exc.exit_code)
        except click.UsageError as exc:
            hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
            # Typer and click each append their "Did you mean ...?" suggestion: keep one.
            message = re.sub(r"(Did you mean [^?]*\?)( \1)+", r"\1", " ".join(exc.format_message().split()))
            print(f"groupctl: error: {message}{hint}", file=sys.stderr)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            print(f"groupctl: error: {' '.join(exc.format_message().split())}", file=sys.stderr)
            sys.exit(exc.exit_code)
        except click.Abort:
            print("groupctl: aborted", file=sys.stderr)
            sys.exit(1)
        sys.exit(status if isinstance(status, int) else 0)


app = typer.Typer(
    cls=OneLineUsageErrors,
    name="groupctl",
    help="Kafka consumer-group coordination: run a coordinator, inspect and repair groups.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def main_options(
    ctx: typer.Context,
    bootstrap: Optional[str] = typer.Option(
        None, envvar="GROUPCTL_BOOTSTRAP", help="Kafka bootstrap server HOST:PORT."),
    zk: Optional[str] = typer.Option(None, envvar="GROUPCTL_ZK", help="ZooKeeper connect string HOST:PORT\\[/chroot]."),
    output: OutputFormat = typer.Option(OutputFormat.table, "--output", "-o", help=OUTPUT_HELP),
    command_config: Optional[Path] = typer.Option(
        None, envvar="GROUPCTL_COMMAND_CONFIG", help=COMMAND_CONFIG_HELP),
    zk_auth: Optional[str] = typer.Option(
        None, envvar="GROUPCTL_ZK_AUTH", show_envvar=False, metavar="digest:USER:PASSWORD|@FILE",
        help=ZK_AUTH_HELP + " Env: GROUPCTL_ZK_AUTH."),
    timeout: Optional[int] = typer.Option(
        None, "--timeout", envvar="GROUPCTL_TIMEOUT_MS", click_type=Milliseconds(), help=TIMEOUT_HELP),
    context: Optional[str] = typer.Option(
        None, "--context", envvar="GROUPCTL_CONTEXT", metavar="NAME", help=CONTEXT_HELP),
) -> None:
    current = env(ctx)
    current.output, current.context = output.value, context
    current.give(bootstrap=bootstrap, zk=zk, command_config=command_config, zk_auth=zk_auth, timeout_ms=timeout)


@app.command(
    "kafka-consumer-groups",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    help="Run a kafka-consumer-groups.sh command line (its options, after this command's name) as the "
    "groupctl command that does the same, checked with K-CG's rules and defaults. Global options "
    "(--context, -o json, ...) go before it. docs/kafka-consumer-groups.md has the mapping.\n\n"
    "Example: groupctl kafka-consumer-groups --bootstrap-server kafka:9092 --describe --group billing")
def kafka_consumer_groups(
    ctx: typer.Context,
    print_only: bool = typer.Option(
        False, "--print", help="Print the groupctl command instead of running it."),
) -> None:
    from groupctl.cli.kcg import run_kcg

    run_kcg(ctx, ctx.args, print_only=print_only)


def _accept_global_options_after_commands(sub_app: typer.Typer) -> None:
    """Every command that reads the global options also takes them after its name (except one
    with options of those names, such as `coordinator run --zk`, which reads the global value
    itself when its own is not given, or `config set-context --bootstrap`, which stores it).
    A command with its own `--timeout` (`rebalance watch`, `zk watch`: how long to watch, in
    seconds) takes the others after its name; the global `--timeout MS` goes before it."""
    for command in sub_app.registered_commands:
        parameters = inspect.signature(command.callback).parameters
        if "ctx" in parameters and not any(name in parameters for name in ("bootstrap", "zk", "output", "zk_auth")):
            command.callback = with_global_options(command.callback)
