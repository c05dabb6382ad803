"""The import layers (pyproject.toml, [tool.importlinter]) hold: the CLI above the use cases
above the transports; the node's shell above the store above the sans-IO core; the node never
importing the tools; the core and the lag rules free of event loops, sockets, threads, ZooKeeper
and the clock. A missing import-linter fails in CI like any missing test dependency."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_every_import_layer_contract_is_kept():
    command = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    if command is None:
        message = "import-linter is not installed (pip install -e '.[test]')"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    done = subprocess.run([command, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout
