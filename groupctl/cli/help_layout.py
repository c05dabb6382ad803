"""Help a person can read at 80 columns: every option name whole, only the help text wraps.

Typer's rich help (`typer.rich_utils`) lays each panel of options out as a table whose columns
(names, negative names, metavar, help) all shrink when the terminal is narrow, so at 80 columns
`--min-session-timeout-ms` printed as `--min-session-t…`, an option no one can type from the
help. This module lays the panels out again (`_options_panel`, typer's cells and styles):
- the names (long names, negative names on the next line) and the short names keep their full
  width (`no_wrap`: rich never narrows such a column); the metavar and the help text wrap in what
  is left, a word wider than the column (a Kafka setting) folding whole;
- the help console ends quietly with status 0 when its reader goes away (`closed_pipe`).

`install` runs before the command line is parsed (`app.OneLineUsageErrors.main`): help is
printed while parsing (`--help`, a command group given no command). It only wraps typer's
`format_help` of commands and groups, so that `typer.rich_utils`, tens of milliseconds to import,
is imported and adapted when help is printed, never by other commands. typer is pinned
(`>=0.24,<0.25`, pyproject.toml) because this replaces two of its private functions,
`_get_rich_console` and `_print_options_panel`; tests/cli/test_help_width.py renders every
command's help at 80 columns and fails on a cut name.
"""

from __future__ import annotations

import inspect
import re
from typing import TYPE_CHECKING, Any, Callable

from groupctl.cli import closed_pipe

if TYPE_CHECKING:
    import click
    from rich.console import Console
    from rich.text import Text


def install() -> None:
    """Adapt typer's help, once per process (later calls do nothing)."""
    from typer.core import TyperCommand, TyperGroup

    for command_class in (TyperCommand, TyperGroup):
        if command_class.format_help.__module__ != __name__:
            command_class.format_help = _adapting(command_class.format_help)


def _adapting(typer_format_help: Callable[..., None]) -> Callable[..., None]:
    def format_help(self: "click.Command", ctx: "click.Context", formatter: "click.HelpFormatter") -> None:
        _adapt_rich_help()
        for command in (self, *getattr(self, "commands", {}).values()):  # a group lists its commands' help too
            if command.help:
                command.help = reflowed(command.help)
        typer_format_help(self, ctx, formatter)

    return format_help


_LIST_ITEM = re.compile(r"(?:[-*] |\d+[.)] |\s)")
"""A line that starts a list item ("- ", "* ", "1. ") or is indented (an example)."""


def reflowed(text: str) -> str:
    """`text` (a docstring) with the line breaks inside each paragraph removed, so the terminal
    wraps it (typer keeps them after the first paragraph, breaking lines mid-sentence at 80
    columns). Paragraphs starting with click's no-rewrap mark (\\b) and lines that start a
    list item or are indented (examples) keep their breaks."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(p if p.startswith("\b") else _joined_lines(p) for p in paragraphs)


def _joined_lines(paragraph: str) -> str:
    lines: list[str] = []
    for line in paragraph.split("\n"):
        starts_item = _LIST_ITEM.match(line) is not None
        if lines and not starts_item:
            lines[-1] = f"{lines[-1]} {line.strip()}"
        else:
            lines.append(line)
    return "\n".join(lines)


def _adapt_rich_help() -> None:
    from typer import rich_utils

    if rich_utils._print_options_panel is _options_panel:
        return
    typer_console = rich_utils._get_rich_console

    def help_console(stderr: bool = False) -> "Console":
        return closed_pipe.end_quietly(typer_console(stderr=stderr))

    rich_utils._get_rich_console = help_console
    rich_utils._print_options_panel = _options_panel


def _options_panel(*, name: str, params: "list[click.Parameter]", ctx: "click.Context", markup_mode: Any,
                   console: "Console") -> None:
    """typer's `_print_options_panel` (same cells, styles and help text), laid out so that names
    are never cut: the names (long names, then negative ones on the next line) and the short
    names (a column only when the panel has some) are `no_wrap` columns; the metavar and the
    help text wrap in the width left."""
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text
    from typer import rich_utils as typer_help

    if not params:
        return
    with_required = any(param.required for param in params)
    with_short = any(not opt.startswith("--") for param in params for opt in (*param.opts, *param.secondary_opts))
    table = Table(highlight=True, show_header=False, expand=True, box=None, pad_edge=False,
                  padding=typer_help.STYLE_OPTIONS_TABLE_PADDING)
    for _ in range(1 + with_required + with_short):  # ("*"), names, (short names)
        table.add_column(no_wrap=True)
    table.add_column()  # metavar
    table.add_column()  # help
    for param in params:
        names = [_names(param, long=True), *([_names(param, long=False)] if with_short else [])]
        required = [Text(typer_help.REQUIRED_SHORT_STRING, style=typer_help.STYLE_REQUIRED_SHORT)
                    if param.required else ""] if with_required else []
        help_text = typer_help._get_parameter_help(param=param, ctx=ctx, markup_mode=markup_mode)
        for item in help_text.renderables:  # help, env var, default
            if isinstance(item, Text):
                item.overflow = "fold"  # a word wider than the column (a Kafka setting) wraps, whole
        table.add_row(*required, *names, typer_help.metavar_highlighter(_metavar(param, ctx)), help_text)
    console.print(Panel(table, border_style=typer_help.STYLE_OPTIONS_PANEL_BORDER, title=name,
                        title_align=typer_help.ALIGN_OPTIONS_PANEL))


def _names(param: "click.Parameter", *, long: bool) -> "Text":
    """The long (or short) names, comma-separated, then the negative ones on the next line."""
    from rich.text import Text
    from typer import rich_utils as typer_help

    def chosen(opts: list[str]) -> str:
        return ",".join(opt for opt in opts if opt.startswith("--") == long)

    names = typer_help.highlighter(chosen(param.opts))
    negative = chosen(param.secondary_opts)
    return Text.assemble(names, "\n", typer_help.negative_highlighter(negative)) if negative else names


def _metavar(param: "click.Parameter", ctx: "click.Context") -> "Text":
    """As typer shows it: the type (an argument's type name), and a number range."""
    import click
    from rich.text import Text
    from typer import rich_utils as typer_help

    metavar = Text(style=typer_help.STYLE_METAVAR, overflow="fold")
    text = param.make_metavar(ctx=ctx)
    if isinstance(param, click.Argument) and param.name and text == param.name.upper():
        text = param.type.name.upper()
    if text != "BOOLEAN":
        metavar.append(text)
    if (isinstance(param.type, click.types._NumberRangeBase) and isinstance(param, click.Option)
            and not (param.count and param.type.min == 0 and param.type.max is None)):
        described = param.type._describe_range()
        if described:
            metavar.append(typer_help.RANGE_STRING.format(described))
    return metavar

