"""The checked-in completion scripts are what the app generates (run `make completions`)."""

from pathlib import Path

import pytest

from groupctl.cli.completions import FILES, render

COMPLETIONS = Path(__file__).resolve().parents[2] / "completions"


@pytest.mark.parametrize("shell", sorted(FILES))
def test_checked_in_completion_script_is_current(shell):
    assert (COMPLETIONS / FILES[shell]).read_text() == render(shell), "run `make completions`"
