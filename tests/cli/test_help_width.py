"""Help a person can read at 80 columns: every command's help (the root, every command group,
every command) names each of its options whole, negative and short names included, and no line
is wider than the terminal; long option lists come in panels (`coordinator run`)."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import time

import click
import pytest
from typer.main import get_command
from typer.testing import CliRunner

from groupctl.cli.app import app

WIDTH = 80
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def commands() -> list[tuple[list[str], click.Command]]:
    """Every command and command group of the app with its argument list ([] is the root)."""
    found: list[tuple[list[str], click.Command]] = []

    def walk(command: click.Command, path: list[str]) -> None:
        found.append((path, command))
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            walk(sub, [*path, name])

    walk(get_command(app), [])
    return found


def option_names(command: click.Command) -> list[str]:
    return [name for param in command.params if isinstance(param, click.Option) and not param.hidden
            for name in (*param.opts, *param.secondary_opts)]


def shown_whole(name: str, text: str) -> bool:
    """`name` appears as a whole word (`--zk` inside `--zk-auth` does not count)."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def help_at(width: int, path: list[str]) -> str:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": str(width), "GROUPCTL_BOOTSTRAP": None,
                                                              "GROUPCTL_ZK": None}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("path, command", [pytest.param(p, c, id=" ".join(p) or "groupctl") for p, c in commands()])
def test_at_80_columns_every_option_name_is_whole_and_no_line_is_wider(path, command):
    text = help_at(WIDTH, path)
    cut = [name for name in option_names(command) if not shown_whole(name, text)]
    assert not cut, f"cut or missing in `groupctl {' '.join(path)} --help`: {cut}\n{text}"
    assert max(len(line) for line in text.splitlines()) <= WIDTH, text


def test_coordinator_run_groups_its_options_in_panels_by_subject():
    text = help_at(WIDTH, ["coordinator", "run"])
    panels = re.findall(r"^╭─ (.+?) ─", text, flags=re.M)
    assert panels == ["Options", "Listener", "Storage and cluster", "Topics", "Classic groups",
                      "Consumer groups (KIP-848)", "Journal", "Metrics", "Security"]
    classic = text.split("╭─ Classic groups")[1].split("╰")[0]
    assert all(shown_whole(name, classic) for name in ("--min-session-timeout-ms", "--initial-rebalance-delay-ms"))


def test_a_boolean_option_shows_its_negative_name_whole_on_the_next_line():
    text = help_at(WIDTH, ["coordinator", "run"])
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if shown_whole("--auto-create-topics", line))
    assert shown_whole("--no-auto-create-topics", lines[at + 1])


def test_on_a_real_80_column_terminal_the_installed_command_cuts_no_option_name():
    from tests.e2e.test_cli_e2e import installed_groupctl

    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUPCTL_")}
    proc = subprocess.Popen([installed_groupctl(), "coordinator", "run", "--help"],
                            env={**env, "COLUMNS": str(WIDTH), "TERM": "xterm"},
                            stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, close_fds=True)
    os.close(follower)
    written, deadline = b"", time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            if not select.select([leader], [], [], 0.2)[0]:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the command closed the terminal
                break
            if not chunk:
                break
            written += chunk
        assert proc.wait(timeout=max(deadline - time.monotonic(), 1)) == 0
    finally:
        os.close(leader)
    text = ANSI.sub("", written.decode())
    assert "\x1b[" in written.decode()  # a terminal: styled
    command = next(c for p, c in commands() if p == ["coordinator", "run"])
    assert [name for name in option_names(command) if not shown_whole(name, text)] == []
    assert max(len(line) for line in text.splitlines()) <= WIDTH


def test_docstring_paragraphs_are_reflowed_so_the_terminal_wraps_them_but_lists_and_examples_keep_their_lines():
    from groupctl.cli.help_layout import reflowed

    text = """First line.

        A paragraph broken
        mid-sentence by the source,
        --execute included.

        - an item
          continued
        - another

        \b
        kept
        as is"""
    assert reflowed(text).split("\n\n") == [
        "First line.", "A paragraph broken mid-sentence by the source, --execute included.",
        "- an item\n  continued\n- another", "\b\nkept\nas is"]


def test_a_command_group_lists_each_commands_summary_as_one_reflowed_paragraph():
    text = help_at(WIDTH, ["acl"])
    # the docstring breaks its first paragraph after "every ACL of the"; the terminal wraps it elsewhere
    assert "or every ACL of the resources when no principal is given." in text, text
