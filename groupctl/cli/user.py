"""`groupctl user ...`: SCRAM credentials, through a cluster (--bootstrap) or in ZooKeeper (--zk).

A password is read from stdin (`--password-stdin`, one line) or prompted for without echo on a
terminal; never from the command line, where `ps` and shell history would keep it. Nothing
printed names it.
"""

from __future__ import annotations

import sys
from enum import Enum
from typing import List, Optional

import typer

from groupctl import defaults
from groupctl.cli import render
from groupctl.cli.context import CliEnv, env, guard
from groupctl.cli.errors import BadInput

app = typer.Typer(help="Add, remove and list users' SCRAM credentials.", no_args_is_help=True)


class Mechanism(str, Enum):
    scram_sha_256 = "SCRAM-SHA-256"
    scram_sha_512 = "SCRAM-SHA-512"


@app.command("add")
@guard
def add(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="User name (the SASL username)."),
    mechanism: Mechanism = typer.Option(Mechanism.scram_sha_256, case_sensitive=False,
                                        help="The SCRAM mechanism of the credential."),
    iterations: int = typer.Option(defaults.SCRAM_ITERATIONS, help="PBKDF2 iterations: 4096 to 16384, as Kafka takes."),
    password_stdin: bool = typer.Option(False, "--password-stdin",
                                        help="Read the password from stdin (one line); else prompt on a terminal."),
) -> None:
    """Set NAME's SCRAM credential for a mechanism: a new user, or a new password.

    The same credential serves SASL/PLAIN. With --zk it is written to ZooKeeper directly (so the
    first user can exist before any node starts); with --bootstrap only a salt and the salted
    password travel, as kafka-configs.sh sends them."""
    from groupctl.ops.users import add_user

    current = env(ctx)
    current.need_source()
    password = _read_password(password_stdin)
    with current.status(f"setting the credential of {name}"):
        change = add_user(name, password, mechanism=mechanism.value, iterations=iterations,
                          bootstrap=current.kafka(), zk=current.zk, zk_auth=current.zk_auth,
                          timeout_s=current.timeout_s)
    if current.json:
        render.emit_json(current, change.to_json())
        return
    _say(current, f"{change.added.mechanism} credential of user {name} set "
                  f"({change.added.iterations} iterations) via {change.source}")


@app.command("remove")
@guard
def remove(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="User name."),
    mechanism: Optional[Mechanism] = typer.Option(None, case_sensitive=False,
                                                  help="Remove this mechanism's credential only (default: all)."),
) -> None:
    """Remove NAME's SCRAM credentials (every mechanism's, or one); the user can no longer log in
    with SCRAM or PLAIN once none is left."""
    from groupctl.ops.users import remove_user

    current = env(ctx)
    current.need_source()
    with current.status(f"removing the credentials of {name}"):
        change = remove_user(name, mechanism=mechanism.value if mechanism else None,
                             bootstrap=current.kafka(), zk=current.zk, zk_auth=current.zk_auth,
                             timeout_s=current.timeout_s)
    if current.json:
        render.emit_json(current, change.to_json())
        return
    _say(current, f"removed the {', '.join(change.removed)} credential(s) of user {name} via {change.source}")


@app.command("list")
@guard
def list_(
    ctx: typer.Context,
    names: List[str] = typer.Argument(None, help="Users to show (default: every user with a credential)."),
) -> None:
    """List users and the mechanisms and iteration counts of their SCRAM credentials (never
    salts or keys). A named user without credentials fails (exit 1)."""
    from groupctl.ops.users import list_users

    current = env(ctx)
    current.need_source()
    with current.status("listing users"):
        users = list_users(names or (), bootstrap=current.kafka(), zk=current.zk, zk_auth=current.zk_auth,
                           timeout_s=current.timeout_s)
    if current.json:
        render.emit_json(current, [u.to_json() for u in users])
        return
    render.show(current, render.table(
        ["USER", "MECHANISM", "ITERATIONS"],
        [(u.user, c.mechanism, c.iterations) for u in users for c in u.credentials]))


def _read_password(from_stdin: bool) -> str:
    """The password: one line of stdin, or typed twice at a prompt without echo."""
    if from_stdin:
        text = sys.stdin.read()
        password = text[:-1] if text.endswith("\n") else text
        password = password[:-1] if password.endswith("\r") else password
        if "\n" in password or "\r" in password:
            raise BadInput("--password-stdin takes one line: the password")
        return password
    if not sys.stdin.isatty():
        raise BadInput("give the password on stdin with --password-stdin, or run on a terminal to be "
                       "prompted (a password is never a command-line argument)")
    import click

    return click.prompt("Password", hide_input=True, confirmation_prompt=True, err=True)


def _say(current: CliEnv, line: str) -> None:
    current.out.print(line, markup=False, highlight=False)
