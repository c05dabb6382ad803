"""The `groupctl` Typer application: global options and command groups.

Startup cost matters (`groupctl --help` is run interactively and by completion scripts): this
module and the command modules import neither kafka, kazoo nor pyspark at import time; each
command imports what it needs when it runs.
"""

from __future__ import annotations

from enum import Enum
from typing import Optional

import typer

from groupctl.cli import coordinator

app = typer.Typer(
    name="groupctl",
    help="Kafka consumer-group coordination: run a coordinator, inspect and repair groups.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class OutputFormat(str, Enum):
    table = "table"
    json = "json"


@app.callback()
def main_options(
    ctx: typer.Context,
    bootstrap: Optional[str] = typer.Option(
        None, envvar="GROUPCTL_BOOTSTRAP", help="Kafka bootstrap server HOST:PORT."),
    zk: Optional[str] = typer.Option(None, envvar="GROUPCTL_ZK", help="ZooKeeper connect string HOST:PORT\\[/chroot]."),
    output: OutputFormat = typer.Option(OutputFormat.table, help="table for people, json for scripts."),
) -> None:
    ctx.obj = {"bootstrap": bootstrap, "zk": zk, "output": output.value}


app.add_typer(coordinator.app, name="coordinator")
