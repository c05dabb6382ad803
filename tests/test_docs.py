"""The documentation is a tested artifact: README is a front door of at most 250 lines whose links
resolve; the wire-protocol page's API table is the registry; every CLI command has help text and
is in the command reference; the configuration page's option table is `coordinator run`'s."""

from __future__ import annotations

import re
from pathlib import Path

import groupctl.server.handlers  # noqa: F401  (registers every API)
from groupctl.protocol.registry import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs"
LOCAL_LINK = re.compile(r"\]\((?!https?://|#)([^)#]+)(?:#[^)]*)?\)")


def doc(name: str) -> str:
    return (DOCS / name).read_text()


def test_readme_is_a_front_door_of_at_most_250_lines():
    assert len(README.splitlines()) <= 250


def test_every_local_link_of_readme_and_docs_resolves():
    pages = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
    for page in pages:
        for target in LOCAL_LINK.findall(page.read_text()):
            assert (page.parent / target).exists(), f"{page.name} links to {target}, which does not exist"


def test_the_wire_protocol_api_table_is_exactly_the_registry():
    rows = re.findall(r"^\| (\w+) \| (\d+) \| (\d+)–(\d+) \|$", doc("wire-protocol.md"), flags=re.M)
    documented = {int(key): (name, int(lo), int(hi)) for name, key, lo, hi in rows}
    served = {key: (spec.name, spec.min_version, spec.max_version) for key, spec in REGISTRY.items()}
    assert documented == served


def test_every_command_is_in_the_command_reference_with_help_text():
    from typer.main import get_command

    from groupctl.cli.app import app

    def walk(command, path):
        subcommands = getattr(command, "commands", None)
        if subcommands:
            for name, sub in subcommands.items():
                yield from walk(sub, [*path, name])
        else:
            yield " ".join(path), command

    commands = list(walk(get_command(app), []))
    assert commands
    for name, command in commands:
        assert command.help, f"`groupctl {name}` has no help text"
        assert f"groupctl {name}" in doc("commands.md"), f"`groupctl {name}` is not in docs/commands.md"


def test_the_configuration_option_table_is_coordinator_run_with_its_defaults():
    from typer.main import get_command

    from groupctl.cli.app import app

    run = get_command(app).commands["coordinator"].commands["run"]
    options = {}
    for param in run.params:
        if param.name == "help" or not param.opts:
            continue
        name = param.opts[0]
        if getattr(param, "secondary_opts", None):
            name = "--[no-]" + name[2:]
        options[name] = param.default
    documented = {}
    for name, default in re.findall(r"^\| `(--[^`]+)` \| ([^|]+?) \| ", doc("configuration.md"), flags=re.M):
        documented[name] = default.strip()
    assert set(documented) == set(options)
    for name, default in options.items():
        shown = documented[name]
        if isinstance(default, bool):
            assert shown == ("on" if default else "off"), name
        elif default is None or default == []:
            assert shown.startswith("-"), (name, shown)
        elif isinstance(default, (int, float)):
            assert float(shown.strip("`")) == float(default), (name, shown, default)
        else:
            assert shown == f"`{default}`", (name, shown, default)


def test_the_journal_event_table_lists_the_fields_the_layout_declares():
    from groupctl.layout.journal import EVENTS

    documented = {}
    for event, fields in re.findall(r"^\| `([a-z_]+)` \| (.+) \|$", doc("lag-and-rebalances.md"), flags=re.M):
        if event in EVENTS:
            documented[event] = tuple(re.findall(r"`([a-z_]+)`", fields))
    assert documented == EVENTS
