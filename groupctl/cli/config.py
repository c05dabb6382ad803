"""`groupctl config ...`: contexts, named connection settings kept in
`$XDG_CONFIG_HOME/groupctl/config.toml` (`groupctl.ops.contexts`), as kubectl's and kafkactl's.

A command uses the context named by the global `--context NAME` (or GROUPCTL_CONTEXT), else the
current one (`use-context`), for each setting that neither an option nor an environment
variable gives. `set-context` stores only its own options (never environment variables, nor the
global options given before `config`). ZooKeeper credentials are never printed: `get-contexts`
shows whether a context has them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional

import typer

from groupctl.cli import render
from groupctl.cli.context import CliEnv, Milliseconds, env, guard

app = typer.Typer(help="Contexts: named settings (bootstrap, ZooKeeper, credentials, timeout) used by --context.",
                  no_args_is_help=True)

UNSET_NAMES = {"bootstrap": "bootstrap", "zk": "zk", "command-config": "command-config", "zk-auth": "zk-auth",
               "timeout": "timeout-ms", "timeout-ms": "timeout-ms"}
"""`set-context --unset` names (the options' names, and the file's keys) -> the file's keys."""


def _contexts():
    from groupctl.ops.contexts import config_path, load_contexts

    return load_contexts(config_path(os.environ))


def _save(contexts) -> None:
    from groupctl.ops.contexts import save_contexts

    save_contexts(contexts)


def _say(current: CliEnv, line: str) -> None:
    current.out.print(line, markup=False, highlight=False)


@app.command("get-contexts")
@guard
def get_contexts(ctx: typer.Context) -> None:
    """List the contexts; * marks the current one. ZooKeeper credentials show only as set or not.

    With --output json: [{name, current, bootstrap, zk, command_config, zk_auth_set, timeout_ms}]."""
    current = env(ctx)
    contexts = _contexts()
    if current.json:
        render.emit_json(current, [c.to_json(c.name == contexts.current) for c in contexts.contexts])
        return
    if not contexts.contexts:
        current.err.print(f"no contexts in {contexts.path} (add one: groupctl config set-context NAME "
                          "--bootstrap HOST:PORT)", markup=False, highlight=False)
        return
    render.show(current, render.table(
        ["CURRENT", "NAME", "BOOTSTRAP", "ZK", "COMMAND-CONFIG", "ZK-AUTH", "TIMEOUT-MS"],
        [("*" if c.name == contexts.current else "", c.name, c.bootstrap, c.zk, c.command_config,
          "set" if c.zk_auth is not None else None, c.timeout_ms) for c in contexts.contexts]))


@app.command("current-context")
@guard
def current_context(ctx: typer.Context) -> None:
    """Print the current context's name (exit 1 when none is set).

    With --output json: {"current_context": NAME}."""
    from groupctl.errors import NotFound

    current = env(ctx)
    contexts = _contexts()
    if contexts.current is None:
        raise NotFound(f"no current context is set in {contexts.path} (groupctl config use-context NAME)")
    if current.json:
        render.emit_json(current, {"current_context": contexts.current})
    else:
        _say(current, contexts.current)


@app.command("use-context")
@guard
def use_context(ctx: typer.Context, name: str = typer.Argument(..., help="Context name.")) -> None:
    """Make NAME the current context: commands use it when --context and GROUPCTL_CONTEXT are not given."""
    from groupctl.ops.contexts import use_context as use

    _save(use(_contexts(), name))
    _say(env(ctx), f"switched to context {name!r}")


@app.command("set-context")
@guard
def set_context(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="Context name (created when new)."),
    bootstrap: Optional[str] = typer.Option(None, help="Kafka bootstrap servers HOST:PORT[,HOST:PORT...]."),
    zk: Optional[str] = typer.Option(None, help="ZooKeeper connect string HOST:PORT\\[/chroot]."),
    command_config: Optional[Path] = typer.Option(
        None, help="Kafka client properties file (TLS, SASL, timeouts); stored as an absolute path."),
    zk_auth: Optional[str] = typer.Option(
        None, metavar="digest:USER:PASSWORD|@FILE",
        help="ZooKeeper digest authentication; @FILE keeps the password out of shell history."),
    timeout: Optional[int] = typer.Option(None, click_type=Milliseconds(),
                                          help="The global --timeout, in milliseconds."),
    unset: List[str] = typer.Option(
        [], metavar="FIELD", help="Remove a field: bootstrap, zk, command-config, zk-auth or timeout (repeatable)."),
) -> None:
    """Create context NAME, or change the fields given (the others are kept).

    Only these options are stored (not environment variables or global options); mode 0600, paths absolute."""
    from groupctl.cli.errors import BadInput
    from groupctl.ops.contexts import set_context as store

    unknown = [field for field in unset if field not in UNSET_NAMES]
    if unknown:
        raise BadInput(f"--unset {unknown[0]!r}: expected one of bootstrap, zk, command-config, zk-auth, timeout")
    values = {"bootstrap": bootstrap, "zk": zk, "zk-auth": zk_auth, "timeout-ms": timeout,
              "command-config": None if command_config is None else str(command_config)}
    contexts = _contexts()
    existed = name in contexts.names
    _save(store(contexts, name, {key: value for key, value in values.items() if value is not None},
                [UNSET_NAMES[field] for field in unset]))
    _say(env(ctx), f"context {name!r} {'modified' if existed else 'created'}")


@app.command("delete-context")
@guard
def delete_context(ctx: typer.Context, name: str = typer.Argument(..., help="Context name.")) -> None:
    """Delete context NAME (deleting the current one leaves no context current)."""
    from groupctl.ops.contexts import delete_context as delete

    contexts = _contexts()
    _save(delete(contexts, name))
    note = "; no context is current now" if contexts.current == name else ""
    _say(env(ctx), f"context {name!r} deleted{note}")
