"""The environment a command runs in: global options, the consoles, and error handling.

Commands get a `CliEnv` from the Typer context instead of reading globals, so tests can inject
consoles (CliRunner captures them) and environment variables (`GROUPCTL_BOOTSTRAP`,
`GROUPCTL_ZK`). `guard` turns the expected failures of ops (`OpsError`) and of the CLI itself
(`CliError`) into one line on stderr and the error's exit status — never a traceback.

`with_global_options` lets a command also take --bootstrap, --zk and --output after its name
(`groupctl group describe g --output json`), as operators type them; given there, they override
the same options given before the command and the environment variables. (`app` applies it to
every command that has no options of those names.)
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar

import typer
from rich.console import Console

from groupctl.cli.errors import BadInput, CliError, ExitStatus

if TYPE_CHECKING:
    from groupctl.client.kafka import Bootstrap

F = TypeVar("F", bound=Callable[..., Any])


class OutputFormat(str, Enum):
    table = "table"
    json = "json"


PIPED_WIDTH = 100_000
"""Output width when stdout is not a terminal: tables keep whole cells (member ids, hosts) for
the scripts reading them instead of folding or truncating them at 80 columns."""


def _stdout() -> Console:
    piped = not sys.stdout.isatty()
    return Console(file=sys.stdout, soft_wrap=True, width=PIPED_WIDTH if piped else None)


def _stderr() -> Console:
    return Console(file=sys.stderr, soft_wrap=True)


@dataclass
class CliEnv:
    bootstrap: Optional[str] = None
    zk: Optional[str] = None
    output: str = "table"
    command_config: Optional[Path] = None  # Kafka client properties: TLS and SASL (docs/security.md)
    zk_auth: Optional[str] = field(default=None, repr=False)  # "digest:USER:PASSWORD" or "@FILE"
    out: Console = field(default_factory=_stdout)
    err: Console = field(default_factory=_stderr)

    @property
    def json(self) -> bool:
        return self.output == "json"

    @property
    def interactive(self) -> bool:
        """Spinners and live views only for a person at a terminal; pipes stay quiet."""
        return self.err.is_terminal and not self.json

    def need_bootstrap(self) -> "Bootstrap":
        """The cluster to talk to, with the TLS/SASL settings of --command-config and
        GROUPCTL_KAFKA_* variables (BadInput without --bootstrap or with a bad setting)."""
        if not self.bootstrap:
            raise BadInput("this command needs --bootstrap HOST:PORT (or GROUPCTL_BOOTSTRAP)")
        return self.kafka()

    def kafka(self) -> Optional["Bootstrap"]:
        """`need_bootstrap()` when --bootstrap is given, else None."""
        if not self.bootstrap:
            return None
        from groupctl.client.kafka import Bootstrap
        from groupctl.client.security import load_security

        return Bootstrap(self.bootstrap, load_security(self.command_config, os.environ))

    def need_zk(self) -> str:
        if not self.zk:
            raise BadInput("this command needs --zk HOST:PORT[/chroot] (or GROUPCTL_ZK)")
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
_GLOBAL_OPTIONS = {
    "global_bootstrap": (Optional[str], typer.Option(
        None, "--bootstrap", help="Kafka bootstrap server HOST:PORT.", rich_help_panel=GLOBAL_PANEL)),
    "global_zk": (Optional[str], typer.Option(
        None, "--zk", help="ZooKeeper connect string HOST:PORT\\[/chroot].", rich_help_panel=GLOBAL_PANEL)),
    "global_output": (Optional[OutputFormat], typer.Option(
        None, "--output", help="table for people, json for scripts.", rich_help_panel=GLOBAL_PANEL)),
    "global_command_config": (Optional[Path], typer.Option(
        None, "--command-config", help=COMMAND_CONFIG_HELP, rich_help_panel=GLOBAL_PANEL)),
    "global_zk_auth": (Optional[str], typer.Option(
        None, "--zk-auth", metavar="digest:USER:PASSWORD|@FILE", help=ZK_AUTH_HELP, rich_help_panel=GLOBAL_PANEL)),
}


def with_global_options(command: F) -> F:
    """`command`, also accepting --bootstrap, --zk and --output after its name.

    The command must take `ctx: typer.Context`; the options are applied to its `CliEnv` before it
    runs and are not passed on."""
    signature = inspect.signature(command, eval_str=True)
    extra = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
             for name, (annotation, default) in _GLOBAL_OPTIONS.items()]

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        bootstrap, zk, output, command_config, zk_auth = (kwargs.pop(name, None) for name in _GLOBAL_OPTIONS)
        ctx = kwargs.get("ctx") or next((a for a in args if isinstance(a, typer.Context)), None)
        current = env(ctx)
        if bootstrap is not None:
            current.bootstrap = bootstrap
        if zk is not None:
            current.zk = zk
        if output is not None:
            current.output = output.value
        if command_config is not None:
            current.command_config = command_config
        if zk_auth is not None:
            current.zk_auth = zk_auth
        return command(*args, **kwargs)

    wrapper.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*signature.parameters.values(), *extra])
    wrapper.__annotations__ = {**getattr(command, "__annotations__", {}),
                               **{name: annotation for name, (annotation, _) in _GLOBAL_OPTIONS.items()}}
    return wrapper  # type: ignore[return-value]
