"""Console entry point: run the app, turning expected failures into one line and an exit status.

Usage errors become one line and exit 2 in the app itself (`app.OneLineUsageErrors`); a
`CliError` that reaches this function becomes `groupctl: error: <message>` on stderr with the
error's status; nothing expected prints a traceback. A closed pipe ends the command quietly with
status 0 (`closed_pipe`); this function catches what the consoles did not write and flushes
stdout while a closed pipe can still be handled.
"""

from __future__ import annotations

import sys

from groupctl.cli import closed_pipe
from groupctl.cli.errors import CliError


def main() -> None:
    from groupctl.cli.app import app

    try:
        app()
    except CliError as exc:
        print(f"groupctl: error: {exc}", file=sys.stderr)
        sys.exit(int(exc.status))
    except BrokenPipeError:  # a write past the consoles (click's own, shell completion)
        closed_pipe.reader_gone(sys.stdout)
    finally:
        closed_pipe.flush(sys.stdout)
