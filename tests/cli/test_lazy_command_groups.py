"""Command groups load on first use: a command pays only for its own group's module."""

from __future__ import annotations

import subprocess
import sys


def test_running_a_command_imports_only_its_own_command_group():
    script = (
        "import sys\n"
        "from groupctl.cli.app import app\n"
        "try:\n"
        "    app(['group', 'describe', '--help'], prog_name='groupctl')\n"
        "except SystemExit:\n"
        "    pass\n"
        "loaded = sorted(m for m in sys.modules if m in ('groupctl.cli.coordinator', 'groupctl.cli.group',\n"
        "                'groupctl.cli.offsets', 'groupctl.cli.zk', 'groupctl.cli.rebalance'))\n"
        "print(' '.join(loaded), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.stderr.strip().splitlines()[-1] == "groupctl.cli.group", done.stderr


def test_listing_the_commands_names_every_group_in_help_order_without_loading_them():
    from typer.main import get_command

    from groupctl.cli.app import COMMAND_GROUPS, app

    root = get_command(app)
    assert list(root.commands) == [*COMMAND_GROUPS, "kafka-consumer-groups"]  # then the commands on `app` itself
    assert root.commands["zk"].name == "zk" and "show" in root.commands["zk"].commands
