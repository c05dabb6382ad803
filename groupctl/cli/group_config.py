"""`groupctl group config show|set|delete GROUP`: a consumer group's own configs (Kafka 4's GROUP
config resources, `consumer.session.timeout.ms` and `consumer.heartbeat.interval.ms`), through any
Kafka 4 cluster or groupctl node (`groupctl.ops.group_configs`). Each command shows the group's
configs as they are after it: NAME, VALUE, SOURCE (GROUP_CONFIG for the group's own value,
DEFAULT_CONFIG for the broker's)."""

from __future__ import annotations

from typing import TYPE_CHECKING, List

import typer

from groupctl.cli import render
from groupctl.cli.context import CliEnv, env, guard

if TYPE_CHECKING:
    from groupctl.ops.group_configs import GroupConfigs

app = typer.Typer(help="Show and change a consumer group's configs (consumer.session.timeout.ms, "
                       "consumer.heartbeat.interval.ms).", no_args_is_help=True)


def show_configs(current: CliEnv, configs: "GroupConfigs") -> None:
    if current.json:
        render.emit_json(current, configs.to_json())
        return
    render.show(current, render.table(["NAME", "VALUE", "SOURCE"],
                                      [(c.name, c.value, c.source) for c in configs.configs]))


@app.command("show")
@guard
def show(ctx: typer.Context, group: str = typer.Argument(..., help="Group id.", show_default=False)) -> None:
    """Show the group's configs and where each value comes from."""
    from groupctl.ops.group_configs import show_group_configs

    current = env(ctx)
    show_configs(current, show_group_configs(current.need_bootstrap(), group))


@app.command("set")
@guard
def set_(
    ctx: typer.Context,
    group: str = typer.Argument(..., help="Group id.", show_default=False),
    values: List[str] = typer.Argument(..., metavar="KEY=VALUE...", help="The values to give the group.",
                                       show_default=False),
) -> None:
    """Give the group its own values (the others stay).

    The broker checks them against its group.consumer.* bounds and refuses them all if one is
    wrong."""
    from groupctl.ops.group_configs import parse_assignments, set_group_configs

    current = env(ctx)
    show_configs(current, set_group_configs(current.need_bootstrap(), group, parse_assignments(values)))


@app.command("delete")
@guard
def delete(
    ctx: typer.Context,
    group: str = typer.Argument(..., help="Group id.", show_default=False),
    keys: List[str] = typer.Argument(..., metavar="KEY...", help="The keys to return to the broker's defaults.",
                                     show_default=False),
) -> None:
    """Return keys to the broker's defaults."""
    from groupctl.ops.group_configs import delete_group_configs

    current = env(ctx)
    show_configs(current, delete_group_configs(current.need_bootstrap(), group, keys))
