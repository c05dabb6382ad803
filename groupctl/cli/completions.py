"""Shell completion scripts for `completions/`, generated from the app.

The scripts call back into `groupctl` (Typer's `_GROUPCTL_COMPLETE` protocol), so completions
follow the installed command tree. Regenerate with `make completions`; tests/cli fails when
the checked-in files differ from what this module renders.

    python -m groupctl.cli.completions DIR      # writes DIR/groupctl.bash, DIR/_groupctl, DIR/groupctl.fish
"""

from __future__ import annotations

import sys
from pathlib import Path

PROG = "groupctl"
COMPLETE_VAR = "_GROUPCTL_COMPLETE"
FILES = {"bash": "groupctl.bash", "zsh": "_groupctl", "fish": "groupctl.fish"}


def render(shell: str) -> str:
    from click.shell_completion import get_completion_class
    from typer.completion import completion_init
    from typer.main import get_command

    from groupctl.cli.app import app

    completion_init()  # registers Typer's bash/zsh/fish script templates, as Typer itself does
    complete_class = get_completion_class(shell)
    if complete_class is None:
        raise ValueError(f"no completion support for {shell}")
    script = complete_class(get_command(app), {}, PROG, COMPLETE_VAR).source()
    return script if script.endswith("\n") else script + "\n"


def write_all(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for shell, name in FILES.items():
        path = directory / name
        path.write_text(render(shell))
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write_all(Path(sys.argv[1] if len(sys.argv) > 1 else "completions")):
        print(path)
