"""The environment a command runs in: global options, the consoles, and error handling.

Commands get a `CliEnv` from the Typer context instead of reading globals, so tests can inject
consoles (CliRunner captures them) and environment variables (`GROUPCTL_BOOTSTRAP`,
`GROUPCTL_ZK`). `guard` turns the expected failures of ops (`OpsError`) and of the CLI itself
(`CliError`) into one line on stderr and the error's exit status — never a traceback.

`with_global_options` lets a command also take the global options after its name
(`groupctl group describe g --output json`), as operators type them; given there, they override
the same options given before the command and the environment variables. (`app` applies it to
every command that has no options of those names; a command with its own `--timeout`, such as
`rebalance watch`, keeps it and takes the other global options.)

Settings (bootstrap, zk, command config, zk auth, timeout) come from the command line, else the
environment, else the chosen context (`--context` / GROUPCTL_CONTEXT, else the current context
of `groupctl.ops.contexts`), else the defaults: each setting on its own, except that a
context's credentials (command config, zk auth) are used only with its own bootstrap / zk. The contexts file is read
when a command first asks for a setting, inside `guard`, so that a malformed file or an unknown
context is one line and exit 2, and `--help` or commands that read no setting never read it.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import sys
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar

import click
import typer
from rich.console import Console

from groupctl.cli.errors import BadInput, CliError, ExitStatus

if TYPE_CHECKING:
    from groupctl.client.kafka import Bootstrap
    from groupctl.ops.contexts import Context

SETTINGS = ("bootstrap", "zk", "command_config", "zk_auth", "timeout_ms")
"""What a context can supply (`groupctl.ops.contexts.Context`'s fields); `CliEnv.given` wins."""
_CREDENTIALS_OF = {"command_config": "bootstrap", "zk_auth": "zk"}
"""A context's credentials and the address they are for: with another address given on the
command line or in the environment, the context's credentials are not used (they would go to a
cluster they were not meant for, a SASL password in clear to a SASL_PLAINTEXT listener)."""

F = TypeVar("F", bound=Callable[..., Any])


class OutputFormat(str, Enum):
    table = "table"
    json = "json"


PIPED_WIDTH = 100_000
"""Output width when stdout is not a terminal: tables keep whole cells (member ids, hosts) for
the scripts reading them instead of folding or truncating them at 80 columns."""


def _stdout() -> Console:
    """Ends groupctl quietly when its reader goes away (`closed_pipe`)."""
    from groupctl.cli.closed_pipe import end_quietly

    piped = not sys.stdout.isatty()
    return end_quietly(Console(file=sys.stdout, soft_wrap=True, width=PIPED_WIDTH if piped else None))


def _stderr() -> Console:
    from groupctl.cli.closed_pipe import end_quietly

    return end_quietly(Console(file=sys.stderr, soft_wrap=True))


_UNREAD = object()  # CliEnv._context before the contexts file is read


@dataclass
class CliEnv:
    output: str = "table"
    out: Console = field(default_factory=_stdout)
    err: Console = field(default_factory=_stderr)
    context: Optional[str] = None  # --context / GROUPCTL_CONTEXT (None: the current context, if any)
    given: dict[str, Any] = field(default_factory=dict, repr=False)
    """Settings from the command line or the environment, by `SETTINGS` name (zk_auth: secret)."""
    _context: Any = field(default=_UNREAD, init=False, repr=False)

    def give(self, **settings: Any) -> None:
        """Settings from the command line or the environment (None: not given there, left as
        they were); they win over the context's."""
        unknown = set(settings) - set(SETTINGS)
        if unknown:
            raise TypeError(f"not settings: {sorted(unknown)}")
        self.given.update((name, value) for name, value in settings.items() if value is not None)

    def chosen_context(self) -> Optional["Context"]:
        """The context in use: --context / GROUPCTL_CONTEXT when given, else the current one,
        else None. Read once, when a setting is first asked for; BadInput (exit 2) for an
        unknown context or a malformed file."""
        if self._context is _UNREAD:
            from groupctl.ops.contexts import config_path, load_contexts

            self._context = load_contexts(config_path(os.environ)).chosen(self.context)
        return self._context

    def _setting(self, name: str) -> Any:
        chosen = self.chosen_context()  # read even when given: a bad --context never goes unnoticed
        if name in self.given:
            return self.given[name]
        if chosen is None:
            return None
        address = _CREDENTIALS_OF.get(name)
        if address is not None and address in self.given and self.given[address] != getattr(chosen, address):
            return None  # a context's credentials go to its own cluster only
        return getattr(chosen, name)

    def for_server(self, name: str) -> Any:
        """A setting for a server this command starts (`coordinator run`): from the command line,
        the environment or a context chosen with --context / GROUPCTL_CONTEXT, but not the
        current context alone, so a production context left current never makes a local node
        (`make run`) join that cluster's ZooKeeper."""
        if self.context is None:
            return self.given.get(name)
        return self._setting(name)

    @property
    def bootstrap(self) -> Optional[str]:
        return self._setting("bootstrap")

    @property
    def zk(self) -> Optional[str]:
        return self._setting("zk")

    @property
    def command_config(self) -> Optional[Path]:
        """Kafka client properties: TLS, SASL, client.id, timeouts (docs/security.md)."""
        value = self._setting("command_config")
        return None if value is None else Path(value)

    @property
    def zk_auth(self) -> Optional[str]:
        """"digest:USER:PASSWORD" or "@FILE" (a secret: never printed)."""
        return self._setting("zk_auth")

    @property
    def timeout_ms(self) -> Optional[int]:
        """--timeout: the bound of every network wait, in milliseconds (None: each client's own)."""
        return self._setting("timeout_ms")

    @property
    def timeout_s(self) -> Optional[float]:
        """`timeout_ms` in seconds, as the clients and ops take it (None: their defaults)."""
        timeout_ms = self.timeout_ms
        return None if timeout_ms is None else timeout_ms / 1000

    @property
    def json(self) -> bool:
        return self.output == "json"

    @property
    def interactive(self) -> bool:
        """Spinners and live views only for a person at a terminal; pipes stay quiet."""
        return self.err.is_terminal and not self.json

    def need_bootstrap(self) -> "Bootstrap":
        """The cluster to talk to, with the TLS/SASL settings of --command-config and
        GROUPCTL_KAFKA_* variables and the bound of --timeout (BadInput without --bootstrap or
        with a bad setting)."""
        if not self.bootstrap:
            raise BadInput("this command needs --bootstrap HOST:PORT (or GROUPCTL_BOOTSTRAP, or a context's)")
        return self.kafka()

    def kafka(self) -> Optional["Bootstrap"]:
        """`need_bootstrap()` when --bootstrap is given, else None."""
        if not self.bootstrap:
            return None
        from groupctl.client.kafka import Bootstrap
        from groupctl.client.security import load_security

        return Bootstrap(self.bootstrap, load_security(self.command_config, os.environ), timeout_s=self.timeout_s)

    def need_zk(self) -> str:
        if not self.zk:
            raise BadInput("this command needs --zk HOST:PORT[/chroot] (or GROUPCTL_ZK, or a context's)")
        return self.zk

    def need_source(self) -> None:
        if not self.bootstrap and not self.zk:
            raise BadInput("this command needs --bootstrap HOST:PORT or --zk HOST:PORT[/chroot]")

    def status(self, message: str):
        """A spinner on stderr while a slow call runs (a no-op when not interactive)."""
        if self.interactive:
            return self.err.status(message)
        return _Quiet()


class _Quiet:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def env(ctx: typer.Context) -> CliEnv:
    root = ctx.find_root()
    if not isinstance(root.obj, CliEnv):
        root.obj = CliEnv()
    return root.obj


def fail(env_: CliEnv, message: str, status: int) -> None:
    env_.err.print(f"groupctl: error: {message}", markup=False, highlight=False)
    raise typer.Exit(status)


def guard(command: F) -> F:
    """Run `command`, turning expected failures into one line and an exit status."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from groupctl.errors import OpsError

        ctx = kwargs.get("ctx") or next((a for a in args if isinstance(a, typer.Context)), None)
        current = env(ctx) if ctx is not None else CliEnv()
        try:
            return command(*args, **kwargs)
        except CliError as exc:
            fail(current, str(exc), int(exc.status))
        except OpsError as exc:
            fail(current, str(exc), exc.exit_status)
        except KeyboardInterrupt:
            raise typer.Exit(130)
        except BrokenPipeError:
            raise typer.Exit(int(ExitStatus.OK))

    return wrapper  # type: ignore[return-value]


GLOBAL_PANEL = "Global options (also accepted before the command)"
COMMAND_CONFIG_HELP = ("Kafka client properties for TLS and SASL (Java or librdkafka names), as "
                       "kafka-consumer-groups.sh takes them.")
ZK_AUTH_HELP = "ZooKeeper digest authentication (or a file holding it)."
OUTPUT_HELP = "table for people, json for scripts."
TIMEOUT_HELP = ("Bound on every network wait, in milliseconds, as kafka-consumer-groups.sh's --timeout "
                "(default: 8000 for Kafka, 6000 for ZooKeeper).")


class Milliseconds(click.ParamType):
    """--timeout's value: a positive whole number of milliseconds (kafka-consumer-groups.sh's
    unit); anything else is a usage error, exit 2, before anything is contacted."""

    name = "MS"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> int:
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
        text = str(value).strip()
        if not re.fullmatch(r"[0-9]+", text) or int(text) < 1:
            self.fail(f"{value!r} is not a positive whole number of milliseconds", param, ctx)
        return int(text)


WATCH_TIMEOUT_HELP = ("Exit 1 if the count is not reached in this many seconds (how long to watch; the global "
                      "--timeout MS goes before the command).")
"""A watch's own --timeout (`rebalance watch`, `zk watch`), which keeps the global one from following it."""
CONTEXT_HELP = "Use this context's settings where no option or variable gives them (groupctl config)."
_GLOBAL_OPTIONS = {
    "global_bootstrap": (Optional[str], typer.Option(
        None, "--bootstrap", help="Kafka bootstrap server HOST:PORT.", rich_help_panel=GLOBAL_PANEL)),
    "global_zk": (Optional[str], typer.Option(
        None, "--zk", help="ZooKeeper connect string HOST:PORT\\[/chroot].", rich_help_panel=GLOBAL_PANEL)),
    "global_output": (Optional[OutputFormat], typer.Option(
        None, "--output", "-o", help=OUTPUT_HELP, rich_help_panel=GLOBAL_PANEL)),
    "global_command_config": (Optional[Path], typer.Option(
        None, "--command-config", help=COMMAND_CONFIG_HELP, rich_help_panel=GLOBAL_PANEL)),
    "global_zk_auth": (Optional[str], typer.Option(
        None, "--zk-auth", metavar="digest:USER:PASSWORD|@FILE", help=ZK_AUTH_HELP, rich_help_panel=GLOBAL_PANEL)),
    "global_timeout": (Optional[int], typer.Option(
        None, "--timeout", click_type=Milliseconds(), help=TIMEOUT_HELP, rich_help_panel=GLOBAL_PANEL)),
    "global_context": (Optional[str], typer.Option(
        None, "--context", metavar="NAME", help=CONTEXT_HELP, rich_help_panel=GLOBAL_PANEL)),
}
"""The options every command also takes after its name: `global_<name>` is the option `--<name>`."""


def with_global_options(command: F) -> F:
    """`command`, also accepting the global options after its name, except those it has options
    of its own for (`rebalance watch --timeout SECONDS`: its watch's duration).

    The command must take `ctx: typer.Context`; the options are applied to its `CliEnv` before it
    runs and are not passed on."""
    signature = inspect.signature(command, eval_str=True)
    options = {name: spec for name, spec in _GLOBAL_OPTIONS.items()
               if name.removeprefix("global_") not in signature.parameters}
    extra = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
             for name, (annotation, default) in options.items()]

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        given = {name.removeprefix("global_"): kwargs.pop(name, None) for name in options}
        ctx = kwargs.get("ctx") or next((a for a in args if isinstance(a, typer.Context)), None)
        current = env(ctx)
        output, context = given.pop("output", None), given.pop("context", None)
        if output is not None:
            current.output = output.value
        if context is not None:
            current.context = context
        current.give(timeout_ms=given.pop("timeout", None), **given)
        return command(*args, **kwargs)

    wrapper.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*signature.parameters.values(), *extra])
    wrapper.__annotations__ = {**getattr(command, "__annotations__", {}),
                               **{name: annotation for name, (annotation, _) in options.items()}}
    return wrapper  # type: ignore[return-value]
